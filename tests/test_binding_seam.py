"""The binding seam holds: no binding-neutral module imports a binding module.

The walk reads each neutral module's source (``import_graph``: ``ast``, nothing is
imported), follows every import it makes of another ``rsio_tck`` module that is itself
neutral, and the parent packages Python imports first, and fails, naming the module and
the import, when one reaches ``rsio_tck.bindings.*`` or one of the reference peer's
binding-specific modules.  Imports inside functions count (they run when the function
does); imports under ``if TYPE_CHECKING:`` do not (they never run).  The reference
peer's own ``__init__`` is part of the shell and held to the same rule: the RS-IO peer
lives in ``reference_peer/rsio/``, beside ``rsocket/`` and ``ditto/``.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from import_graph import imports_of, module_path, modules_under, parents

from rsio_tck.binding import BINDING_NAMES, Binding, get_binding, profile_of

# The reference peer's binding-neutral shell; every other module of the peer belongs to a binding.
PEER_SHELL = {"__main__", "transports", "api", "peer_binding", "tlscert", "tiny_writes", "hostile", "fault_model",
              "sources"}

# Neutral roots, by prefix: every module under each is walked.
ROOTS = [
    "rsio_tck.monitor", "rsio_tck.protocol", "rsio_tck.scenarios", "rsio_tck.report", "rsio_tck.pipeline",
    "rsio_tck.fuzz", "rsio_tck.dissect", "rsio_tck.cli", "rsio_tck.pytest_plugin", "rsio_tck.binding",
    "rsio_tck.semantics", "rsio_tck.gate", "rsio_tck.capabilities", "rsio_tck.embedded",
    "rsio_tck.transport", "rsio_tck.targets", "rsio_tck.wireshark", "rsio_tck.findings",
    *(f"rsio_tck.reference_peer.{name}" for name in sorted(PEER_SHELL)),
]


def binding_specific(name: str) -> bool:
    if name == "rsio_tck.bindings" or name.startswith("rsio_tck.bindings."):
        return True
    if name.startswith("rsio_tck.reference_peer."):
        return name.split(".")[2] not in PEER_SHELL
    return False


def seam_breaks() -> list[str]:
    roots = [module for prefix in ROOTS for module in modules_under(prefix)]
    assert len(roots) > 40, roots  # the walk found the modules it is meant to hold
    assert "rsio_tck.reference_peer" not in roots  # ... and reaches the peer's __init__ as every submodule's parent
    seen: set[str] = set()
    breaks: list[str] = []
    todo = list(roots)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for imported in [*parents(module), *imports_of(module)]:
            if binding_specific(imported):
                breaks.append(f"{module} imports {imported}")
            elif module_path(imported) is not None:
                todo.append(imported)
    return sorted(breaks)


def test_no_neutral_module_imports_a_binding() -> None:
    breaks = seam_breaks()
    assert breaks == [], "binding-neutral modules import binding modules:\n" + "\n".join(breaks)


def test_the_walk_catches_a_binding_import(tmp_path: Path) -> None:
    # The checker itself can fail: a neutral module importing RS-IO's wire is reported.
    assert binding_specific("rsio_tck.bindings.rsio.wire")
    assert binding_specific("rsio_tck.reference_peer.rsio.connection")
    assert binding_specific("rsio_tck.reference_peer.rsocket")
    assert not binding_specific("rsio_tck.reference_peer.transports")
    assert not binding_specific("rsio_tck.reference_peer")
    assert "rsio_tck.bindings.rsio.endpoint" in imports_of("rsio_tck.bindings.rsio.binding")
    assert parents("rsio_tck.reference_peer.api") == ["rsio_tck", "rsio_tck.reference_peer"]


def test_importing_the_peer_shell_loads_no_binding() -> None:
    # What the walk reads, run: a fresh interpreter imports the shell and lists what it loaded.
    shell = ["rsio_tck.reference_peer", *(f"rsio_tck.reference_peer.{name}" for name in sorted(PEER_SHELL))]
    probe = (f"import importlib, sys\nfor name in {shell!r}: importlib.import_module(name)\n"
             "print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert loaded.returncode == 0, loaded.stderr
    modules = loaded.stdout.split()
    assert "rsio_tck.reference_peer.hostile.driver" in modules or "rsio_tck.reference_peer.hostile" in modules
    assert [name for name in modules if binding_specific(name)] == []


def test_the_rsio_names_the_peer_package_gave_are_still_given_when_asked() -> None:
    import rsio_tck.reference_peer as shell
    from rsio_tck.reference_peer import rsio

    for name in ("FAULTS", "PeerConfig", "Publisher", "Subscriber", "Subscription"):
        assert getattr(shell, name) is getattr(rsio, name), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        shell.nope  # noqa: B018


@pytest.mark.parametrize("name", BINDING_NAMES)
def test_every_registered_binding_satisfies_the_protocol(name: str) -> None:
    binding = get_binding(name)
    assert binding.name == name
    assert binding.profiles and all(isinstance(profile, str) for profile in binding.profiles)
    assert profile_of(binding, None) == binding.profiles[0]
    for method in ("decoder", "encoder", "judge", "describe", "contract_rule", "liveness_probe", "pace_probe"):
        assert callable(getattr(binding, method, None)), f"{name}: no {method}()"
    for profile in binding.profiles:  # the probes after a time-out and a trickle: something to send, and a name
        for probe in (binding.liveness_probe(profile), binding.pace_probe(profile)):
            assert probe.opening() and probe.asks, (name, profile)
    # The binding's contract rule IDs are catalogue IDs.
    from rsio_tck.catalogue import RULES

    assert binding.contract_rule("DEM-1") in RULES


def test_rsio_binding_gives_an_endpoint() -> None:
    from rsio_tck.errors import Side
    from rsio_tck.protocol import Connection, ConnectionState

    binding: Binding = get_binding("rsio")
    connection = Connection(Side.CLIENT, "varint", binding=binding)
    assert connection.profile == "varint"
    assert connection.state is ConnectionState.OPEN
    assert connection.data_to_send() == b""


def test_unknown_binding_is_a_one_line_error() -> None:
    with pytest.raises(ValueError) as caught:
        get_binding("carrier-pigeon")
    message = str(caught.value)
    assert "\n" not in message and "carrier-pigeon" in message and "rsio" in message


def test_unknown_profile_is_a_one_line_error() -> None:
    with pytest.raises(ValueError) as caught:
        profile_of(get_binding("rsio"), "json")
    message = str(caught.value)
    assert "\n" not in message and "json" in message and "msgpack" in message


@pytest.mark.parametrize("name", BINDING_NAMES)
def test_each_binding_declares_its_peer_and_the_peer_shell_finds_it(name: str) -> None:
    from rsio_tck.reference_peer.peer_binding import get_peer_binding, peer_names

    assert name in peer_names()
    peer = get_peer_binding(name)
    assert peer.name == name and tuple(peer.profiles) == tuple(get_binding(name).profiles)


@pytest.mark.parametrize("name", BINDING_NAMES)
def test_each_peer_capabilities_file_is_valid_and_of_its_binding(name: str) -> None:
    # rsio-peer --capabilities prints it, for rsio-tck run --capabilities: a file the kit refuses is no use.
    from rsio_tck.capabilities import Capabilities
    from rsio_tck.reference_peer.peer_binding import get_peer_binding

    claims = Capabilities.load(get_peer_binding(name).capabilities, name)  # CapabilitiesError if invalid
    assert claims.tokens and claims.tokens <= Capabilities.everything(name).tokens  # (RSocket's peer lacks resume)


@pytest.mark.parametrize("name", BINDING_NAMES)
def test_each_binding_declares_what_neutral_code_uses(name: str) -> None:
    """The declarations of ``Binding`` beyond the wire: capabilities, client tests, features, peer."""
    from rsio_tck.capabilities import Capabilities, formats

    binding = get_binding(name)
    caps = binding.capabilities_format()
    assert formats()[caps.version_key][0] == name
    assert {f"codec:{p}" for p in binding.profiles} <= set(caps.everything)
    assert Capabilities.everything(name).tokens == frozenset(caps.everything)
    assert all(case.binding == name for case in binding.client_tests())
    assert binding.profile_word in ("codec", "profile")
    assert all(isinstance(kind, type) for kind in binding.liveness_frames())
    assert isinstance(binding.scenario_adapter(binding.profiles[0], {}).features, frozenset)


def test_a_binding_name_of_the_environment_that_is_bad_is_one_line_and_left_out(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "RSIO_TCK_BINDINGS": "Bad Name=x.y,nomodule,ok=no.such.module"}
    code = ("from rsio_tck.binding import binding_names, get_binding\n"
            "print(binding_names())\n"
            "try:\n    get_binding('ok')\nexcept ValueError as exc:\n    print('error:', exc)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    warnings = done.stderr.strip().splitlines()
    assert len(warnings) == 2 and all(line.startswith("rsio-tck: RSIO_TCK_BINDINGS:") for line in warnings)
    assert "Traceback" not in done.stderr
    assert "'ok'" in done.stdout.splitlines()[0] and "Bad Name" not in done.stdout
    assert done.stdout.splitlines()[1].startswith("error: binding 'ok': cannot import no.such.module")


def test_register_binding_refuses_a_taken_or_malformed_name() -> None:
    from rsio_tck.binding import register_binding

    with pytest.raises(ValueError, match="taken"):
        register_binding("rsio", "somewhere.else")
    with pytest.raises(ValueError, match="lower-case"):
        register_binding("contract", "somewhere.else")
    with pytest.raises(ValueError, match="dotted module"):
        register_binding("fine", "not a module")


# -- the capabilities file of each binding (bindings.md section 2 for RSocket) --------------------

def test_an_rsocket_capabilities_file_gives_its_tokens(tmp_path: Path) -> None:
    import json

    from rsio_tck.capabilities import Capabilities

    path = tmp_path / "caps.json"
    path.write_text(json.dumps({"rsocket_capabilities": 1, "implementation": "rsocket-py", "version": "0.4",
                                "profiles": ["rsocket-1.0"], "interactions": ["request-stream"],
                                "publishers": ["tck/range"], "features": ["fragmentation"]}))
    claims = Capabilities.load(path, "rsocket")
    assert claims.implementation == "rsocket-py"
    assert claims.tokens == {"codec:rsocket-1.0", "request-stream", "tck/range", "fragmentation"}
    assert claims.missing(["codec:reactivesocket-draft", "lease"]) == ["codec:reactivesocket-draft", "lease"]


def test_rsocket_capabilities_refuse_unknown_keys_and_tokens_naming_file_and_key(tmp_path: Path) -> None:
    import json

    from rsio_tck.capabilities import CapabilitiesError
    from rsio_tck.gate import GateError, load_capabilities

    path = tmp_path / "caps.json"
    path.write_text(json.dumps({"rsocket_capabilities": 1, "interaction": ["request-stream"]}))
    with pytest.raises(GateError) as caught:
        load_capabilities(path, "rsocket")
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and "'interaction'" in message and "interactions" in message
    path.write_text(json.dumps({"rsocket_capabilities": 1, "features": ["leases"]}))
    with pytest.raises(CapabilitiesError, match=r"features\[0\]: unknown token 'leases' \(did you mean 'lease'"):
        from rsio_tck.capabilities import Capabilities

        Capabilities.load(path)


def test_a_capabilities_file_of_another_binding_is_refused(tmp_path: Path) -> None:
    import json

    from rsio_tck.gate import GateError, load_capabilities

    path = tmp_path / "caps.json"
    path.write_text(json.dumps({"rsocket_capabilities": 1}))
    with pytest.raises(GateError, match="a rsocket capabilities file .* the run's binding is rsio"):
        load_capabilities(path, "rsio")
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"rsocket_capabilities": 1, "rsio_capabilities": 1}))
    with pytest.raises(GateError, match="a file is of one binding"):
        load_capabilities(both)


def test_the_rsocket_schema_names_the_tokens_the_kit_knows() -> None:
    from rsio_tck import capabilities as caps
    from rsio_tck.bindings.rsocket import binding as rsocket

    properties = caps.schema("rsocket_capabilities")["properties"]
    assert tuple(properties["profiles"]["items"]["enum"]) == rsocket.PROFILES
    assert tuple(properties["interactions"]["items"]["enum"]) == rsocket.INTERACTIONS
    assert tuple(properties["publishers"]["items"]["enum"]) == rsocket.PUBLISHERS
    assert tuple(properties["features"]["items"]["enum"]) == rsocket.FEATURES
    assert caps.Capabilities.everything("rsocket").missing(["codec:rsocket-1.0", "request-channel"]) == []


# -- the gate's checks of --binding, --profile and RS-IO's --codec ----------------------------------

def test_gate_wire_checks_are_one_line_errors() -> None:
    from rsio_tck.gate import GateError, check_profile, check_wire

    assert check_wire("rsio", None) == ("rsio", "msgpack")
    assert check_wire("rsio", None, "varint") == ("rsio", "varint")
    assert check_wire("rsio", "varint", "varint") == ("rsio", "varint")
    cases = [
        (lambda: check_wire("rsoket", None), "--binding 'rsoket': unknown binding (did you mean 'rsocket'?)"),
        (lambda: check_wire("rsio", "varnit"), "--profile 'varnit': unknown profile of binding rsio"),
        (lambda: check_wire("rsio", "msgpack", "varint"), "--codec 'varint' and --profile 'msgpack' disagree"),
        (lambda: check_profile("rsocket", None, "msgpack"), "--codec is RS-IO's wire codec; with --binding rsocket"),
    ]
    for call, expected in cases:
        with pytest.raises(GateError) as caught:
            call()
        assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_cli_refuses_a_bad_binding_or_profile_before_anything_runs() -> None:
    from typer.testing import CliRunner

    from rsio_tck.cli import app

    for command in (["run"], ["fuzz"], ["check-trace", "missing.trace"], ["check-pcap", "missing.pcap"]):
        unknown = CliRunner().invoke(app, [*command, "--binding", "carrier-pigeon"])
        assert unknown.exit_code == 2, (command, unknown.output)
        assert "--binding 'carrier-pigeon': unknown binding" in unknown.output
        profile = CliRunner().invoke(app, [*command, "--profile", "json"])
        assert profile.exit_code == 2 and "--profile 'json': unknown profile of binding rsio" in profile.output
        assert "Traceback" not in unknown.output + profile.output


def test_run_json_records_binding_and_profile_and_old_run_dirs_read_as_rsio(tmp_path: Path) -> None:
    import json

    from rsio_tck.report.rundir import RunFiles, RunRecorder
    from rsio_tck.report.schema import check_run_dir

    recorder = RunRecorder(tmp_path / "20261123T000000000Z", target="tcp://127.0.0.1:1", codec="varint",
                           started=1.0, pcap_workers=0)
    record = recorder.finish(2.0, 0)
    assert (record["binding"], record["profile"], record["codec"]) == ("rsio", "varint", "varint")
    files = RunFiles.read(recorder.run_dir)
    assert (files.binding, files.profile) == ("rsio", "varint")
    assert check_run_dir(recorder.run_dir) == []
    old = dict(record)
    del old["binding"], old["profile"]
    (recorder.run_dir / "run.json").write_text(json.dumps(old))
    files = RunFiles.read(recorder.run_dir)
    assert (files.binding, files.profile) == ("rsio", "varint")
    assert check_run_dir(recorder.run_dir) == []


# -- the reference peer's shell: bindings by registry ------------------------------------------------

def test_peer_binding_gives_rsio_and_a_one_line_error_for_a_missing_peer(capsys: pytest.CaptureFixture[str]) -> None:
    from rsio_tck.reference_peer.__main__ import main
    from rsio_tck.reference_peer.peer_binding import get_peer_binding

    peer = get_peer_binding("rsio")
    assert peer.name == "rsio" and peer.profiles == ("msgpack", "varint")
    assert all(hasattr(fault, "rule") and hasattr(fault, "description") for fault in peer.faults.values())
    config = peer.config("varint", {"faults": ("dem-beyond-demand",), "max_reassembly": 1000})
    assert (config.codec, config.faults, config.limits.max_reassembly) == ("varint", ("dem-beyond-demand",), 1000)
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        peer.config("msgpack", {"faults": ("nope",)})
    with pytest.raises(ValueError, match="unknown binding 'pigeon'"):
        get_peer_binding("pigeon")
    for argv, expected in (
        (["--binding", "rsio", "--codec", "json", "--listen", "tcp://127.0.0.1:0"], "has no profile 'json'"),
        (["--binding", "rsio", "--codec", "msgpack", "--profile", "varint", "--listen", "tcp://127.0.0.1:0"],
         "disagree"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert expected in err and "\n" not in err and err.startswith("rsio-peer: ")


def test_a_stream_shaped_peer_module_serves_through_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    # The shape the RSocket peer exposes (serve_connection, make_config, FAULTS): the shell's Peer
    # listens with it, and shutdown ends its connections.
    import asyncio
    import sys
    import types

    from rsio_tck.reference_peer import peer_binding
    from rsio_tck.reference_peer.api import Peer

    module = types.ModuleType("fake_stream_peer")
    module.__file__ = __file__
    module.PROFILE_NAMES = ("echo-1",)  # type: ignore[attr-defined]
    module.FAULTS = {}  # type: ignore[attr-defined]
    module.make_config = lambda args: {"profile": args.profile, "faults": tuple(args.fault)}  # type: ignore[attr-defined]

    async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: object,
                               number: int = 0) -> str:
        while data := await reader.read(1024):
            writer.write(data.upper())
        writer.close()
        return "eof"

    module.serve_connection = serve_connection  # type: ignore[attr-defined]
    # The binding the peer belongs to: only what the peer shell reads of it (its profiles, where its peer lives).
    module.BINDING = types.SimpleNamespace(name="echo", profiles=("echo-1",),  # type: ignore[attr-defined]
                                           peer_module="fake_stream_peer")
    from rsio_tck import binding_registry as registry

    monkeypatch.setitem(sys.modules, "fake_stream_peer", module)
    monkeypatch.setitem(registry.REGISTRY, "echo", "fake_stream_peer")
    monkeypatch.setattr(registry, "_LOADED", {})
    stream_peer = peer_binding.get_peer_binding("echo")
    assert stream_peer.profiles == ("echo-1",)
    assert stream_peer.config("echo-1", {"faults": ("f",)}) == {"profile": "echo-1", "faults": ("f",)}

    async def go() -> tuple[bytes, list[str]]:
        peer = Peer(binding="echo")
        server = await peer.listen("tcp://127.0.0.1:0")
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", server.port), 5)
        writer.write(b"hello")
        answer = await asyncio.wait_for(reader.readexactly(5), 5)
        sessions = list(peer.connections)
        await asyncio.wait_for(peer.shutdown(timeout=2.0), 5)
        writer.close()
        return answer, [s.closed.result() for s in sessions]

    answer, reasons = asyncio.run(go())
    assert answer == b"HELLO"
    assert reasons == ["eof"]


def test_rsio_has_every_optional_hook() -> None:
    from rsio_tck.binding import OPTIONAL_HOOKS

    binding = get_binding("rsio")
    assert all(callable(getattr(binding, hook, None)) for hook in OPTIONAL_HOOKS)
    layer = binding.scapy_layer()  # type: ignore[attr-defined]
    assert callable(layer.bind)


def test_a_binding_without_a_hook_is_a_one_line_error() -> None:
    from rsio_tck.dissect import scapy_layer
    from rsio_tck.fuzz.engine import fuzz_hooks

    class Bare:
        name = "bare"
        profiles = ("p",)

    with pytest.raises(ValueError, match="^binding 'bare' has no scapy layer$"):
        scapy_layer(Bare())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown binding 'bare'"):
        fuzz_hooks("bare")


# -- no binding's name or format in neutral code (issue 28) ----------------------------------------

# A binding's name as a word of code: "rsocket", "rsio.type", "--binding ditto"; not the kit's own name
# (rsio-tck, rsio_tck).
_BINDING_WORD = re.compile(r"(?<![\w-])(?:rsio|rsocket|ditto|rs-io)(?![\w-])|\bRSocket\b|\bDitto\b", re.IGNORECASE)
# Neutral packages held to it word by word (string literals outside docstrings, and templates), and what each
# may still name: the implementations FINDINGS.md judges are data keyed by the implementation, not the binding.
WORDLESS = {"rsio_tck.wireshark": set(), "rsio_tck.findings": {"rsio_tck.findings.upstream"},
            "rsio_tck.capabilities": set()}


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are no docstring, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def binding_words() -> list[str]:
    found: list[str] = []
    for package, exempt in WORDLESS.items():
        for module in modules_under(package):
            path = module_path(module)
            if module in exempt or path is None:
                continue
            found += [f"{module}:{line}: {text!r}" for line, text in _code_strings(path) if _BINDING_WORD.search(text)]
            for template in sorted(path.parent.glob("templates/*")) if path.name == "__init__.py" else []:
                found += [f"{template.name}:{n}: {line.strip()!r}"
                          for n, line in enumerate(template.read_text(encoding="utf-8").splitlines(), 1)
                          if _BINDING_WORD.search(line)]
    return found


def test_neutral_tshark_and_bug_report_code_names_no_binding() -> None:
    # A binding's tshark reader (its fields, its PDML), or a report's wording of its protocol, in neutral code
    # would be one of these words; each lives in its binding's package, behind the seam.
    assert [module for package in WORDLESS for module in modules_under(package)]  # the walk finds the modules
    words = binding_words()
    assert words == [], "neutral code names a binding:\n" + "\n".join(words)


def _json_strings(value: object) -> list[str]:
    """Every key and string value of a JSON document, at any depth."""
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *_json_strings(item)]]
    if isinstance(value, list):
        return [text for item in value for text in _json_strings(item)]
    return [value] if isinstance(value, str) else []


def test_neutral_json_schemas_name_no_binding() -> None:
    # The scenario file schema (the loader fills in its ``binding`` enum from the registry) and any schema left in
    # the kit's own schemas/ folder: each binding's capabilities schema lives in its package.
    kit = module_path("rsio_tck")
    assert kit is not None
    files = [kit.parent / "scenarios" / "schema.json", *sorted((kit.parent / "schemas").glob("*.json"))]
    assert files[0].is_file()
    found = [f"{path.name}: {text!r}" for path in files
             for text in _json_strings(json.loads(path.read_text(encoding="utf-8"))) if _BINDING_WORD.search(text)]
    assert found == [], "neutral JSON names a binding:\n" + "\n".join(found)


def capabilities_vocabulary() -> set[str]:
    """Every binding's capabilities words: its version key and its tokens, with and without their prefix."""
    words: set[str] = set()
    for name in BINDING_NAMES:
        declared = get_binding(name).capabilities_format()
        words |= {declared.version_key, *declared.everything, *(t.partition(":")[2] for t in declared.everything)}
    return words - {""}


