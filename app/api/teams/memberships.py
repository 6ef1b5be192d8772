"""Team membership routes (contract: Teams, Team membership; decisions: Teams), on the
teams blueprint. The state machine is services.memberships."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.api.pages import LINK_HEADERS, PageQuerySchema, list_answer
from app.api.teams.routes import blp
from app.api.teams.schemas import InviteSchema, MembershipSchema
from app.auth import current_viewer
from app.extensions import db
from app.services import teams

# 409: the membership's current state does not allow the operation (services.memberships).
STATE_CONFLICT = "CONFLICT"


@blp.route("/teams/<uuid:team_id>/memberships", methods=["GET"])
@blp.auth()
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, MembershipSchema(many=True), headers=LINK_HEADERS)
def list_team_memberships(query: dict, team_id: UUID) -> Any:
    """List a team's memberships

    Members see the active members; admins also the pending invitations and requests.
    404 for anyone who is not an active member. Paged with `limit` and `cursor`.
    """
    return list_answer(teams.list_memberships(current_viewer(), team_id, page=query["page"]))


@blp.route("/teams/<uuid:team_id>/memberships/request", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def request_team_membership(team_id: UUID) -> Any:
    """Ask to join a team

    `Open` teams make the caller a member at once, `RequestsAllowed` teams record a
    `RequestingMembership` for an admin to approve, `InviteOnly` teams refuse (403). A
    caller with a pending invitation becomes a member. 409 when the caller already has a
    request or a membership; 404 for a members-only team the caller has no record with.
    """
    record = teams.request_membership(current_viewer(), team_id)
    db.session.commit()
    return record


@blp.route("/teams/<uuid:team_id>/memberships/invite", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.arguments(InviteSchema)
@blp.response(200, MembershipSchema)
def invite_to_team(data: dict, team_id: UUID) -> Any:
    """Invite a user to a team

    Admins only. Records an invitation (`Invited`) for the user to accept or refuse; a
    user who had asked to join becomes a member. 400 on `userName` when no user has it,
    409 when the user is already invited or a member.
    """
    record = teams.invite(current_viewer(), team_id, data["user_name"])
    db.session.commit()
    return record


def _answer(team_id: UUID, membership_id: UUID, operation: Any) -> Any:
    record = teams.answer(current_viewer(), team_id, membership_id, operation)
    db.session.commit()
    return record


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>/accept", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def accept_team_invitation(team_id: UUID, membership_id: UUID) -> Any:
    """Accept an invitation

    Only the invited user (403 for admins); the record becomes `Member`. 409 unless it is
    an invitation.
    """
    return _answer(team_id, membership_id, "accept")


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>/refuse", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def refuse_team_invitation(team_id: UUID, membership_id: UUID) -> Any:
    """Refuse an invitation

    Only the invited user. The answer carries status `Refused`; the record ends, so the
    user may be invited again. 409 unless it is an invitation.
    """
    return _answer(team_id, membership_id, "refuse")


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>/approve", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def approve_team_membership(team_id: UUID, membership_id: UUID) -> Any:
    """Approve a membership request

    Admins only; the request becomes `Member`. 409 unless it is a request.
    """
    return _answer(team_id, membership_id, "approve")


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>/deny", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def deny_team_membership(team_id: UUID, membership_id: UUID) -> Any:
    """Deny a membership request

    Admins only. The answer carries status `Denied`; the record ends, so the user may ask
    again. 409 unless it is a request.
    """
    return _answer(team_id, membership_id, "deny")


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>/promote-admin", methods=["POST"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(200, MembershipSchema)
def promote_team_admin(team_id: UUID, membership_id: UUID) -> Any:
    """Make a member an admin

    Admins only; answers the membership with `isAdmin` true. 409 for a pending record or
    someone who is already an admin.
    """
    return _answer(team_id, membership_id, "promote-admin")


@blp.route("/teams/<uuid:team_id>/memberships/<uuid:membership_id>", methods=["DELETE"])
@blp.auth()
@blp.alt_response(409, response=STATE_CONFLICT)
@blp.response(204)
def delete_team_membership(team_id: UUID, membership_id: UUID) -> None:
    """Leave a team, or remove a membership

    The user ends their own record (leave, withdraw a request, refuse an invitation); an
    admin ends anyone's (remove a member, withdraw an invitation). The team's last admin
    cannot go (409): promote another member first, or delete the team. A removed member
    loses access at their next request.
    """
    teams.remove(current_viewer(), team_id, membership_id)
    db.session.commit()
