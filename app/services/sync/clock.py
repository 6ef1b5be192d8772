"""The sync change clock (app.models.sync): every synced row a transaction changed is
stamped at its commit, from one clock row whose lock orders the commits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Table, event, exc, insert, select, update
from sqlalchemy.orm import (
    ORMExecuteState,
    Session,
    SessionTransaction,
    scoped_session,
)

from app.platform.database import TABLES_WRITTEN, RoutingSession, note_tables_written

# --- the sync change clock (app.models.sync) ---------------------------------------------

CLOCK_ROW = 1
CLOCK_TICK = timedelta(milliseconds=1)  # stamps are sent to clients in milliseconds
_tracking = False


def track_sync_changes() -> None:
    """Stamp synced rows (notes, categories, sync departures) at commit, in commit order.

    A session that inserted or updated one of those tables (through the ORM, an INSERT or
    UPDATE statement, or `insert_by_driver`; `sync_utc` is left NULL by its `onupdate`,
    and a new row's by its missing default) notes the table (`note_tables_written`); just
    before its COMMIT `stamp_changes` takes the next stamp from the clock row (locked
    until the commit) and writes it into every row of those tables left unstamped.
    Sessions that touched none of them never touch the clock, and a table the
    transaction did not write is not searched (a note's write sends no stamping UPDATE
    to categories).
    """
    global _tracking
    if _tracking:  # the listeners are on the Session class: once per process
        return
    _tracking = True
    synced = {table.name for table in _synced_tables()}

    def touched(session: Session) -> set[str]:
        """The synced tables of the rows of a flush (new or changed; during and after the
        flush, the session still lists them)."""
        names = (getattr(row, "__tablename__", None) for row in (*session.new, *session.dirty))
        return {name for name in names if name in synced}

    @event.listens_for(RoutingSession, "after_flush")
    def mark_flushed(session: Session, flush_context: Any) -> None:
        note_tables_written(session, touched(session))

    @event.listens_for(RoutingSession, "do_orm_execute")
    def mark_written(state: ORMExecuteState) -> None:
        # An INSERT of rows (a batch of notes) passes no flush: it marks the session here.
        table = getattr(state.statement, "table", None)
        written = state.is_update or state.is_insert
        if written and table is not None and table.name in synced:
            note_tables_written(state.session, {table.name})

    @event.listens_for(RoutingSession, "before_commit")
    def stamp_before_commit(session: Session) -> None:
        # A savepoint's release fires this too: only the outermost commit stamps.
        if session.in_nested_transaction():
            return
        # COMMIT flushes after this hook: what it is about to flush counts too.
        if session.info.get(TABLES_WRITTEN) or touched(session):
            stamp_changes(session)

    @event.listens_for(RoutingSession, "after_transaction_end")
    def forget(session: Session, transaction: SessionTransaction) -> None:
        if transaction.parent is None:
            session.info.pop(TABLES_WRITTEN, None)


def _synced_tables() -> list[Table]:
    from app.models.category import Category
    from app.models.note import Note
    from app.models.sync import SyncDeparture

    return [Note.__table__, Category.__table__, SyncDeparture.__table__]  # type: ignore[list-item]


def stamp_changes(session: Session) -> datetime:
    """Flush, take the next clock stamp (its row stays locked until COMMIT) and give it to
    every row this transaction left unstamped in the synced tables it wrote. Commits call
    it; a test holding a transaction open between stamp and commit calls it directly."""
    session.flush()
    tables = session.info.pop(TABLES_WRITTEN, set())
    stamp = advance_clock(session)
    for table in _synced_tables():
        if table.name in tables:
            session.execute(update(table).where(table.c.sync_utc.is_(None)).values(sync_utc=stamp))
    session.info.pop(TABLES_WRITTEN, None)  # the stamping UPDATEs marked their tables again
    return stamp


def advance_clock(session: Session) -> datetime:
    """The next stamp: now (in whole milliseconds), or one millisecond after the last stamp
    when the clock is ahead, so stamps strictly increase in commit order."""
    from app.models.sync import SyncClock

    clock: Table = SyncClock.__table__  # type: ignore[assignment]
    locked = select(clock.c.last_utc).where(clock.c.id == CLOCK_ROW).with_for_update()
    last = session.execute(locked).scalar_one_or_none()
    if last is None:
        try:
            with session.begin_nested():  # the very first stamp, maybe two at once
                session.execute(insert(clock).values(id=CLOCK_ROW, last_utc=CLOCK_EPOCH))
        except exc.IntegrityError:
            pass
        last = session.execute(locked).scalar_one()
    now = datetime.now(UTC)
    now = now.replace(microsecond=now.microsecond // 1000 * 1000)
    stamp = max(now, last + CLOCK_TICK)
    session.execute(update(clock).where(clock.c.id == CLOCK_ROW).values(last_utc=stamp))
    return stamp


CLOCK_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def read_clock(session: Session | scoped_session[Any]) -> datetime:
    """The last stamp handed out (every row stamped up to it is committed)."""
    from app.models.sync import SyncClock

    last = session.scalar(select(SyncClock.last_utc).where(SyncClock.id == CLOCK_ROW))
    return last or CLOCK_EPOCH
