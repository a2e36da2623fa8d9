"""GET /networks, and the attachments of a network: list, POST, DELETE (the rules live in
:mod:`.backends.networks`)."""

from __future__ import annotations

from ._envelopes import ok
from ._routes import Call, Route
from ._speak import Listing
from ._state import State


def list_networks(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.networks.networks.records())


def list_attachments(state: State, call: Call) -> tuple[int, Listing]:
    return 200, Listing(state.backends.networks.attachments_of(call.params["id"]))


def create_attachment(state: State, call: Call) -> tuple[int, dict]:
    return 201, ok(state.backends.networks.attach_checked(call.params["id"], call.body))


def delete_attachment(state: State, call: Call) -> tuple[int, dict]:
    return 200, ok(state.backends.networks.detach(call.params["id"], call.params["vmId"]))


ROUTES = [
    Route(
        "GET",
        "/networks",
        "networks:read",
        list_networks,
        200,
        "List private networks",
        "Network",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "GET",
        "/networks/{id}/attachments",
        "networks:read",
        list_attachments,
        200,
        "List the attachments of a network (sandbox extension)",
        "Attachment",
        listing=True,
        failures=(403, 422),
    ),
    Route(
        "POST",
        "/networks/{id}/attachments",
        "networks:write",
        create_attachment,
        201,
        "Attach a VM to a private network",
        "AttachmentCreated",
        body="AttachmentCreate",
        failures=(400, 403, 409, 413, 422),
    ),
    Route(
        "DELETE",
        "/networks/{id}/attachments/{vmId}",
        "networks:write",
        delete_attachment,
        200,
        "Detach a VM from a private network",
        "Detached",
        failures=(403, 409),
    ),
]
