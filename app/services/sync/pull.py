"""Sync pull (contract: Sync; app.models.sync explains the change clock).

`server_sync_utc` is the change clock's last stamp when the pull began: every row stamped
up to it is committed and read here, and every later commit carries a later stamp, so the
next pull from it misses nothing. Without `last_sync_utc` a pull sends everything live;
with it, what changed in (last_sync_utc, server_sync_utc], plus what team changes bring.
Tombstones are `{id, teamId, isDeleted: true}`: deleted rows, and rows the caller may no
longer see. `publicNotes` is the area's public discovery list, not a delta. A bounded number
of statements, each on an index, whatever the number of rows.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, false, or_, select

from app.auth import Viewer
from app.extensions import db
from app.models.category import Category, OwnerScope
from app.models.note import Note
from app.models.sync import CATEGORY_LEFT_TEAM, NOTE_LEFT_TEAM, TEAM_ACCESS, SyncDeparture
from app.services import notes
from app.services.shared.areas import Bounds
from app.services.sync.clock import read_clock


@dataclass
class PullResult:
    """Note records are plain rows (`NoteList`, fields named by its columns), categories
    and tombstones dicts of snake_case fields."""

    server_sync_utc: datetime
    user_notes: notes.NoteList
    team_notes: notes.NoteList
    user_categories: list[dict[str, Any]] = field(default_factory=list)
    team_categories: list[dict[str, Any]] = field(default_factory=list)
    user_note_tombstones: list[dict[str, Any]] = field(default_factory=list)
    team_note_tombstones: list[dict[str, Any]] = field(default_factory=list)
    public_notes: notes.NoteList | None = None


def pull(
    viewer: Viewer, *, last_sync_utc: datetime | None, public_area: Bounds | None, cap: int
) -> PullResult:
    """What changed for this caller since `last_sync_utc` (everything when None)."""
    stamp = read_clock(db.session)
    me = viewer.account.id
    teams = set(viewer.team_roles)
    joined, left = _team_access_changes(me, teams, last_sync_utc, stamp)
    steady = teams - joined

    def window(model: Any) -> Any:
        if last_sync_utc is None:
            return model.is_deleted.is_(False)
        return and_(model.sync_utc > last_sync_utc, model.sync_utc <= stamp)

    def team_rows(model: Any) -> Any:
        whole = and_(model.team_id.in_(joined), model.is_deleted.is_(False))
        return or_(whole, and_(model.team_id.in_(steady), window(model)))

    user_notes, user_gone = _split_notes(
        notes.note_records(viewer, [OwnerScope.personal(me).where(Note), window(Note)])
    )
    team_notes, team_gone = _split_notes(notes.note_records(viewer, [team_rows(Note)]))
    user_categories = _categories([Category.owner_user_id == me, window(Category)])
    team_categories = _categories([team_rows(Category)])
    result = PullResult(
        server_sync_utc=stamp,
        user_notes=user_notes,
        team_notes=team_notes,
        user_categories=[c for c in user_categories if not c["is_deleted"]],
        team_categories=[c for c in team_categories if not c["is_deleted"]],
        user_note_tombstones=user_gone,
        team_note_tombstones=team_gone,
    )
    result.user_categories += [_tombstone(c) for c in user_categories if c["is_deleted"]]
    result.team_categories += [_tombstone(c) for c in team_categories if c["is_deleted"]]
    if last_sync_utc is not None:
        _departed(result, teams | left, left, last_sync_utc, stamp)
    if public_area is not None:
        result.public_notes = notes.public_notes(public_area, cap=cap)
    return result


# A team the caller joined since: all of it; a team the caller left (or that was deleted): a
# tombstone for each of its notes and categories.
def _team_access_changes(
    me: uuid.UUID, teams: set[uuid.UUID], last: datetime | None, stamp: datetime
) -> tuple[set[uuid.UUID], set[uuid.UUID]]:
    """(teams joined, teams left) since `last`; a first pull joins every team."""
    if last is None:
        return set(teams), set()
    changed = set(
        db.session.scalars(
            select(SyncDeparture.team_id).where(
                SyncDeparture.kind == TEAM_ACCESS,
                SyncDeparture.user_id == me,
                SyncDeparture.sync_utc > last,
                SyncDeparture.sync_utc <= stamp,
            )
        )
    )
    return changed & teams, changed - teams


def _split_notes(found: notes.NoteList) -> tuple[notes.NoteList, list[dict[str, Any]]]:
    """Live records, and tombstones for the deleted rows among them."""
    deleted_at = found.columns.index("is_deleted")
    team_at, id_at = found.columns.index("team_id"), found.columns.index("note_id")
    live = [row for row in found.rows if not row[deleted_at]]
    gone = [
        {"note_id": row[id_at], "team_id": row[team_at], "is_deleted": True}
        for row in found.rows
        if row[deleted_at]
    ]
    return notes.NoteList(live), gone


def _categories(where: list[Any]) -> list[dict[str, Any]]:
    from app.services.sync.push import category_record

    return [category_record(c) for c in db.session.scalars(select(Category).where(*where))]


def _tombstone(category: dict[str, Any]) -> dict[str, Any]:
    return {
        "category_id": category["category_id"],
        "team_id": category["team_id"],
        "is_deleted": True,
    }


# A note or category that left one of the caller's teams (handed back to its author, or gone with
# the team): a tombstone, unless the caller still has it.
def _departed(
    result: PullResult,
    teams: set[uuid.UUID],
    left: set[uuid.UUID],
    last: datetime,
    stamp: datetime,
) -> None:
    """Tombstones for rows that left the caller's teams since `last`, and for every row of
    a team the caller left, except rows the caller still receives in this pull."""
    kept_notes = {str(row[0]) for row in result.user_notes.rows + result.team_notes.rows}
    kept_categories = {str(c["category_id"]) for c in result.user_categories}
    kept_categories |= {str(c["category_id"]) for c in result.team_categories}
    departures = db.session.execute(
        select(SyncDeparture.kind, SyncDeparture.entity_id, SyncDeparture.team_id).where(
            SyncDeparture.team_id.in_(teams),
            SyncDeparture.kind.in_((NOTE_LEFT_TEAM, CATEGORY_LEFT_TEAM)),
            SyncDeparture.sync_utc > last,
            SyncDeparture.sync_utc <= stamp,
        )
    ).all()
    in_left = Note.team_id.in_(left) if left else false()
    left_notes = db.session.execute(select(Note.id, Note.team_id).where(in_left)).all()
    in_left = Category.team_id.in_(left) if left else false()
    left_categories = db.session.execute(select(Category.id, Category.team_id).where(in_left))
    gone_notes: list[tuple[Any, Any]] = [
        (i, t) for kind, i, t in departures if kind == NOTE_LEFT_TEAM
    ]
    gone_notes += [(i, t) for i, t in left_notes]
    gone_categories: list[tuple[Any, Any]] = [
        (i, t) for kind, i, t in departures if kind == CATEGORY_LEFT_TEAM
    ]
    gone_categories += [(i, t) for i, t in left_categories.all()]
    seen: set[str] = set(kept_notes)
    for note_id, team_id in gone_notes:
        if str(note_id) not in seen:
            seen.add(str(note_id))
            result.team_note_tombstones.append(
                {"note_id": str(note_id), "team_id": str(team_id), "is_deleted": True}
            )
    seen = set(kept_categories)
    for category_id, team_id in gone_categories:
        if str(category_id) not in seen:
            seen.add(str(category_id))
            result.team_categories.append(
                {"category_id": category_id, "team_id": team_id, "is_deleted": True}
            )
