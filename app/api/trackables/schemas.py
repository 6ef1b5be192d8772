"""Schemas shared by the trackable routes (contract: Trackable; Trackable group). Secret
codes appear only in the creation schemas; no read schema has a field for them.

Read schemas dump services.trackables' TrackableView (`trackables.trackable_view(viewer,
trackable)` makes one for any route that answers with a trackable record).
"""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from app.api.base import (
    NOT_BLANK_PATTERN,
    Guid,
    LanguageTag,
    Regexp,
    RequestSchema,
    Schema,
    UtcDateTime,
)
from app.api.links.schemas import ExternalLinkInputSchema
from app.models.base import LINK_DESCRIPTION_MAX_LENGTH, LINK_URL_MAX_LENGTH
from app.models.trackable import (
    GROUP_NAME_MAX_LENGTH,
    STATUS_MESSAGE_MAX_LENGTH,
    TRACKABLE_DESCRIPTION_MAX_LENGTH,
    TRACKABLE_NAME_MAX_LENGTH,
    StopPrecision,
    TrackableVisibility,
)
from app.services import trackables

NOT_BLANK = Regexp(NOT_BLANK_PATTERN, error="Must not be blank.")
PUBLIC_CODE_EXAMPLE = "LN-4K7Q2M"
GROUP_NAME = r"^[A-Za-z0-9 ]*[A-Za-z0-9][A-Za-z0-9 ]*$"


VISIBILITY = (
    "`AlwaysVisibleToEveryone`: anyone may open it once activated. `VisibleOnceAccessed`: "
    "only its managers and whoever unlocked it with its secret code or QR token."
)


def visibility_field(*, default: str | None = None, **kwargs: Any) -> fields.Enum:
    metadata: dict[str, Any] = {"description": VISIBILITY}
    if default is not None:
        metadata["default"] = default
    return fields.Enum(TrackableVisibility, by_value=True, metadata=metadata, **kwargs)


def stop_precision_field(**kwargs: Any) -> fields.Enum:
    """How coarsely a stop's writer wants its position kept (default `exact`)."""
    return fields.Enum(
        StopPrecision,
        by_value=True,
        load_default=StopPrecision.EXACT,
        metadata={
            "description": "How precisely the position is kept: `exact` (default; a 1e-4 "
            "degree grid, about 11 m), `about1km` (0.01 degrees) or `about10km` (0.1 "
            "degrees). The position is snapped to the nearest point of that fixed grid "
            "(latitude and longitude alike) before anything is stored: the sent position "
            "is kept nowhere.",
            "default": "exact",
            "example": "about1km",
        },
        **kwargs,
    )


# --- reads -------------------------------------------------------------------------------


class TrackableGroupRefSchema(Schema):
    """The group a trackable belongs to."""

    trackable_group_id = Guid(required=True, attribute="id")
    name = fields.String(required=True, metadata={"example": "Summer Hike 2026"})
    slug = fields.String(
        required=True,
        metadata={"description": "The group page's fixed slug.", "example": "summer_hike_2026"},
    )


