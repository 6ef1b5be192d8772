"""What sync cannot read from the rows themselves (contract: Sync; app.models.sync): a
user joining or leaving a team, and a note or category leaving a team. The teams area
records these as they happen; the sync area reads them to send a whole team to a new
member and tombstones to everyone who lost a row."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from app.extensions import db
from app.models.sync import (
    CATEGORY_LEFT_TEAM,
    NOTE_LEFT_TEAM,
    TEAM_ACCESS,
    SyncDeparture,
)


def record_team_access(team_id: uuid.UUID, user_ids: Iterable[uuid.UUID]) -> None:
    """These users became, or stopped being, active members of the team."""
    db.session.add_all(
        SyncDeparture(kind=TEAM_ACCESS, team_id=team_id, user_id=user_id) for user_id in user_ids
    )


def record_notes_left_team(team_id: uuid.UUID, note_ids: Iterable[uuid.UUID]) -> None:
    """These notes are no longer the team's (handed back to their authors)."""
    db.session.add_all(
        SyncDeparture(kind=NOTE_LEFT_TEAM, team_id=team_id, entity_id=note_id)
        for note_id in note_ids
    )


def record_categories_left_team(team_id: uuid.UUID, category_ids: Iterable[uuid.UUID]) -> None:
    """These categories went with their team."""
    db.session.add_all(
        SyncDeparture(kind=CATEGORY_LEFT_TEAM, team_id=team_id, entity_id=category_id)
        for category_id in category_ids
    )
