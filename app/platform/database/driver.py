"""Statements through psycopg2 below the ORM, for the hot paths that measured it worth
it: a connection of its own in autocommit, statements prepared once per connection, the
token's account read by key (app.platform.fast, `driver_reads`), statements compiled
once run in the request's transaction (`execute_by_driver`, the trackable lookup's), and
many rows inserted in one statement (`insert_by_driver`, a sync push's)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg2.errors
import psycopg2.extras
from flask import current_app
from sqlalchemy import Table, bindparam, exc, insert, inspect, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.orm import (
    Mapper,
    Session,
    make_transient_to_detached,
    scoped_session,
)
from sqlalchemy.orm.instrumentation import ClassManager
from sqlalchemy.orm.util import identity_key
from sqlalchemy.sql import ClauseElement, ColumnElement, Executable, Select
from sqlalchemy.sql.compiler import Compiled, SQLCompiler
from sqlalchemy.types import TypeEngine

from app.platform import fast


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
    """Whether this app prepares statements (DATABASE_PREPARED_STATEMENTS, and never
    behind a pooler in transaction mode: DATABASE_POOLER)."""
    if config.get("DATABASE_POOLER"):
        return False
    return bool(config.get("DATABASE_PREPARED_STATEMENTS", True))


T = TypeVar("T")


def execute_by_driver(
    session: Session | scoped_session[Any], statement: Executable, params: Mapping[str, Any]
) -> list[tuple[Any, ...]]:
    """`session.execute(statement, params)` as a list of plain rows (none for a write
    without RETURNING), in the session's transaction, in one driver call on PostgreSQL.

    For the few statements of a hot path (the trackable lookup and the budgets it
    spends), each built once with its values in bound parameters of simple names: on
    PostgreSQL its SQL is compiled once, the values are converted by their columns' own
    types and sent through psycopg2 on the session's connection, and the rows converted
    back the same way. SQLAlchemy's execution (cache key, execution context, result
    objects), and the ORM's on top of it, cost a lookup more than its round trips
    (bench/README.md, "Lookup at its floor"). Elsewhere (SQLite, FAST_PATHS without
    `driver_statements`), and while the engine
    logs its SQL (SQLALCHEMY_ECHO, or the `sqlalchemy.engine` logger at INFO), it is the
    same statement executed on the session's connection. Below SQLAlchemy, statement
    events do not see it: tracing shows no span for it (as for `get_by_driver` and
    discovery's reads).

    Below the ORM either way: rows, not instances (`loaded` makes one of a row); nothing
    pending is flushed first (flush when the statement must see it); and objects the
    session holds do not see these writes. Meant for tables the request holds no
    objects of."""
    connection = _connection(session)
    if (
        connection.dialect.name != "postgresql"
        or not fast.on("driver_statements")
        or connection.engine.logger.isEnabledFor(logging.INFO)  # SQL logging sees it
    ):
        result = connection.execute(statement, params)
        return [tuple(row) for row in result] if result.returns_rows else []
    plan = _statement_plan(statement, connection.dialect)
    values = plan.compiled.construct_params(params) or {}
    for name, convert in plan.bind:
        values[name] = convert(values[name])
    driver: Any = connection.connection.driver_connection
    with driver.cursor() as cursor:
        cursor.execute(plan.compiled.string, values)
        if cursor.description is None:
            return []
        rows: list[tuple[Any, ...]] = cursor.fetchall()
        conversions = plan.conversions(cursor.description)
    if conversions:
        rows = [_converted(row, conversions) for row in rows]
    return rows


TABLES_WRITTEN = "tables_written"  # session.info: the tables this transaction wrote to
INSERT_PAGE_ROWS = 1000  # rows per INSERT statement, as SQLAlchemy's insertmanyvalues


def note_tables_written(session: Session | scoped_session[Any], names: set[str]) -> None:
    """Record in the session that its transaction wrote to these tables (the sync clock
    stamps the synced ones at commit, services.sync.clock)."""
    if names:
        session.info.setdefault(TABLES_WRITTEN, set()).update(names)


def insert_by_driver(
    session: Session | scoped_session[Any],
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    *,
    skip_duplicates_of: Sequence[str] = (),
) -> None:
    """`session.execute(insert(table), rows)`, in one driver call per 1,000 rows on
    PostgreSQL: the rows' values are converted by their columns' own types and sent
    through psycopg2's `execute_values` (one multi-row INSERT) on the session's
    connection. SQLAlchemy's executemany ("insertmanyvalues") spends more than the
    statement's own time on a sync push's 500 notes: a bound parameter of its own for
    each value, named, rendered and converted one by one (bench/README.md, "Sync push as
    a set"). Every row names the same columns, those of the first. With
    `skip_duplicates_of` (column names), `ON CONFLICT (...) DO NOTHING`: a row whose key
    is already there is skipped. Elsewhere (SQLite, FAST_PATHS without
    `driver_statements`), and while the engine logs its SQL, the same INSERT through
    SQLAlchemy.

    What the session holds pending is flushed first (a new note's new category goes in
    before it), and the table is noted as written (`note_tables_written`). Below the
    ORM, like `execute_by_driver`: no statement events, no tracing span. The database's
    refusals are raised as SQLAlchemy raises them (a duplicate key, `IntegrityError`)."""
    if not rows:
        return
    session.flush()
    note_tables_written(session, {table.name})
    columns = tuple(rows[0])
    connection = _connection(session)
    dialect = connection.dialect
    if (
        dialect.name != "postgresql"
        or not fast.on("driver_statements")
        or connection.engine.logger.isEnabledFor(logging.INFO)
    ):
        statement: Any = insert(table)
        if skip_duplicates_of:
            # SQLAlchemy sends an ON CONFLICT executemany as multi-row statements only
            # when it returns rows (its issue 13130): the keys, unread.
            insert_into = postgresql.insert if dialect.name == "postgresql" else sqlite.insert
            statement = (
                insert_into(table)
                .on_conflict_do_nothing(index_elements=list(skip_duplicates_of))
                .returning(*table.primary_key.columns)
            )
        session.execute(statement, list(rows))
        return
    plan = _insert_plan(table, columns, tuple(skip_duplicates_of), dialect)
    values = [_converted(plan.values_of(row), plan.conversions) for row in rows]
    driver: Any = connection.connection.driver_connection
    try:
        with driver.cursor() as cursor:
            psycopg2.extras.execute_values(cursor, plan.sql, values, page_size=INSERT_PAGE_ROWS)
    except psycopg2.Error as error:  # raised as SQLAlchemy raises it (an IntegrityError...)
        raise exc.DBAPIError.instance(plan.sql, None, error, psycopg2.Error) from error


@dataclass(frozen=True)
class _InsertPlan:
    sql: str  # INSERT INTO t (columns) VALUES %s [ON CONFLICT (...) DO NOTHING]
    values_of: Callable[[Mapping[str, Any]], tuple[Any, ...]]  # a row's values, in order
    conversions: Conversions  # the bind conversions of the columns that have one


@functools.lru_cache(maxsize=32)
def _insert_plan(
    table: Table, columns: tuple[str, ...], conflict: tuple[str, ...], dialect: Dialect
) -> _InsertPlan:
    quote = dialect.identifier_preparer
    names = ", ".join(quote.format_column(table.c[name]) for name in columns)
    sql = f"INSERT INTO {quote.format_table(table)} ({names}) VALUES %s"  # noqa: S608 - quoted names
    if conflict:
        keys = ", ".join(quote.format_column(table.c[name]) for name in conflict)
        sql += f" ON CONFLICT ({keys}) DO NOTHING"
    pick = operator.itemgetter(*columns)
    return _InsertPlan(
        sql=sql,
        values_of=pick if len(columns) > 1 else lambda row: (pick(row),),
        conversions=tuple(
            (index, processor)
            for index, name in enumerate(columns)
            if (processor := _processor(table.c[name].type, dialect, "bind")) is not None
        ),
    )


HELD = "driver.connection"  # session.info: (the transaction, its connection)


def _connection(session: Session | scoped_session[Any]) -> Connection:
    """`session.connection()`, asked of the session once per transaction: the lookup's
    statements run one after another on the same one."""
    current: Session = session() if isinstance(session, scoped_session) else session
    held = current.info.get(HELD)
    transaction = current.get_transaction()
    if held is not None and transaction is not None and held[0] is transaction:
        return cast(Connection, held[1])
    connection = current.connection()
    current.info[HELD] = (current.get_transaction(), connection)
    return connection


Conversions = tuple[tuple[int, Callable[[Any], Any]], ...]  # (column index, processor)


def _converted(row: tuple[Any, ...], conversions: Conversions) -> tuple[Any, ...]:
    values = list(row)
    for index, processor in conversions:
        values[index] = processor(values[index])
    return tuple(values)


class _StatementPlan:
    """A statement compiled for one dialect, the conversions of its bound values, and
    those of its columns (made on its first answer: some depend on the type the
    database names for a column)."""

    def __init__(self, statement: Executable, dialect: Dialect) -> None:
        self.compiled: Compiled = cast(ClauseElement, statement).compile(dialect=dialect)
        self.bind = tuple(
            (name, processor)
            for name, parameter in cast(SQLCompiler, self.compiled).binds.items()
            if (processor := _processor(parameter.type, dialect, "bind")) is not None
        )
        self.dialect = dialect
        self.columns: tuple[Any, ...] = tuple(cast(Any, statement).exported_columns)
        self._conversions: Conversions | None = None

    def conversions(self, description: Sequence[Any]) -> Conversions:
        if self._conversions is None:
            self._conversions = tuple(
                (index, processor)
                for index, (column, described) in enumerate(
                    zip(self.columns, description, strict=True)
                )
                if (processor := _processor(column.type, self.dialect, "result", described[1]))
                is not None
            )
        return self._conversions


@functools.lru_cache(maxsize=128)
def _statement_plan(statement: Executable, dialect: Dialect) -> _StatementPlan:
    return _StatementPlan(statement, dialect)


def _processor(
    type_: TypeEngine[Any], dialect: Dialect, kind: str, database_type: Any = None
) -> Callable[[Any], Any] | None:
    """The conversion SQLAlchemy applies to a value of `type_` on its way to the driver
    (`bind`) or back (`result`, `database_type` the driver's type code of the column),
    None when there is none."""
    implementation = type_.dialect_impl(dialect)
    if kind == "result":
        return implementation.result_processor(dialect, database_type)
    return implementation.bind_processor(dialect)


def mapped_columns(model: type) -> tuple[ColumnElement[Any], ...]:
    """The table columns of `model`'s mapped attributes, in table order: what `loaded`
    takes a row of."""
    return _model_plan(model).columns


def loaded(session: Session | scoped_session[Any], model: type[T], row: Sequence[Any]) -> T:
    """The instance of `model` a row of its `mapped_columns` (converted, as
    `execute_by_driver` returns them) stands for, as the ORM would give it: the one the
    session already holds for that key, else a new one attached as clean and loaded
    (changes to it flush as usual)."""
    plan = _model_plan(cast(type, model))
    key = identity_key(model, tuple(row[index] for index in plan.key_indexes))
    held = session.identity_map.get(key)
    if held is not None:
        return cast(T, held)
    instance = detached(model, row)
    session.add(instance)
    return instance


def detached(model: type[T], row: Sequence[Any]) -> T:
    """The instance of `model` a row of its `mapped_columns` stands for, detached: every
    column loaded, in no session."""
    plan = _model_plan(cast(type, model))
    # The row's values go straight into the new instance's state, as the ORM's own load
    # does: the constructor would send each one through its attribute events, recorded
    # as changes that make_transient_to_detached then commits.
    instance = plan.manager.new_instance()
    instance.__dict__.update(zip(plan.names, row, strict=True))
    make_transient_to_detached(instance)
    return cast(T, instance)


@dataclass(frozen=True)
class _ModelPlan:
    columns: tuple[ColumnElement[Any], ...]
    names: tuple[str, ...]  # the mapped attribute of each column
    key_indexes: tuple[int, ...]  # where the primary key's columns are
    manager: ClassManager[Any]  # makes an instance without running its constructor


@functools.lru_cache(maxsize=16)
def _model_plan(model: type) -> _ModelPlan:
    mapper: Mapper[Any] = inspect(model)
    attributes = {prop.columns[0].key: prop.key for prop in mapper.column_attrs}
    columns = tuple(column for column in mapper.local_table.columns if column.key in attributes)
    keys = {column.key for column in mapper.primary_key}
    return _ModelPlan(
        columns=columns,
        names=tuple(attributes[column.key] for column in columns),
        key_indexes=tuple(index for index, column in enumerate(columns) if column.key in keys),
        manager=mapper.class_manager,
    )


def get_by_driver(session: Session, model: type[T], key: Any, *, attach: bool = True) -> T | None:
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
    (SQLite), or when the session already holds the instance, it is `session.get`.

    `attach=False`, for a read request's caller: a row read alone is handed out detached
    (every column loaded, in no session), so the session does not begin a transaction
    that its end of request must roll back. Changes to it are not saved: a request that
    changes the row reads it for writing (`get_for_write`)."""
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
    values = [convert(value) for convert, value in zip(plan.convert, row, strict=True)]
    if not attach and not session.in_transaction():
        return detached(model, values)
    return loaded(session, model, values)


@dataclass(frozen=True)
class _ByKeyPlan:
    sql: str
    prepared: PreparedStatement  # the same read, planned once per connection
    convert: tuple[Callable[[Any], Any], ...]
    bind: Callable[[Any], Any]


@functools.lru_cache(maxsize=16)
def _by_key_plan(model: type, dialect: Dialect) -> _ByKeyPlan:
    mapper: Mapper[Any] = inspect(model)
    (primary_key,) = mapper.primary_key
    columns = mapped_columns(model)
    statement = select(*columns).where(primary_key == bindparam("key"))
    sql = str(statement.compile(dialect=dialect))
    return _ByKeyPlan(
        sql=sql,
        prepared=prepared(statement, "by_key"),
        convert=tuple(
            _processor(column.type, dialect, "result") or _unchanged for column in columns
        ),
        bind=_processor(primary_key.type, dialect, "bind") or _unchanged,
    )


def _unchanged(value: Any) -> Any:
    return value
