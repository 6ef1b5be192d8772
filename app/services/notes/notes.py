"""Notes (contract: Note; Personal notes; Public note pages; External link fields).

Personal routes pass `OwnerScope.personal(user_id)`; team routes reuse the same functions
with `OwnerScope.team(team_id)`. Times: `updated_utc` is when the note's own fields were
last persisted (create, move, delete); `last_activity_utc` also moves on comments and
attachments. A deleted note is a tombstone (`is_deleted`) that no read returns.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound, ValidationFailed
from app.extensions import db
from app.hooks import remove_children
from app.models.base import utcnow
from app.models.category import Category, OwnerScope
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import Note, NoteComment, discoverable
from app.models.team import Team
from app.models.trackable import Trackable, note_trackables
from app.models.user import User
from app.platform.database import lock_rows
from app.policies import categories as category_policy
from app.policies import notes as note_policy
from app.services import categories, events
from app.services.notes.discovery import ACTIVITY, NoteList, note_rows
from app.services.shared import links
from app.services.shared.account_deletion import DeletionCounts
from app.services.shared.areas import Area
from app.services.shared.pages import Listing, Order, Page, read_list


def _checked_position(latitude: float | None, longitude: float | None) -> None:
    if (latitude is None) != (longitude is None):
        missing = "latitude" if latitude is None else "longitude"
        raise ValidationFailed({missing: ["Give latitude and longitude together, or neither."]})


def refresh_discoverability(note: Note) -> None:
    """Keep the stored discovery flag equal to the rule (call after any change to
    visibility, deletion or trackable associations)."""
    note.is_publicly_discoverable = note.computed_discoverability()


def create_note(viewer: Viewer, scope: OwnerScope, **fields: Any) -> Note:
    """A new note in the scope, once the viewer may work there; `fields` are add_note's."""
    team = category_policy.require_scope(viewer, scope)
    return add_note(viewer.account.id, scope, team, **fields)


def add_note(owner_user_id: uuid.UUID, scope: OwnerScope, team: Team | None, **fields: Any) -> Note:
    """A new note of `owner_user_id` in a scope already checked (`team` is what
    policies.categories.require_scope returned; the GPX import adds many after one check).
    `fields` and their defaults: `new_note_values`."""
    note = Note(**new_note_values(owner_user_id, scope, team, **fields))
    db.session.add(note)
    db.session.flush()
    if team is not None:
        events.record_team(
            events.EventType.TEAM_NOTE_CREATED, team, actor_id=owner_user_id, note_id=note.id
        )
    events.record_note_published(note, actor_id=owner_user_id, is_new=True)
    return note


def new_note_values(
    owner_user_id: uuid.UUID,
    scope: OwnerScope,
    team: Team | None,
    *,
    title: str,
    default_language: str,
    category_id: uuid.UUID | None = None,
    body: str = "",
    content_language: str | None = None,
    latitude: float | None = None,
    longitude: float | None = None,
    visibility: NoteVisibility | None = None,
    comment_policy: CommentPolicy = CommentPolicy.LOGGED_IN_USERS,
    external_link_url: str | None = None,
    external_link_description: str | None = None,
    client_mutation_id: str | None = None,
    note_id: uuid.UUID | None = None,
    default_category: Callable[[OwnerScope, str], Category] = categories.default_category,
) -> dict[str, Any]:
    """A new note's row, every create rule checked (raises as the create route answers);
    the one place those rules are written (add_note, and services.notes.batch for many).

    Without `category_id` it goes to the language's default root (`default_category`,
    made only once everything else is known to be valid); without `content_language` it
    takes its category's language, else the team's for a team note, else
    `default_language`. Without `visibility` it is `Private`, or the team's
    `defaultNoteVisibility` for a team note. `note_id` is a client's own id (sync), else
    a new one."""
    if team is not None:
        default_language = team.content_language
    if visibility is None:
        visibility = team.default_note_visibility if team is not None else NoteVisibility.PRIVATE
    _checked_position(latitude, longitude)
    # The link first: its check may fetch the page, which the tree's lock must not wait for.
    url, description = links.checked_link(external_link_url, external_link_description)
    category = categories.category_for_note(scope, category_id, content_language)
    if category is None:
        category = default_category(scope, content_language or default_language)
    now = utcnow()
    return {
        "id": note_id or uuid.uuid4(),
        "owner_user_id": owner_user_id,
        "team_id": scope.team_id,
        "category_id": category.id,
        "title": title,
        "body": body or "",
        "content_language": category.content_language,
        "latitude": latitude,
        "longitude": longitude,
        "visibility": visibility,
        "comment_policy": comment_policy,
        "external_link_url": url,
        "external_link_description": description,
        "client_mutation_id": client_mutation_id,
        "is_deleted": False,
        # a new note has no trackables yet
        "is_publicly_discoverable": discoverable(False, visibility, lambda: False),
        "created_utc": now,
        "updated_utc": now,
        "last_activity_utc": now,
    }


