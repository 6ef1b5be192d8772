"""Journey stops: the writer (contract: Journey stop; Trackable activation).

A stop is an immutable snapshot of where a trackable was, saved once and never changed
(moving a linked note later changes no stop). `record_stop` is the one place a stop is
written: activation's initial stop, note attachment and direct reports all go through it.
The coordinate is snapped to a grid, and the snapped pair is all that is stored, labelled,
counted and shown: the raw position goes no further than this module
(docs/contract/trackables.md, Stop precision). Saving a stop is activity: the trackable's (and
its group's) `last_activity_utc` moves, and its journey statistics are recomputed.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from flask import current_app

from app.extensions import db
from app.integrations.place_names import PlaceIds, compose_label
from app.models.base import utcnow
from app.models.trackable import JourneyStop, StopPrecision, Trackable
from app.models.user import User
from app.services import system
from app.services.trackables.journey import statistics

log = logging.getLogger(__name__)

GRID_DECIMALS = 4  # 1e-4 degrees, about 11 m: see snap
# Decimals of degrees kept at each precision: a grid of 10**-decimals degrees.
PRECISION_DECIMALS = {
    StopPrecision.EXACT: GRID_DECIMALS,
    StopPrecision.ABOUT_1KM: 2,
    StopPrecision.ABOUT_10KM: 1,
}
COORDINATE_NAMESPACE = uuid.UUID("6f1d3c52-8a4e-5b7e-9c1a-2d4b6e8f0a13")
LABEL_MAX_LENGTH = 200  # journey_stops.location_label
DISPLAY_NAME_MAX_LENGTH = 100  # journey_stops.creator_display_name


# A fixed grid of 1e-4 degrees (about 11 m of latitude, less of longitude away from the equator):
# close enough to name the spot a finder stood at, coarse enough that two finds at the same place
# meet in one point, and no more precise than a phone's GPS fix anyway. A writer may ask for a
# coarser grid: 0.01 degrees (about1km) or 0.1 degrees (about10km), latitude and longitude alike,
# each value rounded to the nearest grid line (the centre of the cell around it), so repeated stops
# at one place give one point.
def snap(value: float, precision: StopPrecision = StopPrecision.EXACT) -> float:
    """The grid value of one coordinate at `precision`: the nearest grid line (-0.0 is
    0.0, so both sides of zero share a point). Every coarser grid line is one of the
    finest grid's, so a snapped value snaps to itself at `exact`."""
    return round(float(value), PRECISION_DECIMALS[precision]) + 0.0


# A uuid5 of the snapped pair (in a fixed namespace), so stops at the same snapped point share it
# whatever trackable or caller saved them, on any server.
def coordinate_id(latitude: float, longitude: float) -> uuid.UUID:
    """The shared id of a snapped point: the same for every stop saved there."""
    text = f"{snap(latitude):.{GRID_DECIMALS}f},{snap(longitude):.{GRID_DECIMALS}f}"
    return uuid.uuid5(COORDINATE_NAMESPACE, text)


# With the offline reverse geocoder (the same one as GET /api/system/coordinate-locality): "City,
# State, Country" with the empty parts left out; "" where nothing is near (mid-ocean) or the
# geocoder fails, which never stops the write. Beside it the stop keeps the GeoNames id of the city
# its label names (app.integrations.place_names), so a page can show the place in its own language;
# the label itself stays English (the API's value).
def location_label(latitude: float, longitude: float) -> tuple[str, PlaceIds]:
    """The place name of a point and what it names; "" and no ids when nothing is near
    or the geocoder fails."""
    config, instance_path = current_app.config, current_app.instance_path
    try:
        found = system.coordinate_locality(
            latitude, longitude, config=config, instance_path=instance_path
        )
        if not found.get("resolved"):
            return "", PlaceIds()
        label = compose_label(
            found.get("city") or "",
            found.get("state_or_province") or "",
            found.get("country") or "",
        )[:LABEL_MAX_LENGTH]
        place = system.identify_place(
            label, latitude, longitude, config=config, instance_path=instance_path
        )
    except Exception:  # a label is a nicety: a broken geocoder must not lose the stop
        log.exception("reverse geocoding failed for a journey stop")
        return "", PlaceIds()
    return label, place


# ISO 3166-1 alpha-2, by the offline geocoder: the journey statistics count countries by it; pages
# name it in their language.
def country_code(latitude: float, longitude: float) -> str:
    """The country code of a snapped point, or "" (see system.coordinate_country)."""
    return system.coordinate_country(
        latitude, longitude, config=current_app.config, instance_path=current_app.instance_path
    )


def record_stop(
    trackable: Trackable,
    *,
    latitude: float,
    longitude: float,
    precision: StopPrecision = StopPrecision.EXACT,
    created_by: User | None,
    display_name: str,
    is_anonymous: bool,
    note_id: uuid.UUID | None = None,
    observed_utc: datetime | None = None,
    client_mutation_id: str | None = None,
    client_payload_hash: str | None = None,
    writer_session_id: uuid.UUID | None = None,
) -> JourneyStop:
    """Save a journey stop of `trackable` at the point snapped to `precision` (flushed,
    not committed) and recompute the trackable's journey statistics.

    The caller has checked that the trackable accepts stops (activated) and that the
    coordinate is in range. `note_id` links the note the stop came from (a location-only
    stop has none); `observed_utc` is when the finder saw it, when they said;
    `client_mutation_id` the writer's retry tag (unique per trackable: a duplicate raises
    IntegrityError at the flush, for the caller's savepoint to catch); `writer_session_id`
    the access session of an anonymous writer (its proof for adding photos).
    """
    now = utcnow()
    lat, lon = snap(latitude, precision), snap(longitude, precision)
    label, place = location_label(lat, lon)
    stop = JourneyStop(
        trackable_id=trackable.id,
        coordinate_id=coordinate_id(lat, lon),
        latitude=lat,
        longitude=lon,
        precision=precision,
        location_label=label,
        country_code=country_code(lat, lon),
        place_geonameid=place.geonameid,
        associated_utc=now,
        observed_utc=observed_utc,
        is_location_only=note_id is None,
        is_anonymous=is_anonymous,
        created_by_user_id=created_by.id if created_by is not None else None,
        creator_display_name=display_name[:DISPLAY_NAME_MAX_LENGTH],
        note_id=note_id,
        client_mutation_id=client_mutation_id,
        client_payload_hash=client_payload_hash,
        writer_session_id=writer_session_id,
    )
    db.session.add(stop)
    trackable.last_activity_utc = now
    if trackable.group is not None:
        trackable.group.last_activity_utc = now
    db.session.flush()
    statistics.refresh(trackable)
    return stop
