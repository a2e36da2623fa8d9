from __future__ import annotations

import hashlib
import hmac

import httpx
import pytest
from _webhooks_support import SECRET, event_body, sign
from starlette.datastructures import Headers

from svcnb.webhooks import (
    MalformedSignature,
    MissingSignature,
    SignatureError,
    SignatureMismatch,
    verify,
)

BODY = event_body()


def test_valid_signature_passes():
    assert verify(BODY, {"X-Service-Signature": sign(BODY)}, SECRET) is None


@pytest.mark.parametrize(
    "headers",
    [
        {"x-service-signature": sign(BODY)},
        {"X-SERVICE-SIGNATURE": sign(BODY)},
        Headers({"x-service-signature": sign(BODY)}),
        httpx.Headers({"X-Service-Signature": sign(BODY)}),
        [(b"x-service-signature", sign(BODY).encode())],
    ],
    ids=["dict-lower", "dict-upper", "starlette", "httpx", "asgi-pairs"],
)
def test_header_name_case_and_container_do_not_matter(headers):
    verify(BODY, headers, SECRET)


def test_bytes_secret_and_memoryview_body():
    verify(memoryview(BODY), {"X-Service-Signature": sign(BODY)}, SECRET.encode())


def test_missing_header_is_its_own_error():
    with pytest.raises(MissingSignature, match="no X-Service-Signature"):
        verify(BODY, {"X-Service-Event": "vm.stopped"}, SECRET)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("", "does not start with 'sha256='"),
        (sign(BODY)[len("sha256=") :], "does not start with 'sha256='"),
        ("sha1=" + hashlib.sha1(BODY).hexdigest(), "does not start with 'sha256='"),
        ("SHA256=" + sign(BODY)[7:], "does not start with 'sha256='"),
        (sign(BODY)[:-1], "63 characters"),
        (sign(BODY) + "0", "65 characters"),
        ("sha256=" + "g" * 64, "not hex digits"),
        ("sha256=" + sign(BODY)[7:].upper(), "uppercase hex"),
    ],
    ids=["empty", "no-prefix", "sha1", "prefix-case", "short", "long", "non-hex", "uppercase"],
)
def test_malformed_header_says_what_is_wrong(value, says):
    with pytest.raises(MalformedSignature, match=says):
        verify(BODY, {"X-Service-Signature": value}, SECRET)


def test_repeated_header_is_refused_not_guessed():
    headers = httpx.Headers([("X-Service-Signature", sign(BODY)), ("x-service-signature", "x")])
    with pytest.raises(MalformedSignature, match="2 X-Service-Signature headers"):
        verify(BODY, headers, SECRET)


@pytest.mark.parametrize(
    "body",
    [BODY + b" ", BODY.replace(b"vm_1", b"vm_2"), b""],
    ids=["trailing-space", "altered", "empty"],
)
def test_altered_body_is_a_mismatch(body):
    with pytest.raises(SignatureMismatch, match="does not match the body"):
        verify(body, {"X-Service-Signature": sign(BODY)}, SECRET)


def test_other_secret_is_a_mismatch():
    with pytest.raises(SignatureMismatch):
        verify(BODY, {"X-Service-Signature": sign(BODY, "whsec_other")}, SECRET)


def test_errors_are_one_family_of_value_errors():
    for cls in (MissingSignature, MalformedSignature, SignatureMismatch):
        assert issubclass(cls, SignatureError)
        assert issubclass(cls, ValueError)


def test_error_text_never_holds_the_secret_or_whole_signature():
    good = sign(BODY)
    for headers in ({"X-Service-Signature": good[:-2] + "zz"}, {"X-Service-Signature": good}):
        with pytest.raises(SignatureError) as info:
            verify(BODY + b"x", headers, SECRET)
        assert SECRET not in str(info.value)
        assert good[7:] not in str(info.value)


def test_body_must_be_raw_bytes_not_text():
    with pytest.raises(TypeError, match="bytes"):
        verify(BODY.decode(), {"X-Service-Signature": sign(BODY)}, SECRET)


def test_empty_secret_is_refused():
    with pytest.raises(ValueError, match="secret is empty"):
        verify(BODY, {"X-Service-Signature": sign(BODY)}, "")


def test_does_not_parse_the_body():
    # not JSON at all, yet correctly signed: verify only checks the bytes
    body = b"\xff\xfe not json {"
    verify(body, {"X-Service-Signature": sign(body)}, SECRET)


def test_compares_in_constant_time(monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    verify(BODY, {"X-Service-Signature": sign(BODY)}, SECRET)
    assert len(calls) == 1
