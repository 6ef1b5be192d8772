"""Who may see or do what with trackables and their groups (contract: Trackable;
Trackable activation; Trackable group membership; Authentication items 6-7; decisions:
Responses the contract leaves open, Access sessions for secret codes).

A trackable is managed by its activator while they may still act for it, or a current
admin of its team; an unactivated one by its creator, who holds its secret. It is seen by a
manager, an unlocker, the owner scope of a note it is attached to, and otherwise by everyone
only when activated and `AlwaysVisibleToEveryone`; one the viewer may not see is 404, like a
missing one. A group is controlled by its creator (and a team group's admins) and visible
when any of its items is.
"""

from __future__ import annotations

import uuid
from collections.abc import Set
from typing import Any

from sqlalchemy import and_, exists, false, or_, select
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer, build_viewer
from app.error_codes import Code
from app.errors import Forbidden, NotFound, TrackableError
from app.extensions import db
from app.models.note import Note
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableComment,
    TrackableGroup,
    TrackableUnlock,
    TrackableVisibility,
    note_trackables,
)
from app.models.user import User
from app.policies import notes as note_policy
from app.policies import teams as team_policy

# --- managing ----------------------------------------------------------------------------


def is_activator(viewer: Viewer, trackable: Trackable) -> bool:
    """The activator, while they may still act for it (on a team's: while a member)."""
    if viewer.user_id is None or viewer.user_id != trackable.owner_user_id:
        return False
    return trackable.team_id is None or viewer.is_member_of(trackable.team_id)


# Managing covers moderation, settings, secret rotation, printing labels and group changes as the
# activator. A team-owned trackable's activator acts for it while an active member of its team.
def can_manage(viewer: Viewer, trackable: Trackable) -> bool:
    if not trackable.is_activated:
        return viewer.user_id is not None and viewer.user_id == trackable.created_by_user_id
    return is_activator(viewer, trackable) or viewer.is_admin_of(trackable.team_id)


def manage_filter(viewer: Viewer) -> ColumnElement[bool]:
    """`can_manage` as SQL (for the caller's own list)."""
    if viewer.user_id is None:
        return false()
    grants: list[ColumnElement[bool]] = [
        and_(Trackable.owner_user_id.is_(None), Trackable.created_by_user_id == viewer.user_id),
        and_(Trackable.owner_user_id == viewer.user_id, Trackable.team_id.is_(None)),
    ]
    member_of = list(viewer.team_roles)
    if member_of:
        grants.append(
            and_(Trackable.owner_user_id == viewer.user_id, Trackable.team_id.in_(member_of))
        )
    admin_of = [team_id for team_id in member_of if viewer.is_admin_of(team_id)]
    if admin_of:
        grants.append(and_(Trackable.owner_user_id.is_not(None), Trackable.team_id.in_(admin_of)))
    return or_(*grants)


def require_trackable_team(viewer: Viewer, team_id: uuid.UUID) -> None:
    """A `teamId` naming the team a trackable is to belong to (creation, groups,
    activation): one of the caller's active teams. A team the caller sees but is not an
    active member of is 403, one they cannot see 404, each with the trackable routes'
    `trackable_request_rejected`."""
    try:
        team_policy.require_own_team(viewer, team_id)
    except (NotFound, Forbidden) as error:
        raise TrackableError(
            Code.TRACKABLE_REQUEST_REJECTED, error.detail, status=error.status
        ) from error


def label_refusal(viewer: Viewer, trackable: Trackable | None) -> Code | None:
    """Why the viewer may not print labels of this trackable, as the code of the
    refusal, or None when they may: its managers print labels (they hold, or may rotate
    to, its secret). One that does not exist or that the viewer may not see is
    `trackable_not_found` (404 alike); one they see but do not manage,
    `trackable_request_rejected` (403)."""
    if trackable is None or not can_view(viewer, trackable):
        return Code.TRACKABLE_NOT_FOUND
    if not can_manage(viewer, trackable):
        return Code.TRACKABLE_REQUEST_REJECTED
    return None


def require_manage(viewer: Viewer, trackable: Trackable) -> None:
    if not can_manage(viewer, trackable):
        raise TrackableError(
            Code.TRACKABLE_REQUEST_REJECTED,
            "Only the trackable's owner or a current admin of its team may do this.",
            status=403,
        )


