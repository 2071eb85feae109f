"""Faulty client programs for listen-mode tests: ``python tests/listen_clients.py MODE``.

Each reads RSIO_URL like a real client under test.  Modes: ``unsupported`` (exit 127),
``wrong`` (connects properly, then exits 1 as if the test case went wrong), ``garbage``
(hello, then bytes that are no RS-IO frame: the client breaks a MUST rule), ``hang``
(connects and never finishes), ``trickle`` (hello, then the start of a frame, one byte every 0.1 s, for a
minute at most), ``rsocket-keepalives`` (an RSocket client: SETUP, then a KEEPALIVE with R every 0.05 s, reading
the answers, for a minute at most: alive, never getting on with its case).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from urllib.parse import urlsplit

import msgpack


def main(mode: str) -> int:
    if mode == "unsupported":
        return 127
    url = urlsplit(os.environ["RSIO_URL"])
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    if mode == "rsocket-keepalives":
        return rsocket_keepalives(sock)
    hello = msgpack.packb(1) + msgpack.packb(0) + msgpack.packb([])  # clientHello, version 0, no extensions
    sock.sendall(hello)
    if mode == "garbage":
        sock.sendall(b"\xc1\xc1\xc1\xc1")  # 0xc1 is never used in MessagePack
    if mode == "hang":
        time.sleep(60)  # the behaviour under test: a client that never finishes (the kit kills it)
    if mode == "trickle":
        sock.sendall(b"\x04\xd9\xff")  # subscribe, its publisher a string of 255 bytes: 25 s at this pace
        for _ in range(255):  # the behaviour under test: a byte at a time, not yet a whole frame
            sock.sendall(b"a")
            time.sleep(0.1)
    sock.settimeout(10)
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass
    sock.close()
    return 1 if mode == "wrong" else 0


def rsocket_keepalives(sock: socket.socket) -> int:
    from rsio_tck.binding import get_binding
    from rsio_tck.bindings.rsocket.frames import Keepalive, Setup

    encoder = get_binding("rsocket").encoder("rsocket-1.0")
    sock.sendall(encoder.encode(Setup(keepalive_interval=50, max_lifetime=10_000, metadata_mime=b"text/plain",
                                      data_mime=b"text/plain")))
    keepalive = encoder.encode(Keepalive(respond=True))
    for _ in range(1200):  # the behaviour under test: keepalives, each answered, and nothing else (60 s at most)
        sock.sendall(keepalive)
        sock.recv(65536)
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
