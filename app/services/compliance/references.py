"""Where a reviewer opens the content a report names (contract: Compliance).

A report carries the reporter's view of the content (`contentPreview`, stored as sent) and
the references the page gave (`pageReference`, `contentReference`). When a reference names
content this service holds, the report also keeps a link to where that content is read
now, so a reviewer compares what was reported with what is there. The link is shown to
super-admins only, so it reveals nothing to a reporter who guessed an id.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from app.extensions import db
from app.models.compliance import PageType
from app.models.note import Note, NoteComment
from app.models.team import Team
from app.models.trackable import Trackable
from app.models.user import User


def _as_id(reference: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(reference.strip())
    except ValueError:
        return None


def review_url(page_type: int, page_reference: str, content_reference: str) -> str | None:
    """A relative API path to the reported content, or None when it names nothing held."""
    reference = page_reference.strip()
    if not reference:
        return None
    if page_type == PageType.NOTE:
        return _note_url(reference, content_reference)
    if page_type == PageType.TRACKABLE:
        return _trackable_url(reference)
    if page_type == PageType.TEAM:
        return _team_url(reference)
    if page_type == PageType.PROFILE:
        return _profile_url(reference)
    return None


def _note_url(reference: str, content_reference: str) -> str | None:
    note_id = _as_id(reference)
    if note_id is None or db.session.get(Note, note_id) is None:
        return None
    url = f"/api/public/notes/{note_id}"
    comment_id = _as_id(content_reference)
    if comment_id is not None:
        comment = db.session.get(NoteComment, comment_id)
        if comment is not None and comment.note_id == note_id:
            return f"{url}/comments#{comment_id}"
    return url


def _trackable_url(reference: str) -> str | None:
    trackable_id = _as_id(reference)
    query = select(Trackable.id)
    if trackable_id is not None:
        query = query.where(Trackable.id == trackable_id)
    else:
        query = query.where(func.upper(Trackable.public_code) == reference.upper())
    found = db.session.scalar(query)
    return f"/api/trackables/{found}" if found is not None else None


def _team_url(reference: str) -> str | None:
    team_id = _as_id(reference)
    if team_id is not None:
        team = db.session.get(Team, team_id)
    else:
        team = db.session.scalar(select(Team).where(Team.slug == reference.lower()))
    return f"/api/public/teams/{team.slug}/notes/nearby" if team is not None else None


def _profile_url(reference: str) -> str | None:
    user_id = _as_id(reference)
    if user_id is not None:
        user = db.session.get(User, user_id)
    else:
        user = db.session.scalar(select(User).where(User.user_name == reference.lower()))
    return f"/api/public/profiles/{user.user_name}/notes/nearby" if user is not None else None