def get_managed(viewer: Viewer, scope: OwnerScope, note_id: uuid.UUID) -> Note:
    """A note of this scope the viewer may change: 404 outside the scope's workspace, when
    hidden or not in the scope (a team note is changed under its team), 403 when visible
    but not the viewer's to change (owner or team admin).

    The note is read locked until the commit (`lock_rows`): a sync push of the same note
    checks its base version under the same lock, so neither write overwrites the other
    unseen (docs/contract/sync.md, Sync)."""
    category_policy.require_scope(viewer, scope)
    lock_rows(db.session, select(Note).where(Note.id == note_id))
    return check_managed(viewer, scope, db.session.get(Note, note_id))


def check_managed(viewer: Viewer, scope: OwnerScope, note: Note | None) -> Note:
    """`get_managed`'s rules after the scope's, on a note read (and locked) already."""
    note = note_policy.require_visible(viewer, note)
    note_policy.require_manage(viewer, note)
    if not scope.contains(note):
        raise NotFound("Note not found.", code=Code.NOTE_NOT_FOUND)
    return note


SIMPLE_FIELDS = ("title", "body", "visibility", "comment_policy", "client_mutation_id")


def move_note(
    viewer: Viewer, scope: OwnerScope, note_id: uuid.UUID, changes: dict[str, Any]
) -> Note:
    """Apply the create-body fields present in `changes`; the others stay. Everything is
    checked before anything is applied, so a refused move changes nothing."""
    note = get_managed(viewer, scope, note_id)
    for name, value in moved_values(scope, note, changes).items():
        setattr(note, name, value)
    was_discoverable = note.is_publicly_discoverable
    refresh_discoverability(note)
    note.updated_utc = note.last_activity_utc = utcnow()
    db.session.flush()
    _record_team_note(events.EventType.TEAM_NOTE_EDITED, note, viewer)
    if not was_discoverable:
        events.record_note_published(note, actor_id=viewer.user_id, is_new=False)
    return note


def moved_values(scope: OwnerScope, note: Note, changes: dict[str, Any]) -> dict[str, Any]:
    """The values a move gives the note, every rule checked first (so a refused move
    changes nothing): the one place those rules are written (move_note, and
    services.notes.batch for many)."""
    latitude = changes.get("latitude", note.latitude)
    longitude = changes.get("longitude", note.longitude)
    _checked_position(latitude, longitude)
    # The link first: its check may fetch the page, which the tree's lock must not wait for.
    link = links.changed_link(note.external_link_url, note.external_link_description, changes)
    category = _moved_category(scope, note, changes)
    values: dict[str, Any] = {}
    if category is not None:
        values["category_id"], values["content_language"] = category.id, category.content_language
    values["latitude"], values["longitude"] = latitude, longitude
    for name in SIMPLE_FIELDS:
        if name in changes:
            values[name] = changes[name] if name != "body" else changes[name] or ""
    if link is not None:
        values["external_link_url"], values["external_link_description"] = link
    return values


def note_team(note: Note) -> Team | None:
    """The team whose admins hear of a team note's change (None: a personal note)."""
    return db.session.get(Team, note.team_id) if note.team_id is not None else None


def _record_team_note(event_type: events.EventType, note: Note, viewer: Viewer) -> None:
    """A team note's change, for the team's admins (services.events.record_team)."""
    team = note_team(note)
    if team is not None:
        events.record_team(event_type, team, actor_id=viewer.user_id, note_id=note.id)


def _moved_category(scope: OwnerScope, note: Note, changes: dict[str, Any]) -> Category | None:
    """The new category, if any; a new language needs a category in that language."""
    language = changes.get("content_language")
    if "category_id" in changes:
        return categories.category_for_note(scope, changes["category_id"], language)
    if language and categories.canonical_language(language) != note.content_language:
        raise ValidationFailed(
            {
                "contentLanguage": [
                    f"The note's category is in {note.content_language}; "
                    "send a categoryId in the new language with it."
                ]
            }
        )
    return None


def delete_note(
    viewer: Viewer, scope: OwnerScope, note_id: uuid.UUID, *, client_mutation_id: str | None = None
) -> None:
    """Tombstone the note: it leaves every read; sync still sees `isDeleted`. A sync push
    tags the tombstone with its `client_mutation_id`, so a retried delete is recognised."""
    note = get_managed(viewer, scope, note_id)
    for name, value in tombstone_values(client_mutation_id).items():
        setattr(note, name, value)
    refresh_discoverability(note)
    remove_children("note", [note.id])  # a tombstone keeps no images
    db.session.flush()
    _record_team_note(events.EventType.TEAM_NOTE_DELETED, note, viewer)


def tombstone_values(client_mutation_id: str | None) -> dict[str, Any]:
    """What a delete changes on the note (besides its discoverability, and its images)."""
    values: dict[str, Any] = {"is_deleted": True, "updated_utc": utcnow()}
    if client_mutation_id is not None:
        values["client_mutation_id"] = client_mutation_id
    return values


