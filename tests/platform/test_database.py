"""Pooled connections are checked with a round trip only after sitting idle
(app.platform.database)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import event, text

from app.extensions import db
from tests.conftest import make_test_app, needs_fast_path


@pytest.fixture
def postgresql_url(database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("pings concern a database server")
    return database_url


@pytest.fixture
def pings(monkeypatch):
    """Counts the liveness pings of every engine's dialect."""
    from sqlalchemy.dialects.postgresql.psycopg2 import PGDialect_psycopg2

    calls = []
    do_ping = PGDialect_psycopg2.do_ping

    def counting(self, dbapi_connection):
        calls.append(dbapi_connection)
        return do_ping(self, dbapi_connection)

    monkeypatch.setattr(PGDialect_psycopg2, "do_ping", counting)
    return calls


def backend_pid() -> int:
    with db.engine.connect() as connection:
        return connection.execute(text("SELECT pg_backend_pid()")).scalar_one()


def app_pinging_after(database_url, tmp_path, seconds):
    return make_test_app(database_url, tmp_path, DATABASE_PING_AFTER_IDLE_SECONDS=seconds)


def test_a_connection_used_moments_ago_is_not_pinged(postgresql_url, tmp_path, pings):
    app = app_pinging_after(postgresql_url, tmp_path, 3600)
    with app.app_context():
        first, second = backend_pid(), backend_pid()
        db.engine.dispose()

    assert first == second
    assert pings == []


def test_a_connection_idle_past_the_limit_is_pinged(postgresql_url, tmp_path, pings):
    app = app_pinging_after(postgresql_url, tmp_path, 0.05)
    with app.app_context():
        first = backend_pid()
        time.sleep(0.1)
        second = backend_pid()
        db.engine.dispose()

    assert first == second
    assert len(pings) == 1


def test_a_dead_idle_connection_is_replaced_before_use(postgresql_url, tmp_path, pings):
    app = app_pinging_after(postgresql_url, tmp_path, 0)
    with app.app_context():
        with db.engine.connect() as killer:  # held, so the victim is another connection
            dead = backend_pid()
            killer.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": dead})
        time.sleep(0.2)  # the server ends the backend asynchronously

        # Both pooled connections in use at once: without the ping one would be the dead
        # one, and its first statement would fail.
        with db.engine.connect() as first, db.engine.connect() as second:
            pids = {
                connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
                for connection in (first, second)
            }
        db.engine.dispose()

    assert dead not in pids
    assert len(pids) == 2
    assert pings


def test_every_sqlite_connection_enforces_foreign_keys(app):
    if db.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL always enforces foreign keys")
    with db.engine.connect() as first, db.engine.connect() as second:
        for connection in (first, second):
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_savepoint_as_the_first_write_ends_with_the_transaction(app):
    """On SQLite a savepoint opened outside a transaction used to commit at its release:
    a rolled-back request kept what it wrote inside one. On both databases it must not."""
    from app.models.user import User
    from tests.factories import count_rows

    with db.session.begin_nested():
        db.session.add(User(email="a@example.com", normalized_email="a@example.com",
                            user_name="ada_walks", password_hash="x"))  # fmt: skip
    db.session.rollback()
    assert count_rows(User) == 0


def test_sqlite_writers_wait_the_configured_busy_timeout_for_a_lock():
    from app.platform.database import engine_options

    options = engine_options("sqlite:///x.db", {"DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS": 20.0})
    assert options == {"connect_args": {"timeout": 20.0}}


@needs_fast_path("driver_reads")
def test_a_read_before_the_transaction_takes_no_connection_of_the_session(postgresql_url, app):
    """The token user's lookup (app.auth) runs alone, in autocommit on a pooled connection
    of its own: no BEGIN, and the session holds no connection after it, so a read that
    needs nothing else costs one round trip; the next statement opens the request's
    transaction as usual, and the instance's changes flush in it."""
    from psycopg2.extensions import TRANSACTION_STATUS_INTRANS

    from app.models.user import User
    from app.platform.database import get_by_driver
    from tests.factories import make_user

    user_id = make_user("reader").id
    session = db.session()
    session.commit()
    session.expunge_all()
    statements = []
    record = lambda *args: statements.append(args[2])  # noqa: E731
    event.listen(db.engine, "before_cursor_execute", record)
    try:
        user = get_by_driver(session, User, user_id)
    finally:
        event.remove(db.engine, "before_cursor_execute", record)

    assert user is not None
    assert statements == []  # below SQLAlchemy's Connection: the session sent nothing
    assert session.get_transaction() is None or not session.get_transaction()._connections
    user.map_source = "openstreetmap"
    session.flush()
    driver = session.connection().connection.driver_connection
    assert driver.autocommit is False
    assert driver.get_transaction_status() == TRANSACTION_STATUS_INTRANS
    session.rollback()


