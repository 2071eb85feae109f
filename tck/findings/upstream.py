"""The implementations FINDINGS.md judges, as their own projects name and publish them.

The kit's fixtures (``interop/<fixture>/``) name the two rsocket-js lines apart (``rsocket-js-0``,
``rsocket-js-1``); upstream they are one project and one tracker.  Where a report is filed is the
implementation's; the issue template whose headings it uses is its binding's (``terms``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Upstream:
    fixture: str  # the interop/ folder and FINDINGS.md's name
    name: str  # the project's own name
    repository: str  # owner/name on GitHub
    packages: str  # what the fixture installs, and from where

    @property
    def new_issue_url(self) -> str:
        return f"https://github.com/{self.repository}/issues/new"


UPSTREAMS = {upstream.fixture: upstream for upstream in (
    Upstream(fixture="rsocket-py", name="rsocket-py", repository="rsocket/rsocket-py",
             packages="PyPI: `rsocket`"),
    Upstream(fixture="rsocket-js-0", name="rsocket-js", repository="rsocket/rsocket-js",
             packages="npm: `rsocket-core`, `rsocket-flowable`, `rsocket-tcp-client`, `rsocket-tcp-server`, the 0.0.x line"),
    Upstream(fixture="rsocket-js-1", name="rsocket-js", repository="rsocket/rsocket-js",
             packages="npm: `rsocket-core`, `rsocket-tcp-client`, `rsocket-tcp-server`, the 1.0 alpha line"),
    Upstream(fixture="rsocket-java", name="rsocket-java", repository="rsocket/rsocket-java",
             packages="Maven Central: `io.rsocket:rsocket-core`, `io.rsocket:rsocket-transport-netty`"),
    Upstream(fixture="rsocket-go", name="rsocket-go", repository="rsocket/rsocket-go",
             packages="the Go modules `github.com/rsocket/rsocket-go` and `github.com/jjeffcaii/reactor-go`"),
    Upstream(fixture="rsocket-rust", name="rsocket-rust", repository="rsocket/rsocket-rust",
             packages="crates.io: `rsocket_rust`, `rsocket_rust_transport_tcp`"),
)}