# --- viewing -----------------------------------------------------------------------------


def has_unlocked(viewer: Viewer, trackable: Trackable) -> bool:
    return trackable.id in viewer.unlocked_trackable_ids


def _in_note_scope(viewer: Viewer, trackable_id: Any) -> ColumnElement[bool] | None:
    """Note visibility rule 4: attached to a (not deleted) note of the viewer's workspace,
    the note's owner scope (its owner; a team note's active members). None when the
    viewer has no workspace."""
    workspace = note_policy.workspace_filter(viewer)
    if workspace is None:
        return None
    return exists().where(
        note_trackables.c.trackable_id == trackable_id,
        note_trackables.c.note_id == Note.id,
        Note.is_deleted.is_(False),
        workspace,
    )


def shares_note_scope(viewer: Viewer, trackable: Trackable) -> bool:
    """Whether a note of the viewer's workspace carries the trackable (rule 4)."""
    attached = _in_note_scope(viewer, trackable.id)
    return attached is not None and bool(db.session.scalar(select(attached)))


def account_viewer(user: User) -> Viewer:
    """`user` as a viewer by their account alone (their teams and account unlocks), for
    deciding what someone other than the requester may see (who hears of an event). Left
    to itself, the viewer's unlocks also count the current request's access cookie, which
    belongs to whoever sent the request, not to every watcher."""
    unlocked = db.session.scalars(
        select(TrackableUnlock.trackable_id).where(TrackableUnlock.user_id == user.id)
    )
    return build_viewer(user, unlocked_trackable_ids=frozenset(unlocked), access_sessions={})


# An unlocker holds the secret code or QR token, by session cookie or by account; the note's owner
# scope (its owner, a team note's active members: Note visibility rule 4) sees it while the note
# stands.
def can_view(viewer: Viewer, trackable: Trackable) -> bool:
    if can_manage(viewer, trackable) or has_unlocked(viewer, trackable):
        return True
    if not trackable.is_activated:
        return False
    if trackable.visibility == TrackableVisibility.ALWAYS_VISIBLE:
        return True
    return shares_note_scope(viewer, trackable)


def viewers_among(trackable: Trackable, user_ids: Set[uuid.UUID]) -> set[uuid.UUID]:
    """`can_view` for each account in `user_ids` by the account alone (`account_viewer`'s
    rule), as set operations in at most four small queries whatever their number: who
    may hear of an event. The queries ask who holds a grant on this trackable (its
    managers, its unlockers, the owner scope of the notes carrying it), never about each
    user, so 10,000 watchers cost what ten do."""
    if not user_ids:
        return set()
    if trackable.is_activated and trackable.visibility == TrackableVisibility.ALWAYS_VISIBLE:
        return set(user_ids)
    granted = _managers(trackable)
    granted |= set(
        db.session.scalars(
            select(TrackableUnlock.user_id).where(TrackableUnlock.trackable_id == trackable.id)
        )
    )
    if trackable.is_activated:
        granted |= _note_scope_members(trackable.id)
    return granted & set(user_ids)


def _managers(trackable: Trackable) -> set[uuid.UUID]:
    """`can_manage`'s accounts: the creator of an unactivated trackable; the activator
    (of a team's: while a member) and the team's admins."""
    if not trackable.is_activated:
        return {trackable.created_by_user_id} if trackable.created_by_user_id else set()
    if trackable.team_id is None:
        return {trackable.owner_user_id} if trackable.owner_user_id else set()
    members = team_policy.active_member_ids([trackable.team_id])
    admins = team_policy.active_member_ids([trackable.team_id], admins=True)
    activator = {trackable.owner_user_id} if trackable.owner_user_id else set()
    return admins | (activator & members)


def _note_scope_members(trackable_id: uuid.UUID) -> set[uuid.UUID]:
    """Rule 4's accounts: the owner scope of every (not deleted) note carrying it."""
    notes = db.session.execute(
        select(Note.owner_user_id, Note.team_id).where(
            note_trackables.c.trackable_id == trackable_id,
            note_trackables.c.note_id == Note.id,
            Note.is_deleted.is_(False),
        )
    ).all()
    owners = {owner for owner, _team in notes if owner is not None}
    teams = {team for _owner, team in notes if team is not None}
    return owners | team_policy.active_member_ids(teams)


