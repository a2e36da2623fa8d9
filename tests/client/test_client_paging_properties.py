"""Properties of the page iterator over random lists, page sizes and answer shapes."""

from __future__ import annotations

import warnings

import httpx
from _fakeapi import FakeApi, envelope
from _fakelists import SHAPES as LIST_SHAPES
from _fakelists import paged
from _fuzz import fuzz
from hypothesis import assume, given
from hypothesis import strategies as st

import svcnb
from svcnb.client import read_all

SHAPES = ("design", "items", "next-link", "no-meta")


def _serve(ids: list[str], per: int, shape: str, change: tuple[str, int] | None):
    state = {"ids": list(ids), "served": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page") or request.url.params.get("p") or 1)
        if change is not None and state["served"] == change[1]:
            if change[0] == "insert":
                state["ids"].insert(0, "new")  # shifts every later page right by one
            elif state["ids"]:
                state["ids"].pop(0)  # shifts every later page left: one item is never served
        state["served"] += 1
        current = state["ids"]
        chunk = [{"id": i} for i in current[(page - 1) * per : page * per]]
        total = len(current)
        meta = {"page": page, "perPage": per, "total": total, "totalPages": -(-total // per)}
        if shape == "design":
            return envelope(chunk, meta=meta)
        if shape == "items":
            return envelope({"items": chunk, **meta})
        if shape == "next-link":
            body = {"success": True, "data": chunk}
            if page * per < total:
                body["links"] = {"next": f"?p={page + 1}"}
            return httpx.Response(200, json=body)
        return envelope(chunk)

    return handler, state


@fuzz(60)
@given(
    count=st.integers(0, 40),
    per=st.integers(1, 7),
    shape=st.sampled_from(SHAPES),
    change=st.one_of(
        st.none(), st.tuples(st.sampled_from(["insert", "delete"]), st.integers(1, 3))
    ),
)
def test_every_item_once_in_order_and_changes_reported(count, per, shape, change):
    ids = [f"id{i:03d}" for i in range(count)]
    api = FakeApi()
    api.extra[("GET", "/firewalls")], state = _serve(ids, per, shape, change)
    client = svcnb.Client(api.token, api.base, transport=api.transport(), progress=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rows = read_all(client._req, "/firewalls", "firewall", per_page=per)
    got = [r["id"] for r in rows]
    assert len(got) == len(set(got))  # never a duplicate
    changed = state["ids"] != ids
    if not changed:
        assert got == ids
        assert not [w for w in seen if issubclass(w.category, svcnb.PagingWarning)]
    else:
        # An item there all along and not returned is always reported when the API gives
        # totals (without them a page-number list cannot tell; cursor links do not shift).
        missing = (set(ids) & set(state["ids"])) - set(got)
        warned = [w for w in seen if issubclass(w.category, svcnb.PagingWarning)]
        if shape in ("design", "items"):
            assert not missing or warned
        kept = [g for g in got if g in ids]
        assert kept == sorted(kept, key=ids.index)  # the list's order, whatever shifted
    client.close()


@fuzz(150)
@given(
    total=st.integers(0, 130),
    asked=st.integers(1, 120),
    cap=st.integers(1, 120),
    default=st.integers(1, 60),
    shape=st.sampled_from(LIST_SHAPES),
    paged_endpoint=st.booleans(),
)
def test_a_capped_server_of_any_shape_gives_exactly_its_ids(
    total, asked, cap, default, shape, paged_endpoint
):
    # A bare list cannot say that more exists: only a cap at or above the size asked is fair.
    assume(shape != "bare" or (paged_endpoint and cap >= asked))
    ids = [f"id{i:03d}" for i in range(total)]
    api = FakeApi()
    api.extra[("GET", "/firewalls")] = paged(
        [{"id": i} for i in ids], shape, cap=cap, default=default
    )
    client = svcnb.Client(api.token, api.base, transport=api.transport(), progress=False)
    per_page = asked if paged_endpoint else None
    with warnings.catch_warnings():
        warnings.simplefilter("error", svcnb.PagingWarning)
        rows = read_all(client._req, "/firewalls", "firewall", per_page=per_page)
    assert [r["id"] for r in rows] == ids
    client.close()


@fuzz(25)
@given(
    count=st.integers(0, 90),
    cap=st.integers(1, 60),
    shape=st.sampled_from([s for s in LIST_SHAPES if s != "bare"]),
    details=st.booleans(),
)
def test_the_bulk_pull_gives_exactly_the_servers_vms(count, cap, shape, details):
    api = FakeApi(vms=count)
    nested = ("sshKeys", "firewalls", "privateNetworks")
    api.extra[("GET", "/vms")] = paged(
        lambda: [{k: v for k, v in api.vms[i].items() if k not in nested} for i in sorted(api.vms)],
        shape,
        cap=cap,
    )
    client = svcnb.Client(api.token, api.base, transport=api.transport(), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", svcnb.PagingWarning)
        rows = client.vms.all(details=details, workers=4)
    assert [r["id"] for r in rows] == sorted(api.vms)
    if details:
        assert rows == [api.vms[i] for i in sorted(api.vms)]
    client.close()
