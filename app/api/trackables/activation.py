"""Trackable routes: activation, group membership and watches (contract: Trackable
activation; Trackable group membership; Trackable watch; Trackables: reads, creation,
groups), with their schemas. No schema here has a field for a secret code or QR token."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from marshmallow import ValidationError, fields, validate, validates_schema

from app.api.base import Guid, RequestSchema, Schema, UtcDateTime, camelcase
from app.api.links.schemas import ExternalLinkInputSchema
from app.api.notes.schemas import latitude_field, longitude_field
from app.api.trackables.routes import blp
from app.api.trackables.schemas import MyTrackableSchema, stop_precision_field
from app.auth import current_viewer
from app.extensions import db
from app.models.trackable import (
    STATUS_MESSAGE_MAX_LENGTH,
    TRACKABLE_DESCRIPTION_MAX_LENGTH,
    TRACKABLE_NAME_MAX_LENGTH,
)
from app.services import trackables

# --- schemas -----------------------------------------------------------------------------

STOP_PAIR = ("initial_journey_stop_latitude", "initial_journey_stop_longitude")


class TrackableActivatedSchema(Schema):
    """The activated trackable (dumps services.trackables.Activation)."""

    trackable_id = Guid(required=True, attribute="trackable.id")
    public_code = fields.String(
        required=True, attribute="trackable.public_code", metadata={"example": "LN-4K7Q2M"}
    )
    name = fields.String(required=True, attribute="trackable.name")
    description = fields.String(required=True, attribute="trackable.description")
    status_message = fields.String(required=True, attribute="trackable.status_message")
    owner_user_id = Guid(
        required=True,
        attribute="trackable.owner_user_id",
        metadata={"description": "The activator."},
    )
    team_id = Guid(
        required=True,
        attribute="trackable.team_id",
        allow_none=True,
        metadata={"description": "The owning team; null for a personal trackable."},
    )
    trackable_group_id = Guid(required=True, attribute="trackable.group_id", allow_none=True)
    is_activated = fields.Boolean(required=True, attribute="trackable.is_activated")
    activated_utc = UtcDateTime(required=True, attribute="trackable.activated_utc")
    last_activity_utc = UtcDateTime(required=True, attribute="trackable.last_activity_utc")
    external_link_url = fields.String(
        required=True, attribute="trackable.external_link_url", allow_none=True
    )
    external_link_description = fields.String(
        required=True, attribute="trackable.external_link_description"
    )
    external_link_append_public_trackable_code = fields.Boolean(
        required=True, attribute="trackable.external_link_append_public_code"
    )
    initial_journey_stop_id = Guid(
        required=True,
        allow_none=True,
        metadata={"description": "The journey stop recorded with the activation, or null."},
    )


class TrackableActivateSchema(ExternalLinkInputSchema):
    """Activation body. A field left out keeps what the creator gave; for an item of a
    group, a blank or missing value with its `useGroupDefault...` flag copies the group's
    current default."""

    read_models = (MyTrackableSchema, TrackableActivatedSchema)

    name = fields.String(
        allow_none=True,
        validate=validate.Length(max=TRACKABLE_NAME_MAX_LENGTH),
        metadata={
            "description": "The item's own title. Blank with useGroupDefaultTitle copies the "
            "group's current default title; a name that ends up blank is refused (400).",
            "example": "Red kayak paddle",
        },
    )
    description = fields.String(
        allow_none=True,
        validate=validate.Length(max=TRACKABLE_DESCRIPTION_MAX_LENGTH),
        metadata={
            "description": "Blank with useGroupDefaultDescription copies the group's default.",
            "example": "Found it at the lake? Take it on to the next one.",
        },
    )
    status_message = fields.String(
        allow_none=True,
        validate=validate.Length(max=STATUS_MESSAGE_MAX_LENGTH),
        metadata={
            "description": "Blank with useGroupDefaultStatusMessage copies the group's default.",
            "example": "Heading north",
        },
    )
    use_group_default_title = fields.Boolean(
        load_default=False,
        metadata={"description": "With a blank `name`, copy the group's current default title."},
    )
    use_group_default_description = fields.Boolean(
        load_default=False,
        metadata={"description": "With a blank `description`, copy the group's default."},
    )
    use_group_default_status_message = fields.Boolean(
        load_default=False,
        metadata={"description": "With a blank `statusMessage`, copy the group's default."},
    )
    team_id = Guid(
        allow_none=True,
        load_default=None,
        metadata={
            "description": "Team that will own it (the caller must be an active member; 404 "
            "otherwise); null for a personal trackable."
        },
    )
    use_group_default_external_link = fields.Boolean(
        load_default=False,
        metadata={
            "description": "Without an `externalLinkUrl`, copy the group's default link "
            "(with its append-public-code choice)."
        },
    )
    initial_journey_stop_latitude = latitude_field(
        allow_none=True,
        metadata={"description": "With the longitude: records the first journey stop."},
    )
    initial_journey_stop_longitude = longitude_field(
        allow_none=True,
        metadata={"description": "With the latitude: records the first journey stop."},
    )
    initial_journey_stop_precision = stop_precision_field()

    @validates_schema
    def check_stop_pair(self, data: dict[str, Any], **kwargs: Any) -> None:
        given = [name for name in STOP_PAIR if data.get(name) is not None]
        if len(given) == 1:
            missing = next(name for name in STOP_PAIR if name not in given)
            raise ValidationError(
                {camelcase(missing): ["Give both initial journey stop coordinates, or neither."]}
            )


class TrackableMembershipGroupSchema(Schema):
    """The group a trackable is in."""

    trackable_group_id = Guid(required=True, attribute="id")
    name = fields.String(required=True, metadata={"example": "Lake District Paddles"})
    slug = fields.String(required=True, metadata={"example": "lake_district_paddles"})


class TrackableGroupMembershipSchema(Schema):
    """A trackable and the group it is in now."""

    trackable_id = Guid(required=True)
    group = fields.Nested(
        TrackableMembershipGroupSchema,
        required=True,
        allow_none=True,
        metadata={"description": "null when in no group."},
    )


class TrackableGroupAttachSchema(RequestSchema):
    read_models = (TrackableGroupMembershipSchema,)

    trackable_group_id = Guid(required=True, metadata={"description": "The destination group."})


class TrackableWatchStateSchema(Schema):
    """The caller's watch after the request. A repeated start or stop answers the same
    with `changed` false."""

    watching = fields.Boolean(
        required=True, metadata={"description": "Whether the caller watches it now."}
    )
    changed = fields.Boolean(
        required=True, metadata={"description": "Whether this request changed that."}
    )


class MyTrackableWatchesSchema(Schema):
    """The caller's watches, most recent first (beyond the contract)."""

    trackables = fields.List(Guid(), required=True, attribute="trackable_ids")
    groups = fields.List(Guid(), required=True, attribute="group_ids")


