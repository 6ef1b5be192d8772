"""Trackable routes: reads (the public list, the caller's list, one trackable), on the
trackables blueprint (contract: Trackables: reads, creation, groups; decisions: Lists)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.trackables.routes import blp
from app.api.trackables.schemas import (
    MyTrackableSchema,
    PublicTrackablesQuerySchema,
    TrackableSchema,
)
from app.auth import current_viewer
from app.services import trackables

CAPPED_LIST_HEADERS = {
    "X-Result-Truncated": {
        "description": "`true` when more records matched than the cap returned.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}


@blp.route("/trackables/public", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PublicTrackablesQuerySchema, location="query")
@blp.response(200, TrackableSchema(many=True), headers=CAPPED_LIST_HEADERS)
def list_public_trackables(query: dict) -> Any:
    """List public trackables

    Activated `AlwaysVisibleToEveryone` trackables, most recent activity first, at most
    the cap (500); `X-Result-Truncated: true` when cut. `contentLanguage` is accepted but
    does not filter: public trackable reads stay multilingual.
    """
    found = trackables.public_trackables(
        current_viewer(), cap=current_app.config["PUBLIC_LIST_CAP"]
    )
    if found.truncated:
        return found.items, 200, {"X-Result-Truncated": "true"}
    return found.items


@blp.route("/trackables/mine", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, MyTrackableSchema(many=True), headers=LINK_HEADERS)
def list_my_trackables(query: dict) -> Any:
    """List my trackables

    The trackables the caller manages (created and not yet activated, activated, or
    administered through a team) and the ones they unlocked, each with its `relation`,
    most recent activity first. Not capped; paged with `limit` and `cursor`.
    """
    return list_answer(trackables.my_trackables(current_viewer(), page=query["page"]))


@blp.route("/trackables/<uuid:trackable_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, TrackableSchema)
def get_trackable(trackable_id: UUID) -> Any:
    """Get a trackable

    404 `trackable_not_found` when it does not exist or the caller may not see it (a
    `VisibleOnceAccessed` or unactivated one, for anyone who neither manages nor unlocked
    it).
    """
    return trackables.get_trackable(current_viewer(), trackable_id)
