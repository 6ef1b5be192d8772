"""Reads through psycopg2 below the ORM, for the hot paths that measured it worth it: a
connection of its own in autocommit, statements prepared once per connection, and the
token's account read by key (app.platform.fast, `driver_reads`)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import psycopg2.errors
from flask import current_app
from sqlalchemy import bindparam, inspect, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.orm import (
    Mapper,
    Session,
    make_transient_to_detached,
)
from sqlalchemy.orm.util import identity_key
from sqlalchemy.sql import Select
from sqlalchemy.sql.compiler import SQLCompiler

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