class JourneyStatisticsSchema(Schema):
    """What the trackable's journey adds up to, kept up to date as stops come and go."""

    distance_km = fields.Float(
        required=True,
        metadata={
            "description": "Great-circle kilometres (haversine, mean Earth radius "
            "6371.0088 km) along the stops, oldest first: each leg the short way round.",
            "example": 111.195,
        },
    )
    stop_count = fields.Integer(required=True, metadata={"example": 2})
    countries = fields.List(
        fields.String(),
        required=True,
        metadata={
            "description": "ISO 3166-1 alpha-2 codes of the countries of the stops (the "
            "nearest town's, by the offline geocoder), in order of first visit; a stop "
            "with no town near counts for none.",
            "example": ["CH", "DE"],
        },
    )
    first_stop_utc = UtcDateTime(
        required=True, allow_none=True, metadata={"description": "When the oldest stop was saved."}
    )
    last_stop_utc = UtcDateTime(
        required=True, allow_none=True, metadata={"description": "When the newest stop was saved."}
    )
    first_seen_on = fields.Date(
        required=True,
        allow_none=True,
        metadata={
            "description": "The earliest day (UTC) the item was seen at a stop: a stop's "
            '`observedUtc` when its finder gave one (the website\'s "seen on" date), else '
            "when it was saved. Any stop's, whatever the journey's order (a find reported "
            "late may have been seen before the stops saved ahead of it); null without stops.",
            "example": "2026-11-22",
        },
    )
    last_seen_on = fields.Date(
        required=True,
        allow_none=True,
        metadata={
            "description": "The latest day (UTC) the item was seen at a stop, as "
            "`firstSeenOn`; null without stops.",
            "example": "2026-11-23",
        },
    )


class TrackableSchema(Schema):
    """A trackable record as this caller sees it (never a secret code or QR token)."""

    trackable_id = Guid(required=True)
    public_code = fields.String(
        required=True,
        metadata={
            "description": "Safe for public lookup and links.",
            "example": PUBLIC_CODE_EXAMPLE,
        },
    )
    name = fields.String(
        required=True,
        metadata={
            "description": "An unactivated grouped item without its own name shows the "
            "group's default title (else the group's name)."
        },
    )
    description = fields.String(
        required=True,
        metadata={"description": "Unactivated grouped items fall back to the group default."},
    )
    status_message = fields.String(
        required=True,
        metadata={"description": "Unactivated grouped items fall back to the group default."},
    )
    visibility = visibility_field(required=True)
    is_activated = fields.Boolean(
        required=True, metadata={"description": "True once it has an owner."}
    )
    activated_utc = UtcDateTime(required=True, allow_none=True)
    created_utc = UtcDateTime(required=True)
    last_activity_utc = UtcDateTime(
        required=True,
        metadata={"description": "Most recent activity: creation, activation, comments, stops."},
    )
    group = fields.Nested(
        TrackableGroupRefSchema,
        required=True,
        allow_none=True,
        metadata={"description": "null: no group."},
    )
    owner_user_name = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The activator's user name; null while unactivated."},
    )
    team_id = Guid(
        required=True, allow_none=True, metadata={"description": "The owning team, if any."}
    )
    team_name = fields.String(
        required=True, allow_none=True, metadata={"description": "That team's name."}
    )
    external_link_url = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "With `externalLinkAppendPublicTrackableCode`, the public code is "
            "appended as the query parameter `trackableCode` (the link's own query kept).",
            "example": "https://example.com/story?trackableCode=LN-4K7Q2M",
        },
    )
    external_link_description = fields.String(required=True)
    external_link_append_public_trackable_code = fields.Boolean(required=True)
    can_manage = fields.Boolean(
        required=True,
        metadata={"description": "Whether this caller may manage it (settings, moderation)."},
    )
    journey_statistics = fields.Nested(JourneyStatisticsSchema, required=True)


class MyTrackableSchema(TrackableSchema):
    """A trackable of the caller's own list, with why it is there."""

    relation = fields.Enum(
        trackables.TrackableRelation,
        required=True,
        by_value=True,
        metadata={
            "description": "The strongest that applies: `Activated` (the caller activated "
            "it), `TeamAdmin` (admin of its team), `Created` (created it, still "
            "unactivated), `Unlocked` (opened it with its secret code or QR token)."
        },
    )


class PublicTrackablesQuerySchema(Schema):
    content_language = LanguageTag(
        metadata={
            "description": "Accepted, but does not filter: public trackable reads stay "
            "multilingual.",
            "example": "en-US",
        }
    )


# --- creation ----------------------------------------------------------------------------

