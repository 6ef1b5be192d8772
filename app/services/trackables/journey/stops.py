"""The journey of a trackable: reading it, adding and deleting stops (contract: Journey stop
(read shape); Trackables: comments and journey, rules 1 and 3; decisions: journeys are
listed oldest stop first; docs/contract/trackables.md, Trackable activity). The writer itself,
with its grid snapping and label, is `journey.record_stop`.

Reading follows the trackable: whoever may see it reads its whole journey, oldest first,
not capped (a journey is the item's history). A journey never reveals that a private note
exists somewhere. Adding a stop is rule 1 as for comments; deleting is rule 3, its photos
going with it. Converting (rule 4): the signed-in creator of a direct report turns it into
a personal note at the stop's point.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import TrackableError
from app.extensions import db
from app.hooks import remove_children
from app.integrations.place_names import localized_label
from app.models.category import OwnerScope
from app.models.note import Note
from app.models.trackable import JourneyStop, StopPrecision, Trackable
from app.models.user import User
from app.policies import notes as note_policy
from app.policies import trackables as policy
from app.services import events, notes
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.trackables.codes.possession import Credential, writable
from app.services.trackables.journey import statistics
from app.services.trackables.journey.recording import GRID_DECIMALS, record_stop, snap
from app.services.trackables.journey.retries import check_observed, write_once

ANONYMOUS_NAME = "Anonymous finder"
HALF_CELL = 0.5 * 10**-GRID_DECIMALS
POINTS_PER_QUERY = 100


@dataclass(frozen=True)
class NoteAtPoint:
    note_id: uuid.UUID | None
    title: str | None
    content_language: str | None
    thumbnail_url: str | None
    is_content_omitted: bool


@dataclass(frozen=True)
class StopView:
    """A journey stop as one viewer sees it (contract: Journey stop (read shape))."""

    journey_stop_id: uuid.UUID
    trackable_id: uuid.UUID
    coordinate_id: uuid.UUID
    latitude: float
    longitude: float
    precision: StopPrecision
    associated_utc: datetime
    observed_utc: datetime | None
    is_location_only: bool
    is_anonymous: bool
    can_delete: bool
    can_convert_to_note: bool
    location_label: str
    creator_display_text: str
    creator_profile_user_name: str | None
    current_notes_at_coordinate: list[NoteAtPoint]
    # what the label names, for pages in other languages (not part of the API's shape)
    country_code: str = ""
    place_geonameid: int | None = None

    def place_label(self, language: str) -> str:
        """The label in a page's language, as far as the data names it (place_names)."""
        return localized_label(
            self.location_label,
            country_code=self.country_code,
            geonameid=self.place_geonameid,
            language=language,
        )


JOURNEY_ORDER = Order(JourneyStop.associated_utc, JourneyStop.id)


def get_journey(
    viewer: Viewer, trackable_id: uuid.UUID, *, page: Page | None = None
) -> Listing[StopView]:
    """The journey of a trackable the viewer may see, oldest stop first: whole, or one
    `page`."""
    trackable = policy.get_visible(viewer, trackable_id)
    query = select(JourneyStop).where(JourneyStop.trackable_id == trackable.id)
    found = read_list(query, JOURNEY_ORDER, page=page, scalars=True)
    return found.with_items(stop_views(viewer, trackable, found.items))


def stop_views(
    viewer: Viewer, trackable: Trackable, stops: Sequence[JourneyStop]
) -> list[StopView]:
    creators = _user_names({stop.created_by_user_id for stop in stops} - {None})
    notes = _notes_at(viewer, stops)
    return [
        StopView(
            journey_stop_id=stop.id,
            trackable_id=stop.trackable_id,
            coordinate_id=stop.coordinate_id,
            latitude=stop.latitude,
            longitude=stop.longitude,
            precision=stop.precision,
            associated_utc=stop.associated_utc,
            observed_utc=stop.observed_utc,
            is_location_only=stop.is_location_only,
            is_anonymous=stop.is_anonymous,
            can_delete=policy.can_delete_entry(viewer, trackable, stop.created_by_user_id),
            can_convert_to_note=policy.can_convert_stop(viewer, stop) and _is_direct_report(stop),
            location_label=stop.location_label,
            creator_display_text=stop.creator_display_name,
            creator_profile_user_name=(
                None if stop.is_anonymous else creators.get(stop.created_by_user_id)
            ),
            current_notes_at_coordinate=notes(stop),
            country_code=stop.country_code,
            place_geonameid=stop.place_geonameid,
        )
        for stop in stops
    ]


def add_stop(
    viewer: Viewer,
    trackable_id: uuid.UUID,
    *,
    latitude: float,
    longitude: float,
    display_name: str | None,
    credential: Credential,
    precision: StopPrecision = StopPrecision.EXACT,
    observed_utc: datetime | None = None,
    client_mutation_id: str | None = None,
) -> StopView:
    """A direct report of where the trackable is (rule 1), at the `precision` its writer
    chose, or the first stop of a retry."""
    trackable = writable(viewer, trackable_id, credential)
    user = viewer.user
    # From here on only the snapped point exists: the retry fingerprint is taken of it
    # too (a hash of a raw position is a search over a small grid away from it).
    latitude, longitude = snap(latitude, precision), snap(longitude, precision)

    def write(client_payload_hash: str | None) -> JourneyStop:
        check_observed(observed_utc, credential.config)
        return record_stop(
            trackable,
            latitude=latitude,
            longitude=longitude,
            precision=precision,
            created_by=user,
            display_name=user.display_text if user else display_name or ANONYMOUS_NAME,
            is_anonymous=user is None,
            observed_utc=observed_utc,
            client_mutation_id=client_mutation_id,
            client_payload_hash=client_payload_hash,
            writer_session_id=policy.writer_session(viewer, trackable),
        )

    stop, new = write_once(
        JourneyStop,
        trackable,
        client_mutation_id,
        write,
        # the same writer: the same account, or anonymous again
        same_writer=lambda earlier: (
            earlier.created_by_user_id == viewer.user_id and earlier.is_anonymous == (user is None)
        ),
        # what makes the stop (a signed-in creator's display name is not used)
        payload={
            "latitude": latitude,
            "longitude": longitude,
            "precision": precision,
            "observed_utc": observed_utc,
            "display_name": None if user else display_name,
        },
    )
    if new:
        events.record(
            events.EventType.STOP_ADDED, trackable, actor_id=viewer.user_id, stop_id=stop.id
        )
    return stop_views(viewer, trackable, [stop])[0]


