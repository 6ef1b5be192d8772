"""Schemas of the note routes (contract: Note; Personal notes; Public note discovery;
Public note pages). Field limits are documented here through the validators."""

from __future__ import annotations

import functools
from typing import Any

import orjson
from flask import Response, current_app
from marshmallow import ValidationError, fields, validate, validates, validates_schema

from app.api.base import (
    LANGUAGE_TAG,
    NOT_BLANK_PATTERN,
    Guid,
    LanguageTag,
    Refuses,
    Regexp,
    RequestSchema,
    Schema,
    UtcDateTime,
    camelcase,
)
from app.api.links.schemas import ExternalLinkInputSchema
from app.api.pages import PageQuerySchema, list_headers
from app.models.category import LANGUAGE_TAG_MAX_LENGTH
from app.models.enums import CommentPolicy, NoteVisibility
from app.models.note import (
    BODY_MAX_LENGTH,
    CLIENT_MUTATION_ID_MAX_LENGTH,
    COMMENT_BODY_MAX_LENGTH,
    TITLE_MAX_LENGTH,
)
from app.models.text import IN_TEXT
from app.services.notes import SEARCH_QUERY_MAX_LENGTH, NoteList
from app.services.shared.areas import Bounds, Circle
from config import Config

NOT_BLANK = Regexp(NOT_BLANK_PATTERN, error="Must not be blank.")


def language_field(**kwargs: Any) -> LanguageTag:
    """A content language: a BCP 47-style tag of at most 35 characters."""
    return LanguageTag(
        validate=[
            Regexp(LANGUAGE_TAG, error="Not a language tag (e.g. en-US)."),
            validate.Length(max=LANGUAGE_TAG_MAX_LENGTH),
        ],
        **kwargs,
    )


def latitude_field(**kwargs: Any) -> fields.Float:
    return fields.Float(validate=validate.Range(-90, 90), **kwargs)


def longitude_field(**kwargs: Any) -> fields.Float:
    return fields.Float(validate=validate.Range(-180, 180), **kwargs)


# --- note records ------------------------------------------------------------------------


class NoteSchema(Schema):
    """A note record. Lists are written by `note_list_response`, which must match this
    (a test keeps the two identical)."""

    note_id = Guid(required=True, attribute="id")
    owner_user_id = Guid(required=True)
    owner_user_name = fields.String(
        required=True, metadata={"description": "The owner's public user name."}
    )
    category_id = Guid(required=True)
    title = fields.String(required=True)
    body = fields.String(required=True)
    content_language = fields.String(required=True, metadata={"example": "en-US"})
    latitude = fields.Float(required=True, allow_none=True)
    longitude = fields.Float(required=True, allow_none=True)
    visibility = fields.Enum(NoteVisibility, required=True, by_value=True)
    comment_policy = fields.Enum(CommentPolicy, required=True, by_value=True)
    external_link_url = fields.String(required=True, allow_none=True)
    external_link_description = fields.String(required=True)
    is_deleted = fields.Boolean(required=True)
    updated_utc = UtcDateTime(
        required=True, metadata={"description": "When the note's fields were saved."}
    )
    last_activity_utc = UtcDateTime(
        required=True,
        metadata={"description": "Most recent activity: edits, comments, attachments."},
    )
    client_mutation_id = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The owner's client tag; null for viewers outside the workspace."},
    )
    team_id = Guid(required=True, allow_none=True)