OWN_CODE_RULES = (
    "Empty or absent: a code is generated. Otherwise your own code: 6-64 letters, digits, "
    "'-' or '_', not starting with LN, GT or TB (any case), not one of the commonest "
    "passwords, words, names or sequences, unused by any other trackable (a code in use "
    "counts against this address's guess budget); matched ignoring case."
)
# Examples of secret codes and QR tokens are masked with `*`, which no real code contains,
# so that no example is a working code (and no client ships a well-known one).
MASKED = "Examples in this document are masked with `*`; real codes never contain `*`."
SECRET_CODE_EXAMPLE = "LN********"  # noqa: S105 - a masked example, not a secret
SCAN_URL_EXAMPLE = "https://notes.example.com/trackable/" + "*" * 16


# --- shown once: creation and rotation ---------------------------------------------------

SHOWN_ONCE = "Shown only in this response: store it now."


class TrackableSecretsSchema(Schema):
    """A trackable's codes, the secret ones included (creation and rotation only)."""

    trackable_id = Guid(required=True)
    public_code = fields.String(required=True, metadata={"example": PUBLIC_CODE_EXAMPLE})
    secret_code = fields.String(
        required=True,
        metadata={
            "description": f"The short secret code, for manual entry. {SHOWN_ONCE} {MASKED}",
            "example": SECRET_CODE_EXAMPLE,
        },
    )
    scan_url = fields.String(
        required=True,
        metadata={
            "description": f"{{base_url}}/trackable/{{QR token}}, the token being about 100 "
            f"characters. {SHOWN_ONCE} {MASKED}",
            "example": SCAN_URL_EXAMPLE,
        },
    )
    qr_payload = fields.String(
        required=True,
        metadata={
            "description": f"What the QR code encodes: the scan URL. {SHOWN_ONCE} {MASKED}",
            "example": SCAN_URL_EXAMPLE,
        },
    )


class TrackableCreatedItemSchema(TrackableSecretsSchema):
    name = fields.String(
        required=True, metadata={"description": "The item's name (a group item's default)."}
    )


class TrackableCreatedSchema(Schema):
    trackable_id = Guid(required=True)
    heading = fields.String(required=True, metadata={"description": "The trackable's name."})
    description = fields.String(required=True)
    items = fields.List(
        fields.Nested(TrackableCreatedItemSchema),
        required=True,
        metadata={"description": "The created trackable, with its codes."},
    )


class TrackableGroupCreatedSchema(Schema):
    """The new group, its fields and its items with their codes."""

    trackable_group_id = Guid(required=True, attribute="group.id")
    name = fields.String(required=True, attribute="group.name")
    slug = fields.String(
        required=True, attribute="group.slug", metadata={"example": "summer_hike_2026"}
    )
    description = fields.String(required=True, attribute="group.description")
    default_trackable_title = fields.String(
        required=True, attribute="group.default_trackable_title"
    )
    default_trackable_description = fields.String(
        required=True, attribute="group.default_trackable_description"
    )
    default_external_link_url = fields.String(
        required=True, attribute="group.default_external_link_url", allow_none=True
    )
    default_external_link_description = fields.String(
        required=True, attribute="group.default_external_link_description"
    )
    default_external_link_append_public_trackable_code = fields.Boolean(
        required=True, attribute="group.default_external_link_append_public_code"
    )
    default_status_message = fields.String(required=True, attribute="group.default_status_message")
    visibility = visibility_field(required=True, attribute="group.visibility")
    team_id = Guid(required=True, attribute="group.team_id", allow_none=True)
    trackable_count = fields.Integer(required=True)
    created_utc = UtcDateTime(required=True, attribute="group.created_utc")
    last_activity_utc = UtcDateTime(required=True, attribute="group.last_activity_utc")
    items = fields.List(fields.Nested(TrackableCreatedItemSchema), required=True)


# --- creation bodies ---------------------------------------------------------------------


