"""The client against the sandbox speaking each named dialect and a few random ones, over
loopback HTTP: every VM read, and each failure in its class whatever status the dialect uses."""

from __future__ import annotations

import warnings

import pytest

import svcnb
from svcnb import vocab

DIALECTS = ["default", "acme", "linkhdr", "cursor", "random:1", "random:3", "random:5"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_vm_is_read_and_failures_keep_their_class(make_sandbox, leak_scan, dialect):
    sb = make_sandbox(dialect=dialect, vms=57, seed=3)
    leak_scan.tokens.update(sb.tokens.values())
    client = svcnb.Client(sb.tokens["admin"], sb.base_url, progress=False)
    leak_scan.add(client)
    truth = sorted(vm["id"] for vm in sb.control.truth()["vms"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", svcnb.PagingWarning)
        warnings.simplefilter("ignore", vocab.UnknownWordWarning)
        full = client.vms.all()
        assert sorted(vm["id"] for vm in full) == truth
        assert sorted(vm["id"] for vm in client.vms.list()) == truth
        assert sorted(vm["id"] for vm in client.vms.all(previous=full)) == truth
        assert all("sshKeys" in vm for vm in full)

    with pytest.raises(svcnb.errors.LimitExceeded):
        for i in range(11):
            client.webhooks.create(f"https://h{i}.example/hook", ["vm.stopped"])
    reader = svcnb.Client(sb.tokens["read"], sb.base_url, progress=False)
    leak_scan.add(reader)
    with pytest.raises(svcnb.ScopeError) as info:
        reader.webhooks.create("https://z.example/hook", ["vm.stopped"])
    assert "webhooks:write" in str(info.value)
    read_id = next(t["id"] for t in sb.control.tokens() if t["name"] == "read")
    sb.control.revoke_token(read_id)
    with pytest.raises(svcnb.AuthError):
        reader.wallet.get()
    client.close()
    reader.close()
