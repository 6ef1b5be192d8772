"""Trackable routes: the journey as a file, GPX 1.1 or GeoJSON, on the
trackables blueprint. Whoever may read the journey may download it (the same policy);
anyone else gets 404 `trackable_not_found`, before any byte of the file."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from flask import Response, stream_with_context
from marshmallow import fields, post_dump

from app.api.base import Guid, Schema, UtcDateTime
from app.api.notes.gpx import GPX_MIMETYPE
from app.api.trackables.routes import blp
from app.auth import current_viewer
from app.models.trackable import StopPrecision
from app.services import trackables
from app.storage.geojson import PointFeature, feature_collection
from app.storage.gpx import write_gpx

GEOJSON_MIMETYPE = "application/geo+json"


# --- schemas (the GeoJSON document; the GPX file is described by its media type) ----------


class JourneyStopPropertiesSchema(Schema):
    """The properties of a stop's Point feature: the journey read's fields that are the
    same for every viewer."""

    journey_stop_id = Guid()
    coordinate_id = Guid()
    associated_utc = UtcDateTime()
    observed_utc = UtcDateTime(allow_none=True)
    precision = fields.Enum(StopPrecision, by_value=True)
    location_label = fields.String()
    country_code = fields.String(
        allow_none=True, metadata={"description": "ISO 3166-1 alpha-2; null: no town near."}
    )
    is_location_only = fields.Boolean()
    is_anonymous = fields.Boolean()
    creator_display_text = fields.String()

    @post_dump
    def no_country_is_null(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        data["countryCode"] = data.get("countryCode") or None
        return data


class GeoJsonGeometrySchema(Schema):
    type = fields.String(
        required=True, metadata={"enum": ["Point", "LineString", "MultiLineString"]}
    )
    coordinates = fields.Raw(
        required=True,
        metadata={
            "description": "[longitude, latitude] positions (RFC 7946): one for a Point, "
            "a list for a LineString, a list of lists for a MultiLineString."
        },
    )


class GeoJsonFeatureSchema(Schema):
    type = fields.String(required=True, metadata={"enum": ["Feature"]})
    id = fields.String(
        metadata={
            "description": "A stop's journeyStopId: sent when the feature is a stop (a Point); "
            "the line has none."
        }
    )
    geometry = fields.Nested(GeoJsonGeometrySchema, required=True)
    properties = fields.Dict(
        required=True,
        metadata={
            "description": "The line: trackableId, publicCode, name, distanceKm, stopCount, "
            "countries. A stop: journeyStopId, coordinateId, associatedUtc, observedUtc, "
            "precision, locationLabel, countryCode, isLocationOnly, isAnonymous, "
            "creatorDisplayText."
        },
    )


class JourneyFeatureCollectionSchema(Schema):
    """A journey as GeoJSON (RFC 7946)."""

    type = fields.String(required=True, metadata={"enum": ["FeatureCollection"]})
    features = fields.List(
        fields.Nested(GeoJsonFeatureSchema),
        required=True,
        metadata={
            "description": "First the journey's line through its stops, oldest first (a "
            "LineString; a MultiLineString cut where a leg crosses the antimeridian; none "
            "for fewer than two stops), then one Point feature per stop, oldest first."
        },
    )


GPX_DOC = {
    "responses": {
        "200": {
            "description": "GPX 1.1: one track, one track point per stop (oldest first) "
            "with the time it was saved (`time`), its place's name (`name`) and a `desc` "
            "that starts with the day the item was seen there, `Seen on YYYY-MM-DD` (the "
            "stop's `observedUtc` when its finder gave one, else the day it was saved), "
            "followed by ` by {finder}` and, on a coarse stop, ` (precision: {precision})`.",
            "content": {GPX_MIMETYPE: {"schema": {"type": "string"}}},
            "headers": {
                "Content-Disposition": {
                    "description": 'attachment; filename="{publicCode}-journey.gpx"',
                    "schema": {"type": "string"},
                }
            },
        }
    }
}
GEOJSON_HEADERS = {
    "Content-Disposition": {
        "description": 'attachment; filename="{publicCode}-journey.geojson"',
        "schema": {"type": "string"},
    }
}


def _attachment(filename: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{filename}"'}


# --- routes ------------------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/journey.gpx", methods=["GET"])
@blp.auth(optional=True)
@blp.doc(**GPX_DOC)
def export_trackable_journey_gpx(trackable_id: UUID) -> Response:
    """Export a trackable's journey as GPX

    Anyone who may read the journey; 404 `trackable_not_found` otherwise. Streamed.
    """
    export = trackables.export_journey(current_viewer(), trackable_id)
    track = trackables.gpx_track(export)
    return Response(
        stream_with_context(write_gpx((), track=track, name=track.name)),
        mimetype=GPX_MIMETYPE,
        headers=_attachment(f"{export.file_stem}.gpx"),
    )


@blp.route("/trackables/<uuid:trackable_id>/journey.geojson", methods=["GET"])
@blp.auth(optional=True)
@blp.response(
    200, JourneyFeatureCollectionSchema, content_type=GEOJSON_MIMETYPE, headers=GEOJSON_HEADERS
)
def export_trackable_journey_geojson(trackable_id: UUID) -> Any:
    """Export a trackable's journey as GeoJSON

    Anyone who may read the journey; 404 `trackable_not_found` otherwise.
    """
    export = trackables.export_journey(current_viewer(), trackable_id)
    properties = JourneyStopPropertiesSchema()
    points = [
        PointFeature(
            latitude=stop.latitude,
            longitude=stop.longitude,
            feature_id=str(stop.journey_stop_id),
            properties=properties.dump(stop),
        )
        for stop in export.stops
    ]
    found = export.statistics
    document = feature_collection(
        points,
        line_properties={
            "trackableId": str(export.trackable_id),
            "publicCode": export.public_code,
            "name": export.name,
            "distanceKm": found.distance_km,
            "stopCount": found.stop_count,
            "countries": found.countries,
        },
    )
    return Response(
        json.dumps(document, ensure_ascii=False),
        mimetype=GEOJSON_MIMETYPE,
        headers=_attachment(f"{export.file_stem}.geojson"),
    )
