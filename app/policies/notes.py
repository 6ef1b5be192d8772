"""The note rule (contract: Note, visibility rules 1-3; Public note pages).

One rule, several faces: `can_view` for one note, `visible_filter` the same as SQL for lists,
`get_visible` / `require_visible` (404: hidden and missing look alike); anonymous discovery
(`public_discovery_filter`) is narrower: a viewer who unlocked a gated note's trackable may
open it, but it stays out of discovery. A note's workspace is its owner plus, for a team
note, the team's active members (`Viewer.team_roles`): they see it whatever its visibility;
the owner and team admins manage it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, case, exists, null, or_, select
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer
from app.error_codes import Code
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.category import OwnerScope
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note
from app.models.trackable import TrackableUnlock, note_trackables
from app.models.user import User

# --- the workspace -----------------------------------------------------------------------


def in_workspace(viewer: Viewer, owner_user_id: Any, team_id: Any) -> bool:
    """The note's owner, or a member of its team."""
    if viewer.user_id is not None and viewer.user_id == owner_user_id:
        return True
    return viewer.is_member_of(team_id)


def workspace_filter(viewer: Viewer) -> ColumnElement[bool] | None:
    """`in_workspace` as SQL (None when the viewer has no workspace at all)."""
    grants: list[ColumnElement[bool]] = []
    if viewer.user_id is not None:
        grants.append(Note.owner_user_id == viewer.user_id)
    if viewer.team_roles:
        grants.append(Note.team_id.in_(list(viewer.team_roles)))
    return or_(*grants) if grants else None


# --- viewing -----------------------------------------------------------------------------


def can_view(viewer: Viewer, note: Note) -> bool:
    """Visibility rules 1-3 of the Note resource."""
    if note.is_deleted:
        return False
    if in_workspace(viewer, note.owner_user_id, note.team_id):
        return True
    if note.visibility == NoteVisibility.PUBLIC:
        return True
    if note.visibility == NoteVisibility.ONCE_TRACKABLE_ACCESSED:
        attached = note.trackable_ids
        return not attached or bool(attached & viewer.unlocked_trackable_ids)
    return False


def public_discovery_filter() -> ColumnElement[bool]:
    """Anonymous discovery: `Public`, or gated with no trackable yet; never deleted.

    Reads the stored flag the notes service maintains, so it is one partial-index filter.
    The bare column (not `IS TRUE`) is what lets the planner match the partial indexes'
    `WHERE is_publicly_discoverable`.
    """
    return Note.is_publicly_discoverable.expression


def visible_filter(viewer: Viewer) -> ColumnElement[bool]:
    """`can_view` as SQL. The discoverable flag covers Public and untouched gated notes."""
    grants: list[ColumnElement[bool]] = [public_discovery_filter()]
    workspace = workspace_filter(viewer)
    if workspace is not None:
        grants.append(workspace)
    if viewer.unlocked_trackable_ids:
        unlocked_attachment = exists().where(
            note_trackables.c.note_id == Note.id,
            note_trackables.c.trackable_id.in_(list(viewer.unlocked_trackable_ids)),
        )
        grants.append(
            and_(Note.visibility == NoteVisibility.ONCE_TRACKABLE_ACCESSED, unlocked_attachment)
        )
    return and_(Note.is_deleted.is_(False), or_(*grants))


def get_visible(viewer: Viewer, note_id: uuid.UUID) -> Note:
    """The note, or 404 for a missing, deleted or hidden one (they must look alike)."""
    return require_visible(viewer, db.session.get(Note, note_id))


def require_visible(viewer: Viewer, note: Note | None) -> Note:
    """`get_visible` on a note read already (None: missing), for a batch that read its
    notes in one statement."""
    if note is None or not can_view(viewer, note):
        raise NotFound("Note not found.", code=Code.NOTE_NOT_FOUND)
    return note


def profile_filter(owner: User) -> ColumnElement[bool]:
    """A public profile shows its user's personal notes (team notes show on team pages)."""
    return OwnerScope.personal(owner.id).where(Note)


def team_page_filter(team_id: uuid.UUID) -> ColumnElement[bool]:
    """A public team page shows the team's notes (each still under `visible_filter`)."""
    return OwnerScope.team(team_id).where(Note)


def client_fields_column(viewer: Viewer) -> ColumnElement[Any]:
    """`clientMutationId` is the owner's device bookkeeping: its value for the note's
    workspace, NULL for everyone else (SQL; NoteSchema asks `in_workspace`)."""
    workspace = workspace_filter(viewer)
    if workspace is None:
        return null()
    return case((workspace, Note.client_mutation_id), else_=null())


# --- acting ------------------------------------------------------------------------------


def can_manage(viewer: Viewer, note: Note) -> bool:
    """Edit, delete, attach: the owner, or an admin of the note's team."""
    if viewer.user_id is not None and viewer.user_id == note.owner_user_id:
        return True
    return viewer.is_admin_of(note.team_id)


def require_manage(viewer: Viewer, note: Note) -> None:
    if not can_manage(viewer, note):
        raise Forbidden(
            "Only the note's owner or a team admin may change this note.",
            code=Code.NOTE_CHANGE_FORBIDDEN,
        )


def can_comment(viewer: Viewer, note: Note) -> bool:
    """Comment policy, on top of viewing: `LoggedInUsers` lets any signed-in viewer in;
    `TeamMembers` only the note's workspace (its owner and its team's members)."""
    if not viewer.is_authenticated or not can_view(viewer, note):
        return False
    if note.comment_policy == CommentPolicy.TEAM_MEMBERS:
        return in_workspace(viewer, note.owner_user_id, note.team_id)
    return True


def require_comment(viewer: Viewer, note: Note) -> None:
    if not can_comment(viewer, note):
        raise Forbidden(
            "This note only accepts comments from its team's members.",
            code=Code.NOTE_COMMENT_FORBIDDEN,
        )


# --- the viewer's unlocked trackables ----------------------------------------------------


def account_unlocks(user: User | None) -> Mapping[str, Any]:
    """A signed-in viewer's unlocked trackables, as stored on the account (the signed
    cookie of an anonymous client's sessions comes with the trackables area, as a part of
    its own; build_viewer merges the sets)."""
    if user is None:
        return {}
    unlocked = db.session.scalars(
        select(TrackableUnlock.trackable_id).where(TrackableUnlock.user_id == user.id)
    )
    return {"unlocked_trackable_ids": frozenset(unlocked)}
