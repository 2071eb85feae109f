"""Smoke-test the interop servers with the kit's RSocket codec over a plain socket.

Usage: python interop/smoke.py [--transcript] [--save DIR] [NAME ...]   (default: every interop/*/server that is built)

For each implementation: start ``interop/NAME/server PORT`` on a free loopback
port, open one TCP connection, send SETUP, then run the probes below on
successive streams and print what the server sent.  This is not the kit's
judgement (that is the RSocket binding, wired in later): it checks that the
fixture serves the test publishers, and shows deviations plainly so they can be
recorded in NOTES.md rather than worked around.  Every wait has a timeout.
``--transcript`` prints every frame of each failing probe in both directions, as
the kit's codec reads it and as raw bytes (the excerpts of FINDINGS.md).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import (
    ERROR_CODE_NAMES,
    Error,
    Keepalive,
    MetadataPush,
    Payload,
    RequestChannel,
    RequestN,
    RequestResponse,
    RequestStream,
    Setup,
    describe,
)

HERE = Path(__file__).resolve().parent
START_TIMEOUT = float(os.environ.get("RSIO_SMOKE_START_TIMEOUT", "60"))  # the JVM and first runs are slow
FRAME_TIMEOUT = 5.0  # for a frame the server owes us
QUIET = 1.0  # how long "nothing more" is watched for after the demand is used up
MAX_EXTRA = 100  # frames read past the demand before giving up on a server that ignores it


@dataclass
class Probe:
    name: str
    ok: bool
    detail: str
    frames: list[str] = field(default_factory=list)
    transcript: list[tuple[str, bytes]] = field(default_factory=list)  # (direction, one frame's bytes)


class Connection:
    """One RSocket connection with the kit's codec; answers KEEPALIVE(R) as bindings.md says."""

    def __init__(self, port: int, *, setup: bool = True) -> None:
        profile = get_profile("rsocket-1.0")
        self.encoder, self.decoder = profile.encoder(), profile.decoder()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=FRAME_TIMEOUT)
        self.pending: list = []
        self.transcript: list[tuple[str, bytes]] = []  # "->" kit to server, "<-" server to kit
        self.unsplit = b""  # received bytes not yet a whole frame (24-bit length prefix, spec "Framing")
        if setup:
            self.send_setup()

    def send_setup(self, split_at: int | None = None) -> None:
        """SETUP as bindings.md section 2 says; with ``split_at``, in two TCP segments cut at that byte."""
        setup = Setup(keepalive_interval=30_000, max_lifetime=90_000,
                      metadata_mime=b"application/octet-stream", data_mime=b"text/plain")
        if split_at is None:
            self.send(setup)
        else:
            data = self.encoder.encode(setup)
            self.transcript += [("->", data[:split_at]), ("->", data[split_at:])]
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock.sendall(data[:split_at])
            time.sleep(0.2)  # two segments, two reads at the server; nothing to wait on
            self.sock.sendall(data[split_at:])

    def send(self, frame) -> None:
        data = self.encoder.encode(frame)
        self.transcript.append(("->", data))
        self.sock.sendall(data)

    def record_received(self, data: bytes) -> None:
        self.unsplit += data
        while len(self.unsplit) >= 3 and len(self.unsplit) >= 3 + int.from_bytes(self.unsplit[:3], "big"):
            end = 3 + int.from_bytes(self.unsplit[:3], "big")
            self.transcript.append(("<-", self.unsplit[:end]))
            self.unsplit = self.unsplit[end:]

    def receive(self, stream_id: int, timeout: float):
        """The next frame on ``stream_id``, or None when ``timeout`` passes without one."""
        deadline = time.monotonic() + timeout
        while True:
            for i, frame in enumerate(self.pending):
                if frame.stream_id == stream_id:
                    return self.pending.pop(i)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return None
            if not data:
                raise ConnectionError("the server closed the connection")
            self.record_received(data)
            for frame in self.decoder.feed(data):
                if isinstance(frame, Keepalive) and frame.respond:
                    self.send(Keepalive(respond=False, data=frame.data))
                elif frame.stream_id != 0 or isinstance(frame, Error):
                    self.pending.append(frame)

    def close(self) -> None:
        self.sock.close()


