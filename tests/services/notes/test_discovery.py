"""How discovery reads reach the database: inside the request's transaction when one is
open, otherwise (anonymous discovery on PostgreSQL) alone in autocommit on a connection of
their own, with exactly the same rows either way."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.enums import NoteVisibility
from app.platform import fast
from app.services.notes import discovery, queries
from app.services.shared.areas import Bounds, Circle
from tests.conftest import needs_fast_path
from tests.factories import make_note

WORLD = Bounds(-90.0, -180.0, 90.0, 180.0)


@pytest.fixture
def on_postgresql(app):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the short way is PostgreSQL's")


@pytest.fixture
def short_way_calls(monkeypatch):
    """Counts the reads that take the short way (queries._run_alone)."""
    calls = []
    run_alone = queries._run_alone

    def counting(*args, **kwargs):
        calls.append(args)
        return run_alone(*args, **kwargs)

    monkeypatch.setattr(queries, "_run_alone", counting)
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


@needs_fast_path("driver_cursor")
def test_anonymous_discovery_takes_the_short_way_on_postgresql(api, on_postgresql, short_way_calls):
    public_notes_near_berlin()

    bounds = api.get(
        "/api/notes/public/bounds?minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"
    )
    nearby = api.get("/api/notes/public/nearby?latitude=52.52&longitude=13.405")

    assert len(bounds.get_json()) == len(nearby.get_json()) == 3
    assert len(short_way_calls) == 2


def test_with_the_shortcut_off_anonymous_discovery_reads_on_the_session(
    api, on_postgresql, short_way_calls, monkeypatch
):
    monkeypatch.setattr(fast, "_enabled", frozenset(fast.SHORTCUTS) - {"driver_cursor"})
    public_notes_near_berlin()

    nearby = api.get("/api/notes/public/nearby?latitude=52.52&longitude=13.405")

    assert len(nearby.get_json()) == 3
    assert short_way_calls == []


@needs_fast_path("driver_cursor")
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


@needs_fast_path("driver_cursor")
def test_the_short_way_leaves_its_connection_transactional(api, on_postgresql, short_way_calls):
    public_notes_near_berlin()
    db.session.remove()
    db.engine.dispose()  # one pooled connection from here on: the one the read uses

    api.get("/api/notes/public/nearby?latitude=52.52&longitude=13.405")

    assert len(short_way_calls) == 1
    with db.engine.connect() as connection:
        assert connection.connection.driver_connection.autocommit is False


# --- access paths by window size -----------------------------------------------------------


def ids_of(found):
    column = discovery.NOTE_RECORD_FIELDS.index("note_id")
    return [row[column] for row in found.rows]


@pytest.fixture
def spread_notes():
    """Public notes in two languages over the globe, with ties in activity time (ordered
    by id then), a private one and one without a position."""
    from datetime import UTC, datetime, timedelta

    start = datetime(2026, 1, 1, tzinfo=UTC)
    places = [(52.52, 13.4), (48.85, 2.35), (-33.9, 151.2), (40.7, -74.0), (35.7, 139.7)]
    for number in range(40):
        latitude, longitude = places[number % len(places)]
        make_note(
            visibility=NoteVisibility.PUBLIC,
            latitude=latitude + number / 1000,
            longitude=longitude,
            content_language="de" if number % 3 else "ja",
            last_activity_utc=start + timedelta(hours=number // 4),  # four share each time
        )
    make_note(visibility=NoteVisibility.PRIVATE, latitude=52.5, longitude=13.4)
    make_note(visibility=NoteVisibility.PUBLIC)


@pytest.mark.parametrize("language", [None, "de", "ja"])
@pytest.mark.parametrize("cap", [5, 13, 100])
def test_every_access_path_returns_the_same_notes_in_the_same_order(
    app, spread_notes, language, cap
):
    """The one-scan statement of wide windows and the two-step one of smaller windows find
    the same records, in the same order, truncated alike."""
    filters = [
        discovery.note_policy.public_discovery_filter(),
        WORLD.where(),
    ]
    params = WORLD.params()
    if language:
        filters.append(discovery.Note.content_language == discovery.LANGUAGE)
        params[discovery.LANGUAGE.key] = language
    two_step = discovery.capped(
        discovery.capped_statement(discovery.ANONYMOUS, filters), params, cap
    )
    one_scan = discovery.capped(discovery.scan_statement(discovery.ANONYMOUS, filters), params, cap)
    through_the_face = discovery.public_notes(WORLD, content_language=language, cap=cap)

    assert ids_of(one_scan) == ids_of(two_step) == ids_of(through_the_face)
    assert one_scan.rows == two_step.rows
    matching = {None: 40, "de": 26, "ja": 14}[language]  # every third one is in Japanese
    assert len(one_scan.rows) == min(cap, matching)
    assert one_scan.truncated == two_step.truncated == (cap < matching)


@pytest.mark.parametrize(
    ("area", "size"),
    [
        (Bounds(52.47, 13.32, 52.57, 13.48), "small"),
        (Circle(52.52, 13.405, 5.0), "small"),
        (Bounds(47.0, 5.5, 55.0, 15.5), "medium"),
        (Bounds(-90.0, -180.0, 90.0, 180.0), "wide"),
        (Bounds(-90.0, 170.0, 90.0, 80.0), "wide"),  # across the antimeridian, 270 degrees
        (Bounds(-45.0, 100.0, 45.0, -100.0), "medium"),  # across it, 90 x 160 degrees
    ],
)
def test_the_window_size_picks_the_access_path(area, size):
    assert discovery.window_size(area) == size


@pytest.mark.parametrize(
    ("area", "index"),
    [
        (Bounds(52.47, 13.32, 52.57, 13.48), "ix_notes_public_position"),
        (Circle(52.52, 13.405, 5.0), "ix_notes_public_position"),
        (Bounds(47.0, 5.5, 55.0, 15.5), "ix_notes_public_position"),
        (WORLD, "ix_notes_public_{language}activity"),
    ],
)
@pytest.mark.parametrize("language", [None, "de"])
def test_sqlite_reads_through_the_index_pinned_for_the_window_size(app, area, index, language):
    """SQLite's planner is not trusted with the choice: each size names its index, and
    SQLite's own plan shows it is the one used."""
    if db.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL's planner chooses from its statistics")
    index = index.format(language="language_" if language else "")
    params = {**area.params(), discovery.CAP_PLUS_ONE.key: 11}
    if language:
        params[discovery.LANGUAGE.key] = language
    statement = discovery._public_statement(area.shape, bool(language), discovery.window_size(area))
    compiled = statement.compile(dialect=db.engine.dialect)
    plan = (
        db.session.connection()
        .exec_driver_sql(
            "EXPLAIN QUERY PLAN " + compiled.string,
            tuple(compiled.construct_params(params)[name] for name in compiled.positiontup),
        )
        .all()
    )
    assert f"INDEXED BY {index}" in compiled.string
    assert any(
        f"USING INDEX {index}" in row[-1] or f"USING COVERING INDEX {index}" in row[-1]
        for row in plan
    ), plan


