from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import trustme


@dataclass
class Tls:
    ca_pem: Path
    cert_pem: Path
    key_pem: Path


@pytest.fixture(scope="session")
def tls(tmp_path_factory) -> Tls:
    """A throwaway CA and a certificate for 127.0.0.1 issued by it."""
    folder = tmp_path_factory.mktemp("alerts-tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    paths = Tls(folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    ca.cert_pem.write_to_path(paths.ca_pem)
    cert.private_key_pem.write_to_path(paths.key_pem)
    for i, pem in enumerate(cert.cert_chain_pems):
        pem.write_to_path(paths.cert_pem, append=i > 0)
    return paths


@pytest.fixture
def receiver(tls):
    from _receiver import https_receiver

    with https_receiver(str(tls.cert_pem), str(tls.key_pem)) as r:
        yield r
