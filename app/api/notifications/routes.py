"""Inbox routes: signed in only, and only the caller's own
notifications and mail settings."""

from __future__ import annotations

from typing import Any

from flask import current_app

from app.api.base import Blueprint
from app.api.notifications.schemas import (
    MarkReadSchema,
    NotificationSchema,
    NotificationSettingsSchema,
    NotificationSettingsUpdateSchema,
    UnreadCountSchema,
)
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.auth import current_viewer
from app.extensions import db
from app.services import events

blp = Blueprint(
    "notifications",
    __name__,
    url_prefix="/api/notifications",
    description="The inbox: what happened to watched and owned trackables, to the teams "
    "one administers, and in watched areas",
)

CAPPED_LIST_HEADERS = {
    "X-Result-Truncated": {
        "description": "`true` when more notifications exist than the cap returned.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}


@blp.route("", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, NotificationSchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS})
def list_notifications(query: dict) -> Any:
    """List my notifications

    Newest first, at most the cap (500), `X-Result-Truncated: true` when cut; or paged
    with `limit` and `cursor`. A change reaches the inbox once the worker has fanned it
    out (at least once, usually within seconds). Each `text` is in the `language` of the
    caller's notification settings.
    """
    found = events.list_notifications(
        current_viewer(), page=query["page"], cap=current_app.config["PUBLIC_LIST_CAP"]
    )
    return list_answer(found)


@blp.route("/unread-count", methods=["GET"])
@blp.auth()
@blp.response(200, UnreadCountSchema)
def count_unread_notifications() -> Any:
    """Count my unread notifications"""
    return {"unread_count": events.unread_count(current_viewer())}


@blp.route("/read", methods=["POST"])
@blp.auth()
@blp.arguments(MarkReadSchema)
@blp.response(204)
def mark_notifications_read(data: dict) -> None:
    """Mark notifications read

    By `notificationIds`, or `upTo` one: it and every older one. Exactly one of the two
    (400 otherwise). Ids that are not the caller's are ignored, never a sign that they
    exist; a notification read before keeps its first `readUtc`.
    """
    events.mark_read(current_viewer(), **data)
    db.session.commit()


@blp.route("/settings", methods=["GET"])
@blp.auth()
@blp.response(200, NotificationSettingsSchema)
def get_notification_settings() -> Any:
    """Get my notification mail settings

    Until changed: `daily` in `en`.
    """
    return events.get_mail_settings(current_viewer())


@blp.route("/settings", methods=["PUT"])
@blp.auth()
@blp.arguments(NotificationSettingsUpdateSchema)
@blp.response(200, NotificationSettingsSchema)
def update_notification_settings(data: dict) -> Any:
    """Change my notification mail settings

    The fields present are applied; the others stay. Mail already on its way follows the
    setting at the time it is sent.
    """
    settings = events.update_mail_settings(current_viewer(), **data)
    db.session.commit()
    return settings
