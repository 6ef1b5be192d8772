"""Reading notes in a map area (`services.shared.areas`), contract: Public note discovery,
Limits.

Capped reads ask for `cap + 1` rows, most recent activity first (ties by id), and say
`truncated` when there were more. Lists are plain SQL rows (`NoteList.columns` names their
fields), not ORM objects: a full public list is 500 rows and per-row Python work would
dominate it. The API turns them into its response shape.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Integer, Select, String, bindparam, select, type_coerce
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement

from app.auth import ANONYMOUS, Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.note import Note
from app.models.user import User
from app.policies import notes as note_policy
from app.services.categories import canonical_language
from app.services.notes import queries
from app.services.shared.areas import Area, circle_clause, window_clause
from app.services.shared.pages import Key, Order

# --- note records straight from SQL ------------------------------------------------------
#
# A public list is up to 500 records. Building UUID and datetime objects for every row and
# formatting them back to text in Python costs several times the query itself, so list
# reads let the database render ids and times as text (lowercase GUID text, ISO 8601 UTC
# with milliseconds and Z, as api.base.Guid / UtcDateTime would write them).


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
    """The note record, one labelled column per field (ids and times as text).
    `client_mutation_id` only for the note's workspace."""
    return [
        GuidText(Note.id).label("note_id"),
        GuidText(Note.owner_user_id).label("owner_user_id"),
        Note.owner_user_name.label("owner_user_name"),
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
"""The field names of every note list row, in column order."""


def note_rows(viewer: Viewer) -> Select[Any]:
    """SELECT of note records (`ownerUserName` is the notes' stored copy: no join)."""
    return select(*note_record_columns(viewer))


@dataclass
class NoteList:
    """Note records as plain rows (fields named by `columns`), whether a cap cut the
    list, and on a page that is not the last the key the next one starts after
    (services.shared.pages)."""

    rows: list[Sequence[Any]]
    truncated: bool = False
    columns: tuple[str, ...] = NOTE_RECORD_FIELDS
    next_after: Key | None = None


SelectT = TypeVar("SelectT", bound=Select)

# Most recent activity first, ties by id: every note list's order.
ACTIVITY = Order(Note.last_activity_utc.desc(), Note.id.desc())


def by_activity(query: SelectT) -> SelectT:
    return query.order_by(*ACTIVITY.clauses)


def capped_statement(
    viewer: Viewer, where: Sequence[ColumnElement[bool]], *, sqlite_index: str | None = None
) -> Select[Any]:
    """Note records matching `where`, most recent activity first (ties by id), at most
    `cap + 1` of them (bound parameter `cap_plus_one`; `capped` runs it).

    Two steps in one statement: the ids of the newest matches (on PostgreSQL an index-only
    scan of a covering partial index, whatever the window's size), then their records by
    primary key. `sqlite_index` pins SQLite's index for the first step.
    """
    ids = select(Note.id, Note.last_activity_utc).where(*where)
    if sqlite_index is not None:
        ids = ids.with_hint(Note, f"INDEXED BY {sqlite_index}", "sqlite")
    newest = by_activity(ids).limit(CAP_PLUS_ONE).subquery("newest")
    return (
        note_rows(viewer)
        .join(newest, newest.c.id == Note.id)
        .order_by(newest.c.last_activity_utc.desc(), newest.c.id.desc())
    )


def scan_statement(
    viewer: Viewer, where: Sequence[ColumnElement[bool]], *, sqlite_index: str | None = None
) -> Select[Any]:
    """The same records as `capped_statement`, in one scan: read in activity order and
    stopped after `cap + 1` matches. For windows where nearly every note matches (the
    world): one pass over an activity index and the rows it points to, where the two steps
    would look every id up again by primary key."""
    statement = by_activity(note_rows(viewer).where(*where)).limit(CAP_PLUS_ONE)
    if sqlite_index is not None:
        statement = statement.with_hint(Note, f"INDEXED BY {sqlite_index}", "sqlite")
    return statement


CAP_PLUS_ONE = bindparam("cap_plus_one", type_=Integer)


def capped(
    statement: Select[Any],
    params: dict[str, Any],
    cap: int,
    *,
    reused: bool = False,
    planned_once: bool = False,
) -> NoteList:
    """Runs a `capped_statement`: at most `cap` records; `truncated` when more matched.
    `reused` and `planned_once`: see `queries.read_rows`."""
    rows = queries.read_rows(
        statement,
        {**params, CAP_PLUS_ONE.key: cap + 1},
        reused=reused,
        planned_once=planned_once,
    )
    return NoteList(rows[:cap], truncated=len(rows) > cap)


LANGUAGE = bindparam("content_language", type_=String)

# --- access paths by window size ---------------------------------------------------------
#
# Anonymous discovery has three indexes to choose from (models.note): by position, by
# activity, and by language then activity. Which one is fastest depends on how many notes
# the window holds, which the window's size stands for (bench/README.md, "Discovery at the
# floor", measured on 1,000,000 notes):
#
# - small (a city, nearby): the position index finds the few thousand notes in the window;
#   sorting them is cheap.
# - medium (a region): the activity index (or the language one) in order, skipping the
#   notes outside the window, until `cap + 1` match; on PostgreSQL from the index alone
#   (its INCLUDE columns), then the records by primary key.
# - wide (a quarter of the globe or more): nearly every note matches, so one scan of the
#   activity (or language) index and the rows it points to, stopped at `cap + 1`.
#
# PostgreSQL's planner picks the index of the first two well from its statistics; SQLite's
# does not (with a language filter it chose the language index for a city window and
# scanned a whole language, and the position index for the world), so SQLite's index is
# pinned for every size: by position up to medium windows, by activity (or language) for
# wide ones.

SMALL_WINDOW_SQUARE_DEGREES = 4.0
WIDE_WINDOW_SQUARE_DEGREES = 180.0 * 360.0 / 4


def window_size(area: Area) -> str:
    """`small`, `medium` or `wide` (see above)."""
    size = area.square_degrees
    if size <= SMALL_WINDOW_SQUARE_DEGREES:
        return "small"
    return "wide" if size >= WIDE_WINDOW_SQUARE_DEGREES else "medium"


def _sqlite_index(size: str, with_language: bool) -> str:
    # SQLite's indexes cover no extra columns: reading the activity index in order looks
    # each entry's row up for its position, so below the widest windows the position
    # index (the window's rows, then a sort) is the cheaper way.
    if size != "wide":
        return "ix_notes_public_position"
    return "ix_notes_public_language_activity" if with_language else "ix_notes_public_activity"


@functools.lru_cache(maxsize=32)
def _public_statement(shape: tuple[str, bool], with_language: bool, size: str) -> Select[Any]:
    area = circle_clause if shape[0] == "circle" else window_clause
    filters = [note_policy.public_discovery_filter(), area(shape[1])]
    if with_language:
        filters.append(Note.content_language == LANGUAGE)
    build = scan_statement if size == "wide" else capped_statement
    return build(ANONYMOUS, filters, sqlite_index=_sqlite_index(size, with_language))


def _language_params(content_language: str | None) -> dict[str, str]:
    if not content_language:
        return {}
    return {LANGUAGE.key: canonical_language(content_language)}


def public_notes(area: Area, *, content_language: str | None = None, cap: int) -> NoteList:
    """Anonymous discovery in a window or circle (Public, and gated with no trackables).
    The same statement serves every request of an area's shape and size."""
    language = _language_params(content_language)
    size = window_size(area)
    statement = _public_statement(area.shape, bool(language), size)
    # A small window's plan is the same whatever its numbers (see above): planned once.
    # Larger ones are planned for their numbers (how many notes the window holds decides
    # between the indexes).
    return capped(
        statement,
        {**area.params(), **language},
        cap,
        reused=True,
        planned_once=size == "small",
    )


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
        raise NotFound("Profile not found.", code=Code.PROFILE_NOT_FOUND)
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
    language = {} if include_all_languages else _language_params(content_language)
    filters = [page, note_policy.visible_filter(viewer), area.where()]
    if language:
        filters.append(Note.content_language == LANGUAGE)
    return capped(capped_statement(viewer, filters), {**area.params(), **language}, cap)


def note_records(viewer: Viewer, where: Sequence[ColumnElement[bool]]) -> NoteList:
    """Every note record matching `where` as this viewer sees it, uncapped, by id: the
    caller's own and team notes for a sync pull (one statement, whatever their number)."""
    statement = note_rows(viewer).where(*where).order_by(Note.id)
    return NoteList(queries.read_rows(statement, {}))