def list_notes(
    viewer: Viewer,
    scope: OwnerScope,
    *,
    content_language: str | None = None,
    area: Area | None = None,
    page: Page | None = None,
) -> NoteList:
    """The scope's live notes, most recent activity first (not capped: they are the
    caller's own), optionally in one language and one window; all of them, or one
    `page`."""
    category_policy.require_scope(viewer, scope)
    query = note_rows(viewer).where(scope.where(Note), Note.is_deleted.is_(False))
    if content_language:
        language = categories.canonical_language(content_language)
        query = query.where(Note.content_language == language)
    params = {}
    if area is not None:
        query = query.where(area.where())
        params = area.params()
    found = read_list(query, ACTIVITY, page=page, params=params)
    return NoteList(found.items, next_after=found.next_after)


# --- note pages: comments and trackables -------------------------------------------------


@dataclass(frozen=True)
class NoteView:
    """A note as one viewer sees it: `client_mutation_id` is the workspace's own device
    bookkeeping, None for everyone else. Every other attribute is the note's."""

    note: Note
    client_mutation_id: str | None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.note, name)


def get_note(viewer: Viewer, note_id: uuid.UUID) -> NoteView:
    """A note page: the note when the viewer may open it, else 404."""
    note = note_policy.get_visible(viewer, note_id)
    in_workspace = note_policy.in_workspace(viewer, note.owner_user_id, note.team_id)
    return NoteView(note, note.client_mutation_id if in_workspace else None)


COMMENT_ORDER = Order(NoteComment.created_utc.desc(), NoteComment.id.desc())


def list_comments(
    viewer: Viewer, note_id: uuid.UUID, *, cap: int, page: Page | None = None
) -> Listing[NoteComment]:
    """The note's comments, newest first: capped like every public list, or one `page`."""
    note = note_policy.get_visible(viewer, note_id)
    query = select(NoteComment).where(NoteComment.note_id == note.id)
    return read_list(query, COMMENT_ORDER, page=page, cap=cap, scalars=True)


def add_comment(viewer: Viewer, note_id: uuid.UUID, *, body: str) -> NoteComment:
    """Comment on a note page; the note's comment policy decides who may (403)."""
    note = note_policy.get_visible(viewer, note_id)
    note_policy.require_comment(viewer, note)
    now = utcnow()
    comment = NoteComment(
        note_id=note.id, author_user_id=viewer.user_id, body=body, created_utc=now, updated_utc=now
    )
    db.session.add(comment)
    note.last_activity_utc = now
    db.session.flush()
    return comment


ATTACHED_ORDER = Order(note_trackables.c.attached_utc.desc(), Trackable.id)


def list_note_trackables(
    viewer: Viewer, note_id: uuid.UUID, *, cap: int, page: Page | None = None
) -> Listing[Any]:
    """Trackables attached to a note the viewer can open, most recently attached first:
    capped, or one `page`."""
    note = note_policy.get_visible(viewer, note_id)
    query = (
        select(
            Trackable.id,
            Trackable.public_code,
            Trackable.name,
            Trackable.last_activity_utc,
            note_trackables.c.attached_utc,
        )
        .join(note_trackables, note_trackables.c.trackable_id == Trackable.id)
        .where(note_trackables.c.note_id == note.id)
    )
    return read_list(query, ATTACHED_ORDER, page=page, cap=cap)


def attach_trackable(note: Note, trackable: Trackable) -> None:
    """Associate a trackable with a note, keeping discovery in step (a gated note leaves
    anonymous discovery on its first trackable). Permission checks are the caller's."""
    if trackable not in note.trackables:
        note.trackables.append(trackable)
    refresh_discoverability(note)
    note.last_activity_utc = utcnow()
    db.session.flush()


# --- account deletion --------------------------------------------------------------------


def delete_account_notes(user: User, counts: DeletionCounts) -> None:
    """Hard-delete every note the user owns (personal data), with their comments and
    attachments, and every comment the user wrote on other notes. Team notes the teams
    clean-up (earlier) did not hand over are the user's own and go too."""
    owned = select(Note.id).where(Note.owner_user_id == user.id).scalar_subquery()
    counts.notes_deleted += (
        db.session.scalar(
            select(func.count())
            .select_from(Note)
            .where(Note.owner_user_id == user.id, Note.is_deleted.is_(False))
        )
        or 0
    )
    remove_children(
        "note", list(db.session.scalars(select(Note.id).where(Note.owner_user_id == user.id)))
    )
    db.session.execute(delete(NoteComment).where(NoteComment.author_user_id == user.id))
    db.session.execute(delete(NoteComment).where(NoteComment.note_id.in_(owned)))
    db.session.execute(delete(note_trackables).where(note_trackables.c.note_id.in_(owned)))
    db.session.execute(delete(Note).where(Note.owner_user_id == user.id))
