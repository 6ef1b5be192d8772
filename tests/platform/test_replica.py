"""Anonymous public reads from the read replica (DATABASE_REPLICA_URL), everything else
from the primary. The "replica" here is a second database with the same tables and
different rows, so the answer says which one served it; being no standby, it has replayed
no writer's position. A real streaming replica, cut, paused and stopped, is
tests/platform/test_replica_stream.py's. PostgreSQL only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url

from app.extensions import db
from app.models.base import Base
from app.models.enums import NoteVisibility
from app.platform import metrics
from app.platform.database.replica import (
    REPLICA_ENDPOINTS,
    WROTE_COOKIE,
    format_lsn,
    parse_lsn,
)
from tests.conftest import ApiClient, fresh_postgresql_database, make_test_app
from tests.factories import make_note, make_user

BOUNDS = "/api/notes/public/bounds?minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14"


@pytest.fixture(scope="module")
def replica_url(database_url: str) -> Iterator[str]:
    if not database_url.startswith("postgresql"):
        pytest.skip("the read replica is a PostgreSQL feature (TEST_DATABASE_URL)")
    name = f"{make_url(database_url).database}_replica"
    with fresh_postgresql_database(database_url, name) as url:
        engine = create_engine(url)
        Base.metadata.create_all(engine)
        engine.dispose()
        yield url


def titles(response: Any) -> set[str]:
    assert response.status_code == 200, response.get_json()
    return {note["title"] for note in response.get_json()}


@pytest.fixture
def both(database_url: str, replica_url: str, tmp_path) -> Iterator[tuple[Any, ApiClient, Any]]:
    """An app on the primary with the replica beside it; a public note on each, titled
    after its database; and the note's owner."""
    app = make_test_app(
        database_url,
        tmp_path,
        # As an operator writes it: the scheme without a driver means ours, psycopg2.
        DATABASE_REPLICA_URL=replica_url.replace("postgresql+psycopg2://", "postgresql://"),
        DATABASE_REPLICA_LAG_CHECK_SECONDS=0,
    )
    with app.app_context():
        owner = make_user()
        make_note(
            owner,
            latitude=52.5,
            longitude=13.4,
            title="on the primary",
            visibility=NoteVisibility.PUBLIC,
        )
        db.session.commit()
        replica = create_engine(replica_url)
        with replica.begin() as connection:
            for table in reversed(Base.metadata.sorted_tables):
                connection.execute(table.delete())
        yield app, ApiClient(app.test_client()), owner
        db.session.rollback()
        for table in reversed(Base.metadata.sorted_tables):
            db.session.execute(table.delete())
        db.session.commit()
        db.session.remove()
        for engine in db.engines.values():
            engine.dispose()
        replica.dispose()


def put_on_replica(replica_url: str, title: str, tmp_path: Path) -> None:
    """The same kind of public note, written straight into the replica's database."""
    app = make_test_app(replica_url, tmp_path / "replica")
    with app.app_context():
        owner = make_user()
        make_note(
            owner, latitude=52.5, longitude=13.4, title=title, visibility=NoteVisibility.PUBLIC
        )
        db.session.commit()
        db.session.remove()
        db.engine.dispose()


def test_anonymous_discovery_reads_the_replica(both, replica_url, tmp_path):
    _app, api, _owner = both
    put_on_replica(replica_url, "on the replica", tmp_path)
    assert titles(api.get(BOUNDS)) == {"on the replica"}


def test_a_signed_in_caller_reads_the_primary(both, replica_url, tmp_path):
    _app, api, owner = both
    put_on_replica(replica_url, "on the replica", tmp_path)
    assert titles(api.as_user(owner).get(BOUNDS)) == {"on the primary"}


def test_a_caller_who_just_wrote_reads_the_primary(both, replica_url, tmp_path):
    app, api, owner = both
    put_on_replica(replica_url, "on the replica", tmp_path)
    # Any successful write marks the client (anonymous writes too), for longer than the lag.
    written = api.as_user(owner).post(
        "/api/notes/mine", json={"title": "fresh", "latitude": 52.6, "longitude": 13.5}
    )
    assert written.status_code == 201
    cookie = api.client.get_cookie(WROTE_COOKIE)
    assert cookie is not None
    assert cookie.max_age == int(app.config["DATABASE_REPLICA_STICKY_SECONDS"])
    assert cookie.http_only
    assert cookie.secure == app.config["SESSION_COOKIE_SECURE"]  # as the site's other cookies
    assert parse_lsn(cookie.value) is not None  # the primary's WAL position after the write
    assert "on the primary" in titles(api.get(BOUNDS))


