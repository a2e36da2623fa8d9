"""Helpers for the conformance suite (plain httpx over loopback)."""

from __future__ import annotations

import httpx
from _loopback import loopback_client

from svcnb.sandbox import Sandbox


class Api:
    """``api.get("/vms")`` with the admin token; ``token=`` picks another default token name, a
    raw ``svc_...`` secret, or None to send no token."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.http = loopback_client(sandbox.base_url, timeout=30.0)

    def request(
        self,
        method: str,
        path: str,
        token: str | None = "admin",
        prefix: str = "/api/public/v1",
        **kwargs,
    ) -> httpx.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token is not None:
            headers["x-api-key"] = self.sandbox.tokens.get(token, token)
        return self.http.request(method, prefix + path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def patch(self, path: str, **kwargs) -> httpx.Response:
        return self.request("PATCH", path, **kwargs)

    def delete(self, path: str, **kwargs) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    def data(self, path: str, **kwargs) -> object:
        response = self.get(path, **kwargs)
        assert response.status_code == 200, response.text
        return response.json()["data"]

    def all(self, path: str) -> list[dict]:
        items: list[dict] = []
        page = 1
        while True:
            body = self.get(path, params={"page": page, "perPage": 100}).json()
            items += body["data"]
            if page >= body["meta"]["totalPages"]:
                return items
            page += 1


def failure(response: httpx.Response, status: int) -> str:
    """Assert ``response`` is the failure envelope with ``status``; return its error text."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["success"] is False and set(body) == {"success", "error"}, body
    assert isinstance(body["error"], str) and body["error"]
    return body["error"]


def account_view(api: Api) -> dict:
    """Everything the public API shows about the account, to prove a request changed nothing."""
    view: dict = {"vms": [api.data(f"/vms/{vm['id']}") for vm in api.all("/vms")]}
    view["rules"] = [
        r for fw in api.all("/firewalls") for r in api.all(f"/firewalls/{fw['id']}/rules")
    ]
    view["attachments"] = [
        a for n in api.all("/networks") for a in api.all(f"/networks/{n['id']}/attachments")
    ]
    view["wallet"] = api.data("/wallet")
    view["webhooks"] = api.data("/webhooks")
    view["actions"] = api.sandbox.control.actions()
    return view
