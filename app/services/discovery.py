"""Reading notes by map window or distance (contract: Public note discovery, Limits).

Windows: `Bounds` (a longitude range with min > max crosses the antimeridian) and `Circle`
(great-circle radius). A circle is first turned into its bounding window, which the indexes
serve; the exact haversine distance then filters the few rows in the window's corners.

Capped reads ask for `cap + 1` rows, most recent activity first (ties by id), and say
`truncated` when there were more. Rows are light SQL rows already in wire form, not ORM
objects: a full public list is 500 rows and per-row Python work would dominate it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Row, Select, String, and_, or_, select, type_coerce
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement

from app.auth import ANONYMOUS, Viewer
from app.errors import NotFound
from app.extensions import db
from app.models.note import Note
from app.models.user import User
from app.policies import notes as note_policy
from app.services.categories import canonical_language

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)


@dataclass(frozen=True)
class Bounds:
    min_latitude: float
    min_longitude: float
    max_latitude: float
    max_longitude: float

    @property
    def crosses_antimeridian(self) -> bool:
        return self.min_longitude > self.max_longitude

    def where(self) -> ColumnElement[bool]:
        latitude = Note.latitude.between(self.min_latitude, self.max_latitude)
        if self.crosses_antimeridian:
            longitude = or_(
                Note.longitude >= self.min_longitude, Note.longitude <= self.max_longitude
            )
        else:
            longitude = Note.longitude.between(self.min_longitude, self.max_longitude)
        return and_(latitude, longitude)


@dataclass(frozen=True)
class Circle:
    latitude: float
    longitude: float
    radius_km: float

    def bounds(self) -> Bounds:
        """The smallest latitude/longitude window holding the circle (spherical cap).

        Near a pole the cap covers every longitude; elsewhere the longitude half-width is
        asin(sin(r) / cos(lat)), and a window past +-180 wraps across the antimeridian.
        """
        angular = self.radius_km / EARTH_RADIUS_KM
        latitude = math.radians(self.latitude)
        low, high = latitude - angular, latitude + angular
        if low <= -math.pi / 2 or high >= math.pi / 2:
            return Bounds(
                math.degrees(max(low, -math.pi / 2)),
                -180.0,
                math.degrees(min(high, math.pi / 2)),
                180.0,
            )
        half_width = math.degrees(math.asin(math.sin(angular) / math.cos(latitude)))
        west, east = self.longitude - half_width, self.longitude + half_width
        if west < -180.0:
            west += 360.0
        if east > 180.0:
            east -= 360.0
        return Bounds(math.degrees(low), west, math.degrees(high), east)

    def contains(self, latitude: float, longitude: float) -> bool:
        return distance_km(self.latitude, self.longitude, latitude, longitude) <= self.radius_km

    def row_test(self) -> Callable[[Row[Any]], bool]:
        """`contains` for many rows: the haversine term compared with the radius's own
        (a <= sin^2(r / 2R), the same test without asin and sqrt), constants computed once.
        Hundreds of rows per nearby read go through this."""
        angular = self.radius_km / EARTH_RADIUS_KM
        if angular >= math.pi:
            return lambda row: True
        limit = math.sin(angular / 2) ** 2
        radians, phi1, lambda1 = math.pi / 180, math.radians(self.latitude), self.longitude
        cos_phi1, sin, cos = math.cos(phi1), math.sin, math.cos

        def test(row: Row[Any]) -> bool:
            phi2 = row.latitude * radians
            a = (
                sin((phi2 - phi1) / 2) ** 2
                + cos_phi1 * cos(phi2) * sin((row.longitude - lambda1) * radians / 2) ** 2
            )
            return a <= limit

        return test


Area = Bounds | Circle


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance by the haversine formula."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    half_dphi = (phi2 - phi1) / 2
    half_dlambda = math.radians(lon2 - lon1) / 2
    a = math.sin(half_dphi) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(half_dlambda) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


# --- note records straight from SQL ------------------------------------------------------
#
# A public list is up to 500 records. Building UUID and datetime objects for every row and
# formatting them back to text in Python costs several times the query itself, so list
# reads let the database write ids and times in their wire form (lowercase GUID text,
# ISO 8601 UTC with milliseconds and Z: exactly what api.base.Guid / UtcDateTime write).


class GuidText(FunctionElement[str]):
    """A GUID column as lowercase hyphenated text."""

    type = String()
    inherit_cache = True


class UtcText(FunctionElement[str]):
    """A UTC timestamp column as `YYYY-MM-DDTHH:MM:SS.mmmZ` (milliseconds truncated)."""

    type = String()
    inherit_cache = True


@compiles(GuidText, "postgresql")
def _guid_text_postgresql(element: GuidText, compiler: Any, **kw: Any) -> str:
    return f"CAST({compiler.process(element.clauses, **kw)} AS TEXT)"


@compiles(GuidText, "sqlite")
def _guid_text_sqlite(element: GuidText, compiler: Any, **kw: Any) -> str:
    # SQLite keeps a Uuid as 32 hex digits.
    column = compiler.process(element.clauses, **kw)
    parts = [(1, 8), (9, 4), (13, 4), (17, 4), (21, 12)]
    return "lower(" + " || '-' || ".join(f"substr({column}, {a}, {n})" for a, n in parts) + ")"


@compiles(UtcText, "postgresql")
def _utc_text_postgresql(element: UtcText, compiler: Any, **kw: Any) -> str:
    column = compiler.process(element.clauses, **kw)
    return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""


@compiles(UtcText, "sqlite")
def _utc_text_sqlite(element: UtcText, compiler: Any, **kw: Any) -> str:
    # SQLite keeps `YYYY-MM-DD HH:MM:SS.ffffff` in UTC (models.base.UtcDateTime).
    column = compiler.process(element.clauses, **kw)
    return f"substr({column}, 1, 10) || 'T' || substr({column}, 12, 12) || 'Z'"


def note_record_columns(viewer: Viewer) -> list[Any]:
    """The note record, in wire form, one labelled column per field (snake_case labels;
    the API writes them camelCase). `client_mutation_id` only for the note's workspace."""
    return [
        GuidText(Note.id).label("note_id"),
        GuidText(Note.owner_user_id).label("owner_user_id"),
        User.user_name.label("owner_user_name"),
        GuidText(Note.category_id).label("category_id"),
        Note.title.label("title"),
        Note.body.label("body"),
        Note.content_language.label("content_language"),
        Note.latitude.label("latitude"),
        Note.longitude.label("longitude"),
        type_coerce(Note.visibility, String).label("visibility"),
        type_coerce(Note.comment_policy, String).label("comment_policy"),
        Note.external_link_url.label("external_link_url"),
        Note.external_link_description.label("external_link_description"),
        Note.is_deleted.label("is_deleted"),
        UtcText(Note.updated_utc).label("updated_utc"),
        UtcText(Note.last_activity_utc).label("last_activity_utc"),
        note_policy.client_fields_column(viewer).label("client_mutation_id"),
        GuidText(Note.team_id).label("team_id"),
    ]


