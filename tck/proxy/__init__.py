"""Proxy mode: the kit between a real client and a real server, judging both directions.

``relay.run_proxy`` accepts connections on a listen URL, opens one to the target for
each, passes the bytes through unchanged and feeds both directions to one ``Monitor``
per connection, built from the binding it is given.  Nothing is changed or held back: the
relay only watches, so a verdict is the monitor's over what really crossed.  What the
connections may hold at once (partial frames, reassembly, traces) is bounded in total by
``budget``; ``cli.proxy_command`` is the ``rsio-tck proxy`` command.
"""

from .relay import ConnectionVerdict, ProxyResult, run_proxy

__all__ = ["ConnectionVerdict", "ProxyResult", "run_proxy"]
