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
from sqlalchemy import event
from sqlalchemy.engine import make_url

from app.extensions import db
from app.models import Base
from tests.conftest import fresh_postgresql_database, make_test_app

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
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
            differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
        assert differences == []
        downgrade(directory=str(MIGRATIONS), revision="base")
        upgrade(directory=str(MIGRATIONS))
        db.session.remove()
        db.engine.dispose()


def test_migrations_are_not_cut_off_by_the_request_statement_timeout(empty_database_url, tmp_path):
    # Requests get a statement timeout on PostgreSQL (app.database.engine_options); a
    # migration rewriting a large table may take minutes and must run without it.
    if make_url(empty_database_url).get_backend_name() != "postgresql":
        pytest.skip("a statement timeout is PostgreSQL's")
    app = make_test_app(empty_database_url, tmp_path, DATABASE_STATEMENT_TIMEOUT_SECONDS=5)
    timeouts: list[str] = []

    def record_timeout(connection, _cursor, statement, *_args):
        if statement.lstrip().upper().startswith("CREATE TABLE"):
            cursor = connection.connection.cursor()
            cursor.execute("SHOW statement_timeout")
            timeouts.append(cursor.fetchone()[0])
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
