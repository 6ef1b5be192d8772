"""What the trackable pages share: the 404 they answer for what a visitor may not see
(`PageNotFound`, handled by the pages blueprint), and this browser's access-session key."""

from __future__ import annotations

from flask import current_app, request

from app.error_codes import Code
from app.errors import TrackableError
from app.services import trackables


class PageNotFound(Exception):
    """Answered with the HTML 404 page."""


def not_found_on_miss(error: TrackableError) -> None:
    """A trackable the visitor may not see (or none) is the 404 page, not an error."""
    if error.code == Code.TRACKABLE_NOT_FOUND:
        raise PageNotFound from error


def access_cookie() -> trackables.AccessCookie:
    return trackables.AccessCookie.from_config(current_app.config)


def client_key() -> str | None:
    """The key of this browser's access sessions (its cookie), if it has one."""
    return access_cookie().client_key(request.cookies)
