"""A trackable's journey as a file: GPX 1.1 (one track, one point per stop) and GeoJSON (the
journey's line and one point per stop), for whoever may read the journey: the same policy as
the journey read (`policy.get_visible`), 404 `trackable_not_found` otherwise.

The GPX track is made here; the GeoJSON document's properties are a response shape, made by
the route. Both hold what the journey read shows every viewer of the trackable, nothing per
viewer (`canDelete`, the notes at a point) and nothing the stop row does not hold. Stops are
read in keyset batches, oldest first, so a long journey streams as GPX without being held in
memory.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, tuple_

from app.auth import Viewer
from app.extensions import db
from app.models.trackable import JourneyStop, StopPrecision
from app.policies import trackables as policy
from app.services.trackables.journey.statistics import JourneyStatistics, seen_on, stored
from app.storage.gpx import ExportTrack, ExportWaypoint

BATCH_SIZE = 1000


# The stored (snapped) point, the times, the place's label and country, the precision, the creator's
# saved name.
@dataclass(frozen=True)
class ExportedStop:
    """A stop as the exports write it."""

    journey_stop_id: uuid.UUID
    coordinate_id: uuid.UUID
    latitude: float
    longitude: float
    precision: StopPrecision
    associated_utc: datetime
    observed_utc: datetime | None
    location_label: str
    country_code: str
    is_location_only: bool
    is_anonymous: bool
    creator_display_text: str


@dataclass(frozen=True)
class JourneyExport:
    """A journey the viewer may read: whose, its statistics and its stops (read lazily)."""

    trackable_id: uuid.UUID
    public_code: str
    name: str
    statistics: JourneyStatistics
    stops: Iterator[ExportedStop]

    @property
    def file_stem(self) -> str:
        """A file name without its extension: the public code (letters, digits, `-`)."""
        return f"{self.public_code}-journey"


def export_journey(
    viewer: Viewer, trackable_id: uuid.UUID, *, batch_size: int = BATCH_SIZE
) -> JourneyExport:
    """The journey of a trackable the viewer may see (checked now, before any byte is
    written), its stops oldest first (ties by id), as the journey read lists them."""
    trackable = policy.get_visible(viewer, trackable_id)
    return JourneyExport(
        trackable_id=trackable.id,
        public_code=trackable.public_code,
        name=trackable.name,
        statistics=stored(trackable),
        stops=_stops(trackable.id, batch_size),
    )


def _stops(trackable_id: uuid.UUID, batch_size: int) -> Iterator[ExportedStop]:
    columns = (
        JourneyStop.id.label("journey_stop_id"),
        JourneyStop.coordinate_id,
        JourneyStop.latitude,
        JourneyStop.longitude,
        JourneyStop.precision,
        JourneyStop.associated_utc,
        JourneyStop.observed_utc,
        JourneyStop.location_label,
        JourneyStop.country_code,
        JourneyStop.is_location_only,
        JourneyStop.is_anonymous,
        JourneyStop.creator_display_name.label("creator_display_text"),
    )
    query = (
        select(*columns)
        .where(JourneyStop.trackable_id == trackable_id)
        .order_by(JourneyStop.associated_utc, JourneyStop.id)
        .limit(batch_size)
    )
    after: tuple[Any, uuid.UUID] | None = None
    while True:
        page = query
        if after is not None:
            page = query.where(tuple_(JourneyStop.associated_utc, JourneyStop.id) > after)
        rows = db.session.execute(page).all()
        for row in rows:
            yield ExportedStop(**row._asdict())
        if len(rows) < batch_size:
            return
        after = (rows[-1].associated_utc, rows[-1].journey_stop_id)


def gpx_track(export: JourneyExport) -> ExportTrack:
    """The journey as one GPX track: a point per stop, oldest first, named by its place
    (or its number), at the time it was saved; its "seen on" day, its creator (and a
    coarse precision) as the description."""

    def points() -> Iterator[ExportWaypoint]:
        for number, stop in enumerate(export.stops, start=1):
            yield ExportWaypoint(
                latitude=stop.latitude,
                longitude=stop.longitude,
                name=stop.location_label or f"Stop {number}",
                description=_description(stop),
                time=stop.associated_utc,
            )

    return ExportTrack(name=export.name or export.public_code, points=points())


# "Seen on 2026-05-17 by Kim (precision: about1km)": the day first, in ISO 8601, so that a program
# reading the file finds it at the start (docs/contract/trackables.md, Journey export).
def _description(stop: ExportedStop) -> str:
    text = f"Seen on {seen_on(stop.observed_utc, stop.associated_utc).isoformat()}"
    if stop.creator_display_text:
        text += f" by {stop.creator_display_text}"
    if stop.precision is not StopPrecision.EXACT:
        text += f" (precision: {stop.precision.value})"
    return text
