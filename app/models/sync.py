"""The sync change clock and the record of rows that left a team (contract: Sync).

Every note and category carries `sync_utc`, the stamp of the commit that last changed it.
A change leaves it NULL ("not stamped yet": the column's `onupdate`, and no default), and
app.services.sync.clock.stamp_changes stamps every NULL row of the tables the committing
transaction wrote from `sync_clock` just before COMMIT, holding the clock row's lock until
then. Stamps are therefore handed out in commit order, so a pull that read the clock at V
has already seen every row stamped at or before V: a write that commits later is stamped
later, and the next pull (from V) gets it.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import GUID, Base, new_id


def unstamped() -> None:
    """The `onupdate` of every `sync_utc`: a changed row waits for its commit's stamp."""
    return None


class SyncClock(Base):
    """One row (`id` 1): the last stamp handed out. Its row lock orders the commits of
    every transaction that changed synced rows."""

    __tablename__ = "sync_clock"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_utc: Mapped[datetime]


class SyncDeparture(Base):
    """A row that left a team, or a user whose access to a team changed, at `sync_utc`.

    - `kind` "team_access": `user_id` joined or left `team_id` (the next pull sends the
      whole team, or tombstones for all of it);
    - `kind` "note" / "category": `entity_id` left `team_id` (handed back to its author,
      or removed with the team): members get a tombstone.
    """

    __tablename__ = "sync_departures"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(20))
    team_id: Mapped[uuid.UUID] = mapped_column(GUID)
    user_id: Mapped[uuid.UUID | None] = mapped_column(GUID, default=None)
    entity_id: Mapped[uuid.UUID | None] = mapped_column(GUID, default=None)
    sync_utc: Mapped[datetime | None] = mapped_column(default=None, onupdate=unstamped)


class SyncNoteMutation(Base):
    """A `clientMutationId` a sync push applied to a note (a create, a change or a delete).

    A device's change can reach the server more than once: its answer is lost, it pushes
    again, gets `changed_on_server` because another device wrote meanwhile, rebases and
    pushes the same change once more. The note's stored `clientMutationId` is by then the
    other device's, so only this record tells that the change was applied already. Kept
    as long as the note (a note's tombstone keeps them too)."""

    __tablename__ = "sync_note_mutations"

    note_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("notes.id", ondelete="CASCADE"), primary_key=True
    )
    client_mutation_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    # The pushed record's fingerprint (services.shared.mutations; NULL for changes applied
    # before it was kept): the same tag with another record is a conflict of its own.
    payload_hash: Mapped[str | None] = mapped_column(String(64), default=None)


TEAM_ACCESS, NOTE_LEFT_TEAM, CATEGORY_LEFT_TEAM = "team_access", "note", "category"

Index("ix_sync_departures_user_sync", SyncDeparture.user_id, SyncDeparture.sync_utc)
Index("ix_sync_departures_team_sync", SyncDeparture.team_id, SyncDeparture.sync_utc)
Index(
    "ix_sync_departures_unstamped",
    SyncDeparture.id,
    postgresql_where=text("sync_utc IS NULL"),
    sqlite_where=text("sync_utc IS NULL"),
)