def public_list_filter() -> ColumnElement[bool]:
    """The anonymous public list: activated and always visible."""
    return and_(
        Trackable.owner_user_id.is_not(None),
        Trackable.visibility == TrackableVisibility.ALWAYS_VISIBLE,
    )


def visible_filter(viewer: Viewer) -> ColumnElement[bool]:
    """`can_view` as SQL."""
    grants = [public_list_filter(), manage_filter(viewer)]
    if viewer.unlocked_trackable_ids:
        grants.append(Trackable.id.in_(list(viewer.unlocked_trackable_ids)))
    attached = _in_note_scope(viewer, Trackable.id)
    if attached is not None:
        grants.append(and_(Trackable.owner_user_id.is_not(None), attached))
    return or_(*grants)


def not_found() -> TrackableError:
    return TrackableError(Code.TRACKABLE_NOT_FOUND, "Trackable not found.")


def get_visible(viewer: Viewer, trackable_id: uuid.UUID) -> Trackable:
    """The trackable, or 404 `trackable_not_found` (hidden and missing look alike)."""
    trackable = db.session.get(Trackable, trackable_id)
    if trackable is None or not can_view(viewer, trackable):
        raise not_found()
    return trackable


# --- groups ------------------------------------------------------------------------------


def controls_group(viewer: Viewer, group: TrackableGroup) -> bool:
    """The group's creator, or an admin of the group's team."""
    if viewer.user_id is not None and viewer.user_id == group.owner_user_id:
        return True
    return viewer.is_admin_of(group.team_id)


def can_view_group(viewer: Viewer, group: TrackableGroup) -> bool:
    """Its controllers, and whoever may see any of its items."""
    if controls_group(viewer, group):
        return True
    visible_item = exists().where(Trackable.group_id == group.id, visible_filter(viewer))
    return bool(db.session.scalar(select(visible_item)))


def get_visible_group(viewer: Viewer, group_id: uuid.UUID) -> TrackableGroup:
    """The group, or 404 `trackable_not_found` (hidden and missing look alike)."""
    group = db.session.get(TrackableGroup, group_id)
    if group is None or not can_view_group(viewer, group):
        raise TrackableError(Code.TRACKABLE_NOT_FOUND, "Trackable group not found.")
    return group


def can_detach(viewer: Viewer, trackable: Trackable) -> bool:
    """Out of its group: the original activator, or an eligible group admin (who controls
    the group)."""
    group = trackable.group
    return is_activator(viewer, trackable) or (group is not None and controls_group(viewer, group))


def can_attach(viewer: Viewer, trackable: Trackable, group: TrackableGroup) -> bool:
    """Into a group: the original activator who also controls the destination group, or an
    admin of the trackable's team who controls the destination group."""
    if not controls_group(viewer, group):
        return False
    return is_activator(viewer, trackable) or viewer.is_admin_of(trackable.team_id)


# --- activity: comments and journey stops -------------------------------------------------
# (contract: Trackables: comments and journey, permission rules 1-4). Children ask their
# parent: whoever may see the trackable reads its comments and journey.


def holds_session(viewer: Viewer, trackable: Trackable) -> bool:
    """Rule 1's active session: this client (or account) unlocked the trackable. For an
    anonymous viewer the unlocked set is exactly its access-session cookie's."""
    return has_unlocked(viewer, trackable)


def can_write_without_code(viewer: Viewer, trackable: Trackable) -> bool:
    """Comment or add a stop without sending a code: a signed-in viewer who may see the
    trackable (the contract asks possession only of anonymous writers), or a client with
    an active session for it (rule 1)."""
    if viewer.is_authenticated:
        return can_view(viewer, trackable)
    return holds_session(viewer, trackable)


def is_owner_side(viewer: Viewer, trackable: Trackable) -> bool:
    """Rule 3's "trackable owner or current team admin": its activator (while on its team,
    for a team-owned one) or a current admin of the owning team."""
    return trackable.is_activated and (
        is_activator(viewer, trackable) or viewer.is_admin_of(trackable.team_id)
    )


def is_author(viewer: Viewer, author_user_id: uuid.UUID | None) -> bool:
    """The signed-in author of a comment or stop (anonymous entries have no author)."""
    return viewer.user_id is not None and viewer.user_id == author_user_id


