"""Webhook subscriptions: create, list, read, change, delete, rotate
the signing secret; and the clean-ups of account and team deletion.

A user subscribes for themselves, or a team admin for the team (`team_id`). A
subscription names event types; none means every type, present and future. Each user,
and each team, has at most WEBHOOKS_PER_OWNER subscriptions: creations are serialised per
owner, so the cap holds under concurrent requests too. The signing secret is shown once,
when it is made (creation, rotation); a rotation keeps the previous secret signing beside
the new one for WEBHOOK_SECRET_OVERLAP_HOURS.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ApiError, ValidationFailed
from app.extensions import db
from app.hooks import DeletionCounts
from app.integrations import outbound
from app.models.base import utcnow
from app.models.user import User
from app.models.webhook import WebhookSubscription
from app.platform.database import lock_for_write
from app.policies import webhooks as policy
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.webhooks import signing

ORDER = Order(WebhookSubscription.created_utc.desc(), WebhookSubscription.id.desc())


class WebhookLimitReached(ApiError):
    code = Code.WEBHOOK_LIMIT_REACHED


@dataclass(frozen=True)
class WebhookView:
    webhook_id: uuid.UUID
    url: str
    event_types: list[str]
    is_enabled: bool
    team_id: uuid.UUID | None
    created_utc: datetime
    updated_utc: datetime
    failing_since_utc: datetime | None
    disabled_reason: str | None
    previous_secret_expires_utc: datetime | None
    paused_until_utc: datetime | None = None  # while its circuit is open
    secret: str | None = None  # only when just made


def outbound_settings(config: Mapping[str, Any]) -> outbound.OutboundSettings:
    """The outbound rules of a delivery: the checked addresses of every outbound call, a
    budget and an answer cap of their own, no redirect followed."""
    return outbound.OutboundSettings(
        timeout_seconds=float(config["WEBHOOK_TIMEOUT_SECONDS"]),
        max_bytes=int(config["WEBHOOK_RESPONSE_MAX_BYTES"]),
        max_redirects=0,
        allowed_ports=frozenset(int(port) for port in config["WEBHOOK_ALLOWED_PORTS"]),
        allow_loopback=bool(config.get("WEBHOOKS_ALLOW_LOOPBACK", False)),
        max_url_length=int(config.get("OUTBOUND_MAX_URL_LENGTH", 2048)),
        ca_bundle=config.get("OUTBOUND_CA_BUNDLE") or None,
        user_agent="LocationNotesWebhooks/1.0",
    )


def check_url(url: str, config: Mapping[str, Any]) -> str:
    """The URL normalized, or 400 `webhook_url_not_allowed`: not http(s), a port not
    allowed, user info, an address that is not public, or a name that can only be
    loopback (`localhost` and names under it). Other names are resolved and checked at
    every delivery (a name may move), never here: an answer must not tell whether an
    internal name resolves."""
    settings = outbound_settings(config)
    try:
        target = outbound.parse_target(url.strip(), settings)
        if target.address is not None:
            outbound.checked_addresses(target, settings)
        elif outbound.names_loopback(target.host) and not settings.allow_loopback:
            raise outbound.BlockedDestination(
                "A localhost name only ever reaches this server, never yours."
            )
    except outbound.OutboundError as error:
        raise ValidationFailed(
            {"url": [error.reason]},
            "The webhook URL is not allowed.",
            code=Code.WEBHOOK_URL_NOT_ALLOWED,
        ) from error
    return target.url


def view(subscription: WebhookSubscription, secret: str | None = None) -> WebhookView:
    return WebhookView(
        webhook_id=subscription.id,
        url=subscription.url,
        event_types=list(subscription.event_types),
        is_enabled=subscription.is_enabled,
        team_id=subscription.team_id,
        created_utc=subscription.created_utc,
        updated_utc=subscription.updated_utc,
        failing_since_utc=subscription.failing_since_utc,
        disabled_reason=subscription.disabled_reason,
        previous_secret_expires_utc=_rotation_end(subscription, utcnow()),
        paused_until_utc=_pause_end(subscription, utcnow()),
        secret=secret,
    )


def _pause_end(subscription: WebhookSubscription, now: datetime) -> datetime | None:
    ends = subscription.paused_until_utc
    return ends if ends is not None and ends > now and subscription.is_enabled else None


def forget_failures(subscription: WebhookSubscription) -> None:
    """A fresh start (switched on again, or a new URL): no failing streak, no circuit."""
    subscription.failing_since_utc = None
    subscription.timeouts_in_a_row = subscription.refused_in_a_row = 0
    subscription.pause_seconds = 0
    subscription.paused_until_utc = None


def _rotation_end(subscription: WebhookSubscription, now: datetime) -> datetime | None:
    ends = subscription.previous_secret_expires_utc
    return ends if subscription.previous_secret_encrypted and ends and ends > now else None


def create_webhook(
    viewer: Viewer,
    config: Mapping[str, Any],
    *,
    url: str,
    event_types: Sequence[str] = (),
    is_enabled: bool = True,
    team_id: uuid.UUID | None = None,
) -> WebhookView:
    """Subscribe `url` for the caller, or for a team they admin; the secret is in the
    answer, once."""
    if team_id is not None:
        policy.require_team_admin(viewer, team_id)
    normalized = check_url(url, config)
    owner = viewer.account
    lock_for_write(db.session, f"webhooks:{team_id or owner.id}", reread=False)
    mine = (
        WebhookSubscription.team_id == team_id
        if team_id is not None
        else (WebhookSubscription.team_id.is_(None))
        & (WebhookSubscription.owner_user_id == owner.id)
    )
    most = int(config["WEBHOOKS_PER_OWNER"])
    if (db.session.scalar(select(func.count()).where(mine)) or 0) >= most:
        whose = "This team has" if team_id is not None else "You have"
        raise WebhookLimitReached(f"{whose} {most} webhooks, the most allowed; delete one first.")
    secret = signing.new_secret()
    now = utcnow()
    subscription = WebhookSubscription(
        owner_user_id=owner.id,
        team_id=team_id,
        url=normalized,
        event_types=sorted(set(event_types)),
        is_enabled=is_enabled,
        secret_encrypted=signing.seal(secret, config),
        created_utc=now,
        updated_utc=now,
    )
    db.session.add(subscription)
    db.session.flush()
    return view(subscription, secret)


def list_webhooks(viewer: Viewer, *, page: Page | None = None) -> Listing[WebhookView]:
    """The caller's own subscriptions and those of the teams they admin, newest first."""
    query = select(WebhookSubscription).where(policy.manage_filter(viewer))
    found = read_list(query, ORDER, page=page, scalars=True)
    return found.with_items([view(one) for one in found.items])