def delete_stop(viewer: Viewer, trackable_id: uuid.UUID, stop_id: uuid.UUID) -> None:
    """Delete a stop: its signed-in author, the owner or a current team admin (rule 3);
    the journey statistics follow."""
    trackable = policy.get_visible(viewer, trackable_id)
    stop = stop_of(trackable, stop_id)
    policy.require_delete_stop(viewer, trackable, stop)
    remove_children("journey_stop", [stop.id])  # its photos and their files
    db.session.delete(stop)
    events.record(
        events.EventType.STOP_DELETED, trackable, actor_id=viewer.user_id, stop_id=stop.id
    )
    statistics.refresh(trackable)


def convert_stop(
    viewer: Viewer, trackable_id: uuid.UUID, stop_id: uuid.UUID, **note_fields: Any
) -> Note:
    """Turn a direct report into a personal note at its point (rule 4): only its signed-in
    creator (403 `trackable_journey_stop_convert_forbidden`), only once and only for a
    stop not linked to a note already (400 `trackable_journey_stop_convert_rejected`).
    `note_fields` are those of a note's create body but the coordinates, which are the
    stop's. The stop keeps its point, label and creator and is linked to the new note."""
    trackable = policy.get_visible(viewer, trackable_id)
    stop = stop_of(trackable, stop_id)
    policy.require_convert_stop(viewer, stop)
    if not _is_direct_report(stop):
        raise TrackableError(
            Code.TRACKABLE_JOURNEY_STOP_CONVERT_REJECTED,
            "This stop is already linked to a note; only a direct report becomes a note.",
        )
    note = notes.create_note(
        viewer,
        OwnerScope.personal(viewer.account.id),
        latitude=stop.latitude,
        longitude=stop.longitude,
        **note_fields,
    )
    stop.note_id = note.id
    stop.is_location_only = False
    db.session.flush()
    return note


def _is_direct_report(stop: JourneyStop) -> bool:
    """Reported as such, and not linked to a note (by an attachment or a conversion)."""
    return stop.is_location_only and stop.note_id is None


def stop_of(trackable: Trackable, stop_id: uuid.UUID) -> JourneyStop:
    stop = db.session.get(JourneyStop, stop_id)
    if stop is None or stop.trackable_id != trackable.id:
        raise TrackableError(Code.TRACKABLE_JOURNEY_STOP_NOT_FOUND, "Journey stop not found.")
    return stop


def _user_names(user_ids: Iterable[uuid.UUID | None]) -> dict[uuid.UUID | None, str]:
    ids = [user_id for user_id in user_ids if user_id is not None]
    if not ids:
        return {}
    rows = db.session.execute(select(User.id, User.user_name).where(User.id.in_(ids)))
    return {row.id: row.user_name for row in rows}


def _point(latitude: float, longitude: float) -> tuple[float, float]:
    return snap(latitude), snap(longitude)


# currentNotesAtCoordinate, computed at read time: the notes now standing on the stop's grid point
# (a note snaps to the same 1e-4 degree grid) that this viewer may open. The note a stop was
# recorded at, when it still stands there but the viewer may not open it, is listed with its content
# omitted (every field null but isContentOmitted): the point stays, the note's words do not. Other
# hidden notes are left out.
def _notes_at(
    viewer: Viewer, stops: Sequence[JourneyStop]
) -> Callable[[JourneyStop], list[NoteAtPoint]]:
    """A function giving each stop its `currentNotesAtCoordinate` (one query per hundred
    distinct points, whatever the journey's length)."""
    points = sorted({_point(stop.latitude, stop.longitude) for stop in stops})
    linked = {stop.note_id for stop in stops if stop.note_id is not None}
    by_point: dict[tuple[float, float], list[Note]] = {}
    for start in range(0, len(points), POINTS_PER_QUERY):
        cells = [
            and_(
                Note.latitude.between(lat - HALF_CELL, lat + HALF_CELL),
                Note.longitude.between(lon - HALF_CELL, lon + HALF_CELL),
            )
            for lat, lon in points[start : start + POINTS_PER_QUERY]
        ]
        visible = note_policy.visible_filter(viewer)
        if linked:
            visible = or_(visible, and_(Note.id.in_(linked), Note.is_deleted.is_(False)))
        found = db.session.scalars(
            select(Note).where(or_(*cells), visible).order_by(Note.created_utc, Note.id)
        )
        for note in found:
            if note.latitude is None or note.longitude is None:
                continue
            by_point.setdefault(_point(note.latitude, note.longitude), []).append(note)

    def notes(stop: JourneyStop) -> list[NoteAtPoint]:
        listed = []
        for note in by_point.get(_point(stop.latitude, stop.longitude), []):
            if note_policy.can_view(viewer, note):
                listed.append(NoteAtPoint(note.id, note.title, note.content_language, None, False))
            elif note.id == stop.note_id:
                listed.append(NoteAtPoint(None, None, None, None, True))
        return listed

    return notes
