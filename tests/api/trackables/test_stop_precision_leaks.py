"""A coarse stop's raw position is kept nowhere: a stop written at
`about10km` at a distinctive position, then everything it set off run (the event's
fan-out to inboxes, an area watcher, a notification mail, a webhook delivered to a
receiver), and every column of every table read straight from the database, with the mail
outbox, the webhook bodies, the feed, the page and the exports: the raw digits, and the
finer grids' forms of them, appear nowhere. The retry fingerprint is not a hash of them
either (a hash of a raw position is a search over a small grid away from it).

The position (Santiago de Chile) has a sign on both axes, so its forms cannot turn up by
chance inside a date, a time or an id (none of which has "-" before a digit and a point).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Base
from app.models.trackable import JourneyStop, StopPrecision
from app.models.user import User
from app.platform.mail import outbox
from app.services.shared.mutations import payload_hash
from tests.inboxes import World, around
from tests.jobs import run_jobs
from tests.receivers import Receiver, subscribe

RAW = (-33.448891, -70.669266)
SNAPPED = (-33.4, -70.7)
pytestmark = pytest.mark.usefixtures("only_loopback")


def raw_forms(latitude: float, longitude: float) -> list[str]:
    """How a raw position, or its finer grids' points, would show in text."""
    forms = [repr(latitude), repr(longitude)]
    forms += [f"{value:.4f}" for value in (latitude, longitude)]  # the exact grid
    forms += [f"{value:.2f}" for value in (latitude, longitude)]  # the 1 km grid
    forms += [f"{abs(value):.6f}".split(".")[1] for value in (latitude, longitude)]
    return forms


def fingerprints(latitude: float, longitude: float, precision: str) -> list[str]:
    """Retry fingerprints a raw position would give (with and without the precision)."""
    payload: dict[str, Any] = {
        "latitude": latitude,
        "longitude": longitude,
        "observed_utc": None,
        "display_name": None,
    }
    return [payload_hash(payload), payload_hash({**payload, "precision": precision})]


def database_text() -> str:
    """Every value of every column of every table, as text (JSON columns as JSON)."""
    db.session.expire_all()
    values: list[str] = []
    for table in Base.metadata.sorted_tables:
        for row in db.session.execute(table.select()):
            for value in row:
                if isinstance(value, dict | list):
                    values.append(json.dumps(value))
                elif value is not None:
                    values.append(str(value))
    return "\n".join(values)


def assert_nowhere(text: str, needles: list[str], where: str) -> None:
    found = [needle for needle in needles if needle in text]
    assert found == [], f"{where} holds {found}"


def confirmed(user: User) -> None:
    user.is_email_confirmed = True
    db.session.commit()


def test_a_coarse_stops_raw_position_reaches_no_table_mail_hook_feed_or_file(
    app,
    api,
    world: World,
    receiver: Receiver,
):
    # Everyone who hears of a new stop, by every channel.
    confirmed(world.item_watcher)
    settings = api.as_user(world.item_watcher).put(
        "/api/notifications/settings", json={"mail": "each"}
    )
    assert settings.status_code == 200, settings.get_json()
    subscribe(api, world.item_watcher, receiver.url())
    around(api, world.stranger, SNAPPED)

    response = api.as_user(world.author).post(
        f"/api/trackables/{world.trackable.id}/journey-stops",
        json={
            "latitude": RAW[0],
            "longitude": RAW[1],
            "precision": "about10km",
            "clientMutationId": "find-1",
        },
    )
    assert response.status_code == 201, response.get_json()
    run_jobs(app)

    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.latitude, stop.longitude) == SNAPPED
    assert stop.precision is StopPrecision.ABOUT_10KM
    # the channels did carry the event (else finding nothing in them proves nothing)
    assert len(outbox(app)) == 1
    assert len(receiver.received) == 1
    hearers = api.as_user(world.stranger).get("/api/notifications").get_json()
    assert [one["eventType"] for one in hearers] == ["trackable.journey_stop.added"]

    needles = raw_forms(*RAW) + fingerprints(*RAW, "about10km")
    assert_nowhere(database_text(), needles, "the database")
    assert_nowhere(response.get_data(as_text=True), needles, "the write's answer")
    assert_nowhere("\n".join(mail.text for mail in outbox(app)), needles, "the mail")
    bodies = "\n".join(received.body.decode() for received in receiver.received)
    assert_nowhere(bodies, needles, "the webhook bodies")
    code = world.trackable.public_code
    for where in (
        f"/api/trackables/{world.trackable.id}/journey",
        f"/api/trackables/{world.trackable.id}/journey.gpx",
        f"/api/trackables/{world.trackable.id}/journey.geojson",
        f"/en/trackables/{code}",
        f"/en/trackables/{code}/feed.atom",
    ):
        shown = api.get(where)
        assert shown.status_code == 200, where
        assert_nowhere(shown.get_data(as_text=True), needles, where)
    # and the snapped point is what they show
    assert "-33.4" in api.get(f"/en/trackables/{code}").get_data(as_text=True)


def test_the_check_finds_a_raw_position_where_there_is_one(app, world: World):
    # Not vacuous: a stop stored at the raw position (as `exact` would nearly keep it)
    # is found in the database text by the same needles.
    db.session.add(
        JourneyStop(
            trackable_id=world.trackable.id,
            coordinate_id=world.trackable.id,
            latitude=round(RAW[0], 4),
            longitude=round(RAW[1], 4),
        )
    )
    db.session.commit()
    found = [needle for needle in raw_forms(*RAW) if needle in database_text()]
    assert found == ["-33.4489", "-70.6693"]