@pytest.mark.parametrize("value", ["1", "primary", "0/", "G/1", "1/2/3", "%00", ""])
def test_a_cookie_that_names_no_position_reads_the_primary(both, replica_url, tmp_path, value):
    _app, api, _owner = both
    put_on_replica(replica_url, "on the replica", tmp_path)
    api.client.set_cookie(WROTE_COOKIE, value)
    assert titles(api.get(BOUNDS)) == {"on the primary"}


def test_wal_positions_read_and_print_as_postgresql_writes_them():
    assert parse_lsn("16/B374D848") == 0x16_B374D848
    assert format_lsn(0x16_B374D848) == "16/B374D848"
    assert parse_lsn("0/0") == 0
    assert format_lsn(0) == "0/0"
    assert parse_lsn("not/a position") is None


def test_a_refused_write_does_not_mark_the_client(both):
    _app, api, _owner = both
    refused = api.post("/api/notes/mine", json={"title": "no token"})
    assert refused.status_code == 401
    assert api.client.get_cookie(WROTE_COOKIE) is None


def test_a_replica_too_far_behind_is_not_read(both, replica_url, tmp_path):
    app, api, _owner = both
    put_on_replica(replica_url, "on the replica", tmp_path)
    app.extensions["read_replica"].max_lag = -1.0  # every measure is now too far behind
    assert titles(api.get(BOUNDS)) == {"on the primary"}


def test_an_unreachable_replica_leaves_the_primary_serving(database_url, replica_url, tmp_path):
    closed = make_url(replica_url).set(port=1).render_as_string(hide_password=False)
    app = make_test_app(
        database_url,
        tmp_path,
        DATABASE_REPLICA_URL=closed,
        DATABASE_REPLICA_LAG_CHECK_SECONDS=0,
        DATABASE_CHECK_TIMEOUT_SECONDS=0.3,
    )
    with app.app_context():
        api = ApiClient(app.test_client())
        assert api.get(BOUNDS).status_code == 200
        ready = api.get("/readyz").get_json()
        assert (
            ready["replica"].items()
            >= {
                "lagSeconds": None,
                "maxLagSeconds": 5.0,
                "inUse": False,
                "replayLsn": None,
                "receiving": None,
            }.items()
        )
        assert metrics.value("location_notes_replica_lag_seconds") == float("inf")
        assert ready["status"] == "ready"  # the primary serves the replica's reads
        assert ready["dependencies"]["replica"]["up"] is False
        db.session.remove()
        for engine in db.engines.values():
            engine.dispose()


def test_readiness_reports_the_replica(both):
    _app, api, _owner = both
    ready = api.get("/readyz").get_json()
    assert ready["dependencies"]["replica"]["up"] is True
    # A database that is not in recovery is measured by its own WAL position: on the same
    # server as the primary, no lag. It replays nothing and has no WAL receiver.
    assert ready["replica"] == {
        "lagSeconds": 0.0,
        "maxLagSeconds": 5.0,
        "inUse": True,
        "replayLsn": None,
        "primaryLsn": ready["replica"]["primaryLsn"],
        "receiving": None,
    }
    assert parse_lsn(ready["replica"]["primaryLsn"]) is not None
    assert metrics.value("location_notes_replica_lag_seconds") == 0.0


def test_only_public_reads_are_routed(both):
    app, _api, _owner = both
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    assert endpoints >= REPLICA_ENDPOINTS
    assert not any(
        name.split(".")[1].startswith(("create", "update", "delete")) for name in REPLICA_ENDPOINTS
    )


def test_settings_that_could_serve_a_writer_stale_rows_are_refused(
    database_url, replica_url, tmp_path
):
    with pytest.raises(ValueError, match="STICKY"):
        make_test_app(
            database_url,
            tmp_path,
            DATABASE_REPLICA_URL=replica_url,
            DATABASE_REPLICA_STICKY_SECONDS=5,
            DATABASE_REPLICA_MAX_LAG_SECONDS=5,
        )
    with pytest.raises(ValueError, match="PostgreSQL"):
        make_test_app(database_url, tmp_path, DATABASE_REPLICA_URL="sqlite:///replica.db")
