"""The journey stop place ids migration: stops saved before it get their GeoNames city
from their label and point, offline; its downgrade drops it again."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from flask_migrate import downgrade, upgrade

from app.extensions import db
from tests.factories import make_trackable, make_user
from tests.test_migrations import MIGRATIONS
from tests.test_migrations import empty_database_url as empty_database_url  # fixture

BEFORE = "c3e5a7f90b14"  # the revision before the place ids
PLACE_IDS = "c41e7a2d9b86"
pytestmark = pytest.mark.migrations

STOPS = [  # (label, latitude, longitude) -> GeoNames id
    (("Berlin, Germany", 52.52, 13.405), 2950159),
    (("Vienna, Austria", 48.2082, 16.3738), 2761369),
    (("Potsdam, Brandenburg, Germany", 52.3906, 13.0645), None),  # Nominatim's
    (("", 0.0, -30.0), None),  # at sea
    (("Somewhere, Atlantis", 10.0, 10.0), None),
]


stops = sa.table(  # the columns of the revision before, as its migration made them
    "journey_stops",
    *(sa.column(name, sa.Uuid()) for name in ("id", "trackable_id", "coordinate_id")),
    sa.column("latitude", sa.Float()),
    sa.column("longitude", sa.Float()),
    sa.column("location_label", sa.String()),
    sa.column("associated_utc", sa.DateTime(timezone=True)),
    sa.column("is_location_only", sa.Boolean()),
    sa.column("is_anonymous", sa.Boolean()),
    sa.column("creator_display_name", sa.String()),
)


def stop_rows(connection: sa.Connection) -> list[tuple]:
    return connection.execute(
        sa.text("SELECT location_label, place_geonameid FROM journey_stops ORDER BY associated_utc")
    ).fetchall()


def test_stops_saved_before_get_their_place_ids(empty_database_url, tmp_path):
    from tests.conftest import make_test_app

    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        # The item made by today's models, then the schema taken back to the revision before
        # (the item's row stays); the stops as that revision wrote them.
        upgrade(directory=str(MIGRATIONS))
        trackable_id = make_trackable(make_user("olga")).id
        db.session.remove()
        downgrade(directory=str(MIGRATIONS), revision=BEFORE)
        with db.engine.begin() as connection:
            for number, ((label, latitude, longitude), _ids) in enumerate(STOPS):
                connection.execute(
                    stops.insert().values(
                        id=uuid.uuid4(),
                        trackable_id=trackable_id,
                        coordinate_id=uuid.uuid4(),
                        latitude=latitude,
                        longitude=longitude,
                        location_label=label,
                        associated_utc=datetime(2026, 11, 1, number, tzinfo=UTC),
                        is_location_only=True,
                        is_anonymous=True,
                        creator_display_name="Ann",
                    )
                )
        db.session.remove()
        upgrade(directory=str(MIGRATIONS), revision=PLACE_IDS)
        with db.engine.connect() as connection:
            assert stop_rows(connection) == [(label, found) for (label, *_), found in STOPS]
        downgrade(directory=str(MIGRATIONS), revision=BEFORE)
        with db.engine.connect() as connection:
            columns = {
                column["name"] for column in sa.inspect(connection).get_columns("journey_stops")
            }
        assert "place_geonameid" not in columns
        assert "country_code" in columns  # the journey statistics' own
        db.session.remove()
        db.engine.dispose()
