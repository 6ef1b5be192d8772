"""Team note routes (contract: Teams), on the teams blueprint: the personal note routes'
implementations with the team's scope. Who may do what is the note rule with the scope's
(policies.categories: members work in the team's scope; policies.notes: a note's author or
a team admin changes it)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import Response

from app.api.notes.gpx import (
    EXPORT_DOC,
    GpxImportFormSchema,
    GpxImportReportSchema,
    gpx_download,
    gpx_import,
)
from app.api.notes.routes import create_note_in, list_notes_in, move_note_in
from app.api.notes.schemas import (
    NoteCreateSchema,
    NoteMoveSchema,
    NoteSchema,
    PagedNotesQuerySchema,
)
from app.api.pages import LINK_HEADERS
from app.api.scopes import team_scope
from app.api.teams.routes import blp
from app.auth import current_viewer
from app.extensions import db
from app.services import teams


@blp.route("/teams/<uuid:team_id>/notes", methods=["GET"])
@blp.auth()
@blp.arguments(PagedNotesQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=LINK_HEADERS)
def list_team_notes(query: dict, team_id: UUID) -> Response:
    """List a team's notes

    Active members only (404 for others). Every live note of the team, whatever its
    visibility, most recent activity first; optionally one `contentLanguage` and a map
    window (all four bounds). Not capped; paged with `limit` and `cursor`.
    """
    return list_notes_in(team_scope(team_id), query)


@blp.route("/teams/<uuid:team_id>/notes", methods=["POST"])
@blp.auth()
@blp.arguments(NoteCreateSchema)
@blp.response(201, NoteSchema)
def create_team_note(data: dict, team_id: UUID) -> Any:
    """Create a team note

    Any active member; the caller is its author. `categoryId` must be a team category.
    Without `visibility` the team's `defaultNoteVisibility` applies, without a language
    the category's or the team's. `commentPolicy` `TeamMembers` keeps comments to the
    team.
    """
    return create_note_in(team_scope(team_id), data)


@blp.route("/teams/<uuid:team_id>/notes/<uuid:note_id>/move", methods=["POST"])
@blp.auth()
@blp.arguments(NoteMoveSchema)
@blp.response(200, NoteSchema)
def move_team_note(data: dict, team_id: UUID, note_id: UUID) -> Any:
    """Edit or move a team note

    Its author or a team admin (403 for other members, 404 for non-members). The fields
    present are applied, the others stay; `categoryId` must be a team category.
    """
    return move_note_in(team_scope(team_id), note_id, data)


@blp.route("/teams/<uuid:team_id>/notes/<uuid:note_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def remove_team_note(team_id: UUID, note_id: UUID) -> None:
    """Take a note out of the team

    Its author or a team admin. The note keeps existing for its author as a private
    personal note, in their "Notes" category of the note's language.
    """
    teams.remove_note_from_team(current_viewer(), team_id, note_id)
    db.session.commit()


@blp.route("/teams/<uuid:team_id>/notes/<uuid:note_id>/delete", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_team_note(team_id: UUID, note_id: UUID) -> None:
    """Delete a team note

    Its author or a team admin. The note becomes a tombstone (sync sees `isDeleted`); no
    read returns it.
    """
    teams.delete_team_note(current_viewer(), team_id, note_id)
    db.session.commit()


@blp.route("/teams/<uuid:team_id>/notes/gpx", methods=["GET"])
@blp.auth()
@blp.doc(**EXPORT_DOC)
def export_team_notes_gpx(team_id: UUID) -> Response:
    """Export a team's mapped notes as GPX

    Active members. GPX 1.1 waypoints of the team's notes that have coordinates, oldest
    first, streamed.
    """
    viewer = current_viewer()
    return gpx_download(viewer, team_scope(team_id), "team-notes.gpx")


@blp.route("/teams/<uuid:team_id>/notes/gpx", methods=["POST"])
@blp.auth()
@blp.arguments(GpxImportFormSchema, location="files")
@blp.response(200, GpxImportReportSchema)
def import_team_notes_gpx(form: dict, team_id: UUID) -> Any:
    """Import GPX waypoints as team notes

    Active members; the caller is the author of the notes made. The personal import's
    rules, with duplicates compared against this team's notes only.
    """
    viewer = current_viewer()
    return gpx_import(viewer, team_scope(team_id), form)
