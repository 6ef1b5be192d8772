"""Migrations: one head, and an upgraded empty database matches the models."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config as AlembicConfig
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask_migrate import downgrade, upgrade
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, make_url

from app.extensions import db
from app.models import Base
from app.models.note_search import compared_with_models
from tests.conftest import fresh_postgresql_database, make_test_app

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
BEFORE_SEARCH = "3b9e1c7d2a10"  # the revision before the search index
pytestmark = pytest.mark.migrations


def test_there_is_exactly_one_head():
    config = AlembicConfig(str(MIGRATIONS / "alembic.ini"))
    config.set_main_option("script_location", str(MIGRATIONS))
    assert len(ScriptDirectory.from_config(config).get_heads()) == 1


@pytest.fixture
def empty_database_url(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A brand-new empty database of the same kind as the test database."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        yield f"sqlite:///{tmp_path / 'migrated.db'}"
        return
    name = f"migrations_{uuid.uuid4().hex[:10]}"
    with fresh_postgresql_database(database_url, name) as url:
        yield url


def test_upgraded_empty_database_matches_the_models(empty_database_url, tmp_path):
    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS))
        with db.engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"include_name": compared_with_models}
            )
            differences = compare_metadata(context, Base.metadata)
        assert differences == []
        downgrade(directory=str(MIGRATIONS), revision="base")
        upgrade(directory=str(MIGRATIONS))
        db.session.remove()
        db.engine.dispose()


def search_objects(connection: Connection) -> list[tuple]:
    """The text search index's objects, which the models do not describe
    (app/models/note_search.py): their definitions as the database reports them."""
    if connection.dialect.name == "sqlite":
        return connection.exec_driver_sql(
            "SELECT type, name, tbl_name, sql FROM sqlite_master "
            "WHERE name LIKE 'notes_search%' ORDER BY name"
        ).fetchall()
    column = connection.exec_driver_sql(
        "SELECT format_type(a.atttypid, a.atttypmod), a.attgenerated, "
        "pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a "
        "JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
        "WHERE a.attrelid = 'notes'::regclass AND a.attname = 'search_vector'"
    ).fetchall()
    index = connection.exec_driver_sql(
        "SELECT pg_get_indexdef('ix_notes_search'::regclass)"
    ).fetchall()
    return [*column, *index]


def test_upgraded_database_has_the_search_index_create_all_makes(
    database_url, empty_database_url, tmp_path
):
    # create_all makes them from app.models.note_search, the migration from its own copy.
    made = create_engine(database_url)
    with made.connect() as connection:
        expected = search_objects(connection)
    made.dispose()
    assert len(expected) >= 2
    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS))
        with db.engine.connect() as connection:
            assert search_objects(connection) == expected
        db.session.remove()
        db.engine.dispose()


def test_notes_written_before_the_search_migration_are_found_after_it(empty_database_url, tmp_path):
    from app.models.enums import NoteVisibility
    from tests.factories import make_note

    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS), revision=BEFORE_SEARCH)
        note_id = str(make_note(visibility=NoteVisibility.PUBLIC, title="Lighthouse").id)
        db.session.remove()
        upgrade(directory=str(MIGRATIONS))
        found = app.test_client().get("/api/notes/public/search?q=lighthouse").get_json()
        assert [item["noteId"] for item in found] == [note_id]
        db.session.remove()
        db.engine.dispose()


def test_migrations_run_without_the_statement_timeout_and_with_a_lock_timeout(
    empty_database_url, tmp_path
):
    # Requests get a statement timeout on PostgreSQL (app.platform.database.engine_options); a
    # migration rewriting a large table may take minutes and must run without it.
    if make_url(empty_database_url).get_backend_name() != "postgresql":
        pytest.skip("a statement timeout is PostgreSQL's")
    app = make_test_app(empty_database_url, tmp_path, DATABASE_STATEMENT_TIMEOUT_SECONDS=5)
    timeouts: list[str] = []
    lock_timeouts: list[str] = []

    def record_timeout(connection, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("CREATE TABLE"):
            cursor = connection.connection.cursor()
            cursor.execute("SHOW statement_timeout")
            timeouts.append(cursor.fetchone()[0])
            cursor.execute("SHOW lock_timeout")
            lock_timeouts.append(cursor.fetchone()[0])
            cursor.close()

    with app.app_context():
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("SHOW statement_timeout").scalar() == "5s"
        event.listen(db.engine, "before_cursor_execute", record_timeout)
        try:
            upgrade(directory=str(MIGRATIONS))
        finally:
            event.remove(db.engine, "before_cursor_execute", record_timeout)
            db.session.remove()
            db.engine.dispose()
    assert timeouts
    assert set(timeouts) == {"0"}
    assert set(lock_timeouts) == {"5s"}  # ... but give up waiting for a lock


def test_with_json_logging_the_migrations_log_json_lines(tmp_path):
    """`flask db upgrade` under LOG_FORMAT=json: every line it writes is a JSON object,
    as the app's and gunicorn's are."""
    import json
    import os
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=MIGRATIONS.parent,
        env={
            **os.environ,
            "APP_ENV": "testing",
            "LOG_FORMAT": "json",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'json.db'}",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    assert any(record["message"].startswith("Running upgrade") for record in records)
