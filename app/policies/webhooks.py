"""Who may manage a webhook subscription, and whether one may receive an event now.

- A personal subscription is its owner's alone; a team's is the business of the team's
  current admins (any of them may see and change it). Anyone else gets 404: a
  subscription's existence is not revealed.
- At each delivery attempt, rights are checked again by the owner's account alone (their
  teams and account unlocks, never a request's cookie): for a team subscription the
  owner must still be an admin of the team, and either way still hear of the event as
  their inbox would. A subscription that lost its rights sends nothing.
"""

from __future__ import annotations

import uuid

from sqlalchemy import or_
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer
from app.error_codes import Code
from app.errors import NotFound
from app.extensions import db
from app.models.event import Event
from app.models.user import User
from app.models.webhook import WebhookSubscription
from app.policies import teams as team_policy
from app.policies import trackables as trackable_policy


def can_manage(viewer: Viewer, subscription: WebhookSubscription) -> bool:
    if subscription.team_id is not None:
        return viewer.is_admin_of(subscription.team_id)
    return viewer.user_id is not None and viewer.user_id == subscription.owner_user_id


def manage_filter(viewer: Viewer) -> ColumnElement[bool]:
    """`can_manage` as SQL, for the list."""
    admin_of = [team for team in viewer.team_roles if viewer.is_admin_of(team)]
    personal = (WebhookSubscription.team_id.is_(None)) & (
        WebhookSubscription.owner_user_id == viewer.user_id
    )
    if not admin_of:
        return personal
    return or_(personal, WebhookSubscription.team_id.in_(admin_of))


def get_manageable(viewer: Viewer, webhook_id: uuid.UUID) -> WebhookSubscription:
    """The subscription, or 404 for one the caller may not manage."""
    found = db.session.get(WebhookSubscription, webhook_id)
    if (
        found is not None
        and found.team_id is not None
        and team_policy.team_for(found.team_id) is None
    ):
        found = None  # the team was deleted meanwhile, its subscriptions with it (team_for)
    if found is None or not can_manage(viewer, found):
        raise NotFound("Webhook not found.", code=Code.WEBHOOK_NOT_FOUND)
    return found


def require_team_admin(viewer: Viewer, team_id: uuid.UUID) -> None:
    """Only a team's admins subscribe for it (403 for its members, 404 outside)."""
    team_policy.require_admin(viewer, team_id)


def receiving_owner(subscription: WebhookSubscription, event: Event) -> User | None:
    """The account whose rights a delivery rests on, while they hold for `event` (checked
    at each attempt): the owner of a personal subscription; for a team's, the admin who
    set it up, while still an admin of the team the event is about. None when they do not
    hold. Whether that account may hear of the event is the events area's rule, the same
    as its inbox's (services.webhooks asks it)."""
    owner = db.session.get(User, subscription.owner_user_id)
    if owner is None:
        return None
    if subscription.team_id is not None:
        viewer = trackable_policy.account_viewer(owner)
        if event.team_id != subscription.team_id or not viewer.is_admin_of(subscription.team_id):
            return None
    return owner