@functools.lru_cache(maxsize=4)
def _wire_keys(columns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(camelcase(name) for name in columns)


def note_list_response(found: NoteList) -> Response:
    """NoteSchema(many=True) for a service's note rows, whose ids and times are already
    text: a 500-row list must not spend its time in per-field marshmallow calls. Sets
    `X-Result-Truncated` when a cap cut the list, `Link` when another page follows."""
    keys = _wire_keys(found.columns)
    body = orjson.dumps([dict(zip(keys, row, strict=True)) for row in found.rows])
    return current_app.response_class(
        body, mimetype="application/json", headers=list_headers(found) or None
    )


# --- note bodies -------------------------------------------------------------------------


class NoteMoveSchema(ExternalLinkInputSchema):
    """Fields of the note create body; on move, the fields present are applied."""

    read_models = (NoteSchema,)

    category_id = Guid(
        metadata={
            "description": "A category of the same tree and language. On create it may be "
            'omitted: the note goes to the language\'s "Notes" root, made on demand.'
        }
    )
    title = fields.String(validate=[validate.Length(max=TITLE_MAX_LENGTH), NOT_BLANK])
    body = fields.String(validate=validate.Length(max=BODY_MAX_LENGTH))
    content_language = language_field(
        metadata={
            "description": "Defaults to the category's language, else the service default.",
            "example": "en-US",
        }
    )
    latitude = latitude_field(allow_none=True, metadata={"description": "null: not on the map"})
    longitude = longitude_field(allow_none=True, metadata={"description": "With latitude."})
    # No OpenAPI `default` on an edit: generated clients send a field's default whenever
    # it is left out, so a move naming only the title would reset these.
    visibility = fields.Enum(
        NoteVisibility,
        by_value=True,
        metadata={
            "description": "Left out on create: `Private` (a team note: the team's "
            "`defaultNoteVisibility`); left out on an edit: unchanged."
        },
    )
    comment_policy = fields.Enum(
        CommentPolicy,
        by_value=True,
        metadata={"description": "Left out on create: `LoggedInUsers`; on an edit: unchanged."},
    )
    client_mutation_id = fields.String(
        allow_none=True, validate=validate.Length(max=CLIENT_MUTATION_ID_MAX_LENGTH)
    )


class NoteCreateSchema(NoteMoveSchema):
    title = fields.String(
        required=True, validate=[validate.Length(max=TITLE_MAX_LENGTH), NOT_BLANK]
    )
    comment_policy = fields.Enum(
        CommentPolicy, by_value=True, metadata={"default": "LoggedInUsers"}
    )


# --- queries -----------------------------------------------------------------------------

BOUND_NAMES = ("min_latitude", "min_longitude", "max_latitude", "max_longitude")


def check_latitude_order(data: dict[str, Any]) -> None:
    """minLatitude <= maxLatitude (the window validation of every map window)."""
    low, high = data.get("min_latitude"), data.get("max_latitude")
    if low is not None and high is not None and low > high:
        raise ValidationError({"minLatitude": ["Must not be greater than maxLatitude."]})


class BoundsQuerySchema(Schema):
    """A map window. minLongitude > maxLongitude crosses the antimeridian."""

    min_latitude = latitude_field(required=True)
    min_longitude = longitude_field(required=True)
    max_latitude = latitude_field(required=True)
    max_longitude = longitude_field(required=True)
    content_language = language_field()

    @validates_schema
    def check_latitudes(self, data: dict[str, Any], **kwargs: Any) -> None:
        check_latitude_order(data)


class RadiusMixin(Schema):
    radius_km = fields.Float(
        metadata={
            "description": "Great-circle radius; default 5 (setting NEARBY_RADIUS_KM), at "
            "most NEARBY_MAX_RADIUS_KM.",
            "exclusiveMinimum": 0,
            # The setting as the environment gives it (instance/config.py could differ).
            "maximum": Config.NEARBY_MAX_RADIUS_KM,
        }
    )

    @validates("radius_km")
    def check_radius(self, value: float, **kwargs: Any) -> None:
        limit = current_app.config["NEARBY_MAX_RADIUS_KM"]
        if not 0 < value <= limit:
            raise ValidationError(f"Must be greater than 0 and at most {limit:g}.")


class NearbyQuerySchema(RadiusMixin):
    latitude = latitude_field(required=True)
    longitude = longitude_field(required=True)
    content_language = language_field()


class ProfileNearbyQuerySchema(RadiusMixin):
    """`latitude` + `longitude` (with `radiusKm`), or the four bounds."""

    latitude = latitude_field()
    longitude = longitude_field()
    min_latitude = latitude_field()
    min_longitude = longitude_field()
    max_latitude = latitude_field()
    max_longitude = longitude_field()
    content_language = language_field()
    include_all_languages = fields.Boolean(
        load_default=False,
        metadata={"description": "True ignores contentLanguage (multilingual clients)."},
    )

    @validates_schema
    def check_area(self, data: dict[str, Any], **kwargs: Any) -> None:
        point = [name for name in ("latitude", "longitude") if name in data]
        bounds = [name for name in BOUND_NAMES if name in data]
        if point and bounds:
            raise ValidationError({"latitude": ["Give a point or the four bounds, not both."]})
        wanted = ("latitude", "longitude") if point or not bounds else BOUND_NAMES
        missing = {
            camelcase(name): ["Missing data for required field."]
            for name in wanted
            if name not in data
        }
        if missing:
            raise ValidationError(missing)
        check_latitude_order(data)


class PersonalNotesQuerySchema(Schema):
    """Optional language and window (all four bounds, or none)."""

    content_language = language_field()
    min_latitude = latitude_field()
    min_longitude = longitude_field()
    max_latitude = latitude_field()
    max_longitude = longitude_field()

    @validates_schema
    def check_bounds(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [name for name in BOUND_NAMES if name in data]
        if given and len(given) < len(BOUND_NAMES):
            raise ValidationError(
                {
                    camelcase(name): ["Give all four bounds, or none."]
                    for name in BOUND_NAMES
                    if name not in data
                }
            )
        check_latitude_order(data)


class PagedNotesQuerySchema(PersonalNotesQuerySchema, PageQuerySchema):
    """The personal and team note lists: optional language and window, and a page."""


class PublicSearchQuerySchema(PersonalNotesQuerySchema):
    """The words to look for; optionally one language and a window (all four bounds, or
    none), as the personal list takes them."""

    q = fields.String(
        required=True,
        validate=[validate.Length(max=SEARCH_QUERY_MAX_LENGTH), NOT_BLANK],
        metadata={
            "description": "Words to find in titles and bodies (all of them), "
            '`"a phrase"`, `or` between alternatives, `-word` to leave out. At most '
            f"{SEARCH_QUERY_MAX_LENGTH} characters.",
            "example": "coffee river",
        },
    )


def area_from(query: dict[str, Any], default_radius_km: float) -> Bounds | Circle | None:
    """The window or circle a validated query names, or None."""
    if "latitude" in query:
        radius = query.get("radius_km", default_radius_km)
        return Circle(query["latitude"], query["longitude"], radius)
    if "min_latitude" in query:
        return Bounds(*(query[name] for name in BOUND_NAMES))
    return None


# --- note pages --------------------------------------------------------------------------


class CommentSchema(Schema):
    """A note comment record."""

    comment_id = Guid(required=True, attribute="id")
    note_id = Guid(required=True)
    author_user_name = fields.String(required=True, attribute="author.user_name")
    author_display_text = fields.String(
        required=True,
        attribute="author.display_text",
        metadata={"description": "The author's display name, else the user name."},
    )
    body = fields.String(required=True)
    created_utc = UtcDateTime(required=True)
    updated_utc = UtcDateTime(required=True)


def not_blank(value: str) -> None:
    """NOT_BLANK where the field's one `pattern` states something else."""
    if not value.strip():
        raise ValidationError("Must not be blank.")


class CommentCreateSchema(RequestSchema):
    read_models = (CommentSchema,)

    body = fields.String(
        required=True,
        validate=[
            validate.Length(max=COMMENT_BODY_MAX_LENGTH),
            not_blank,
            Refuses(
                IN_TEXT,
                "Must not contain control characters (but tabs and line breaks) or direction ones.",
            ),
        ],
        metadata={
            "description": f"Not blank, at most {COMMENT_BODY_MAX_LENGTH} characters; no "
            "control characters other than tab and line breaks, no text-direction "
            "embeddings, overrides or isolates (U+202A-202E, U+2066-2069)."
        },
    )


class NoteTrackableSchema(Schema):
    """The public fields of a trackable attached to a note."""

    trackable_id = Guid(required=True, attribute="id")
    public_code = fields.String(required=True, metadata={"example": "LN-4K7Q2M"})
    name = fields.String(required=True)
    last_activity_utc = UtcDateTime(required=True)
    attached_utc = UtcDateTime(required=True)
