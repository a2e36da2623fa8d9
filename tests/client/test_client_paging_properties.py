"""Properties of the page iterator over random lists, page sizes and answer shapes."""

from __future__ import annotations

import warnings

import httpx
from _fakeapi import FakeApi, envelope
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import svcnb
from svcnb.client import _paging

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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
        rows = _paging.read_all(client._req, "/firewalls", "firewall", per_page=per)
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
