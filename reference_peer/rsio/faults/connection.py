"""Faults of the handshake (HS) and extensions (EXT)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    ServerHello,
)
from rsio_tck.errors import Side

from ..policy import VERSION, Policy
from .declare import Base, fault

if TYPE_CHECKING:
    from ..connection import RsioConnection



# -- handshake (HS) -------------------------------------------------------------------------

stream_before_hello = fault("hs-stream-before-hello", "HS-2",
                            "the server sends serverHello and a stream frame before reading clientHello",
                            window=True)  # seen only if it beats the kit's clientHello (0.1 s after connecting)


@stream_before_hello.on("on_connection_made")
def _stream_before_hello(p: Policy, base: Base, s: RsioConnection) -> None:
    if s.role is Side.CLIENT:
        return base(s)
    p.send_server_hello(s, None)
    s.send_unchecked(Cancel(subscriber=0))


second_hello = fault("hs-second-hello", "HS-3", "answers clientHello with two serverHellos")


@second_hello.on("send_server_hello")
def _second_hello(p: Policy, base: Base, s: RsioConnection, version: int | None) -> None:
    base(s, version)
    s.send_unchecked(ServerHello(version=VERSION))


wrong_kind = fault("hs-client-hello", "HS-4", "the server sends clientHello instead of serverHello")


@wrong_kind.on("send_server_hello")
def _wrong_kind(p: Policy, base: Base, s: RsioConnection, version: int | None) -> None:
    s.hello_sent = True
    s.send_unchecked(ClientHello(version=VERSION))


no_hello = fault("hs-no-hello", "HS-1", "never sends serverHello, but answers stream frames")


@no_hello.on("send_server_hello")
def _no_hello(p: Policy, base: Base, s: RsioConnection, version: int | None) -> None:
    s.hello_sent = True


bad_version = fault("hs-bad-version-no-goodbye", "HS-5", "closes without goodbye on a hello of an unsupported version")


@bad_version.on("on_unsupported_version")
def _bad_version(p: Policy, base: Base, s: RsioConnection) -> None:
    s.abort("fault hs-bad-version-no-goodbye: closed without goodbye")


wrong_version = fault("hs-wrong-version", "HS-6", "answers clientHello version 0 with serverHello version 1")


@wrong_version.on("send_server_hello")
def _wrong_version(p: Policy, base: Base, s: RsioConnection, version: int | None) -> None:
    s.hello_sent = True
    s.send_unchecked(ServerHello(version=1))


drop_optimistic = fault("hs-drop-optimistic", "HS-7",
                        "drops the frames that arrive in the same read as the clientHello (optimistic sending)")


@drop_optimistic.on("events_of_read")
def _drop_optimistic(p: Policy, base: Base, s: RsioConnection, events: list[object]) -> list[object]:
    # The classic bug: read the hello, answer it, and throw the rest of the buffer away.
    taken: list[object] = base(s, events)
    for i, event in enumerate(taken):
        if isinstance(event, ClientHello):
            return taken[: i + 1]
    return taken


# -- extensions (EXT) ----------------------------------------------------------------------

reject_extension = fault("ext-reject-unknown", "EXT-1", "says goodbye to a hello listing extensions it does not know")


@reject_extension.on("on_client_hello")
def _reject_extension(p: Policy, base: Base, s: RsioConnection, hello: ClientHello) -> None:
    if hello.extensions:
        s.goodbye(f"unknown extensions {list(hello.extensions)}")
        return
    base(s, hello)


extension_type = fault("ext-undeclared-type", "EXT-2", "sends a message of the extension range (0x40) after the handshake")


@extension_type.on("after_handshake")
def _extension_type(p: Policy, base: Base, s: RsioConnection) -> None:
    s.send_raw(b"\x40\x00")