def collect(conn: Connection, stream_id: int, want_elements: int) -> tuple[list[bytes], object, list[str]]:
    """Elements until ``want_elements`` arrived or a terminal signal; then whatever comes within QUIET."""
    elements: list[bytes] = []
    terminal: object = None
    shown: list[str] = []
    while terminal is None and len(shown) < want_elements + MAX_EXTRA:
        timeout = QUIET if len(elements) >= want_elements else FRAME_TIMEOUT
        frame = conn.receive(stream_id, timeout)
        if frame is None:
            break
        shown.append(describe_short(frame))
        if isinstance(frame, Payload):
            if frame.next:
                elements.append(frame.data)
            if frame.complete:
                terminal = "complete"
        elif isinstance(frame, Error):
            terminal = f"error {ERROR_CODE_NAMES.get(frame.error_code, hex(frame.error_code))}: {frame.data!r}"
        else:
            terminal = f"unexpected {frame.wire_name}"
    return elements, terminal, shown


def describe_short(frame) -> str:
    if isinstance(frame, Payload):
        flags = "".join(f for f, on in (("N", frame.next), ("C", frame.complete), ("F", frame.follows)) if on)
        return f"PAYLOAD[{flags}] {frame.data[:16]!r}"
    if isinstance(frame, Error):
        return f"ERROR[{ERROR_CODE_NAMES.get(frame.error_code, hex(frame.error_code))}] {frame.data!r}"
    return frame.wire_name


def probe_range(conn: Connection) -> Probe:
    conn.send(RequestStream(stream_id=1, initial_request_n=5, data=b"tck/range?count=5"))
    elements, terminal, shown = collect(conn, 1, 5)
    ok = elements == [b"0", b"1", b"2", b"3", b"4"] and terminal == "complete"
    return Probe("range-5 (N=5)", ok, f"elements {[e.decode(errors='replace') for e in elements]}, {terminal}", shown)


def probe_demand(conn: Connection) -> Probe:
    conn.send(RequestStream(stream_id=3, initial_request_n=3, data=b"tck/range?count=10"))
    first, terminal, shown = collect(conn, 3, 3)
    if len(first) != 3 or terminal is not None:
        return Probe("demand (range 10, N=3, then 7)", False,
                     f"{len(first)} elements for N=3 (more than demanded)" if len(first) > 3
                     else f"{len(first)} elements, {terminal}", shown)
    conn.send(RequestN(stream_id=3, request_n=7))
    rest, terminal, more = collect(conn, 3, 7)
    ok = [e.decode() for e in first + rest] == [str(i) for i in range(10)] and terminal == "complete"
    return Probe("demand (range 10, N=3, then 7)", ok, f"3 then {len(rest)} elements, {terminal}", shown + more)


def probe_error(conn: Connection) -> Probe:
    """tck/error?after=2 with N=1: element 0, nothing more until REQUEST_N(1), then element 1 and the ERROR."""
    name = "error (tck/error?after=2, N=1, then 1)"
    conn.send(RequestStream(stream_id=5, initial_request_n=1, data=b"tck/error?after=2"))
    first, terminal, shown = collect(conn, 5, 1)
    if first != [b"0"] or terminal is not None:
        return Probe(name, False, f"for N=1: elements {[e.decode(errors='replace') for e in first]}, {terminal}", shown)
    conn.send(RequestN(stream_id=5, request_n=1))
    rest, terminal, more = collect(conn, 5, 1)
    ok = rest == [b"1"] and terminal == "error APPLICATION_ERROR: b'failed'"
    return Probe(name, ok, f"0, then {[e.decode(errors='replace') for e in rest]}, {terminal}", shown + more)


def probe_unknown(conn: Connection) -> Probe:
    conn.send(RequestStream(stream_id=7, initial_request_n=1, data=b"tck/no-such-publisher"))
    elements, terminal, shown = collect(conn, 7, 0)
    ok = not elements and isinstance(terminal, str) and terminal.startswith("error APPLICATION_ERROR")
    return Probe("unknown name", ok, f"{len(elements)} elements, {terminal}", shown)


def probe_response(conn: Connection) -> Probe:
    """Request-response answers the first element as PAYLOAD N+C (bindings.md section 2)."""
    conn.send(RequestResponse(stream_id=9, data=b"tck/range?count=3"))
    elements, terminal, shown = collect(conn, 9, 1)
    ok = elements == [b"0"] and terminal == "complete"
    return Probe("response (tck/range?count=3)", ok, f"elements {elements}, {terminal}", shown)


def probe_empty_response(conn: Connection) -> Probe:
    """Request-response on an empty publisher: an empty completion, PAYLOAD C without N (bindings.md section 2)."""
    conn.send(RequestResponse(stream_id=11, data=b"tck/range?count=0"))
    elements, terminal, shown = collect(conn, 11, 0)
    ok = not elements and terminal == "complete"
    return Probe("empty response (tck/range?count=0)", ok, f"elements {elements}, {terminal}", shown)