# --- activation --------------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/activate", methods=["POST"])
@blp.auth()
@blp.arguments(TrackableActivateSchema)
@blp.response(200, TrackableActivatedSchema)
def activate_trackable(data: dict, trackable_id: UUID) -> Any:
    """Activate a trackable

    For whoever can see the unactivated trackable (its creator, or whoever unlocked it
    with its secret code or QR token); others get 404 `trackable_not_found`. The caller
    becomes its owner; with `teamId` the team owns it and its admins manage it too. Once
    activated it answers 400 `trackable_already_activated`. With both initial coordinates
    the first journey stop is recorded in the same transaction.
    """
    activation = trackables.activate(current_viewer(), trackable_id, **data)
    db.session.commit()
    return activation


# --- group membership --------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/group", methods=["DELETE"])
@blp.auth()
@blp.response(200, TrackableGroupMembershipSchema)
def detach_trackable_from_group(trackable_id: UUID) -> Any:
    """Detach a trackable from its group

    The original activator or an admin of its group; others get 403
    `trackable_group_detach_forbidden`. A trackable in no group: 400
    `trackable_request_rejected`. Answers the trackable with `group` null.
    """
    membership = trackables.detach_from_group(current_viewer(), trackable_id)
    db.session.commit()
    return membership


@blp.route("/trackables/<uuid:trackable_id>/group", methods=["POST"])
@blp.auth()
@blp.arguments(TrackableGroupAttachSchema)
@blp.response(200, TrackableGroupMembershipSchema)
def attach_trackable_to_group(data: dict, trackable_id: UUID) -> Any:
    """Attach a trackable to a group

    A trackable is in one group at a time: one in a group answers 400
    `trackable_request_rejected` (detach it first). The original activator (or an admin
    of its team) who also controls the destination group may attach it; others get 403
    `trackable_group_attach_forbidden`. An unknown group is 404; a full one (100 items)
    is 400.
    """
    membership = trackables.attach_to_group(
        current_viewer(), trackable_id, data["trackable_group_id"]
    )
    db.session.commit()
    return membership


# --- watches -----------------------------------------------------------------------------


@blp.route("/trackables/<uuid:trackable_id>/watch", methods=["POST"])
@blp.auth()
@blp.response(200, TrackableWatchStateSchema)
def watch_trackable(trackable_id: UUID) -> Any:
    """Watch a trackable

    Idempotent: watching again changes nothing (`changed` false). Needs a trackable the
    caller can see (404 `trackable_not_found` otherwise).
    """
    outcome = trackables.watch_trackable(current_viewer(), trackable_id)
    db.session.commit()
    return outcome


@blp.route("/trackables/<uuid:trackable_id>/watch", methods=["DELETE"])
@blp.auth()
@blp.response(200, TrackableWatchStateSchema)
def unwatch_trackable(trackable_id: UUID) -> Any:
    """Stop watching a trackable

    Idempotent: without a watch nothing changes (`changed` false). A watch can be ended
    even when the trackable is no longer visible to the caller.
    """
    outcome = trackables.unwatch_trackable(current_viewer(), trackable_id)
    db.session.commit()
    return outcome


@blp.route("/trackables/groups/<uuid:trackable_group_id>/watch", methods=["POST"])
@blp.auth()
@blp.response(200, TrackableWatchStateSchema)
def watch_trackable_group(trackable_group_id: UUID) -> Any:
    """Watch a trackable group

    Covers the group's items the caller may see. Idempotent (`changed` false on a
    repeat). Needs a group the caller controls or may see an item of (404
    `trackable_not_found` otherwise).
    """
    outcome = trackables.watch_group(current_viewer(), trackable_group_id)
    db.session.commit()
    return outcome


@blp.route("/trackables/groups/<uuid:trackable_group_id>/watch", methods=["DELETE"])
@blp.auth()
@blp.response(200, TrackableWatchStateSchema)
def unwatch_trackable_group(trackable_group_id: UUID) -> Any:
    """Stop watching a trackable group

    Idempotent: without a watch nothing changes (`changed` false). A watch can be ended
    even when the group is no longer visible to the caller; without one, an unknown or
    hidden group is 404 `trackable_not_found`.
    """
    outcome = trackables.unwatch_group(current_viewer(), trackable_group_id)
    db.session.commit()
    return outcome


@blp.route("/trackables/watches", methods=["GET"])
@blp.auth()
@blp.response(200, MyTrackableWatchesSchema)
def list_my_watches() -> Any:
    """List my watches

    The ids of the trackables and groups the caller watches, most recent first. Beyond
    the contract, which does not list watches.
    """
    return trackables.list_watches(current_viewer())
