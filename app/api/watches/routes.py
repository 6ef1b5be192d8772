"""Area watch routes (beyond the contract; docs/contract/events.md, Events and
notifications): signed in only, and only the caller's own watches."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from app.api.base import Blueprint
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.watches.schemas import AreaWatchCreateSchema, AreaWatchSchema, window_of
from app.auth import current_viewer
from app.extensions import db
from app.services import events

blp = Blueprint(
    "watches",
    __name__,
    url_prefix="/api/watches",
    description="Area watches: hear of new public notes and journey stops in a map window",
)


@blp.route("/areas", methods=["POST"])
@blp.auth()
@blp.arguments(AreaWatchCreateSchema)
@blp.response(201, AreaWatchSchema)
def create_area_watch(data: dict) -> Any:
    """Watch a map area

    The caller hears (in the inbox) of notes that become public inside the window, in
    `contentLanguage` when given, and of new journey stops of publicly visible trackables
    inside it. At most 10 degrees each way (400 naming the side); at most 20 watches per
    account (400 `area_watch_limit_reached`; setting AREA_WATCHES_PER_USER_MAX).
    """
    content_language = data.pop("content_language", None)
    watch = events.create_area_watch(
        current_viewer(),
        window_of(data),
        content_language=content_language,
        most=current_app.config["AREA_WATCHES_PER_USER_MAX"],
    )
    db.session.commit()
    return watch


@blp.route("/areas", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, AreaWatchSchema(many=True), headers=LINK_HEADERS)
def list_area_watches(query: dict) -> Any:
    """List my area watches

    Newest first; paged with `limit` and `cursor`.
    """
    return list_answer(events.list_area_watches(current_viewer(), page=query["page"]))


@blp.route("/areas/<uuid:area_watch_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_area_watch(area_watch_id: UUID) -> None:
    """Stop watching a map area

    404 `area_watch_not_found` for a watch that is not the caller's, as for none.
    """
    events.delete_area_watch(current_viewer(), area_watch_id)
    db.session.commit()
