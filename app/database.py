"""How the engine treats its pooled connections, what a request answers while the
database is away, the lock of a read-then-write, and the sync change clock that stamps
synced rows at commit."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, cast

import psycopg2.errors
from flask import Flask, Response, current_app
from sqlalchemy import Table, bindparam, event, exc, insert, inspect, make_url, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import (
    Mapper,
    ORMExecuteState,
    Session,
    SessionTransaction,
    make_transient_to_detached,
    scoped_session,
)
from sqlalchemy.orm.util import identity_key
from sqlalchemy.sql import Select
from sqlalchemy.sql.compiler import SQLCompiler

from app.database_guard import (
    Breaker,
    DatabaseUnavailable,
    answer_within,
    deadline_connection,
    guard_engine,
    is_unreachable,
)
from app.errors import problem
from app.platform import fast

log = logging.getLogger(__name__)

LAST_CHECKIN = "last_checkin"
RETRY_AFTER_SECONDS = 5
# PostgreSQL's deadlock and serialization failure: the server answered, and ended this
# transaction so that a concurrent one could go on; running it again may well succeed.
CONFLICT_CODES = frozenset({"40P01", "40001"})


def engine_options(url: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Engine settings that bound what a lost database can cost a request (PostgreSQL):
    opening a connection gives up after DATABASE_CONNECT_TIMEOUT_SECONDS, a statement
    after DATABASE_STATEMENT_TIMEOUT_SECONDS (on the server), any wait for an answer
    after DATABASE_SOCKET_TIMEOUT_SECONDS (on the client: a silent partition, which the
    server never sees; app.database_guard), waiting for a pooled connection after
    DATABASE_POOL_TIMEOUT_SECONDS. TCP keepalives and its user timeout drop a connection
    whose peer is gone while idle in the pool. Without them a request could wait minutes
    on a host that does not answer, holding its worker. SQLite (a file) has one bound:
    how long a writer waits for another's lock (DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS)."""
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        return {"connect_args": {"timeout": float(config["DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS"])}}
    if backend != "postgresql":
        return {}
    statement_ms = int(float(config["DATABASE_STATEMENT_TIMEOUT_SECONDS"]) * 1000)
    connect_seconds = float(config["DATABASE_CONNECT_TIMEOUT_SECONDS"])
    socket_seconds = float(config["DATABASE_SOCKET_TIMEOUT_SECONDS"])
    return {
        "pool_timeout": float(config["DATABASE_POOL_TIMEOUT_SECONDS"]),
        "connect_args": {
            "connection_factory": deadline_connection(connect_seconds, socket_seconds),
            "connect_timeout": max(2, math.ceil(connect_seconds)),  # libpq's, when not ours
            "options": f"-c statement_timeout={statement_ms}",
            "keepalives": 1,
            "keepalives_idle": max(1, math.ceil(socket_seconds / 2)),
            "keepalives_interval": 1,
            "keepalives_count": 3,
            "tcp_user_timeout": math.ceil(socket_seconds * 1000),
        },
    }


def guard_against_outages(app: Flask, engine: Engine) -> None:
    """PostgreSQL: the process's breaker (`app.extensions["database_breaker"]`) in front
    of the engine's pool, and the client-side deadlines (app.database_guard)."""
    if engine.dialect.name != "postgresql":
        return
    breaker = Breaker(
        cooldown=float(app.config["DATABASE_BREAKER_COOLDOWN_SECONDS"]),
        probe_seconds=float(app.config["DATABASE_CHECK_TIMEOUT_SECONDS"]),
    )
    app.extensions["database_breaker"] = breaker
    guard_engine(engine, breaker)


def note_failure(error: BaseException) -> None:
    """Open the breaker when `error` says the database could not be reached."""
    breaker = current_app.extensions.get("database_breaker")
    if breaker is not None and is_unreachable(error):
        breaker.failed()


def check_database(session: Session | scoped_session[Any], config: Mapping[str, Any]) -> None:
    """The readiness check: one round trip within DATABASE_CHECK_TIMEOUT_SECONDS (a
    connection opened for it too), through the breaker like any request."""
    with answer_within(float(config.get("DATABASE_CHECK_TIMEOUT_SECONDS", 0.5))):
        session.execute(text("SELECT 1"))


