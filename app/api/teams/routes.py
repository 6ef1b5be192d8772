"""Team routes (contract: Teams; decisions: Teams): the caller's teams, create, settings,
delete. Memberships, invite links and team notes share this blueprint from their modules."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from flask import current_app

from app.api.base import Blueprint
from app.api.mobile import require_supported_mobile_version
from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.teams.schemas import TeamCreateSchema, TeamSchema, TeamSettingsSchema
from app.auth import current_viewer
from app.extensions import db
from app.services import teams

blp = Blueprint("teams", __name__, url_prefix="/api", description="Teams")
# Team management is gated on the mobile build's version (contract: Versioning 2).
blp.before_request(require_supported_mobile_version)


@blp.route("/teams", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, TeamSchema(many=True), headers=LINK_HEADERS)
def list_my_teams(query: dict) -> Any:
    """List my teams

    Every team the caller has a record with: memberships (`role` `Admin` or `Member`),
    pending invitations and pending requests (`membershipStatus`), by title. Paged with
    `limit` and `cursor`.
    """
    return list_answer(teams.list_my_teams(current_viewer(), page=query["page"]))


@blp.route("/teams", methods=["POST"])
@blp.auth()
@blp.arguments(TeamCreateSchema)
@blp.response(201, TeamSchema)
def create_team(data: dict) -> Any:
    """Create a team

    The caller becomes its first admin. `name` is unique ignoring case and separators
    (400 when taken or reserved) and gives `teamSlug`; `externalLinkUrl` is verified
    server-side. Defaults: `joinPolicy` `RequestsAllowed`, `pageVisibility` `Public`,
    `defaultNoteVisibility` `Private`, `title` the name.
    """
    team = teams.create_team(
        current_viewer(), default_language=current_app.config["DEFAULT_CONTENT_LANGUAGE"], **data
    )
    db.session.commit()
    return team


@blp.route("/teams/<uuid:team_id>/settings", methods=["PUT"])
@blp.auth()
@blp.arguments(TeamSettingsSchema)
@blp.response(200, TeamSchema)
def update_team_settings(data: dict, team_id: UUID) -> Any:
    """Change a team's settings

    Admins only (403 for members, 404 for others). The fields present are applied; a
    new `externalLinkUrl` is verified server-side. The name is fixed after creation.
    """
    team = teams.update_settings(current_viewer(), team_id, data)
    db.session.commit()
    return team


@blp.route("/teams/<uuid:team_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_team(team_id: UUID) -> None:
    """Delete a team

    Admins only. No note is lost: the team's notes go back to their authors as private
    personal notes (in their "Notes" category of the note's language). The team's
    categories, memberships and invite links are deleted; its trackables stay with the
    members who activated them.
    """
    teams.delete_team(current_viewer(), team_id)
    db.session.commit()
