"""The journey statistics migration: stops saved before it get their country
from the offline geocoder and every trackable its statistics, as the service computes
them; its downgrade drops the new columns and an upgrade again computes them afresh."""

from __future__ import annotations

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect, select

from app.extensions import db
from app.models.trackable import JourneyStop, Trackable
from app.services.trackables import record_stop
from app.services.trackables.journey import statistics
from tests.conftest import make_test_app
from tests.factories import make_trackable, make_user
from tests.test_migrations import MIGRATIONS, empty_database_url  # noqa: F401 - its fixture

BEFORE = "a7d3f9c2e514"  # the revision before journey statistics
pytestmark = pytest.mark.migrations
# Countries, a stop with none, and a leg over the antimeridian (the short way round).
POINTS = [(47.3769, 8.5417), (0.0, -30.0), (52.52, 13.405), (0.0, 179.9), (0.0, -179.9)]


def test_statistics_of_stops_saved_before_the_migration_are_backfilled(
    empty_database_url,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS))
        owner = make_user()
        travelled, idle = make_trackable(owner), make_trackable(owner)
        for latitude, longitude in POINTS:
            record_stop(
                travelled,
                latitude=latitude,
                longitude=longitude,
                created_by=owner,
                display_name="Olga",
                is_anonymous=False,
            )
        db.session.commit()
        travelled_id, idle_id = travelled.id, idle.id
        expected = statistics.stored(travelled)
        assert expected.countries == ["CH", "DE"]
        db.session.remove()

        downgrade(directory=str(MIGRATIONS), revision=BEFORE)
        columns = {column["name"] for column in inspect(db.engine).get_columns("trackables")}
        assert "journey_stop_count" not in columns
        db.session.remove()
        upgrade(directory=str(MIGRATIONS))

        assert statistics.stored(db.session.get(Trackable, travelled_id)) == expected
        assert statistics.stored(db.session.get(Trackable, idle_id)) == statistics.compute([])
        codes = db.session.scalars(
            select(JourneyStop.country_code).order_by(JourneyStop.associated_utc)
        ).all()
        assert codes == ["CH", "", "DE", "", ""]
        assert set(db.session.scalars(select(JourneyStop.precision))) == {"exact"}
        db.session.remove()
        db.engine.dispose()
