from __future__ import annotations

import pytest

# the loopback S3 server of the store tests, for the alert state on object storage
from store.conftest import s3_url  # noqa: F401 - s3_server is the session's (tests/conftest.py)


@pytest.fixture
def receiver(tls):
    from _receiver import https_receiver

    with https_receiver(str(tls.cert_pem), str(tls.key_pem)) as r:
        yield r
