"""Trackable routes: attaching trackables to a note (contract: Public note pages; Note
attachment and visibility; decisions: "Attaching by a code..."). The route sits under
the public note pages' path but belongs to the trackables area, which owns codes and
sessions and calls the notes area to attach."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app
from marshmallow import ValidationError, fields, validate, validates_schema

from app.api.base import Guid, RequestSchema
from app.api.trackables.cookies import guess_client, keeping_counted_misses
from app.api.trackables.lookup import CODE_MAX_LENGTH
from app.api.trackables.routes import blp
from app.auth import current_viewer
from app.extensions import db
from app.services import trackables

MAX_SELECTED = 100  # as many as a group holds


class AttachTrackablesSchema(RequestSchema):
    read_models = ()  # an action on the note: no record of its own

    trackable_secret_codes = fields.String(
        load_default=None,
        validate=validate.Length(max=CODE_MAX_LENGTH),
        metadata={
            "description": "One code: a trackable's short secret code or QR token (a public "
            "code is refused)."
        },
    )
    selected_active_trackable_ids = fields.List(
        Guid(),
        load_default=list,
        validate=validate.Length(max=MAX_SELECTED),
        metadata={
            "description": "Trackables this client has an active session for (or the "
            "caller manages)."
        },
    )
    active_trackable_attach_mode = fields.String(
        load_default="Self",
        validate=validate.OneOf(["Self"]),
        metadata={"description": "Only `Self`: the caller attaches them."},
    )

    @validates_schema
    def names_a_trackable(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not (data.get("trackable_secret_codes") or "").strip() and not data.get(
            "selected_active_trackable_ids"
        ):
            raise ValidationError(
                "Send a secret code or select an active trackable.", "trackableSecretCodes"
            )


@blp.route("/public/notes/<uuid:note_id>/trackables", methods=["POST"])
@blp.auth()
@blp.arguments(AttachTrackablesSchema)
@blp.response(204)
def attach_trackables_to_note(data: dict, note_id: UUID) -> None:
    """Attach trackables to a note

    By the note's owner or a team admin (403; 404 when the note is hidden), with a
    trackable's secret code or QR token (403 `trackable_access_code_invalid` for a public
    code or one that matches nothing) or trackables this client holds an active session
    for (403 `trackable_access_code_required` otherwise); 400
    `trackable_activation_required` for an unactivated one. Each newly attached trackable
    gets a journey stop at the note's point. A `VisibleOnceAssociatedTrackableAccessed`
    note is gated from its first trackable on.
    """
    access = trackables.Credential(
        access_code=(data["trackable_secret_codes"] or "").strip() or None,
        guess_client=guess_client(),
        config=current_app.config,
    )
    with keeping_counted_misses():
        trackables.attach_to_note(
            current_viewer(),
            note_id,
            credential=access,
            selected_active_trackable_ids=data["selected_active_trackable_ids"],
        )
    db.session.commit()
