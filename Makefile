# rsio-tck: `make run` tests the embedded reference peer; `make test` runs the kit's own tests.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install run test bench lint typecheck clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) -m tck.cli run --report-dir reports

test: $(STAMP)
	$(PY) -m ruff check tck reference_peer tests benchmarks
	$(PY) -m mypy tck reference_peer
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) -m benchmarks

lint: $(STAMP)
	$(PY) -m ruff check tck reference_peer tests benchmarks

typecheck: $(STAMP)
	$(PY) -m mypy tck reference_peer

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
