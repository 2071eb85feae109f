"""Self-signed certificates for ``tls://`` listeners (tests, and ``--listen tls://`` without ``--cert``).

Uses the ``openssl`` command line: the venv carries no crypto package, and a
certificate is needed only where a TLS listener has none of its own.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path


class CertificateError(RuntimeError):
    """No certificate could be made (openssl missing or failing); the message says why."""


def self_signed(directory: Path, host: str = "127.0.0.1", days: int = 2) -> tuple[Path, Path]:
    """Write ``cert.pem`` and ``key.pem`` (EC P-256, CN=localhost, SAN = host) into ``directory``."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise CertificateError("openssl is not installed: give --cert and --key")
    cert, key = directory / "cert.pem", directory / "key.pem"
    san = f"IP:{host}" if host.replace(".", "").isdigit() or ":" in host else f"DNS:{host}"
    command = [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
               "-keyout", str(key), "-out", str(cert), "-days", str(days), "-subj", "/CN=localhost",
               "-addext", f"subjectAltName={san},DNS:localhost"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    if result.returncode != 0:
        raise CertificateError(f"openssl failed: {result.stderr.strip()[-500:]}")
    return cert, key


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    return context