class TrackableCreateSchema(ExternalLinkInputSchema):
    read_models = (MyTrackableSchema,)

    name = fields.String(
        required=True,
        validate=[validate.Length(max=TRACKABLE_NAME_MAX_LENGTH), NOT_BLANK],
        metadata={"example": "Blue travel bug"},
    )
    description = fields.String(
        allow_none=True, validate=validate.Length(max=TRACKABLE_DESCRIPTION_MAX_LENGTH)
    )
    external_link_append_public_trackable_code = fields.Boolean(
        load_default=False,
        metadata={"description": "Append `trackableCode=<publicCode>` on trackable pages."},
    )
    team_id = Guid(
        allow_none=True,
        metadata={"description": "A team the caller is an active member of (404 otherwise)."},
    )
    visibility = visibility_field(default="AlwaysVisibleToEveryone")
    activate_immediately = fields.Boolean(
        load_default=False,
        metadata={"description": "Activate at creation: the caller (and `teamId`) own it."},
    )
    secret_code = fields.String(
        allow_none=True,
        metadata={
            "description": f"{OWN_CODE_RULES} The example asks for a generated one: an "
            "example code of your own would be a secret everyone knows.",
            "example": "",
        },
    )


class TrackableGroupCreateSchema(RequestSchema):
    read_models = (TrackableGroupCreatedSchema,)

    name = fields.String(
        required=True,
        validate=[
            validate.Length(max=GROUP_NAME_MAX_LENGTH),
            Regexp(GROUP_NAME, error="Use letters, numbers and spaces only."),
        ],
        metadata={
            "description": "Letters, numbers and spaces; gives the unique slug (lowercase, "
            "spaces as underscores), fixed after creation.",
            "example": "Summer Hike 2026",
        },
    )
    description = fields.String(
        allow_none=True, validate=validate.Length(max=TRACKABLE_DESCRIPTION_MAX_LENGTH)
    )
    default_trackable_title = fields.String(
        allow_none=True,
        validate=validate.Length(max=TRACKABLE_NAME_MAX_LENGTH),
        metadata={"description": "Items' title until activated; empty: the group's name."},
    )
    default_trackable_description = fields.String(
        allow_none=True, validate=validate.Length(max=TRACKABLE_DESCRIPTION_MAX_LENGTH)
    )
    default_external_link_url = fields.String(
        allow_none=True,
        validate=validate.Length(max=LINK_URL_MAX_LENGTH),
        metadata={"description": "http(s) URL, verified server-side; empty or null: none."},
    )
    default_external_link_description = fields.String(
        allow_none=True,
        validate=validate.Length(max=LINK_DESCRIPTION_MAX_LENGTH),
        metadata={"description": "Empty: the destination page's title is used."},
    )
    default_external_link_append_public_trackable_code = fields.Boolean(load_default=False)
    default_status_message = fields.String(
        allow_none=True, validate=validate.Length(max=STATUS_MESSAGE_MAX_LENGTH)
    )
    trackable_count = fields.Integer(
        required=True,
        strict=True,
        metadata={"description": "How many trackables to make: 1 to 100.", "example": 10},
    )
    team_id = Guid(
        allow_none=True,
        metadata={"description": "A team the caller is an active member of (404 otherwise)."},
    )
    visibility = visibility_field(default="AlwaysVisibleToEveryone")
    activate_immediately = fields.Boolean(
        load_default=False,
        metadata={"description": "Activate every item now, with the group's defaults."},
    )
    watch_group_activity_when_created = fields.Boolean(
        load_default=False, metadata={"description": "Start watching the group."}
    )


class TrackableSecretRotateSchema(RequestSchema):
    """Optional body of a rotation: without one, the new secret is generated."""

    read_models = (TrackableSecretsSchema,)

    secret_code = fields.String(
        allow_none=True,
        metadata={
            "description": f"{OWN_CODE_RULES} The trackable's current secret counts as used.",
            "example": "",
        },
    )