def probe_empty_elements(conn: Connection) -> Probe:
    """Zero-length elements are elements: PAYLOAD N with no data (spec, PAYLOAD frame: why the N flag exists)."""
    conn.send(RequestStream(stream_id=13, initial_request_n=3, data=b"tck/large?size=0&count=3"))
    elements, terminal, shown = collect(conn, 13, 3)
    ok = elements == [b"", b"", b""] and terminal == "complete"
    return Probe("empty elements (tck/large?size=0&count=3, N=3)", ok, f"elements {elements}, {terminal}", shown)


def probe_after_terminal(conn: Connection) -> Probe:
    """Nothing follows a terminal signal on its stream (spec, Stream Sequences and Lifetimes: Request Stream)."""
    conn.send(RequestStream(stream_id=15, initial_request_n=5, data=b"tck/error?after=1"))
    elements, terminal, shown = collect(conn, 15, 1)
    after: list[str] = []
    while terminal is not None and len(after) < MAX_EXTRA and (frame := conn.receive(15, QUIET)) is not None:
        after.append(describe_short(frame))
    ok = elements == [b"0"] and terminal == "error APPLICATION_ERROR: b'failed'" and not after
    return Probe("nothing after the terminal (tck/error?after=1, N=5)", ok,
                 f"elements {elements}, {terminal}, then {after or 'nothing'}", shown + after)


def probe_channel_one_by_one(conn: Connection) -> Probe:
    """tck/echo with demand 1 at a time: inbound a, b, c (c with N+C, spec PAYLOAD Frame) come back a, b, c."""
    conn.send(RequestChannel(stream_id=17, initial_request_n=1, data=b"tck/echo"))
    outbound, credit, terminal = [b"a", b"b", b"c"], 0, None
    echoed: list[bytes] = []
    shown: list[str] = []
    while terminal is None and len(shown) < 20:
        while credit and outbound:  # the responder's REQUEST_N is our credit for inbound elements
            data = outbound.pop(0)
            conn.send(Payload(stream_id=17, next=True, complete=not outbound, data=data))
            credit -= 1
        frame = conn.receive(17, FRAME_TIMEOUT)
        if frame is None:
            terminal = "timeout"
            break
        shown.append(describe_short(frame) if not isinstance(frame, RequestN) else f"REQUEST_N {frame.request_n}")
        if isinstance(frame, RequestN):
            credit += frame.request_n
        elif isinstance(frame, Payload):
            if frame.next:
                echoed.append(frame.data)
                if not frame.complete:
                    conn.send(RequestN(stream_id=17, request_n=1))
            terminal = "complete" if frame.complete else None
        else:
            terminal = describe_short(frame)
    ok = echoed == [b"a", b"b", b"c"] and terminal == "complete"
    return Probe("channel echo, demand 1 at a time", ok, f"echoed {echoed}, {terminal}", shown)


def probe_metadata_push(conn: Connection) -> Probe:
    """METADATA_PUSH is ignored and the connection stays up: a request-response after it is answered."""
    conn.send(MetadataPush(metadata=b"tck/metadata-push"))
    try:
        conn.send(RequestResponse(stream_id=19, data=b"tck/range?count=1"))
        elements, terminal, shown = collect(conn, 19, 1)
    except (ConnectionError, OSError) as exc:
        return Probe("metadata-push, then request-response", False, f"connection lost: {exc}", [])
    return Probe("metadata-push, then request-response", elements == [b"0"] and terminal == "complete",
                 f"elements {elements}, {terminal}", shown)


def probe_split_setup(conn: Connection) -> Probe:
    """A new connection whose SETUP arrives in two TCP segments (2 bytes, then the rest) is served like any other.

    TCP may cut a frame anywhere; the 24-bit length prefix is how a receiver finds the frame (spec, Framing
    Protocol Usage).  The pause between the segments only makes the cut observable; nothing waits on it.
    """
    name = "SETUP split across two TCP segments (new connection)"
    fresh = Connection(conn.sock.getpeername()[1], setup=False)
    try:
        fresh.send_setup(split_at=2)
        fresh.send(RequestResponse(stream_id=1, data=b"tck/range?count=1"))
        elements, terminal, shown = collect(fresh, 1, 1)
        probe = Probe(name, elements == [b"0"] and terminal == "complete", f"elements {elements}, {terminal}", shown)
    except (ConnectionError, OSError) as exc:
        probe = Probe(name, False, f"connection lost: {exc}", [])
    finally:
        fresh.close()
    probe.transcript = fresh.transcript
    return probe