def test_the_capabilities_reader_holds_no_binding_vocabulary(tmp_path: Path) -> None:
    vocabulary = capabilities_vocabulary()
    assert {"rsio_capabilities", "ditto_capabilities", "tck/range", "msgpack", "codec:rsocket-1.0"} <= vocabulary
    path = module_path("rsio_tck.capabilities")
    assert path is not None
    held = [f"{line}: {text!r}" for line, text in _code_strings(path) if text in vocabulary]
    assert held == [], "rsio_tck.capabilities holds a binding's capabilities words:\n" + "\n".join(held)
    old = tmp_path / "old.py"  # the check catches tokens and a default key, as the module once held them
    old.write_text('CODECS = ("msgpack", "varint")\ndef schema(version_key="rsio_capabilities"): ...\n')
    assert sorted(line for line, text in _code_strings(old) if text in vocabulary) == [1, 1, 2]


def test_the_word_check_catches_a_binding_reader(tmp_path: Path) -> None:
    module = tmp_path / "reader.py"
    module.write_text('"""Reads rsocket frames."""\nFIELDS = ("frame.number", "rsio.type")\nPROFILE = "rsocket-1.0"\n')
    assert sorted(line for line, text in _code_strings(module) if _BINDING_WORD.search(text)) == [2, 3]
    assert not _BINDING_WORD.search("rsio-tck run") and not _BINDING_WORD.search("rsio_tck.binding")


def test_a_binding_without_bug_report_terms_gets_plain_ones_and_rsocket_its_own() -> None:
    from rsio_tck.findings.terms import PLAIN_TEMPLATE, plain_terms, terms_of

    bare = plain_terms(get_binding("rsio"))
    assert (bare.protocol, bare.profile, bare.document, bare.template) == ("RS-IO", "msgpack", None, PLAIN_TEMPLATE)
    assert bare.link_lines("line 12") == "line 12"
    rsocket = terms_of(get_binding("rsocket"))
    assert rsocket.template.url.startswith("https://github.com/rsocket/") and rsocket.profile == "rsocket-1.0"
    assert rsocket.link_lines("line 12").startswith("line [11](https://github.com/rsocket/rsocket/blob/")
    assert terms_of(get_binding("ditto")).transport == "WebSocket"
    assert terms_of(None).template is PLAIN_TEMPLATE
