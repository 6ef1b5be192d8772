"""Area watch wire shapes: the window as public discovery takes it (contract: Public note
discovery; minLongitude > maxLongitude crosses the antimeridian), and an optional content
language."""

from __future__ import annotations

from typing import Any

from marshmallow import validates_schema

from app.api.base import Guid, RequestSchema, Schema, UtcDateTime
from app.api.notes.schemas import (
    check_latitude_order,
    language_field,
    latitude_field,
    longitude_field,
)
from app.models.event import AREA_WATCH_MAX_SPAN_DEGREES
from app.services.shared.areas import Bounds

SPAN = (
    f"A window spans at most {AREA_WATCH_MAX_SPAN_DEGREES:g} degrees of latitude and of longitude."
)


class AreaWatchSchema(Schema):
    area_watch_id = Guid(required=True, attribute="id")
    min_latitude = latitude_field(required=True)
    min_longitude = longitude_field(required=True)
    max_latitude = latitude_field(required=True)
    max_longitude = longitude_field(required=True)
    content_language = language_field(
        required=True,
        allow_none=True,
        metadata={"description": "Only notes in this language; null: every language."},
    )
    created_utc = UtcDateTime(required=True)


class AreaWatchCreateSchema(RequestSchema):
    """A map window as public discovery takes it. minLongitude > maxLongitude crosses the
    antimeridian."""

    read_models = (AreaWatchSchema,)

    min_latitude = latitude_field(required=True)
    min_longitude = longitude_field(required=True)
    max_latitude = latitude_field(required=True, metadata={"description": SPAN})
    max_longitude = longitude_field(required=True, metadata={"description": SPAN})
    content_language = language_field(
        allow_none=True,
        metadata={
            "description": "Hear only of notes in this language (journey stops have none and "
            "are always heard). Absent or null: every language.",
            "example": "en",
        },
    )

    @validates_schema
    def check_latitudes(self, data: dict[str, Any], **kwargs: Any) -> None:
        check_latitude_order(data)


def window_of(data: dict[str, Any]) -> Bounds:
    return Bounds(
        data["min_latitude"], data["min_longitude"], data["max_latitude"], data["max_longitude"]
    )
