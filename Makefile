# rsio-tck: `make run` tests the embedded reference peer; `make test` runs the kit's own tests.
# `make docs` builds the documentation site (mkdocs.yml, docs/) into build/docs-site/; `make test` builds it too.
# Test modules run on TEST_WORKERS pytest-xdist workers: most of a test's time is the kit waiting on a
# peer (a silence window, a process starting), so four overlap well on two cores.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_WORKERS ?= 4
# The markers of the tier of tests slow by nature (test-slow, below): `make test` runs everything else.
SLOW_TIER := hostile or slow
# `make test` prints the line coverage of tck/ and reference_peer/, child processes included ([tool.coverage] in
# pyproject.toml; data and report under build/coverage/).  Python 3.11's tracer costs: three CPU-heavy modules took
# about 80 % more CPU (47 s -> 84 s user) and 27-50 % more wall with it (issue 29).
# Python writes its bytecode caches (__pycache__/, ignored by git), whatever the calling environment says.  With
# PYTHONDONTWRITEBYTECODE set, as on this machine, every Python the tests start (some 650 reference peers, kits
# and pytest runs) compiled each module it imported from source, and every pytest worker rewrote the asserts of
# every test module: pytest took 915 s on a fresh clone with it set and 746 s without (issue 29).
unexport PYTHONDONTWRITEBYTECODE
# The Spark pipeline (tck/pipeline) runs in local mode on loopback with the venv's Python.
export SPARK_LOCAL_IP := 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))

.PHONY: install run test test-slow bench mutation lint typecheck clean report publish docs

# The set-up installs what the tests need from Debian: Java for Spark, chromium for the browser check of the
# report (tests/test_report_browser.py), tshark to dissect captures.
$(STAMP): pyproject.toml
	command -v java >/dev/null || (apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless)
	command -v chromium >/dev/null && command -v tshark >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium tshark)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# pip byte-compiles site-packages here, whatever PYTHONDONTWRITEBYTECODE says: the 18 s it takes is paid
	# once, where `--no-compile` made every later start outside make (`.venv/bin/rsio-tck` with the variable set)
	# compile typer, rich and the rest again: `rsio-tck --help` 0.83 s instead of 0.44 s.
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) -m rsio_tck.cli run --report-dir reports

# Rebuild the newest run's static report (a run first if there is none), write its allure
# results through the pytest plugin, and render them with allure-commandline when Node is present.
report: $(STAMP)
	@ls -d reports/2*/ >/dev/null 2>&1 || $(PY) -m rsio_tck.cli run --report-dir reports --quiet || true
	@run=$$(ls -d reports/2*/ | sort | tail -1); run=$${run%/}; \
	$(PY) -m rsio_tck.cli report $$run || exit $$?; \
	$(PY) -m pytest -q -p no:cacheprovider -o addopts= --rsio --alluredir $$run/allure-results --clean-alluredir \
		>$$run/allure-pytest.log 2>&1; echo "allure results: $$run/allure-results (pytest log: $$run/allure-pytest.log)"; \
	if command -v npx >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then \
		npx --yes allure-commandline generate $$run/allure-results -o $$run/allure-report --clean \
			&& echo "allure report: $$run/allure-report/index.html"; \
	else \
		echo "make report: no allure HTML rendered: allure-commandline needs Node.js (npx) and Java, and"; \
		echo "  $$(command -v npx >/dev/null 2>&1 || echo 'npx is missing ')$$(command -v java >/dev/null 2>&1 || echo 'java is missing')."; \
		echo "  The allure results are in $$run/allure-results; the static report is $$run/report/index.html"; \
	fi; \
	echo "static report: $$run/report/index.html"

test: $(STAMP)
	@mkdir -p build/timings && date +%s > build/timings/.make-test.start
	$(PY) -m ruff check tck reference_peer tests benchmarks mutation interop docs/hooks
	$(MAKE) --no-print-directory typecheck
	$(MAKE) --no-print-directory docs
	@rm -rf build/coverage && mkdir -p build/coverage
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "not ($(SLOW_TIER))" --cov --cov-report=term
	@$(PY) -m benchmarks.bench_ci record make-test $$(cat build/timings/.make-test.start)

