"""Team invite link routes (contract: Team invite link, Teams), on the teams blueprint."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.teams.routes import blp
from app.api.teams.schemas import InviteLinkCreateSchema, InviteLinkSchema, JoinResultSchema
from app.auth import current_viewer
from app.extensions import db
from app.services import teams


@blp.route("/teams/<uuid:team_id>/invite-links", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, InviteLinkSchema(many=True), headers=LINK_HEADERS)
def list_team_invite_links(query: dict, team_id: UUID) -> Any:
    """List a team's invite links

    Admins only. The links not used up yet, newest first; `inviterIsCurrentlyAdmin` false
    marks a link that stopped working because its creator is no longer an admin. Paged
    with `limit` and `cursor`.
    """
    return list_answer(teams.list_links(current_viewer(), team_id, page=query["page"]))


@blp.route("/teams/<uuid:team_id>/invite-links", methods=["POST"])
@blp.auth()
@blp.arguments(InviteLinkCreateSchema)
@blp.response(201, InviteLinkSchema)
def create_team_invite_link(data: dict, team_id: UUID) -> Any:
    """Create an invite link

    Admins only. `isSingleUse` (default false) links work for one join. Share
    `/api/teams/invite-links/{teamSlug}/{code}/join`.
    """
    link = teams.create_link(current_viewer(), team_id, **data)
    db.session.commit()
    return link


@blp.route("/teams/<uuid:team_id>/invite-links/<uuid:invite_link_id>", methods=["DELETE"])
@blp.auth()
@blp.response(204)
def delete_team_invite_link(team_id: UUID, invite_link_id: UUID) -> None:
    """Delete an invite link

    Admins only; joining with it answers 404 from then on.
    """
    teams.delete_link(current_viewer(), team_id, invite_link_id)
    db.session.commit()


@blp.route("/teams/invite-links/<string:team_slug>/<string:invite_code>/join", methods=["POST"])
@blp.auth()
@blp.response(200, JoinResultSchema)
def join_team_with_invite_link(team_slug: str, invite_code: str) -> Any:
    """Join a team with an invite link

    `RequestsAllowed` teams record a `RequestingMembership`; `Open` and `InviteOnly` teams
    make the caller a member. A caller who is already a member (or already requesting)
    changes nothing and does not use up a single-use link. 404 for an unknown, deleted or
    used single-use link, or one whose creator is no longer an admin.
    """
    result = teams.join(current_viewer(), team_slug, invite_code)
    db.session.commit()
    return result
