"""Trackable and group creation (contract: Trackable; Trackable group; Trackables: reads,
creation, groups; Trackable activation, "create with activateImmediately"; Limits;
decisions: Trackable codes, Responses the contract leaves open).

The creator holds the secret from the create response and manages the trackable until
someone activates it; `activateImmediately` activates at creation. `teamId` needs an active
membership of that team (404 otherwise). External links are verified server-side. An
account's creations are held to an hourly budget, against abuse. A group's items are made
with it, and everything is one transaction: any failure leaves nothing behind.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app
from sqlalchemy import exc, func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.trackable import (
    Trackable,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableVisibility,
)
from app.policies import trackables as trackable_policy
from app.services.shared import budgets, links
from app.services.trackables.codes.formats import CodeSettings, byo_problem
from app.services.trackables.codes.guesses import GuessClient
from app.services.trackables.codes.issuing import (
    IssuedCodes,
    add_many_with_codes,
    add_with_codes,
    check_own_secret,
)

GROUP_NAME_TAKEN = "A trackable group with this name already exists."
HOURLY_LIMIT_REACHED = Code.TRACKABLE_HOURLY_LIMIT_REACHED


# TRACKABLES_PER_USER_PER_HOUR in any hour, alone or in groups, one unit per trackable (429
# trackable_hourly_limit_reached with Retry-After). Checked before the link check fetches a page,
# then spent under the account's budget lock just before the insert, so parallel creations cannot
# both take the last units. A creation refused because its own secret is taken counts too; a
# bring-your-own secret passes issuing.check_own_secret (its "taken" refusal spends a guess).
def hourly_budget(config: Mapping[str, Any]) -> budgets.Budget:
    """TRACKABLES_PER_USER_PER_HOUR trackables per account in any hour, single or in
    groups (one unit per trackable)."""
    limit = int(config["TRACKABLES_PER_USER_PER_HOUR"])
    return budgets.Budget(
        "trackable-create",
        limit,
        timedelta(hours=1),
        refusal=f"At most {limit} trackables created per account per hour.",
        code=HOURLY_LIMIT_REACHED,
    )


@dataclass(frozen=True)
class IssuedTrackable:
    """One created (or re-keyed) trackable with its codes, as shown once."""

    trackable_id: uuid.UUID
    name: str
    public_code: str
    secret_code: str
    scan_url: str

    @property
    def qr_payload(self) -> str:
        return self.scan_url

    @classmethod
    def of(
        cls, trackable: Trackable, name: str, codes: IssuedCodes, base_url: str
    ) -> IssuedTrackable:
        return cls(
            trackable.id, name, codes.public_code, codes.secret_code, codes.scan_url(base_url)
        )


@dataclass(frozen=True)
class CreatedTrackable:
    trackable_id: uuid.UUID
    heading: str
    description: str
    items: list[IssuedTrackable]


@dataclass(frozen=True)
class CreatedGroup:
    group: TrackableGroup
    items: list[IssuedTrackable]

    @property
    def trackable_count(self) -> int:
        return len(self.items)


def _open_transaction() -> None:
    """Make sure the request's transaction has begun before the first savepoint.

    SQLite's Python driver begins a transaction only before an INSERT, UPDATE or DELETE:
    a SAVEPOINT sent first opens a transaction of its own, and its RELEASE commits it, so
    a later failure could not take back what was saved. Code issuing uses savepoints
    (a collision is drawn again), so creation opens the transaction itself. PostgreSQL
    needs nothing. The engine does not begin every SQLite transaction this way because a
    plain read would then hold a transaction open, and two requests that read before
    they write would fail on each other instead of waiting.
    """
    connection = db.session.connection()
    if connection.dialect.name != "sqlite":
        return
    driver_connection = connection.connection.driver_connection
    if driver_connection is not None and not driver_connection.in_transaction:
        connection.exec_driver_sql("BEGIN")


def _checked_team(viewer: Viewer, team_id: uuid.UUID | None) -> uuid.UUID | None:
    if team_id is not None:
        trackable_policy.require_trackable_team(viewer, team_id)
    return team_id


def checked_secret_shape(settings: CodeSettings, secret_code: str | None) -> str:
    """The bring-your-own secret, trimmed ("" for a generated one), refused when malformed
    before anything else is done (the link check fetches a page). Its uniqueness is
    `check_own_secret`'s."""
    custom = (secret_code or "").strip()
    problem = byo_problem(settings, custom) if custom else None
    if problem:
        raise ValidationFailed({"secretCode": [problem]})
    return custom


