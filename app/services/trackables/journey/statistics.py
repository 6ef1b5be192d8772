"""A trackable's journey statistics (docs/contract/trackables.md, Journey statistics): how far it
travelled, how many stops, which countries, its first and last stop's time, and the first and
last day it was seen (each stop's "seen on" day).

They are stored on the trackable's row (`journey_*`), so reads and lists cost nothing, and
recomputed from all its stops by every change of the journey, in that change's transaction,
after the trackable's row is locked: concurrent changes of one journey take turns, and the
last to commit reads every stop the others wrote. Recomputing (not adding a leg) is what
keeps them right whatever order concurrent stops commit in.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import pairwise
from typing import Any

from sqlalchemy import select

from app.extensions import db
from app.integrations.geo_data import great_circle_km
from app.models.trackable import JourneyStop, Trackable
from app.platform.database import begin_immediate

DISTANCE_DECIMALS = 3  # metres: finer than any stop's grid


@dataclass(frozen=True)
class JourneyStatistics:
    """A journey's statistics as the read model shows them."""

    distance_km: float
    stop_count: int
    countries: list[str]
    first_stop_utc: datetime | None
    last_stop_utc: datetime | None
    first_seen_on: date | None
    last_seen_on: date | None


@dataclass(frozen=True)
class StopPoint:
    """What the statistics need of a stop, in journey order."""

    latitude: float
    longitude: float
    country_code: str
    associated_utc: datetime
    observed_utc: datetime | None

    @property
    def seen_on(self) -> date:
        return seen_on(self.observed_utc, self.associated_utc)


def seen_on(observed_utc: datetime | None, associated_utc: datetime) -> date:
    """A stop's "seen on" day (UTC): the day of the time its finder saw the item
    (`observedUtc`, the website's "seen on" date) when they gave one, else of the time the
    stop was saved (it was seen then)."""
    return (observed_utc or associated_utc).astimezone(UTC).date()


# Distance: the haversine great-circle distance (mean Earth radius 6371.0088 km) summed over
# consecutive stops oldest first (ties by id), so a leg over the antimeridian or a pole is the short
# way round. Countries: each stop's country_code (offline geocoder at save time), in order of first
# visit. Seen on: the earliest and latest of the stops' days, whatever their order (a find reported
# late may have been seen before the stops saved ahead of it).
def compute(points: Sequence[StopPoint]) -> JourneyStatistics:
    """The statistics of stops given in journey order (a pure function)."""
    distance = sum(
        great_circle_km(a.latitude, a.longitude, b.latitude, b.longitude)
        for a, b in pairwise(points)
    )
    days = [point.seen_on for point in points]
    return JourneyStatistics(
        distance_km=round(distance, DISTANCE_DECIMALS),
        stop_count=len(points),
        countries=list(dict.fromkeys(p.country_code for p in points if p.country_code)),
        first_stop_utc=points[0].associated_utc if points else None,
        last_stop_utc=points[-1].associated_utc if points else None,
        first_seen_on=min(days, default=None),
        last_seen_on=max(days, default=None),
    )


def stored(trackable: Trackable) -> JourneyStatistics:
    """The statistics kept on the trackable's row."""
    return JourneyStatistics(
        distance_km=trackable.journey_distance_km,
        stop_count=trackable.journey_stop_count,
        countries=list(trackable.journey_countries or []),
        first_stop_utc=trackable.journey_first_stop_utc,
        last_stop_utc=trackable.journey_last_stop_utc,
        first_seen_on=trackable.journey_first_seen_on,
        last_seen_on=trackable.journey_last_seen_on,
    )


def journey_points(trackable_id: uuid.UUID) -> list[StopPoint]:
    """The trackable's stops in journey order, as read now."""
    rows = db.session.execute(
        select(
            JourneyStop.latitude,
            JourneyStop.longitude,
            JourneyStop.country_code,
            JourneyStop.associated_utc,
            JourneyStop.observed_utc,
        )
        .where(JourneyStop.trackable_id == trackable_id)
        .order_by(JourneyStop.associated_utc, JourneyStop.id)
    )
    return [StopPoint(*row) for row in rows]


# SELECT ... FOR NO KEY UPDATE on PostgreSQL, not FOR UPDATE: every insert of a stop, comment,
# unlock or attachment takes FOR KEY SHARE on the trackable (their foreign key), which FOR UPDATE
# waits for, so two writers that had each inserted a child first would deadlock. NO KEY UPDATE is
# what an UPDATE of the row takes anyway and excludes only other updaters. On SQLite, BEGIN
# IMMEDIATE (the database's one write lock, held already by a transaction that has written).
def lock_trackable(trackable_id: uuid.UUID) -> Trackable | None:
    """Hold the trackable's row (see the module notes) until this transaction ends, and
    read it again as it is now: the session's copy may predate another writer's commit,
    and assigning it a value equal to that stale copy would be no change to flush."""
    connection = db.session.connection()
    statement: Any = (
        select(Trackable)
        .where(Trackable.id == trackable_id)
        .execution_options(populate_existing=True)
    )
    if connection.dialect.name == "sqlite":
        begin_immediate(connection)
    else:
        statement = statement.with_for_update(key_share=True)  # FOR NO KEY UPDATE
    return db.session.scalars(statement).one_or_none()


def refresh(trackable: Trackable) -> JourneyStatistics:
    """Lock the trackable's row, recompute its statistics from its stops and store them
    (flushed). Call it after the journey's change is flushed, in the same transaction."""
    db.session.flush()  # nothing pending is overwritten by the fresh read below
    lock_trackable(trackable.id)
    found = compute(journey_points(trackable.id))
    trackable.journey_distance_km = found.distance_km
    trackable.journey_stop_count = found.stop_count
    trackable.journey_countries = found.countries
    trackable.journey_first_stop_utc = found.first_stop_utc
    trackable.journey_last_stop_utc = found.last_stop_utc
    trackable.journey_first_seen_on = found.first_seen_on
    trackable.journey_last_seen_on = found.last_seen_on
    db.session.flush()
    return found


def refresh_many(trackable_ids: Iterable[uuid.UUID]) -> None:
    """`refresh` each of these trackables that still exists, in id order (so that two
    such calls lock in one order and cannot deadlock)."""
    wanted = list(set(trackable_ids))
    if not wanted:
        return
    db.session.flush()
    remaining = db.session.scalars(
        select(Trackable).where(Trackable.id.in_(wanted)).order_by(Trackable.id)
    ).all()
    for trackable in remaining:
        refresh(trackable)