NOTE_RECORD_FIELDS = tuple(column.name for column in note_record_columns(ANONYMOUS))


def note_rows(viewer: Viewer) -> Select[Any]:
    """SELECT of note records (joined to the owner for `ownerUserName`)."""
    return select(*note_record_columns(viewer)).join(User, User.id == Note.owner_user_id)


@dataclass
class NoteList:
    rows: list[Row[Any]]
    truncated: bool = False


SelectT = TypeVar("SelectT", bound=Select)


def by_activity(query: SelectT) -> SelectT:
    return query.order_by(Note.last_activity_utc.desc(), Note.id.desc())


def capped(
    viewer: Viewer,
    where: Sequence[ColumnElement[bool]],
    cap: int,
    accept: Callable[[Row[Any]], bool] | None = None,
) -> NoteList:
    """At most `cap` note records matching `where`, most recent activity first;
    `truncated` when more matched.

    Two steps: the ids of the newest `cap + 1` matches first (on PostgreSQL an index-only
    scan of a covering partial index, whatever the window's size), then their records by
    primary key. With `accept` (an exact test SQL does not do, e.g. circle distance),
    further pages are read until `cap + 1` are accepted or the matches run out, so the cap
    is filled with the most recent rows that really match. The order is total (ties
    broken by id), so pages neither skip nor repeat rows.
    """
    newest = by_activity(select(Note.id, Note.last_activity_utc).where(*where)).limit(cap + 1)
    kept: list[Row[Any]] = []
    offset = 0
    while True:
        ids = (newest.offset(offset) if offset else newest).subquery("newest")
        records = (
            note_rows(viewer)
            .join(ids, ids.c.id == Note.id)
            .order_by(ids.c.last_activity_utc.desc(), ids.c.id.desc())
        )
        # Core execution on the session's connection: plain rows, no ORM result layer.
        page = db.session.connection().execute(records).all()
        kept.extend(page if accept is None else [row for row in page if accept(row)])
        if len(kept) > cap:
            return NoteList(kept[:cap], truncated=True)
        if len(page) <= cap:
            return NoteList(kept)
        offset += len(page)


def area_filter(area: Area) -> tuple[ColumnElement[bool], Callable[[Row[Any]], bool] | None]:
    if isinstance(area, Circle):
        return area.bounds().where(), area.row_test()
    return area.where(), None


def _language_filter(content_language: str | None) -> Sequence[ColumnElement[bool]]:
    if not content_language:
        return ()
    return (Note.content_language == canonical_language(content_language),)


def public_notes(area: Area, *, content_language: str | None = None, cap: int) -> NoteList:
    """Anonymous discovery in a window or circle (Public, and gated with no trackables)."""
    where, accept = area_filter(area)
    filters = [note_policy.public_discovery_filter(), where, *_language_filter(content_language)]
    return capped(ANONYMOUS, filters, cap, accept)


def profile_notes(
    viewer: Viewer,
    user_name: str,
    area: Area,
    *,
    content_language: str | None = None,
    include_all_languages: bool = False,
    cap: int,
) -> NoteList:
    """A profile's personal notes in a window or circle, as far as this viewer may see.

    `contentLanguage` filters to one language; `includeAllLanguages` (for multilingual
    clients) ignores that filter.
    """
    owner = db.session.scalar(select(User).where(User.user_name == user_name.lower()))
    if owner is None:
        raise NotFound("Profile not found.")
    return page_notes(
        viewer,
        note_policy.profile_filter(owner),
        area,
        content_language=content_language,
        include_all_languages=include_all_languages,
        cap=cap,
    )


def page_notes(
    viewer: Viewer,
    page: ColumnElement[bool],
    area: Area,
    *,
    content_language: str | None = None,
    include_all_languages: bool = False,
    cap: int,
) -> NoteList:
    """The notes of one public page (a profile's, a team's) in a window or circle that this
    viewer may open: the query rules shared by the profile and team nearby routes."""
    where, accept = area_filter(area)
    language = () if include_all_languages else _language_filter(content_language)
    filters = [page, note_policy.visible_filter(viewer), where, *language]
    return capped(viewer, filters, cap, accept)