def create_trackable(
    viewer: Viewer,
    *,
    settings: CodeSettings,
    base_url: str,
    guess_client: GuessClient,
    config: Mapping[str, Any],
    name: str,
    description: str | None = None,
    external_link_url: str | None = None,
    external_link_description: str | None = None,
    external_link_append_public_trackable_code: bool = False,
    team_id: uuid.UUID | None = None,
    visibility: TrackableVisibility = TrackableVisibility.ALWAYS_VISIBLE,
    activate_immediately: bool = False,
    secret_code: str | None = None,
) -> CreatedTrackable:
    """One trackable with its codes (secret generated, or the caller's own). `guess_client`
    is the guess budget of the caller's address, `config` the settings of the budgets."""
    user_id = viewer.account.id
    team_id = _checked_team(viewer, team_id)
    custom = checked_secret_shape(settings, secret_code)
    budget = hourly_budget(config)
    budgets.check(budget, str(user_id))  # refused before the link check fetches a page
    url, link_description = links.checked_link(external_link_url, external_link_description)
    budgets.spend_or_refuse(budget, str(user_id))  # decides, under the account's lock
    if custom:
        check_own_secret(settings, custom, guess_client, config)
    now = utcnow()
    _open_transaction()
    trackable = Trackable(
        name=name.strip(),
        description=description or "",
        visibility=visibility,
        external_link_url=url,
        external_link_description=link_description,
        external_link_append_public_code=external_link_append_public_trackable_code,
        created_by_user_id=user_id,
        team_id=team_id,
        owner_user_id=user_id if activate_immediately else None,
        activated_utc=now if activate_immediately else None,
        created_utc=now,
        updated_utc=now,
        last_activity_utc=now,
    )
    codes = add_with_codes(trackable, settings, secret_code=secret_code)
    item = IssuedTrackable.of(trackable, trackable.name, codes, base_url)
    return CreatedTrackable(trackable.id, trackable.name, trackable.description, [item])


# A group is named with letters, numbers and spaces; its slug (lowercase, spaces as underscores) is
# unique and fixed.
def group_slug(name: str) -> str:
    """Lowercase, words joined by underscores."""
    return "_".join(name.lower().split())


def _checked_slug(name: str) -> str:
    """The slug of a new group's name, unless taken (400 on `name`)."""
    slug = group_slug(name)
    taken = select(func.count()).select_from(TrackableGroup).where(TrackableGroup.slug == slug)
    if db.session.scalar(taken):
        raise ValidationFailed({"name": [GROUP_NAME_TAKEN]})
    return slug


def _add_group(group: TrackableGroup) -> None:
    """Insert the group; a concurrent creation may have taken its slug a moment ago."""
    try:
        with db.session.begin_nested():
            db.session.add(group)
    except exc.IntegrityError:
        raise ValidationFailed({"name": [GROUP_NAME_TAKEN]}) from None


# Items are unactivated unless activateImmediately, which copies the group's defaults onto each item
# (an activated item keeps its own title and description).
def create_group(
    viewer: Viewer,
    *,
    settings: CodeSettings,
    base_url: str,
    max_count: int,
    name: str,
    trackable_count: int,
    description: str | None = None,
    default_trackable_title: str | None = None,
    default_trackable_description: str | None = None,
    default_external_link_url: str | None = None,
    default_external_link_description: str | None = None,
    default_external_link_append_public_trackable_code: bool = False,
    default_status_message: str | None = None,
    team_id: uuid.UUID | None = None,
    visibility: TrackableVisibility = TrackableVisibility.ALWAYS_VISIBLE,
    activate_immediately: bool = False,
    watch_group_activity_when_created: bool = False,
) -> CreatedGroup:
    """A group of `trackable_count` (1 to `max_count`) new trackables, each with its own
    codes."""
    user_id = viewer.account.id
    if not 1 <= trackable_count <= max_count:
        raise ValidationFailed({"trackableCount": [f"Must be between 1 and {max_count}."]})
    team_id = _checked_team(viewer, team_id)
    budget = hourly_budget(current_app.config)
    budgets.check(budget, str(user_id), trackable_count)  # before the link check
    name = " ".join(name.split())
    slug = _checked_slug(name)
    url, link_description = links.checked_link(
        default_external_link_url, default_external_link_description
    )
    budgets.spend_or_refuse(budget, str(user_id), trackable_count)
    now = utcnow()
    group = TrackableGroup(
        name=name,
        slug=slug,
        description=description or "",
        default_trackable_title=(default_trackable_title or "").strip(),
        default_trackable_description=default_trackable_description or "",
        default_external_link_url=url,
        default_external_link_description=link_description,
        default_external_link_append_public_code=default_external_link_append_public_trackable_code,
        default_status_message=default_status_message or "",
        visibility=visibility,
        owner_user_id=user_id,
        team_id=team_id,
        created_utc=now,
        updated_utc=now,
        last_activity_utc=now,
    )
    _open_transaction()
    _add_group(group)
    if watch_group_activity_when_created:
        db.session.add(TrackableGroupWatch(user_id=user_id, group_id=group.id))
    title = group.default_trackable_title or group.name
    made = [_group_item(group, user_id, activate_immediately, now) for _ in range(trackable_count)]
    issued = add_many_with_codes(made, settings)
    items = [
        IssuedTrackable.of(trackable, trackable.name or title, codes, base_url)
        for trackable, codes in zip(made, issued, strict=True)
    ]
    db.session.flush()
    return CreatedGroup(group, items)


def _group_item(
    group: TrackableGroup, user_id: uuid.UUID, activate: bool, now: datetime
) -> Trackable:
    """An item of a new group: blank (showing the group's defaults) until activated; an
    item activated at creation takes the defaults as its own."""
    trackable = Trackable(
        group_id=group.id,
        name="",
        description="",
        status_message="",
        visibility=group.visibility,
        created_by_user_id=user_id,
        team_id=group.team_id,
        created_utc=now,
        updated_utc=now,
        last_activity_utc=now,
    )
    if activate:
        trackable.owner_user_id = user_id
        trackable.activated_utc = now
        trackable.name = group.default_trackable_title or group.name
        trackable.description = group.default_trackable_description
        trackable.status_message = group.default_status_message
        trackable.external_link_url = group.default_external_link_url
        trackable.external_link_description = group.default_external_link_description
        trackable.external_link_append_public_code = group.default_external_link_append_public_code
    return trackable
