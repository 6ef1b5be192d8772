"""The locks of a read that decides a write: an advisory lock or BEGIN IMMEDIATE per use
case, row locks, the account's lock for its own writes, and inserts that skip a twin."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import BigInteger, bindparam, event, func, inspect, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import (
    Mapper,
    Session,
    scoped_session,
)
from sqlalchemy.sql import Select

from app.platform.database.driver import execute_by_driver, insert_by_driver

T = TypeVar("T")


def insert_ignoring_duplicates(
    session: Session | scoped_session[Any],
    model: Any,
    index_elements: list[Any],
    rows: list[dict[str, Any]],
) -> None:
    """INSERT ... ON CONFLICT DO NOTHING of `rows`: a row whose key a concurrent twin (or
    an earlier request) already wrote is skipped, never an error. The rows go as
    multi-row statements (`insert_by_driver`); `index_elements` are the key's columns
    (mapped attributes, columns or names)."""
    table = getattr(model, "__table__", model)
    keys = [key if isinstance(key, str) else key.expression.name for key in index_elements]
    insert_by_driver(session, table, rows, skip_duplicates_of=keys)


def first_in_transaction(session: Session | scoped_session[Any], key: Any) -> bool:
    """True the first time `key` is named in the session's current transaction, then
    False: a lock that lasts until the transaction ends is taken once, however many
    records of a batch ask for it. Kept per innermost transaction, since rolling back a
    savepoint releases the locks taken inside it (a lock may then be taken again)."""
    own = session() if isinstance(session, scoped_session) else session
    inner = own.get_nested_transaction() or own.get_transaction()
    if inner is None:  # none yet: begin the one the key is kept for
        own.connection()
        inner = own.get_transaction()
    taken = own.info.get(_TAKEN)
    if taken is None or taken[0] is not inner:
        taken = own.info[_TAKEN] = (inner, set())
    if key in taken[1]:
        return False
    taken[1].add(key)
    return True


# Session.info: the transaction of `first_in_transaction` and the keys named in it.
_TAKEN = "locks_taken"


def get_for_write(
    session: Session | scoped_session[Any], model: type[T], key: Any, *, exclusive: bool = False
) -> T | None:
    """`session.get(model, key)` read afresh and locked until this transaction ends, for a
    request about to write on behalf of that row (the signed-in account, whose deletion
    must not interleave with its owner's writes).

    - PostgreSQL: `FOR KEY SHARE`, which the writes referencing the row take anyway, so
      writers never wait for each other; `exclusive` takes `FOR UPDATE` (the account's
      deletion), which waits for those writers and makes later ones wait: they then read
      no row. Take the lock you need first: upgrading a shared lock deadlocks two twins.
    - SQLite: `exclusive` takes `BEGIN IMMEDIATE` (the database's write lock, as
      `lock_for_write`); a shared read locks nothing (the write lock is the database's:
      taken now it would serialise whole requests). A write that then finds its account
      gone meets a foreign-key violation, answered 401 (app.auth.answer_if_account_gone).

    A shared lock is taken once per transaction (`first_in_transaction`): asked again, the
    row comes from the session.
    """
    connection = session.connection()
    mapper: Mapper[Any] = inspect(model)
    (primary_key,) = mapper.primary_key
    if not exclusive and not first_in_transaction(session, (mapper, key)):
        return session.get(model, key)
    statement = select(model).where(primary_key == key).execution_options(populate_existing=True)
    if connection.dialect.name == "sqlite":
        if exclusive:
            begin_immediate(connection)
    else:
        # SQLAlchemy: read + key_share is FOR KEY SHARE (key_share alone, FOR NO KEY UPDATE)
        shared = not exclusive
        statement = statement.with_for_update(read=shared, key_share=shared)
    return session.scalars(statement).one_or_none()


# Called with the connection each time this process takes SQLite's write lock with BEGIN
# IMMEDIATE (app.auth checks there that a write request's account still exists).
_after_write_lock: list[Callable[[Any], None]] = []


def on_write_lock(callback: Callable[[Any], None]) -> None:
    """Run `callback(connection)` whenever SQLite's write lock is taken here."""
    if callback not in _after_write_lock:
        _after_write_lock.append(callback)


def begin_immediate(connection: Any) -> None:
    """SQLite: take the database's write lock now, unless a transaction is open."""
    driver_connection = connection.connection.driver_connection
    if driver_connection is not None and not driver_connection.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        for callback in _after_write_lock:
            callback(connection)


def savepoints_inside_transactions(engine: Engine) -> None:
    """SQLite: a SAVEPOINT outside a transaction starts one that its RELEASE commits (the
    driver begins transactions only before INSERT, UPDATE or DELETE), so a savepoint as a
    request's first write (a registration's insert) would commit it at once, before the
    request's other writes (the job of its confirmation mail) and whatever failure comes
    next. On the app's engine the write lock is taken first (BEGIN IMMEDIATE, as any write
    takes it), so a savepoint nests in the request's transaction and ends with it."""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "savepoint")
    def begin_first(connection: Any, name: str) -> None:
        begin_immediate(connection)


# A transaction-level advisory lock on a 64-bit key (`lock_for_write`).
ADVISORY_LOCK = select(func.pg_advisory_xact_lock(bindparam("id", type_=BigInteger)))


def lock_for_write(
    session: Session | scoped_session[Any], key: str, *, reread: bool = True
) -> None:
    """Serialise the use cases that read to decide a write under `key`, in this transaction.

    Call it before the reads that decide (is there a "Notes" root yet, would this move make
    a cycle, is this membership still pending); the lock is held until commit or rollback,
    so a concurrent request with the same key waits, then reads what the first one wrote and
    answers as a repeated request would.

    - PostgreSQL: a transaction-level advisory lock on a 64-bit hash of `key`, so only
      requests about the same thing wait for each other.
    - SQLite: `BEGIN IMMEDIATE` takes the database's write lock now, before the reads (its
      driver would begin the transaction only at the first write, after the reads have
      decided). A transaction that has already written holds that lock: nothing to do.

    Then pending changes are flushed and the session's loaded rows expired, so every row is
    read again under the lock: a row a concurrent request deleted meanwhile is gone (read
    ids before the call, and load rows again after it). A caller whose decision reads no
    loaded row (a count by a fresh query) passes `reread=False` and keeps them.
    """
    if session.get_bind().dialect.name == "sqlite":
        begin_immediate(session.connection())
    elif first_in_transaction(session, ("advisory", key)):  # held already: not again
        digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
        lock_id = int.from_bytes(digest, "big", signed=True)
        execute_by_driver(session, ADVISORY_LOCK, {"id": lock_id})
    if reread:
        session.flush()
        session.expire_all()


def lock_rows(session: Session | scoped_session[Any], statement: Select[Any]) -> list[Any]:
    """The ORM rows of `statement`, read as they are now and locked until commit or
    rollback, for a write that depends on what they hold (a sync base version).

    - PostgreSQL: `SELECT ... FOR UPDATE`, so a concurrent writer of the same rows waits
      for this transaction, or this read waits for it and then sees its commit. Order
      `statement` (by id) when it locks several rows, so two such reads cannot deadlock.
    - SQLite: `BEGIN IMMEDIATE` first, the database's write lock (see `lock_for_write`).

    Rows the session already holds are loaded again (`populate_existing`): the values an
    earlier read left in the identity map may be older than the lock.
    """
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        begin_immediate(connection)
    locked = statement.with_for_update().execution_options(populate_existing=True)
    return list(session.scalars(locked))