def get_webhook(viewer: Viewer, webhook_id: uuid.UUID) -> WebhookView:
    return view(policy.get_manageable(viewer, webhook_id))


def update_webhook(
    viewer: Viewer,
    webhook_id: uuid.UUID,
    config: Mapping[str, Any],
    *,
    url: str | None = None,
    event_types: Sequence[str] | None = None,
    is_enabled: bool | None = None,
) -> WebhookView:
    """Change what is given. Switching a subscription on again, or a new URL, forgets its
    failures (and closes its circuit). A team admin who changes a team subscription
    becomes the admin answerable for it (whose rights each delivery checks)."""
    subscription = policy.get_manageable(viewer, webhook_id)
    if url is not None:
        normalized = check_url(url, config)
        if normalized != subscription.url:
            forget_failures(subscription)
        subscription.url = normalized
    if event_types is not None:
        subscription.event_types = sorted(set(event_types))
    if is_enabled is not None:
        if is_enabled and not subscription.is_enabled:
            forget_failures(subscription)
            subscription.disabled_reason = None
        subscription.is_enabled = is_enabled
        if not is_enabled:
            subscription.disabled_reason = subscription.disabled_reason or "owner"
    if subscription.team_id is not None:
        subscription.owner_user_id = viewer.account.id
    subscription.updated_utc = utcnow()
    db.session.flush()
    return view(subscription)


def delete_webhook(viewer: Viewer, webhook_id: uuid.UUID) -> None:
    """The subscription goes, with its deliveries and their attempts."""
    db.session.delete(policy.get_manageable(viewer, webhook_id))
    db.session.flush()


def rotate_secret(viewer: Viewer, webhook_id: uuid.UUID, config: Mapping[str, Any]) -> WebhookView:
    """A new secret, shown once; the current one keeps signing beside it for the overlap
    (a rotation during an overlap ends the older secret at once)."""
    subscription = policy.get_manageable(viewer, webhook_id)
    secret = signing.new_secret()
    now = utcnow()
    subscription.previous_secret_encrypted = subscription.secret_encrypted
    subscription.previous_secret_expires_utc = now + timedelta(
        hours=float(config["WEBHOOK_SECRET_OVERLAP_HOURS"])
    )
    subscription.secret_encrypted = signing.seal(secret, config)
    subscription.updated_utc = now
    db.session.flush()
    return view(subscription, secret)


def signing_secrets(
    subscription: WebhookSubscription, config: Mapping[str, Any], now: datetime
) -> list[str]:
    """The secrets that sign now: the current one, and the previous during its overlap."""
    found = [signing.unseal(subscription.secret_encrypted, config)]
    if _rotation_end(subscription, now) is not None:
        assert subscription.previous_secret_encrypted is not None  # noqa: S101 - checked above
        found.append(signing.unseal(subscription.previous_secret_encrypted, config))
    return found


# --- clean-ups ---------------------------------------------------------------------------


def delete_account_webhooks(user: User, counts: DeletionCounts) -> None:
    """Account deletion: the user's subscriptions go, their team subscriptions too (the
    team's other admins subscribe again if they want them)."""
    db.session.execute(
        delete(WebhookSubscription)
        .where(WebhookSubscription.owner_user_id == user.id)
        .execution_options(synchronize_session=False)
    )


def remove_team_webhooks(kind: str, parent_ids: Collection[uuid.UUID]) -> int:
    """A team's deletion takes its subscriptions (app.hooks ParentRemoval)."""
    if kind != "team":
        return 0
    result = db.session.execute(
        delete(WebhookSubscription)
        .where(WebhookSubscription.team_id.in_(list(parent_ids)))
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)
