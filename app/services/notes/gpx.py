"""GPX export and import of notes (contract: Personal notes and GPX; Teams, notes/gpx).

Both take an OwnerScope, so personal and team routes share them. Export streams the
scope's mapped notes as GPX 1.1 waypoints without holding them all in memory. Import reads
waypoints only, creates normal mapped notes through services.notes and never overwrites:
within the scope, the same title and coordinates with the same text is a duplicate; the
same title and coordinates with other text is skipped (both create nothing).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from sqlalchemy import select, tuple_

from app.auth import Viewer
from app.errors import ValidationFailed
from app.extensions import db
from app.models.category import OwnerScope
from app.models.enums import NoteVisibility
from app.models.note import BODY_MAX_LENGTH, TITLE_MAX_LENGTH, Note
from app.platform.database import lock_for_write
from app.policies import categories as category_policy
from app.services import categories
from app.services.notes import notes
from app.storage.gpx import (
    ExportWaypoint,
    GpxError,
    duplicate_key,
    parse_waypoints,
    read_limited,
    text_key,
)

CREATED, DUPLICATE, SKIPPED, REJECTED = "created", "duplicate", "skipped", "rejected"


def export_waypoints(
    viewer: Viewer, scope: OwnerScope, *, batch_size: int = 1000
) -> Iterator[ExportWaypoint]:
    """The scope's notes that have coordinates, oldest first. Read in keyset batches: memory
    stays flat and no database cursor has to outlive a batch while the response streams."""
    category_policy.require_scope(viewer, scope)
    query = (
        select(
            Note.id,
            Note.title,
            Note.body,
            Note.latitude,
            Note.longitude,
            Note.created_utc,
            Note.external_link_url,
            Note.external_link_description,
        )
        .where(scope.where(Note), Note.is_deleted.is_(False), Note.latitude.is_not(None))
        .order_by(Note.created_utc, Note.id)
        .limit(batch_size)
    )
    after: tuple[Any, uuid.UUID] | None = None
    while True:
        page = query if after is None else query.where(tuple_(Note.created_utc, Note.id) > after)
        rows = db.session.execute(page).all()
        for row in rows:
            yield ExportWaypoint(
                latitude=row.latitude,
                longitude=row.longitude,
                name=row.title,
                description=row.body,
                time=row.created_utc,
                link=row.external_link_url,
                link_text=row.external_link_description or None,
            )
        if len(rows) < batch_size:
            return
        after = (rows[-1].created_utc, rows[-1].id)


@dataclass
class WaypointOutcome:
    index: int
    name: str
    outcome: str
    note_id: uuid.UUID | None = None
    reason: str = ""


@dataclass
class ImportReport:
    created: int = 0
    duplicates: int = 0
    skipped: int = 0
    rejected: int = 0
    waypoints: list[WaypointOutcome] = field(default_factory=list)

    def add(self, outcome: WaypointOutcome) -> None:
        self.waypoints.append(outcome)
        counter = {CREATED: "created", DUPLICATE: "duplicates", SKIPPED: "skipped"}
        name = counter.get(outcome.outcome, "rejected")
        setattr(self, name, getattr(self, name) + 1)


def _existing(scope: OwnerScope) -> dict[tuple[str, int, int], dict[str, uuid.UUID]]:
    """duplicate key -> {text key: note id} of the scope's live mapped notes."""
    query = select(Note.id, Note.title, Note.body, Note.latitude, Note.longitude).where(
        scope.where(Note), Note.is_deleted.is_(False), Note.latitude.is_not(None)
    )
    known: dict[tuple[str, int, int], dict[str, uuid.UUID]] = {}
    for row in db.session.execute(query):
        key = duplicate_key(row.title, row.latitude, row.longitude)
        known.setdefault(key, {})[text_key(row.body)] = row.id
    return known


def import_waypoints(
    viewer: Viewer,
    scope: OwnerScope,
    upload: BinaryIO,
    *,
    visibility: NoteVisibility,
    content_language: str | None,
    default_language: str,
    max_bytes: int,
    max_waypoints: int,
    max_elements: int,
    max_parse_seconds: float,
) -> ImportReport:
    """Create a note for each new waypoint and report every waypoint's outcome. A team
    import takes the team's content language like any team note."""
    team = category_policy.require_scope(viewer, scope)
    if team is not None:
        default_language = team.content_language
    try:
        parsed = parse_waypoints(
            read_limited(upload, max_bytes=max_bytes),
            max_bytes=max_bytes,
            max_elements=max_elements,
            max_seconds=max_parse_seconds,
        )
    except GpxError as error:
        raise ValidationFailed({"file": [error.reason]}) from None
    total = len(parsed.waypoints) + len(parsed.rejected)
    if total > max_waypoints:
        raise ValidationFailed({"file": [f"At most {max_waypoints} waypoints per import."]})
    # Parallel imports of one file into one scope take turns from here: each compares with
    # what the others created, so the second reports duplicates instead of cloning notes.
    lock_for_write(db.session, f"gpx-import:{scope.user_id}:{scope.team_id}")
    category = categories.default_category(scope, content_language or default_language)
    known = _existing(scope)
    report = ImportReport()
    outcomes = [
        WaypointOutcome(item.index, item.name, REJECTED, reason=item.reason)
        for item in parsed.rejected
    ]
    for waypoint in parsed.waypoints:
        title = (waypoint.name or f"Waypoint {waypoint.index + 1}")[:TITLE_MAX_LENGTH]
        body = waypoint.description[:BODY_MAX_LENGTH]
        texts = known.setdefault(duplicate_key(title, waypoint.latitude, waypoint.longitude), {})
        same_text = texts.get(text_key(body))
        if same_text is not None:
            outcomes.append(WaypointOutcome(waypoint.index, title, DUPLICATE, same_text))
            continue
        if texts:
            reason = "A note with this title at these coordinates has other text."
            existing = next(iter(texts.values()))
            outcomes.append(WaypointOutcome(waypoint.index, title, SKIPPED, existing, reason))
            continue
        note = notes.add_note(
            viewer.account.id,
            scope,
            team,
            title=title,
            body=body,
            category_id=category.id,
            default_language=default_language,
            latitude=waypoint.latitude,
            longitude=waypoint.longitude,
            visibility=visibility,
        )
        texts[text_key(body)] = note.id
        outcomes.append(WaypointOutcome(waypoint.index, title, CREATED, note.id))
    for outcome in sorted(outcomes, key=lambda item: item.index):
        report.add(outcome)
    return report
