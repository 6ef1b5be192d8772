"""GPX routes for personal notes (contract: Personal notes and GPX), on the notes
blueprint. Team GPX routes call the same service with a team scope."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, stream_with_context
from marshmallow import fields

from app.api.base import FilePart, Guid, RequestSchema, Schema
from app.api.notes.routes import blp
from app.api.notes.schemas import language_field
from app.api.scopes import my_scope
from app.auth import Viewer, current_viewer
from app.extensions import db
from app.models.category import OwnerScope
from app.models.enums import NoteVisibility
from app.services import notes
from app.storage.gpx import write_gpx

GPX_MIMETYPE = "application/gpx+xml"


class GpxImportFormSchema(RequestSchema):
    """The multipart form of a GPX import."""

    read_models = ()  # the notes it makes are reported, not echoed

    file = FilePart(required=True, metadata={"description": "A GPX 1.0 or 1.1 file."})
    visibility = fields.Enum(NoteVisibility, by_value=True, required=True)
    content_language = language_field()


class WaypointOutcomeSchema(Schema):
    index = fields.Integer(required=True, metadata={"description": "0-based position in the file."})
    name = fields.String(
        required=True, metadata={"description": "The note title used or compared."}
    )
    outcome = fields.String(
        required=True, metadata={"enum": ["created", "duplicate", "skipped", "rejected"]}
    )
    note_id = Guid(
        required=True,
        allow_none=True,
        metadata={"description": "Created note, or the existing note it matched."},
    )
    reason = fields.String(required=True)


class GpxImportReportSchema(Schema):
    created = fields.Integer(required=True)
    duplicates = fields.Integer(required=True)
    skipped = fields.Integer(required=True)
    rejected = fields.Integer(required=True)
    waypoints = fields.List(fields.Nested(WaypointOutcomeSchema), required=True)


EXPORT_DOC = {
    "responses": {
        "200": {
            "description": "GPX 1.1 waypoints of the notes that have coordinates.",
            "content": {GPX_MIMETYPE: {"schema": {"type": "string"}}},
        }
    }
}


def gpx_download(viewer: Viewer, scope: OwnerScope, filename: str) -> Response:
    """Stream the scope's notes as a GPX file (shared by the personal and team routes)."""
    waypoints = notes.export_waypoints(viewer, scope)
    first = next(waypoints, None)  # checks access before the 200 is committed to

    def everything() -> Any:
        if first is not None:
            yield first
        yield from waypoints

    return Response(
        stream_with_context(write_gpx(everything())),
        mimetype=GPX_MIMETYPE,
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def gpx_import(viewer: Viewer, scope: OwnerScope, form: dict) -> notes.ImportReport:
    """Import an uploaded GPX file into the scope (shared by the personal and team routes)."""
    config = current_app.config
    report = notes.import_waypoints(
        viewer,
        scope,
        form["file"].stream,
        visibility=form["visibility"],
        content_language=form.get("content_language"),
        default_language=config["DEFAULT_CONTENT_LANGUAGE"],
        max_bytes=config["GPX_MAX_BYTES"],
        max_waypoints=config["GPX_MAX_WAYPOINTS"],
        max_elements=config["GPX_MAX_ELEMENTS"],
        max_parse_seconds=config["GPX_MAX_PARSE_SECONDS"],
    )
    db.session.commit()
    return report


@blp.route("/notes/mine/gpx", methods=["GET"])
@blp.auth()
@blp.doc(**EXPORT_DOC)
def export_my_notes_gpx() -> Response:
    """Export my mapped notes as GPX

    GPX 1.1 waypoints (name, desc, time, link) of the caller's notes that have
    coordinates, oldest first, streamed.
    """
    viewer = current_viewer()
    return gpx_download(viewer, my_scope(), "notes.gpx")


@blp.route("/notes/mine/gpx", methods=["POST"])
@blp.auth()
@blp.arguments(GpxImportFormSchema, location="files")
@blp.response(200, GpxImportReportSchema)
def import_my_notes_gpx(form: dict) -> notes.ImportReport:
    """Import GPX waypoints as notes

    Multipart `file`, `visibility`, optional `contentLanguage`. Only waypoints are read;
    each becomes a mapped note in the language's "Notes" category. Nothing is
    overwritten: the same title, coordinates and text as an existing note is a
    `duplicate`, the same title and coordinates with other text is `skipped`, and a
    waypoint with invalid coordinates is `rejected`. Links in the file are not imported.
    """
    viewer = current_viewer()
    return gpx_import(viewer, my_scope(), form)
