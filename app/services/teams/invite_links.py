"""Team invite links (contract: Team invite link, Teams; decisions: Teams).

Admins list, create and delete their team's links. A link works while it exists, its
creator is still an admin of the team, and, when single use, nobody has used it; otherwise
joining answers 404, as for a code that never existed. Joining follows the membership state
machine (services.memberships, operation `join`); a join that changes nothing does not use
up a single-use link.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import select, update

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.base import utcnow
from app.models.team import (
    INVITE_CODE_ALPHABET,
    INVITE_CODE_LENGTH,
    MembershipStatus,
    Team,
    TeamInviteLink,
    TeamMembership,
    team_slug,
)
from app.policies import teams as team_policy
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.teams import memberships


# 26 characters of lowercase base32 drawn with secrets (130 bits): guessing one is hopeless, and the
# join route also needs the team's slug.
def new_code() -> str:
    return "".join(secrets.choice(INVITE_CODE_ALPHABET) for _ in range(INVITE_CODE_LENGTH))


def _admin_ids(team_id: uuid.UUID) -> set[uuid.UUID]:
    return set(
        db.session.scalars(
            select(TeamMembership.user_id).where(
                TeamMembership.team_id == team_id,
                TeamMembership.status == MembershipStatus.MEMBER,
                TeamMembership.is_admin.is_(True),
            )
        )
    )


@dataclass(frozen=True)
class InviteLinkView:
    """An invite link as an admin sees it: whether they made it, and whether it works
    (its creator is still an admin)."""

    link: TeamInviteLink
    team: Team
    created_by_current_user: bool
    inviter_is_currently_admin: bool


@dataclass(frozen=True)
class JoinResult:
    team_slug: str
    membership_status: MembershipStatus


def _views(viewer: Viewer, team: Team, links: Iterable[TeamInviteLink]) -> list[InviteLinkView]:
    admins = _admin_ids(team.id)
    return [
        InviteLinkView(
            link=link,
            team=team,
            created_by_current_user=link.created_by_user_id == viewer.user_id,
            inviter_is_currently_admin=link.created_by_user_id in admins,
        )
        for link in links
    ]


LIST_ORDER = Order(TeamInviteLink.created_utc.desc(), TeamInviteLink.id)


def list_links(
    viewer: Viewer, team_id: uuid.UUID, *, page: Page | None = None
) -> Listing[InviteLinkView]:
    """The team's links that have not been used up, newest first (admins): all of them,
    or one `page`."""
    team = team_policy.require_admin(viewer, team_id)
    query = select(TeamInviteLink).where(
        TeamInviteLink.team_id == team_id, TeamInviteLink.used_utc.is_(None)
    )
    found = read_list(query, LIST_ORDER, page=page, scalars=True)
    return found.with_items(_views(viewer, team, found.items))


def create_link(viewer: Viewer, team_id: uuid.UUID, *, is_single_use: bool) -> InviteLinkView:
    """A new link with a fresh code (admins)."""
    team = team_policy.require_admin(viewer, team_id)
    link = TeamInviteLink(
        team_id=team.id,
        code=new_code(),
        created_by_user_id=viewer.user_id,
        is_single_use=is_single_use,
        created_utc=utcnow(),
    )
    db.session.add(link)
    db.session.flush()
    return _views(viewer, team, [link])[0]


def delete_link(viewer: Viewer, team_id: uuid.UUID, invite_link_id: uuid.UUID) -> None:
    """Delete a link of the team (admins); it stops working at once."""
    team_policy.require_admin(viewer, team_id)
    link = db.session.get(TeamInviteLink, invite_link_id)
    if link is None or link.team_id != team_id:
        raise NotFound("Invite link not found.", code=Code.INVITE_LINK_NOT_FOUND)
    db.session.delete(link)
    db.session.flush()


def _working_link(team_slug_text: str, code: str) -> TeamInviteLink:
    link = db.session.scalar(
        select(TeamInviteLink)
        .join(Team, Team.id == TeamInviteLink.team_id)
        .where(TeamInviteLink.code == code.strip().lower(), Team.slug == team_slug(team_slug_text))
    )
    works = (
        link is not None
        and not (link.is_single_use and link.used_utc is not None)
        and link.created_by_user_id in _admin_ids(link.team_id)
    )
    if link is None or not works:
        raise NotFound("Invite link not found.", code=Code.INVITE_LINK_NOT_FOUND)
    return link


# One conditional UPDATE (... WHERE used_utc IS NULL, checked by its row count), so of two
# concurrent joins exactly one wins; the other gets 404.
def claim_single_use(link: TeamInviteLink, user_id: uuid.UUID) -> bool:
    """Mark a single-use link used, unless someone else did first (True: it is ours)."""
    claimed = db.session.execute(
        update(TeamInviteLink)
        .where(TeamInviteLink.id == link.id, TeamInviteLink.used_utc.is_(None))
        .values(used_utc=utcnow(), used_by_user_id=user_id)
        .execution_options(synchronize_session=False)
    )
    return claimed.rowcount == 1  # type: ignore[attr-defined]


def join(viewer: Viewer, team_slug_text: str, code: str) -> JoinResult:
    """Join (or ask to join) the link's team; returns `teamSlug` and `membershipStatus`."""
    user_id = viewer.account.id
    link = _working_link(team_slug_text, code)
    team = team_policy.team_for(link.team_id)  # a deletion of the team first, or after this
    if team is None:
        raise NotFound("Invite link not found.", code=Code.INVITE_LINK_NOT_FOUND)
    own = team_policy.own_membership(viewer, link.team_id)
    following = memberships.next_status("join", own, team)
    if own is not None and following == own.status:
        return JoinResult(team.slug, own.status)  # nothing changes
    if link.is_single_use and not claim_single_use(link, user_id):
        raise NotFound("Invite link not found.", code=Code.INVITE_LINK_NOT_FOUND)
    record = memberships.apply(team, own, user_id, "join", actor_id=user_id)
    return JoinResult(team.slug, record.status)