# --- small windows: planned once per connection (PostgreSQL) -------------------------------


def prepared_statements():
    """The discovery statements prepared on the pool's (only) connection, with how often
    each was planned for its numbers (custom) and run on its one plan (generic)."""
    with db.engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE left(name, 10) = 'discovery_' ORDER BY name"
        )
        return [tuple(row) for row in rows]


@pytest.fixture
def one_connection(app, on_postgresql):
    """Every read from here on uses the same pooled connection."""
    db.session.remove()
    db.engine.dispose()


SMALL_AREAS = [Bounds(52.47, 13.32, 52.57, 13.48), Circle(52.52, 13.405, 5.0)]


@needs_fast_path("driver_cursor")
@pytest.mark.parametrize("language", [None, "de"])
@pytest.mark.parametrize("area", SMALL_AREAS, ids=["window", "circle"])
def test_a_small_window_runs_one_generic_plan_with_the_rows_the_session_returns(
    app, spread_notes, one_connection, area, language
):
    alone = [discovery.public_notes(area, content_language=language, cap=3) for _ in range(3)]
    [(_name, generic, custom)] = prepared_statements()
    db.session.execute(select(1))  # opens the session's transaction: the ORM path
    in_session = discovery.public_notes(area, content_language=language, cap=3)
    db.session.rollback()

    assert (generic, custom) == (3, 0)  # planned once, never for the numbers
    assert all(found.rows == in_session.rows for found in alone)
    assert all(found.truncated == in_session.truncated for found in alone)
    assert len(in_session.rows) == 3
    assert in_session.truncated


def test_a_larger_window_is_planned_for_its_numbers(app, spread_notes, one_connection):
    discovery.public_notes(Bounds(47.0, 5.5, 55.0, 15.5), cap=10)
    discovery.public_notes(WORLD, cap=10)

    assert prepared_statements() == []


@needs_fast_path("driver_cursor")
def test_a_connection_that_lost_its_prepared_statements_prepares_them_again(
    app, spread_notes, one_connection
):
    area = SMALL_AREAS[0]
    before = discovery.public_notes(area, cap=10)
    with db.engine.connect() as connection:
        connection.exec_driver_sql("DEALLOCATE ALL")  # the pool still believes it prepared
        connection.commit()

    after = discovery.public_notes(area, cap=10)

    assert after.rows == before.rows
    assert len(prepared_statements()) == 1


def test_prepared_statements_can_be_turned_off(app, spread_notes, one_connection, monkeypatch):
    monkeypatch.setitem(app.config, "DATABASE_PREPARED_STATEMENTS", False)

    found = discovery.public_notes(SMALL_AREAS[1], cap=10)

    assert len(found.rows) == 8  # the Berlin notes
    assert prepared_statements() == []


@needs_fast_path("driver_cursor")
def test_a_connection_that_forgot_what_it_prepared_keeps_the_statements_it_has(
    app, spread_notes, one_connection
):
    area = SMALL_AREAS[1]
    before = discovery.public_notes(area, cap=10)
    with db.engine.connect() as connection:  # the pool's record, not the server, forgets
        connection.connection.info["prepared_statements"].clear()

    after = discovery.public_notes(area, cap=10)

    assert after.rows == before.rows
    [(_name, generic, custom)] = prepared_statements()
    assert (generic, custom) == (2, 0)