def can_edit_comment(viewer: Viewer, comment: TrackableComment) -> bool:
    """Rule 2: only the signed-in author; owners and admins never edit others' words."""
    return is_author(viewer, comment.author_user_id)


def require_edit_comment(viewer: Viewer, comment: TrackableComment) -> None:
    if not can_edit_comment(viewer, comment):
        raise TrackableError(
            Code.TRACKABLE_COMMENT_EDIT_FORBIDDEN,
            "Only the comment's signed-in author may edit it.",
        )


def can_delete_entry(
    viewer: Viewer, trackable: Trackable, author_user_id: uuid.UUID | None
) -> bool:
    """Rule 3 (comments and stops): the signed-in author, the owner or a current team admin."""
    return is_author(viewer, author_user_id) or is_owner_side(viewer, trackable)


def require_delete_comment(viewer: Viewer, trackable: Trackable, comment: TrackableComment) -> None:
    if not can_delete_entry(viewer, trackable, comment.author_user_id):
        raise TrackableError(
            Code.TRACKABLE_COMMENT_DELETE_FORBIDDEN,
            "Only the comment's author, the trackable's owner or a team admin may delete it.",
        )


def require_delete_stop(viewer: Viewer, trackable: Trackable, stop: JourneyStop) -> None:
    if not can_delete_entry(viewer, trackable, stop.created_by_user_id):
        raise TrackableError(
            Code.TRACKABLE_JOURNEY_STOP_DELETE_FORBIDDEN,
            "Only the stop's author, the trackable's owner or a team admin may delete it.",
        )


def can_convert_stop(viewer: Viewer, stop: JourneyStop) -> bool:
    """Rule 4: a direct report (a location-only stop, not one a note attachment recorded)
    made by a signed-in caller, converted by that same caller."""
    return not stop.is_anonymous and is_author(viewer, stop.created_by_user_id)


def require_convert_stop(viewer: Viewer, stop: JourneyStop) -> None:
    if not can_convert_stop(viewer, stop):
        raise TrackableError(
            Code.TRACKABLE_JOURNEY_STOP_CONVERT_FORBIDDEN,
            "Only the signed-in creator of a direct report may turn it into a note.",
        )


# --- finders' photos: images of a comment or a stop ----------------------------------------
# (docs/contract/images.md, Finders' photos). The image area asks these for targetType 5
# and 6; the entry asks its trackable, as every child does.

Entry = TrackableComment | JourneyStop


def writer_session(viewer: Viewer, trackable: Trackable) -> uuid.UUID | None:
    """What a new entry records of an anonymous writer: the access session this client
    holds for the trackable (None for a signed-in writer, known by account, and for an
    anonymous one who sent the code without holding a session)."""
    if viewer.is_authenticated:
        return None
    return viewer.access_sessions.get(trackable.id)


def entry_trackable(entry: Entry) -> Trackable | None:
    return db.session.get(Trackable, entry.trackable_id)


def is_entry_writer(viewer: Viewer, entry: Entry) -> bool:
    """A signed-in writer by account; an anonymous one by the access session it wrote
    with, while this client still holds that very session (ending it, or a rotated
    secret, ends the proof)."""
    if isinstance(entry, TrackableComment):
        author = entry.author_user_id
    else:
        author = None if entry.is_anonymous else entry.created_by_user_id
    if author is not None:
        return is_author(viewer, author)
    session = entry.writer_session_id
    return session is not None and viewer.access_sessions.get(entry.trackable_id) == session


# Finders' photos: added by the entry's writer only (a signed-in one by account, an anonymous one by
# the access session it wrote with, while this client still holds it); removed by the writer or by
# the owner side.
def can_add_entry_photo(viewer: Viewer, trackable: Trackable, entry: Entry) -> bool:
    """Only the entry's writer (owners and admins never add to others' words)."""
    return trackable.is_activated and is_entry_writer(viewer, entry)


def can_remove_entry_photo(viewer: Viewer, trackable: Trackable, entry: Entry) -> bool:
    """The writer, or rule 3's owner side (who may delete the entry itself)."""
    return is_entry_writer(viewer, entry) or is_owner_side(viewer, trackable)
