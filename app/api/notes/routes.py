"""Note routes: personal notes, public discovery, public note pages and comments,
and a profile's notes nearby (contract: Personal notes and GPX; Public note discovery;
Public note pages). The GPX routes live with the GPX area."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from uuid import UUID

from flask import Response, current_app

from app.api.base import Blueprint
from app.api.notes.schemas import (
    BoundsQuerySchema,
    CommentCreateSchema,
    CommentSchema,
    NearbyQuerySchema,
    NoteCreateSchema,
    NoteMoveSchema,
    NoteSchema,
    NoteTrackableSchema,
    PagedNotesQuerySchema,
    ProfileNearbyQuerySchema,
    PublicSearchQuerySchema,
    area_from,
    note_list_response,
)
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.scopes import my_scope
from app.auth import current_viewer
from app.extensions import db
from app.models.category import OwnerScope
from app.services import notes, teams
from app.services.shared.areas import Bounds, Circle

blp = Blueprint("notes", __name__, url_prefix="/api", description="Notes")

CAPPED_LIST_HEADERS = {
    "X-Result-Truncated": {
        "description": "`true` when more records matched than the cap returned.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}


def _config(name: str) -> Any:
    return current_app.config[name]


# --- personal notes ----------------------------------------------------------------------


# The personal routes and the team routes (api.teams.notes) are one implementation each,
# the scope their only difference.


def list_notes_in(scope: OwnerScope, query: dict) -> Response:
    found = notes.list_notes(
        current_viewer(),
        scope,
        content_language=query.get("content_language"),
        area=area_from(query, _config("NEARBY_RADIUS_KM")),
        page=query["page"],
    )
    return note_list_response(found)


def create_note_in(scope: OwnerScope, data: dict) -> Any:
    default_language = _config("DEFAULT_CONTENT_LANGUAGE")
    note = notes.create_note(current_viewer(), scope, default_language=default_language, **data)
    db.session.commit()
    return note


def move_note_in(scope: OwnerScope, note_id: UUID, data: dict) -> Any:
    note = notes.move_note(current_viewer(), scope, note_id, data)
    db.session.commit()
    return note


@blp.route("/notes/mine", methods=["GET"])
@blp.auth()
@blp.arguments(PagedNotesQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=LINK_HEADERS)
def list_my_notes(query: dict) -> Response:
    """List my notes

    The caller's personal notes (not deleted), most recent activity first; optionally one
    `contentLanguage` and a map window (all four bounds; notes without coordinates are
    then left out). Not capped; paged with `limit` and `cursor`.
    """
    return list_notes_in(my_scope(), query)


@blp.route("/notes/mine", methods=["POST"])
@blp.auth()
@blp.arguments(NoteCreateSchema)
@blp.response(201, NoteSchema)
def create_my_note(data: dict) -> Any:
    """Create a note

    Without `categoryId` the note goes to the "Notes" root of its content language (made
    on demand). `externalLinkUrl` is verified server-side (400 when it fails).
    """
    return create_note_in(my_scope(), data)


@blp.route("/notes/mine/<uuid:note_id>/move", methods=["POST"])
@blp.auth()
@blp.arguments(NoteMoveSchema)
@blp.response(200, NoteSchema)
def move_my_note(data: dict, note_id: UUID) -> Any:
    """Edit or move a note

    Takes the fields of the create body; the fields present are applied, the others
    stay. A new `contentLanguage` needs a `categoryId` in that language.
    """
    return move_note_in(my_scope(), note_id, data)


@blp.route("/notes/mine/<uuid:note_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_my_note(note_id: UUID) -> None:
    """Delete a note

    The note becomes a tombstone that sync reports with `isDeleted`; no read returns it.
    """
    notes.delete_note(current_viewer(), my_scope(), note_id)
    db.session.commit()


# --- public discovery --------------------------------------------------------------------


@blp.route("/notes/public/bounds", methods=["GET"])
@blp.arguments(BoundsQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=CAPPED_LIST_HEADERS)
def list_public_notes_in_bounds(query: dict) -> Response:
    """List public notes in a map window

    Public notes (and gated notes with no trackable yet), most recent activity first, at
    most the cap (500); `X-Result-Truncated: true` when cut. minLongitude > maxLongitude
    is a window across the antimeridian.
    """
    bounds = cast(Bounds, area_from(query, _config("NEARBY_RADIUS_KM")))  # bounds required
    found = notes.public_notes(
        bounds, content_language=query.get("content_language"), cap=_config("PUBLIC_LIST_CAP")
    )
    return note_list_response(found)


@blp.route("/notes/public/nearby", methods=["GET"])
@blp.arguments(NearbyQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=CAPPED_LIST_HEADERS)
def list_public_notes_nearby(query: dict) -> Response:
    """List public notes near a point

    Within `radiusKm` (default 5) by great-circle distance, most recent activity first, at
    most the cap; `X-Result-Truncated: true` when cut.
    """
    circle = cast(Circle, area_from(query, _config("NEARBY_RADIUS_KM")))  # a point required
    found = notes.public_notes(
        circle, content_language=query.get("content_language"), cap=_config("PUBLIC_LIST_CAP")
    )
    return note_list_response(found)


@blp.route("/notes/public/search", methods=["GET"])
@blp.arguments(PublicSearchQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=CAPPED_LIST_HEADERS)
def search_public_notes(query: dict) -> Response:
    """Search public notes

    The notes public discovery lists (public ones, gated ones with no trackable yet) whose
    title or body match `q`, best match first (a title match before a body match), then
    most recent activity; at most the cap (500), `X-Result-Truncated: true` when cut.
    Optionally one `contentLanguage` and a map window (all four bounds).
    """
    found = notes.search_public_notes(
        query["q"],
        area=cast(Bounds | None, area_from(query, _config("NEARBY_RADIUS_KM"))),
        content_language=query.get("content_language"),
        cap=_config("PUBLIC_LIST_CAP"),
    )
    return note_list_response(found)


@blp.route("/public/profiles/<string:user_name>/notes/nearby", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(ProfileNearbyQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=CAPPED_LIST_HEADERS)
def list_profile_notes_nearby(query: dict, user_name: str) -> Response:
    """List a profile's notes near a point or in a window

    The user's personal notes this caller may open (their own caller sees them all), by
    `latitude`+`longitude` (+`radiusKm`) or the four bounds, most recent activity first,
    capped. `contentLanguage` filters unless `includeAllLanguages` is true.
    """
    return _page_notes(notes.profile_notes, user_name, query)


@blp.route("/public/teams/<string:team_name>/notes/nearby", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(ProfileNearbyQuerySchema, location="query")
@blp.response(200, NoteSchema(many=True), headers=CAPPED_LIST_HEADERS)
def list_team_notes_nearby(query: dict, team_name: str) -> Response:
    """List a team page's notes near a point or in a window

    The profile route's query rules. The team's members see every team note; everyone
    else the ones they may open (public ones, gated ones they unlocked). A team whose
    `pageVisibility` is `MembersOnly` is 404 for non-members. `teamName` is the team's
    name in any case, or its `teamSlug`.
    """
    return _page_notes(teams.public_team_notes, team_name, query)


def _page_notes(find: Callable[..., notes.NoteList], page: str, query: dict) -> Response:
    """A public page's notes (a profile's, a team's) in the query's area: one
    implementation for both, `find` the page's service."""
    found = find(
        current_viewer(),
        page,
        cast(Bounds | Circle, area_from(query, _config("NEARBY_RADIUS_KM"))),
        content_language=query.get("content_language"),
        include_all_languages=query["include_all_languages"],
        cap=_config("PUBLIC_LIST_CAP"),
    )
    return note_list_response(found)