def database_unavailable(error: Exception) -> Response:
    """503 problem details, with Retry-After, for a request the database could not serve:
    it cannot be reached (or the breaker says so: app.database_guard), dropped the
    connection, did not answer in time, ran out of pooled connections or hit the
    statement timeout. Nothing was written (the request's transaction is rolled back
    by the server or by teardown), so the client may simply try again."""
    return problem(
        503,
        "Service unavailable",
        "The database is not reachable right now. Try again shortly.",
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def is_conflict(error: BaseException) -> bool:
    """Whether PostgreSQL ended the transaction to let a concurrent one go on (a deadlock,
    a serialization failure): the request may be run again."""
    original = error.orig if isinstance(error, exc.DBAPIError) else error
    return getattr(original, "pgcode", None) in CONFLICT_CODES or isinstance(
        original, psycopg2.errors.DeadlockDetected | psycopg2.errors.SerializationFailure
    )


def database_conflict(error: Exception) -> Response:
    """503 problem details, with Retry-After, for a request that met a concurrent one in
    the database twice (a deadlock, run again once: `ServiceApp.dispatch_request`). The
    database was reachable; nothing was written."""
    log.warning("database conflict, not retried again: %s", error)
    return problem(
        503,
        "Service unavailable",
        "The request collided with a concurrent one in the database (a deadlock) and was "
        "not carried out. Try again.",
        headers={"Retry-After": "1"},
    )


def is_outage(error: BaseException) -> bool:
    """Whether a database error means the server could not serve the request (rather than
    a fault of the request or of our SQL): no pooled connection in time, a dropped or
    refused connection, or one of the server driver's operational errors (unreachable,
    statement timeout, shutting down). SQLite's operational errors ("no such table",
    a locked file past its timeout) stay unexpected failures."""
    if isinstance(error, exc.TimeoutError):
        return True
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return True
    original = error.orig if isinstance(error, exc.DBAPIError) else error
    try:
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        return False
    if original is not None and is_conflict(original):  # it answered: a conflict
        return False
    return isinstance(original, psycopg2.OperationalError | psycopg2.InterfaceError)


def register_outage_answers(app: Flask, unexpected: Callable[[Exception], Response]) -> None:
    """Database outages are 503 (above), not 500s with a ticket: a ticket would be stored
    in the database that is away, and the client should retry rather than report. Other
    database errors go to `unexpected` (the 500 with a tracked ticket)."""

    def answer(error: Exception) -> Response:
        if is_conflict(error):
            return database_conflict(error)
        if not is_outage(error):
            return unexpected(error)
        note_failure(error)
        return database_unavailable(error)

    app.register_error_handler(DatabaseUnavailable, database_unavailable)
    errors: list[type[Exception]] = [exc.DBAPIError, exc.TimeoutError]
    try:  # discovery reads through the driver itself: its errors come unwrapped
        import psycopg2
    except ImportError:  # pragma: no cover - psycopg2 is a dependency
        pass
    else:
        errors.append(psycopg2.Error)
    for error in errors:
        app.register_error_handler(error, answer)


def enforce_foreign_keys(engine: Engine) -> None:
    """SQLite checks foreign keys (and runs their ON DELETE actions) only on connections
    that ask for it: every connection of the app's engine asks, so SQLite keeps the same
    references PostgreSQL keeps. (Migrations switch it off while Alembic's batch mode
    rebuilds tables, then check the keys: migrations/env.py.)"""
    if engine.dialect.name != "sqlite":
        return

    @event.listens_for(engine, "connect")
    def foreign_keys_on(dbapi_connection: Any, record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()


@compiles(Table, "sqlite")
def _sqlite_table_with_hint(element: Table, compiler: Any, **kw: Any) -> str:
    """SQLite's `INDEXED BY`: SQLAlchemy keeps `Select.with_hint(table, text, "sqlite")`
    but its SQLite compiler writes nothing for it, so a table with a hint is written here
    as `table <hint>` (e.g. `INDEXED BY ix_name`, which SQLite refuses to run when that
    index cannot serve the query, rather than silently choosing another)."""
    hints = kw.pop("fromhints", None) or {}
    rendered = compiler.visit_table(element, **kw)
    hint = hints.get(element)
    return f"{rendered} {hint}" if hint and kw.get("asfrom") else str(rendered)


def ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    """Check a pooled connection with a round trip before use, but only when it has sat
    idle in the pool for more than `idle_seconds`.

    A connection used moments ago is alive; pinging it on every checkout (SQLAlchemy's
    `pool_pre_ping`) costs a round trip per request, a large part of a fast read. A server
    that restarted while the pool was idle is caught by the ping; one that restarts between
    two requests fails the next request once, after which the broken connection is dropped
    (SQLAlchemy invalidates the whole pool; discovery's driver-level read, its own one).
    A failed ping raises `DisconnectionError`, so the pool connects afresh and retries.
    """
    if engine.dialect.name == "sqlite":  # a file, no server that can go away
        return

    @event.listens_for(engine, "checkin")
    def remember_checkin(dbapi_connection: Any, record: Any) -> None:
        record.info[LAST_CHECKIN] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        last = record.info.get(LAST_CHECKIN)
        if last is None or time.monotonic() - last <= idle_seconds:
            return  # just connected, or used moments ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            raise exc.DisconnectionError("the pooled connection did not answer") from error


@contextmanager
def cursor_alone(engine: Engine) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A psycopg2 cursor in autocommit on a pooled connection of its own, and the pool's
    record of that connection (`info`, kept until the connection is replaced).

    For reads that need no transaction (PostgreSQL): in autocommit psycopg2 sends each
    statement alone, one statement one snapshot, with no `BEGIN` and no `ROLLBACK`, and
    the request's session never takes a connection for them. The switch is client-side;
    the connection goes back to the pool transactional, as the pool hands it out. A
    connection the server dropped is invalidated, never handed out again. Below
    SQLAlchemy's Connection: no execution events, no SQLALCHEMY_ECHO; the pool's events
    (ping_when_idle) still apply."""
    connection = engine.raw_connection()
    driver: Any = connection.driver_connection  # a psycopg2 connection
    try:
        driver.autocommit = True
        with driver.cursor() as cursor:
            yield cursor, connection.info
    except Exception:
        if driver.closed:
            connection.invalidate()
        raise
    finally:
        if not driver.closed:
            driver.autocommit = False
        connection.close()


class PreparedStatement:
    """A reused PostgreSQL statement as a server-side prepared statement with one generic
    plan, made once per connection (`prepared`).

    PostgreSQL plans every statement it receives. Where the plan does not depend on the
    values (a primary-key read; a small discovery window, which reads the position index,
    sorts the few matches and fetches their records by key), `PREPARE` once and `EXECUTE`
    with the values skips that work: for a small window planning took about as long as
    running it (0.4-0.5 ms of planning for 0.6-0.8 ms of execution on the benchmark's
    1,000,000 notes, EXPLAIN ANALYZE). The connection's `plan_cache_mode` is
    `force_generic_plan`: left to itself PostgreSQL would keep planning each execution,
    since a plan made without the values is estimated costlier than one made with them.
    The setting holds for the connection's session; this service prepares no other
    statements and defines no functions, which are the only things it affects.

    Run only in autocommit (`cursor_alone`): a failed `EXECUTE` inside a transaction would
    abort the request's transaction.
    """

    def __init__(self, compiled: SQLCompiler, prefix: str) -> None:
        sql = compiled.string
        self.name = f"{prefix}_" + hashlib.sha256(sql.encode()).hexdigest()[:16]
        self.definition = f"SET plan_cache_mode = force_generic_plan; PREPARE {self.name} AS {sql}"
        self.keys = tuple(compiled.positiontup or ())
        self.execution = f"EXECUTE {self.name} ({', '.join(['%s'] * len(self.keys))})"
        self.compiled = compiled

    def run(self, cursor: Any, connection_info: dict[str, Any], params: dict[str, Any]) -> None:
        """Executes it on `cursor` (autocommit), preparing it first on a connection that
        has not (`connection_info`: the pool's record of the connection, cleared when it is
        replaced). A session that lost its prepared statements (`DISCARD ALL` by hand, a
        server-side reset) has it prepared again, once."""
        done: set[str] = connection_info.setdefault("prepared_statements", set())
        values = self.compiled.construct_params(params) or {}
        arguments = [values[key] for key in self.keys]
        if self.name not in done:
            self._prepare(cursor, done)
        try:
            cursor.execute(self.execution, arguments)
        except psycopg2.errors.InvalidSqlStatementName:
            done.discard(self.name)
            self._prepare(cursor, done)
            cursor.execute(self.execution, arguments)

    def _prepare(self, cursor: Any, done: set[str]) -> None:
        # A duplicate is one the session kept: already there.
        with contextlib.suppress(psycopg2.errors.DuplicatePreparedStatement):
            cursor.execute(self.definition)
        done.add(self.name)


@functools.lru_cache(maxsize=64)
def prepared(statement: Select[Any], prefix: str) -> PreparedStatement:
    """A reused statement as a `PreparedStatement` named `<prefix>_<hash of its SQL>`
    (PostgreSQL's `$1` parameters), compiled once."""
    dialect = postgresql.psycopg2.dialect(paramstyle="numeric_dollar")
    return PreparedStatement(cast(SQLCompiler, statement.compile(dialect=dialect)), prefix)


def prepared_statements_on(config: Mapping[str, Any]) -> bool:
    """Whether this app prepares statements (DATABASE_PREPARED_STATEMENTS)."""
    return bool(config.get("DATABASE_PREPARED_STATEMENTS", True))


T = TypeVar("T")


def get_by_driver(session: Session, model: type[T], key: Any) -> T | None:
    """`session.get(model, key)` in one driver call on PostgreSQL: the row is read through
    psycopg2 with a statement compiled once, its values converted by the columns' own
    types, and the instance attached to the session as a clean loaded object (changes to
    it flush as usual). SQLAlchemy's ORM load costs a fast request about as much as the
    round trip itself (bench/README.md, "The cost of a request"); this is for the one
    lookup every authenticated request makes.

    Before the session's transaction (the token's account, a request's first read) the
    row is read alone (`cursor_alone`): one round trip, and the session holds no
    connection until the request's next statement opens its transaction as usual. Inside
    it, on the session's connection, so it sees what the request flushed. Elsewhere
    (SQLite), or when the session already holds the instance, it is `session.get`."""
    engine = session.get_bind()
    if (
        not fast.on("driver_reads")
        or engine.dialect.name != "postgresql"
        or identity_key(model, key) in session.identity_map
        or not isinstance(engine, Engine)
    ):
        return session.get(model, key)
    plan = _by_key_plan(model, engine.dialect)  # type: ignore[arg-type]
    if session.in_transaction():
        driver: Any = session.connection().connection.driver_connection
        with driver.cursor() as cursor:
            cursor.execute(plan.sql, {"key": plan.bind(key)})
            row = cursor.fetchone()
    else:
        with cursor_alone(engine) as (cursor, connection_info):
            if prepared_statements_on(current_app.config):
                plan.prepared.run(cursor, connection_info, {"key": plan.bind(key)})
            else:
                cursor.execute(plan.sql, {"key": plan.bind(key)})
            row = cursor.fetchone()
    if row is None:
        return None
    values = zip(plan.names, plan.convert, row, strict=True)
    instance = model(**{name: convert(value) for name, convert, value in values})
    make_transient_to_detached(instance)
    session.add(instance)
    return instance


@dataclass(frozen=True)
class _ByKeyPlan:
    sql: str
    prepared: PreparedStatement  # the same read, planned once per connection
    names: tuple[str, ...]  # the mapped attribute of each selected column
    convert: tuple[Callable[[Any], Any], ...]
    bind: Callable[[Any], Any]


@functools.lru_cache(maxsize=16)
def _by_key_plan(model: type, dialect: Dialect) -> _ByKeyPlan:
    mapper: Mapper[Any] = inspect(model)
    (primary_key,) = mapper.primary_key
    attributes = {prop.columns[0].key: prop.key for prop in mapper.column_attrs}
    columns = [column for column in mapper.local_table.columns if column.key in attributes]
    statement = select(*columns).where(primary_key == bindparam("key"))
    sql = str(statement.compile(dialect=dialect))

    def processor(type_: Any, kind: str) -> Callable[[Any], Any]:
        implementation = dialect.type_descriptor(type_)
        found = (
            implementation.result_processor(dialect, None)
            if kind == "result"
            else implementation.bind_processor(dialect)
        )
        return found or _unchanged

    return _ByKeyPlan(
        sql=sql,
        prepared=prepared(statement, "by_key"),
        names=tuple(attributes[column.key] for column in columns),
        convert=tuple(processor(column.type, "result") for column in columns),
        bind=processor(primary_key.type, "bind"),
    )


def _unchanged(value: Any) -> Any:
    return value


def insert_ignoring_duplicates(
    session: Session | scoped_session[Any],
    model: Any,
    index_elements: list[Any],
    rows: list[dict[str, Any]],
) -> None:
    """INSERT ... ON CONFLICT DO NOTHING of `rows` in one statement: a row whose key a
    concurrent twin (or an earlier request) already wrote is skipped, never an error."""
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    insert_into = postgresql.insert if dialect == "postgresql" else sqlite.insert
    session.execute(
        insert_into(model).values(rows).on_conflict_do_nothing(index_elements=index_elements)
    )


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
    """
    connection = session.connection()
    mapper: Mapper[Any] = inspect(model)
    (primary_key,) = mapper.primary_key
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
    connection = session.connection()
    if connection.dialect.name == "sqlite":
        begin_immediate(connection)
    else:
        digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
        lock_id = int.from_bytes(digest, "big", signed=True)
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": lock_id})
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


# --- the sync change clock (app.models.sync) ---------------------------------------------

SYNC_PENDING = "sync_rows_pending"
CLOCK_ROW = 1
CLOCK_TICK = timedelta(milliseconds=1)  # stamps are sent to clients in milliseconds
_tracking = False


def track_sync_changes() -> None:
    """Stamp synced rows (notes, categories, sync departures) at commit, in commit order.

    A session that inserted or updated one of those tables (through the ORM or an UPDATE
    statement, whose `onupdate` leaves `sync_utc` NULL) is marked; just before its COMMIT
    `stamp_changes` takes the next stamp from the clock row (locked until the commit) and
    writes it into every row the transaction left unstamped. Sessions that touched none of
    them never touch the clock.
    """
    global _tracking
    if _tracking:  # the listeners are on the Session class: once per process
        return
    _tracking = True
    synced = {table.name for table in _synced_tables()}

    def touches_synced(session: Session) -> bool:
        return any(
            getattr(instance, "__tablename__", None) in synced
            for instance in (*session.new, *session.dirty)
        )

    @event.listens_for(Session, "after_flush")
    def mark_flushed(session: Session, flush_context: Any) -> None:
        if touches_synced(session):
            session.info[SYNC_PENDING] = True

    @event.listens_for(Session, "do_orm_execute")
    def mark_updated(state: ORMExecuteState) -> None:
        table = getattr(state.statement, "table", None)
        if state.is_update and table is not None and table.name in synced:
            state.session.info[SYNC_PENDING] = True

    @event.listens_for(Session, "before_commit")
    def stamp_before_commit(session: Session) -> None:
        # A savepoint's release fires this too: only the outermost commit stamps.
        if session.in_nested_transaction():
            return
        # COMMIT flushes after this hook: what it is about to flush counts too.
        if session.info.get(SYNC_PENDING) or touches_synced(session):
            stamp_changes(session)

    @event.listens_for(Session, "after_transaction_end")
    def forget(session: Session, transaction: SessionTransaction) -> None:
        if transaction.parent is None:
            session.info.pop(SYNC_PENDING, None)


def _synced_tables() -> list[Table]:
    from app.models.category import Category
    from app.models.note import Note
    from app.models.sync import SyncDeparture

    return [Note.__table__, Category.__table__, SyncDeparture.__table__]  # type: ignore[list-item]


def stamp_changes(session: Session) -> datetime:
    """Flush, take the next clock stamp (its row stays locked until COMMIT) and give it to
    every synced row this transaction left unstamped. Commits call it; a test holding a
    transaction open between stamp and commit calls it directly."""
    session.flush()
    stamp = advance_clock(session)
    for table in _synced_tables():
        session.execute(update(table).where(table.c.sync_utc.is_(None)).values(sync_utc=stamp))
    session.info.pop(SYNC_PENDING, None)
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