# The tier of tests slow by nature, which `make interop` runs after the implementations: marker `hostile` (the
# kit against hostile peers, each within a bound of tens of seconds) and marker `slow` (the whole matrix of the
# peer's id choices, a fuzz budget read back through tshark, whole Ditto runs labelled by tshark).
# Without coverage: these tests assert wall times (a flood judged within 60 s), and the tracer's CPU would be
# charged to the kit.  Plain `pytest` runs all.  SLOW_TIER (above) names its markers.
test-slow: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "$(SLOW_TIER)"

bench: $(STAMP)
	$(PY) -m benchmarks

# Mutation testing of the reference peer against the scenario suite (not part of `make test`;
# 16-36 min on two shared cores): prints its run time, the score and every survivor.
mutation: $(STAMP)
	$(PY) -m mutation $(MUTATION_ARGS)

# The multi-target compliance site from every run under reports/ (Spark local mode).
publish: $(STAMP)
	$(PY) -m rsio_tck.cli publish reports --out site

lint: $(STAMP)
	$(PY) -m ruff check tck reference_peer tests benchmarks mutation interop docs/hooks

# The documentation site, strictly: a broken link or anchor, or a page left out of the nav, fails the build.
# Output in build/docs-site/ (gitignored, never committed). Not --quiet: it hides the warnings strict mode counts.
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir build/docs-site

# mypy sees the installed import name: build/typecheck/rsio_tck links tck/'s entries and reference_peer/.
typecheck: $(STAMP)
	rm -rf build/typecheck && mkdir -p build/typecheck/rsio_tck
	for f in tck/*; do ln -s "$(CURDIR)/$$f" build/typecheck/rsio_tck/; done
	ln -s "$(CURDIR)/reference_peer" build/typecheck/rsio_tck/reference_peer
	cd build/typecheck && $(abspath $(PY)) -m mypy --config-file "$(CURDIR)/pyproject.toml" -p rsio_tck
	$(PY) -m mypy --config-file pyproject.toml interop/*.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# Interop fixtures (interop/NOTES.md): build every implementation's server and client from its registry,
# cached (a build.sh skips when its output is newer than its lock file); prints the build time of each.
INTEROP_IMPLS = rsocket-py rsocket-js-0 rsocket-java rsocket-go rsocket-js-1 rsocket-rust ditto-client
.PHONY: interop-build interop interop-toolchains
interop-build: interop-toolchains
	@failed=""; for impl in $(INTEROP_IMPLS); do \
		start=$$(date +%s); \
		if interop/$$impl/build.sh; then status=built; else status=FAILED; failed="$$failed $$impl"; fi; \
		echo "interop-build: $$impl $$status in $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "interop-build: failed:$$failed"; exit 1; fi

# The kit against every real implementation in both roles and every client x server pair, then the
# published site (interop/run.py; builds what is missing first, cached; INTEROP_ARGS e.g. --jobs 1).
# The interop toolchains (a JDK with Maven, Node with npm, Go, Rust's cargo) are on the machine kind this kit is
# built on; what is missing comes from Debian (whose Go and cargo may be older than the fixtures' lock files ask).
interop-toolchains:
	@missing=""; \
	command -v javac >/dev/null || missing="$$missing openjdk-17-jdk-headless"; \
	command -v mvn >/dev/null || missing="$$missing maven"; \
	command -v npm >/dev/null || missing="$$missing nodejs npm"; \
	command -v go >/dev/null || missing="$$missing golang-go"; \
	command -v cargo >/dev/null || missing="$$missing cargo"; \
	if [ -n "$$missing" ]; then echo "interop: installing from Debian:$$missing"; apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; fi

interop: $(STAMP) interop-toolchains
	@mkdir -p build/timings && date +%s > build/timings/.make-interop.start
	SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=$(abspath $(PY)) $(PY) interop/run.py $(INTEROP_ARGS)
	@start=$$(date +%s); $(MAKE) --no-print-directory test-slow; rc=$$?; \
		echo "make interop: the slow tier of the kit's tests (markers $(SLOW_TIER)) in $$(( $$(date +%s) - start )) s"; \
		if [ $$rc -eq 0 ]; then $(PY) -m benchmarks.bench_ci record make-interop \
			$$(cat build/timings/.make-interop.start) "slow tier=$$start"; fi; exit $$rc
