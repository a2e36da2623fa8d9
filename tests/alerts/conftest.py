from __future__ import annotations

import pytest


@pytest.fixture
def receiver(tls):
    from _receiver import https_receiver

    with https_receiver(str(tls.cert_pem), str(tls.key_pem)) as r:
        yield r
