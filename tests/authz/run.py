"""Running one operation of the matrix for every caller kind in one object state."""

from __future__ import annotations

import io
from typing import Any

from flask import Flask

from tests.authz.requests import CALLS, DEFAULT_PATH, GPX, TEAM_PATH, Call, is_destructive
from tests.authz.world import CALLERS, World, build_world, tiny_jpeg


def url_of(world: World, op: str, call: Call) -> str:
    path = op.split(" ", 1)[1]
    names = {**DEFAULT_PATH, **(TEAM_PATH if path.startswith("/api/teams/") else {}), **call.path}
    while "{" in path:
        start = path.index("{")
        parameter = path[start + 1 : path.index("}", start)]
        name = names[parameter]
        value = name[1:] if name.startswith("=") else world.lazy(name)
        path = path.replace("{" + parameter + "}", value)
    return path


def _value(body: Any, world: World, caller: str) -> Any:
    return body(world, caller) if callable(body) else body


def send(world: World, op: str, caller: str) -> Any:
    call = CALLS[op]
    method = op.split(" ", 1)[0]
    url = url_of(world, op, call)
    kwargs: dict[str, Any] = {}
    if call.json is not None:
        kwargs["json"] = _value(call.json, world, caller)
    if call.query is not None:
        kwargs["query_string"] = _value(call.query, world, caller)
    if call.upload == "gpx":
        kwargs["data"] = {"file": (io.BytesIO(GPX.read_bytes()), "w.gpx"), "visibility": "Private"}
        kwargs["content_type"] = "multipart/form-data"
    elif call.upload == "jpeg":
        kwargs["data"] = {"file": (io.BytesIO(tiny_jpeg()), "photo.jpg", "image/jpeg")}
        kwargs["content_type"] = "multipart/form-data"
    return world.request(caller, method, url, **kwargs)


def observe(app: Flask, op: str, state: str) -> dict[str, tuple[str, Any]]:
    """Each caller's response to `op` on a world in `state`. A request that changed the
    world (a destructive write that succeeded) is followed by a fresh world for the next
    caller."""
    call = CALLS[op]
    world = build_world(app, call.state, state)
    seen: dict[str, tuple[str, Any]] = {}
    for caller in CALLERS:
        shown = world.lazy(call.shows) if call.shows else None
        response = send(world, op, caller)
        seen[caller] = outcome(response, shown), response
        if response.status_code < 300 and is_destructive(op, call):
            world = build_world(app, call.state, state)
    return seen


def outcome(response: Any, shown: str | None) -> str:
    """The status, and for a listing read whether the shown object is in the answer."""
    status = str(response.status_code)
    if shown is None or response.status_code != 200:
        return status
    return status + ("+" if shown in response.get_data(as_text=True) else "-")
