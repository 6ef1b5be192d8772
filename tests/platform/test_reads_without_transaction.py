"""Anonymous public reads on PostgreSQL's primary run without a transaction
(app.platform.database.replica.read_without_transactions): no BEGIN and no ROLLBACK, each
statement in psycopg2's autocommit. Everything else keeps its transaction: a signed-in
read, a write, a flush during a public read, and the next request on a connection a
public read gave back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from app.extensions import db
from app.models.category import Category
from app.models.enums import NoteVisibility
from app.models.note import Note
from app.platform.database.replica import NO_TRANSACTION
from tests.factories import make_note, make_user


@pytest.fixture
def postgresql(app):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("reads without a transaction are PostgreSQL's (TEST_DATABASE_URL)")
    return app


@pytest.fixture
def modes() -> Iterator[list[tuple[str, bool]]]:
    """(statement's first word, whether psycopg2 ran it in autocommit) of every statement
    sent through SQLAlchemy while the test runs."""
    seen: list[tuple[str, bool]] = []

    def record(conn, cursor, statement, parameters, context, executemany):
        seen.append((statement.split()[0].upper(), conn.connection.dbapi_connection.autocommit))

    event.listen(db.engine, "before_cursor_execute", record)
    yield seen
    event.remove(db.engine, "before_cursor_execute", record)


@pytest.fixture
def public_note(postgresql) -> Note:
    note = make_note(make_user("alice"), visibility=NoteVisibility.PUBLIC, title="Oak")
    db.session.commit()
    return note


def _read(api, modes, path: str, **kwargs: Any) -> list[tuple[str, bool]]:
    db.session.expunge_all()  # the request reads the rows, not the test's copies
    modes.clear()
    response = api.get(path, **kwargs)
    assert response.status_code == 200, response.get_data(as_text=True)
    return list(modes)


def test_an_anonymous_public_read_runs_without_a_transaction(api, modes, public_note):
    for path in (
        f"/api/public/notes/{public_note.id}",
        f"/api/public/notes/{public_note.id}/comments",
    ):
        sent = _read(api, modes, path)
        assert sent, path
        assert all(word == "SELECT" and auto for word, auto in sent), (path, sent)
    assert api.get(f"/api/public/notes/{public_note.id}").get_json()["title"] == "Oak"


def test_a_signed_in_read_keeps_its_transaction(api, modes, public_note):
    reader = make_user("bob")
    db.session.commit()
    sent = _read(api.as_user(reader), modes, f"/api/public/notes/{public_note.id}")
    assert sent
    assert not any(auto for _, auto in sent)


def test_the_next_request_on_a_connection_a_public_read_gave_back_is_transactional(
    api, modes, public_note
):
    writer = api.as_user(make_user("carol"))
    db.session.commit()
    _read(api, modes, f"/api/public/notes/{public_note.id}")
    modes.clear()
    response = writer.post("/api/notes/mine", json={"title": "Elm"})
    assert response.status_code == 201, response.get_data(as_text=True)
    writes = [auto for word, auto in modes if word in {"INSERT", "UPDATE"}]
    assert writes
    assert not any(writes)
    assert db.session.get(Note, response.get_json()["noteId"]) is not None


def test_a_flush_during_a_public_read_writes_in_a_transaction(app, postgresql, modes):
    owner = make_user("dave")
    db.session.commit()
    note = make_note(owner, visibility=NoteVisibility.PUBLIC)
    db.session.commit()
    with app.test_request_context(f"/api/public/notes/{note.id}"):
        app.preprocess_request()
        from flask import g

        assert g.get(NO_TRANSACTION)
        note_id, owner_id = note.id, owner.id
        db.session.expunge_all()
        modes.clear()
        assert db.session.get(Note, note_id) is not None  # read without a transaction
        category = Category(
            owner_user_id=owner_id, name="Written in a public read", content_language="en"
        )
        db.session.add(category)
        db.session.flush()
        db.session.rollback()
    in_autocommit = [word for word, auto in modes if auto]
    in_transaction = [word for word, auto in modes if not auto]
    assert in_autocommit == ["SELECT"]
    assert "INSERT" in in_transaction
    assert db.session.get(Category, category.id) is None  # rolled back: it was one


def test_a_connection_the_server_dropped_goes_back_to_the_pool_quietly(postgresql):
    """A connection the server dropped fails its reset on the way back, and the pool
    invalidates it: the check-in that switches connections out of autocommit then has
    none to switch, and must let the pool go on."""
    from flask import current_app

    reader = current_app.extensions[NO_TRANSACTION]
    connection = reader.connect()
    driver = connection.connection.dbapi_connection
    assert driver.autocommit
    driver.close()  # as after the server went away
    connection.close()  # back to the pool: no error
    with db.engine.connect() as fresh:  # and the pool still serves, in a transaction
        assert not fresh.connection.dbapi_connection.autocommit
        assert fresh.exec_driver_sql("SELECT 1").scalar_one() == 1
