"""Webhooks: a user's, or a team's, subscription of a URL to event types; each
delivery of an event to it (its `webhook-id` is the delivery's id, the same on every
try); and every attempt at sending it (kept 30 days with its delivery).

The signing secret is stored encrypted (services.webhooks.signing), never in clear; while
a rotation runs, the previous secret is kept, encrypted too, until it expires.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.models.base import Base, new_id, utcnow
from app.models.enums import stored_enum

WEBHOOK_URL_MAX_LENGTH = 2048
EXCERPT_MAX_LENGTH = 1000
ATTEMPT_ERROR_MAX_LENGTH = 500


class DeliveryState(StrEnum):
    PENDING = "pending"  # waiting for its next try
    SUCCEEDED = "succeeded"  # a 2xx answer
    FAILED = "failed"  # tries ran out (about a day)
    CANCELLED = "cancelled"  # not sent: the subscription was switched off, or lost its rights


class WebhookSubscription(Base):
    __tablename__ = "webhook_subscriptions"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    # A personal subscription's user; for a team's, the admin who created or last changed
    # it, whose rights each delivery checks again. Their account's deletion removes it.
    owner_user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    team_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("teams.id", ondelete="CASCADE"), default=None, index=True
    )
    url: Mapped[str] = mapped_column(String(WEBHOOK_URL_MAX_LENGTH))
    # Event type names; empty means every type, present and future.
    event_types: Mapped[list[str]] = mapped_column(JSON, default=list)
    is_enabled: Mapped[bool] = mapped_column(default=True)
    secret_encrypted: Mapped[str] = mapped_column(Text)
    previous_secret_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    previous_secret_expires_utc: Mapped[datetime | None] = mapped_column(default=None)
    # Since when every attempt has failed (None after a success); three days of it
    # switch the subscription off ("failing").
    failing_since_utc: Mapped[datetime | None] = mapped_column(default=None)
    disabled_reason: Mapped[str | None] = mapped_column(String(50), default=None)
    # Tries in a row that timed out; past WEBHOOK_CIRCUIT_TIMEOUTS the circuit opens:
    # no try until `paused_until_utc`, then one, and a pause twice as long if it times
    # out again (`pause_seconds` is the last pause; 0 while the circuit is closed).
    timeouts_in_a_row: Mapped[int] = mapped_column(default=0, server_default="0")
    paused_until_utc: Mapped[datetime | None] = mapped_column(default=None)
    pause_seconds: Mapped[int] = mapped_column(default=0, server_default="0")
    # Tries in a row refused before connecting (not a public address, or the name does
    # not resolve); WEBHOOK_REFUSED_SWITCH_OFF of them switch the subscription off.
    refused_in_a_row: Mapped[int] = mapped_column(default=0, server_default="0")
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)
    updated_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # The job that sends its due deliveries next (services.webhooks: one per subscription
    # at a time), and when it is due; None when none waits.
    drain_job_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    drain_due_utc: Mapped[datetime | None] = mapped_column(default=None)


class WebhookDelivery(Base):
    """One event (or test message) for one subscription: the body is fixed when it is
    made, so every try sends the same bytes under the same `webhook-id`."""

    __tablename__ = "webhook_deliveries"
    # An event once per subscription, even when its fan-out runs twice (test messages
    # have no event, and any number of them may exist).
    __table_args__ = (UniqueConstraint("subscription_id", "event_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    subscription_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_subscriptions.id", ondelete="CASCADE")
    )
    event_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("events.id", ondelete="SET NULL"), default=None, index=True
    )
    event_type: Mapped[str] = mapped_column(String(50))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[DeliveryState] = mapped_column(
        stored_enum(DeliveryState, 20), default=DeliveryState.PENDING
    )
    attempt_count: Mapped[int] = mapped_column(default=0)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow, index=True)  # the clean-up
    last_attempt_utc: Mapped[datetime | None] = mapped_column(default=None)
    # Failed tries are repeated until then (about a day after it was made or redelivered).
    retry_until_utc: Mapped[datetime] = mapped_column(default=utcnow)
    # When a pending delivery is tried next (None once settled).
    next_try_utc: Mapped[datetime | None] = mapped_column(default=None)

    attempts: Mapped[list[WebhookAttempt]] = relationship(
        order_by="WebhookAttempt.attempted_utc",
        cascade="all, delete-orphan",
        passive_deletes=True,
    )


class WebhookAttempt(Base):
    """One try at sending a delivery: what the endpoint answered, or why it could not."""

    __tablename__ = "webhook_attempts"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    delivery_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    attempted_utc: Mapped[datetime] = mapped_column(default=utcnow)
    status_code: Mapped[int | None] = mapped_column(default=None)
    latency_ms: Mapped[int] = mapped_column(default=0)
    response_excerpt: Mapped[str] = mapped_column(String(EXCERPT_MAX_LENGTH), default="")
    error: Mapped[str | None] = mapped_column(String(ATTEMPT_ERROR_MAX_LENGTH), default=None)
    succeeded: Mapped[bool] = mapped_column(default=False)


# A subscription's due tries, oldest first (what its drain job sends).
Index(
    "ix_webhook_deliveries_due",
    WebhookDelivery.subscription_id,
    WebhookDelivery.state,
    WebhookDelivery.next_try_utc,
)
# A subscription's deliveries, newest first (its list, and the 30-day clean-up by time).
Index(
    "ix_webhook_deliveries_list",
    WebhookDelivery.subscription_id,
    WebhookDelivery.created_utc,
    WebhookDelivery.id,
)