# Stream ids go up by 2 in this order (spec, Stream Identifiers: Generation), so the kit's own frames are
# clean when the monitor judges a saved transcript.  The last two can end the connection (or the server).
PROBES = (probe_range, probe_demand, probe_error, probe_unknown, probe_response, probe_empty_response,
          probe_empty_elements, probe_after_terminal, probe_channel_one_by_one, probe_metadata_push, probe_split_setup)


def render_transcript(transcript: list[tuple[str, bytes]], decoder_profile: str = "rsocket-1.0") -> list[str]:
    """One line per frame: direction, the kit's reading of it (or why it cannot read it), its bytes in hex."""
    lines = []
    for direction, data in transcript:
        try:
            frames = get_profile(decoder_profile).decoder().feed(data)
            shown = describe(frames[0]) if frames else "(incomplete frame)"
        except Exception as exc:  # noqa: BLE001 - a frame the codec refuses is shown, not raised
            shown = f"(not decodable: {exc})"
        lines.append(f"{direction} {shown}\n     {data.hex(' ')}")
    return lines


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)  # polling a port that is not open yet; no event to wait on
    raise TimeoutError(f"server did not listen on {port} within {START_TIMEOUT:.0f} s")


def write_hex(path: Path, transcript: list[tuple[str, bytes]], title: str) -> None:
    """One line per write: ``C`` (the kit, as client) or ``S`` (the server), then the bytes in hex."""
    lines = [f"# {title}", "# C = the kit (client) to the server, S = the server to the kit; one frame or segment a line"]
    lines += [f"{'C' if direction == '->' else 'S'} {data.hex()}" for direction, data in transcript]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def read_hex(path: Path) -> list[tuple[str, bytes]]:
    """What write_hex wrote: (``"C"`` or ``"S"``, bytes) pairs."""
    pairs = []
    for line in path.read_text(encoding="ascii").splitlines():
        if line and not line.startswith("#"):
            side, _, data = line.partition(" ")
            pairs.append((side, bytes.fromhex(data)))
    return pairs


def smoke(name: str, log_path: Path | None = None, save_dir: Path | None = None) -> list[Probe]:
    """Start interop/NAME/server (its output to ``log_path``, default NAME/server.log), run every probe, stop it.

    With ``save_dir``, the whole connection (and the split-SETUP probe's own connection) is written there as
    NAME.hex and NAME.split-setup.hex, for the kit's monitor to judge offline.
    """
    port = free_port()
    log = open(log_path or HERE / name / "server.log", "wb")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen([str(HERE / name / "server"), str(port)], stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        wait_listening(port, server)
        conn = Connection(port)
        try:
            probes = []
            for probe in PROBES:
                start = len(conn.transcript)
                probes.append(probe(conn))
                if not probes[-1].transcript:
                    probes[-1].transcript = conn.transcript[start:]
            alive = server.poll() is None
            probes.append(Probe("server process still running", alive,
                                "yes" if alive else f"no: it exited with {server.returncode}"))
            if save_dir is not None:
                write_hex(save_dir / f"{name}.hex", conn.transcript, f"{name}: interop/smoke.py, every probe")
                split = next(p for p in probes if p.name.startswith("SETUP split"))
                write_hex(save_dir / f"{name}.split-setup.hex", split.transcript, f"{name}: {split.name}")
            return probes
        finally:
            conn.close()
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass  # the server (and its process group) is gone already: a probe may have crashed it
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="implementations (directories under interop/)")
    parser.add_argument("--transcript", action="store_true", help="print each failing probe's frames and bytes")
    parser.add_argument("--save", type=Path, metavar="DIR", help="write each connection's bytes to DIR/NAME*.hex")
    args = parser.parse_args()
    names = args.names or sorted(p.parent.name for p in HERE.glob("*/server"))
    failed = 0
    for name in names:
        if not (HERE / name / "server").exists():
            print(f"{name}: no interop/{name}/server")
            failed += 1
            continue
        try:
            probes = smoke(name, save_dir=args.save)
        except (OSError, RuntimeError, TimeoutError) as exc:
            print(f"{name}: {exc} (see interop/{name}/server.log)")
            failed += 1
            continue
        for probe in probes:
            print(f"{name}: {'ok  ' if probe.ok else 'FAIL'} {probe.name}: {probe.detail}")
            print(f"{'':>{len(name)}}  frames: {'; '.join(probe.frames) or '(none)'}")
            if args.transcript and not probe.ok:
                print("\n".join(f"{'':>{len(name)}}  {line}" for line in render_transcript(probe.transcript)))
            failed += not probe.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
