"""How discovery reads reach the database: inside the request's transaction when one is
open, otherwise (anonymous discovery on PostgreSQL) alone in autocommit on a connection of
their own, with exactly the same rows either way."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.services.notes import discovery
from app.services.shared.areas import Bounds, Circle
from tests.factories import make_note

WORLD = Bounds(-90.0, -180.0, 90.0, 180.0)


@pytest.fixture
def on_postgresql(app):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the short way is PostgreSQL's")


@pytest.fixture
def short_way_calls(monkeypatch):
    """Counts the reads that take the short way (discovery._run_alone)."""
    calls = []
    run_alone = discovery._run_alone

    def counting(*args, **kwargs):
        calls.append(args)
        return run_alone(*args, **kwargs)

    monkeypatch.setattr(discovery, "_run_alone", counting)
    return calls


def public_notes_near_berlin():
    for number in range(3):
        make_note(
            title=f"Berlin {number}",
            visibility=NoteVisibility.PUBLIC,
            latitude=52.52 + number / 1000,
            longitude=13.405,
        )


def test_a_read_inside_the_request_transaction_sees_what_it_flushed(app):
    note = make_note(visibility=NoteVisibility.PUBLIC, latitude=1.0, longitude=1.0)
    note.title = "Renamed, not committed"
    db.session.flush()

    found = discovery.public_notes(WORLD, cap=10)

    assert [row[discovery.NOTE_RECORD_FIELDS.index("title")] for row in found.rows] == [
        "Renamed, not committed"
    ]


def test_anonymous_discovery_takes_the_short_way_on_postgresql(api, on_postgresql, short_way_calls):
    public_notes_near_berlin()

    bounds = api.get(
        "/api/notes/public/bounds?minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    )
    nearby = api.get("/api/notes/public/nearby?latitude=52.52&longitude=13.405")

    assert len(bounds.get_json()) == len(nearby.get_json()) == 3
    assert len(short_way_calls) == 2


def test_the_short_way_returns_the_rows_the_session_returns(app, on_postgresql, short_way_calls):
    public_notes_near_berlin()
    circle = Circle(52.52, 13.405, 5.0)

    alone = discovery.public_notes(circle, cap=2)
    db.session.execute(select(1))  # opens the session's transaction
    in_session = discovery.public_notes(circle, cap=2)

    assert len(short_way_calls) == 1
    assert [tuple(row) for row in alone.rows] == [tuple(row) for row in in_session.rows]
    assert alone.truncated
    assert in_session.truncated
    assert len(alone.rows) == 2


def test_the_short_way_leaves_its_connection_transactional(api, on_postgresql, short_way_calls):
    public_notes_near_berlin()
    db.session.remove()
    db.engine.dispose()  # one pooled connection from here on: the one the read uses

    api.get("/api/notes/public/nearby?latitude=52.52&longitude=13.405")

    assert len(short_way_calls) == 1
    with db.engine.connect() as connection:
        assert connection.connection.driver_connection.autocommit is False
