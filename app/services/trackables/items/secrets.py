"""Secret rotation (beyond the contract; decisions: Trackable codes, Access sessions for
secret codes): a manager whose secret code or QR token leaked gets new ones.

The old secret and QR token stop matching at once, every active secret session of the
trackable ends, and so do the account unlocks of everyone who does not manage it: they have
to present the new secret again. The public code stays.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select

from app.auth import Viewer
from app.error_codes import Code
from app.extensions import db
from app.models.base import utcnow
from app.models.team import MembershipStatus, TeamMembership
from app.models.trackable import Trackable, TrackableAccessSession, TrackableUnlock
from app.policies import trackables as policy
from app.services import events
from app.services.shared import budgets
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import GuessClient
from app.services.trackables.codes.issuing import check_own_secret, replace_secrets
from app.services.trackables.items.creation import IssuedTrackable, checked_secret_shape


# SECRET_ROTATE_LIMIT rotations per account in SECRET_ROTATE_WINDOW_MINUTES (429 beyond), a budget
# counted in the database. A bring-your-own secret follows the rules of creation, and its "taken"
# refusal spends a guess (issuing.check_own_secret).
def rotation_budget(config: Mapping[str, Any]) -> budgets.Budget:
    """SECRET_ROTATE_LIMIT rotations per account in SECRET_ROTATE_WINDOW_MINUTES."""
    return budgets.Budget.from_config(
        "secret-rotate",
        config,
        "SECRET_ROTATE_LIMIT",
        "SECRET_ROTATE_WINDOW_MINUTES",
        refusal="This account rotated too many secret codes.",
        code=Code.SECRET_ROTATION_LIMIT_REACHED,
    )


def _manager_ids(trackable: Trackable) -> set[uuid.UUID]:
    """Who manages the trackable (policies.trackables.can_manage, for every user)."""
    if not trackable.is_activated:
        return {trackable.created_by_user_id} if trackable.created_by_user_id else set()
    if trackable.team_id is None:
        return {trackable.owner_user_id} if trackable.owner_user_id else set()
    members = db.session.execute(
        select(TeamMembership.user_id, TeamMembership.is_admin).where(
            TeamMembership.team_id == trackable.team_id,
            TeamMembership.status == MembershipStatus.MEMBER,
        )
    ).all()
    return {
        user_id for user_id, is_admin in members if is_admin or user_id == trackable.owner_user_id
    }


def rotate_secret(
    viewer: Viewer,
    trackable_id: uuid.UUID,
    *,
    settings: CodeSettings,
    base_url: str,
    guess_client: GuessClient,
    config: Mapping[str, Any],
    secret_code: str | None = None,
) -> IssuedTrackable:
    """New secret (generated, or the caller's own) and QR token: 404 when the trackable is
    not visible, 403 `trackable_request_rejected` for a viewer who does not manage it, 429
    over the account's rotation limit (or, for its own secret, the address's guess
    budget)."""
    trackable = policy.get_visible(viewer, trackable_id)
    policy.require_manage(viewer, trackable)
    custom = checked_secret_shape(settings, secret_code)
    budgets.spend_or_refuse(rotation_budget(config), str(viewer.account.id))
    if custom:
        check_own_secret(settings, custom, guess_client, config)
    codes = replace_secrets(trackable, settings, secret_code=custom)
    db.session.execute(
        delete(TrackableAccessSession).where(TrackableAccessSession.trackable_id == trackable.id)
    )
    db.session.execute(
        delete(TrackableUnlock).where(
            TrackableUnlock.trackable_id == trackable.id,
            TrackableUnlock.user_id.not_in(_manager_ids(trackable)),
        )
    )
    trackable.updated_utc = utcnow()
    events.record(events.EventType.SECRET_ROTATED, trackable, actor_id=viewer.user_id)
    db.session.flush()
    return IssuedTrackable.of(trackable, trackable.name, codes, base_url)
