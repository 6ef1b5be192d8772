"""Trackable routes: the journey, on the trackables blueprint (contract: Journey stop (read
shape); Trackables: comments and journey, rules 1 and 3; decisions: journeys are listed
oldest stop first)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app
from marshmallow import fields, validate

from app.api.base import Guid, Schema, UtcDateTime
from app.api.notes.schemas import NoteCreateSchema, NoteSchema
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.trackables.comments import ActivityWriteSchema, credential, reused_tag_response
from app.api.trackables.cookies import keeping_counted_misses
from app.api.trackables.routes import blp
from app.api.trackables.schemas import stop_precision_field
from app.auth import current_viewer
from app.extensions import db
from app.models.trackable import StopPrecision
from app.services import trackables

# --- schemas -----------------------------------------------------------------------------


class NoteAtCoordinateSchema(Schema):
    note_id = Guid(required=True, allow_none=True)
    title = fields.String(required=True, allow_none=True)
    content_language = fields.String(required=True, allow_none=True)
    thumbnail_url = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "null while the note has no image."},
    )
    is_content_omitted = fields.Boolean(
        required=True,
        metadata={
            "description": "The note this stop was recorded at stands here, but the caller "
            "may not open it: every other field is null."
        },
    )


class JourneyStopSchema(Schema):
    """A journey stop (contract: Journey stop (read shape))."""

    journey_stop_id = Guid(required=True)
    trackable_id = Guid(required=True)
    coordinate_id = Guid(
        required=True,
        metadata={"description": "The same for every stop at the same snapped point."},
    )
    latitude = fields.Float(
        required=True, metadata={"description": "Snapped to the grid of `precision`."}
    )
    longitude = fields.Float(
        required=True, metadata={"description": "Snapped to the grid of `precision`."}
    )
    precision = fields.Enum(
        StopPrecision,
        required=True,
        by_value=True,
        metadata={
            "description": "The grid the position was snapped to before it was stored: "
            "`exact` 1e-4 degrees (about 11 m), `about1km` 0.01 degrees, `about10km` 0.1 "
            "degrees."
        },
    )
    associated_utc = UtcDateTime(
        required=True, metadata={"description": "When the stop was saved."}
    )
    observed_utc = UtcDateTime(
        required=True,
        allow_none=True,
        metadata={"description": "When the finder said they saw it."},
    )
    is_location_only = fields.Boolean(
        required=True,
        metadata={"description": "A direct report; false for a stop recorded at a note."},
    )
    is_anonymous = fields.Boolean(required=True)
    can_delete = fields.Boolean(required=True, metadata={"description": "For the caller."})
    can_convert_to_note = fields.Boolean(required=True, metadata={"description": "For the caller."})
    location_label = fields.String(
        required=True,
        metadata={"description": "Place name at save time; empty where nothing is near."},
    )
    creator_display_text = fields.String(required=True)
    creator_profile_user_name = fields.String(
        required=True, allow_none=True, metadata={"description": "null for an anonymous stop."}
    )
    current_notes_at_coordinate = fields.List(
        fields.Nested(NoteAtCoordinateSchema),
        required=True,
        metadata={"description": "Notes now at this point that the caller may open."},
    )


class JourneyStopCreateSchema(ActivityWriteSchema):
    read_models = (JourneyStopSchema,)

    latitude = fields.Float(
        required=True,
        allow_nan=False,
        validate=validate.Range(-90, 90),
        metadata={"example": 47.3769},
    )
    longitude = fields.Float(
        required=True,
        allow_nan=False,
        validate=validate.Range(-180, 180),
        metadata={"example": 8.5417},
    )
    precision = stop_precision_field()


class StopNoteSchema(NoteCreateSchema):
    """A note create body without coordinates: the note stands at the stop's point."""

    class Meta(NoteCreateSchema.Meta):
        exclude = ("latitude", "longitude")


# --- routes ------------------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/journey", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, JourneyStopSchema(many=True), headers=LINK_HEADERS)
def get_trackable_journey(query: dict, trackable_id: UUID) -> Any:
    """Get a trackable's journey

    Every stop, oldest first; paged with `limit` and `cursor`. 404 `trackable_not_found`
    when the caller may not see the trackable.
    """
    return list_answer(trackables.get_journey(current_viewer(), trackable_id, page=query["page"]))


@blp.route("/trackables/<uuid:trackable_id>/journey-stops", methods=["POST"])
@blp.auth(optional=True)
@blp.arguments(JourneyStopCreateSchema)
@blp.response(201, JourneyStopSchema)
@blp.alt_response(409, **reused_tag_response("journey stop"))
def create_journey_stop(data: dict, trackable_id: UUID) -> Any:
    """Add a journey stop

    Where the item is now, snapped to the grid of `precision` (only the snapped point is
    kept) and labelled; the trackable's journey statistics follow. Who may: as for comments
    (403 `trackable_access_code_required` / `trackable_access_code_invalid`, 400
    `trackable_activation_required`). A retry with the same `clientMutationId` returns
    the first stop; the same tag at another point is 409 `client_mutation_id_reused`
    (`originalId`).
    """
    access = credential(data)
    with keeping_counted_misses():
        stop = trackables.add_stop(current_viewer(), trackable_id, credential=access, **data)
    db.session.commit()
    return stop


@blp.route(
    "/trackables/<uuid:trackable_id>/journey-stops/<uuid:journey_stop_id>", methods=["DELETE"]
)
@blp.auth()
@blp.response(204)
def delete_journey_stop(trackable_id: UUID, journey_stop_id: UUID) -> None:
    """Delete a journey stop

    Its signed-in author, the trackable's owner or a current admin of its team (403
    `trackable_journey_stop_delete_forbidden`); 404 `trackable_journey_stop_not_found`.
    """
    trackables.delete_stop(current_viewer(), trackable_id, journey_stop_id)
    db.session.commit()


@blp.route(
    "/trackables/<uuid:trackable_id>/journey-stops/<uuid:journey_stop_id>/note",
    methods=["POST"],
)
@blp.auth()
@blp.arguments(StopNoteSchema)
@blp.response(201, NoteSchema)
def convert_journey_stop_to_note(data: dict, trackable_id: UUID, journey_stop_id: UUID) -> Any:
    """Convert a journey stop to a note

    The website's conversion flow: the signed-in creator of a direct report turns it
    into a personal note at the stop's point (the note create body without coordinates).
    403 `trackable_journey_stop_convert_forbidden` for anyone else; 400
    `trackable_journey_stop_convert_rejected` for a stop already linked to a note. The
    stop is then linked to the note (`isLocationOnly` false).
    """
    note = trackables.convert_stop(
        current_viewer(),
        trackable_id,
        journey_stop_id,
        default_language=current_app.config["DEFAULT_CONTENT_LANGUAGE"],
        **data,
    )
    db.session.commit()
    return note
