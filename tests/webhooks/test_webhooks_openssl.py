"""The signature svcnb checks is the one OpenSSL computes: ``openssl dgst -sha256 -hmac KEY``."""

from __future__ import annotations

import pytest
from _webhooks_support import SECRET, event_body, needs_openssl, openssl_signature, post, sign

from svcnb.webhooks import Receiver, SignatureMismatch, verify

pytestmark = needs_openssl

BODIES = [
    event_body(),
    event_body(data={"name": "café ☕", "n": [1, 2.5, None]}),
    b"",
    bytes(range(256)),
]


@pytest.mark.parametrize("body", BODIES, ids=["event", "unicode", "empty", "all-bytes"])
def test_openssl_signature_is_accepted_and_matches_the_spec_signer(body, tmp_path):
    from_openssl = openssl_signature(body, SECRET, tmp_path)
    assert from_openssl == sign(body)  # lowercase hex, 64 digits, after "sha256="
    verify(body, {"X-Service-Signature": from_openssl}, SECRET)


def test_openssl_signature_under_another_key_is_refused(tmp_path):
    body = event_body()
    with pytest.raises(SignatureMismatch):
        verify(body, {"X-Service-Signature": openssl_signature(body, "whsec_x", tmp_path)}, SECRET)


def test_receiver_accepts_an_event_signed_by_openssl(tmp_path):
    receiver = Receiver(SECRET, tmp_path / "store")
    body = event_body("evt_ossl")
    headers = {"X-Service-Signature": openssl_signature(body, SECRET, tmp_path)}
    assert post(receiver, body, headers).status_code == 200
    assert receiver.log.frame()["event_id"].tolist() == ["evt_ossl"]