def test_a_read_inside_the_transaction_sees_what_it_flushed(postgresql_url, app):
    from app.models.user import User
    from app.platform.database import get_by_driver
    from tests.factories import make_user

    user_id = make_user("reader").id
    session = db.session()
    session.commit()
    session.get(User, user_id).map_source = "google"
    session.flush()
    session.expunge_all()

    assert get_by_driver(session, User, user_id).map_source == "google"
    session.rollback()


@needs_fast_path("driver_reads")
def test_the_token_lookup_alone_is_planned_once_per_connection(postgresql_url, app, monkeypatch):
    """The account's primary-key read, alone, is a prepared statement with one generic
    plan; with DATABASE_PREPARED_STATEMENTS off it is sent as plain SQL."""
    from app.models.user import User
    from app.platform.database import get_by_driver
    from tests.factories import make_user

    user_id = make_user("reader").id
    db.session.commit()

    def lookups():
        for _ in range(3):
            db.session.remove()
            assert get_by_driver(db.session(), User, user_id).user_name == "reader"
        db.session.remove()
        with db.engine.connect() as connection:
            rows = connection.exec_driver_sql(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE left(name, 7) = 'by_key_'"
            )
            return [tuple(row) for row in rows]

    db.session.remove()
    db.engine.dispose()  # one pooled connection from here on
    assert lookups() == [(3, 0)]
    db.engine.dispose()
    monkeypatch.setitem(app.config, "DATABASE_PREPARED_STATEMENTS", False)
    assert lookups() == []


def deadlocking(monkeypatch, times: int) -> list[int]:
    """Make the first `times` note creations fail as PostgreSQL fails a deadlock's victim."""
    import psycopg2.errors
    from sqlalchemy import exc

    from app.services.notes import notes

    original, calls = notes.utcnow, []

    def utcnow() -> object:
        calls.append(1)
        if len(calls) <= times:
            raise exc.OperationalError("INSERT ...", {}, psycopg2.errors.DeadlockDetected())
        return original()

    monkeypatch.setattr(notes, "utcnow", utcnow)
    return calls


def test_a_deadlock_is_run_again_once_and_logged(api, monkeypatch, caplog):
    from app.models.note import Note
    from tests.factories import count_rows, make_user

    user = make_user()
    calls = deadlocking(monkeypatch, times=1)
    with caplog.at_level("WARNING"):
        response = api.as_user(user).post("/api/notes/mine", json={"title": "Again"})
    assert response.status_code == 201
    assert len(calls) == 2
    assert count_rows(Note, Note.owner_user_id == user.id) == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("running the request again" in m for m in warnings), warnings


def test_a_deadlock_twice_is_503_that_says_so_not_unreachable(api, monkeypatch, caplog):
    from app.models.note import Note
    from tests.factories import count_rows, make_user

    user = make_user()
    calls = deadlocking(monkeypatch, times=2)
    with caplog.at_level("WARNING"):
        response = api.as_user(user).post("/api/notes/mine", json={"title": "Twice"})
    assert response.status_code == 503
    assert response.mimetype == "application/problem+json"
    assert response.headers["Retry-After"]
    detail = response.get_json()["detail"]
    assert "deadlock" in detail
    assert "not reachable" not in detail
    assert "ticketNumber" not in response.get_json()
    assert len(calls) == 2  # run again once, not more
    assert count_rows(Note, Note.owner_user_id == user.id) == 0
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("running the request again" in m for m in warnings), warnings
    assert any("not retried again" in m for m in warnings), warnings
