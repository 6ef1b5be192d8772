"""Who may end a sign-in session (a website session, or an app's refresh-token family): its
account alone. Anyone else's id, super-admins' included, is answered 404 as an unknown
one: it reveals nothing about another account's sessions, and nothing is done with it."""

from __future__ import annotations

import uuid

from sqlalchemy import select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.identity import RefreshToken, WebsiteSession


def can_end(viewer: Viewer, owner_id: uuid.UUID) -> bool:
    return viewer.user_id is not None and viewer.user_id == owner_id


def get_own_website_session(viewer: Viewer, session_id: uuid.UUID) -> WebsiteSession:
    """The caller's website session, or 404 for one that is not theirs or does not exist."""
    found = db.session.get(WebsiteSession, session_id)
    if found is None or not can_end(viewer, found.user_id):
        raise NotFound("No such session.", code=Code.NOT_FOUND)
    return found


def require_own_family(viewer: Viewer, family_id: uuid.UUID) -> None:
    """404 unless the refresh-token family (an app's sign-in) is the caller's."""
    owner_id = db.session.scalar(
        select(RefreshToken.user_id).where(RefreshToken.family_id == family_id).limit(1)
    )
    if owner_id is None or not can_end(viewer, owner_id):
        raise NotFound("No such session.", code=Code.NOT_FOUND)
