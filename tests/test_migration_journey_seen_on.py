"""The seen-on migration: trackables whose stops were saved before it get their first and
last seen-on day from those stops, as the service computes them (the observed time's UTC
day, else the saved time's); a trackable without stops keeps null; its downgrade drops
the two columns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from flask_migrate import downgrade, upgrade
from sqlalchemy import inspect

from app.extensions import db
from app.models.trackable import Trackable
from app.services.trackables import record_stop
from app.services.trackables.journey import statistics
from tests.conftest import make_test_app
from tests.factories import make_trackable, make_user
from tests.test_migrations import MIGRATIONS, empty_database_url  # noqa: F401 - its fixture

BEFORE = "f3c7a9d2b418"  # the revision before the seen-on days
pytestmark = pytest.mark.migrations


def test_seen_on_days_of_stops_saved_before_the_migration_are_backfilled(
    empty_database_url,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    app = make_test_app(empty_database_url, tmp_path)
    with app.app_context():
        upgrade(directory=str(MIGRATIONS))
        owner = make_user()
        travelled, idle = make_trackable(owner), make_trackable(owner)
        now = datetime.now(UTC)
        # A late report seen before the first stop, one seen just before midnight UTC, one
        # without a seen-on time (the day it was saved).
        late_night = (now - timedelta(days=3)).replace(hour=23, minute=59, second=59)
        for observed in (now - timedelta(days=2), now - timedelta(days=40), late_night, None):
            record_stop(
                travelled,
                latitude=47.37,
                longitude=8.54,
                created_by=owner,
                display_name="Olga",
                is_anonymous=False,
                observed_utc=observed,
            )
        db.session.commit()
        travelled_id, idle_id = travelled.id, idle.id
        expected = statistics.stored(travelled)
        assert expected.first_seen_on == (now - timedelta(days=40)).date()
        assert expected.last_seen_on is not None
        db.session.remove()

        downgrade(directory=str(MIGRATIONS), revision=BEFORE)
        columns = {column["name"] for column in inspect(db.engine).get_columns("trackables")}
        assert not {"journey_first_seen_on", "journey_last_seen_on"} & columns
        db.session.remove()
        upgrade(directory=str(MIGRATIONS))

        assert statistics.stored(db.session.get(Trackable, travelled_id)) == expected
        idle_now = statistics.stored(db.session.get(Trackable, idle_id))
        assert (idle_now.first_seen_on, idle_now.last_seen_on) == (None, None)
        db.session.remove()
        db.engine.dispose()