# --- public note pages -------------------------------------------------------------------


@blp.route("/public/notes/<uuid:note_id>", methods=["GET"])
@blp.auth(optional=True)
@blp.response(200, NoteSchema)
def get_public_note(note_id: UUID) -> Any:
    """Get a note page

    404 for a caller who may not open the note (private, gated after its first trackable
    without an unlocked one, deleted), as for a missing note.
    """
    return notes.get_note(current_viewer(), note_id)


@blp.route("/public/notes/<uuid:note_id>/comments", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, CommentSchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS})
def list_note_comments(query: dict, note_id: UUID) -> Any:
    """List a note's comments

    Newest first, at most the cap, or paged with `limit` and `cursor`; 404 when the
    caller may not open the note.
    """
    found = notes.list_comments(
        current_viewer(), note_id, cap=_config("PUBLIC_LIST_CAP"), page=query["page"]
    )
    return list_answer(found)


@blp.route("/public/notes/<uuid:note_id>/comments", methods=["POST"])
@blp.auth()
@blp.arguments(CommentCreateSchema)
@blp.response(201, CommentSchema)
def create_note_comment(data: dict, note_id: UUID) -> Any:
    """Comment on a note

    The note's `commentPolicy` decides: `LoggedInUsers` (any signed-in caller who can open
    it) or `TeamMembers` (its owner and team members; others get 403).
    """
    comment = notes.add_comment(current_viewer(), note_id, body=data["body"])
    db.session.commit()
    return comment


@blp.route("/public/notes/<uuid:note_id>/trackables", methods=["GET"])
@blp.auth(optional=True)
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, NoteTrackableSchema(many=True), headers={**CAPPED_LIST_HEADERS, **LINK_HEADERS})
def list_note_trackables(query: dict, note_id: UUID) -> Any:
    """List a note's trackables

    The trackables attached to the note, most recently attached first, at most the cap,
    or paged with `limit` and `cursor`; 404 when the caller may not open the note.
    """
    found = notes.list_note_trackables(
        current_viewer(), note_id, cap=_config("PUBLIC_LIST_CAP"), page=query["page"]
    )
    return list_answer(found)
