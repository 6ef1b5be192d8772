"""Deliveries: which subscriptions hear of an event, the job that sends one, its retries,
the switch-off after three failing days, redelivery, test messages and the clean-up.

- Audience. `on_event` runs after an event's fan-out, in its transaction: a personal
  subscription hears what its owner's inbox just received (the same audience rules: a
  notification written for its owner); a team subscription hears the events of its team.
  Each matching enabled subscription gets one delivery, unique per (subscription, event).
- Sending. A subscription has at most one waiting job, `webhooks.drain` (`wake` names it
  on the subscription, under its row lock), which sends its due deliveries in batches
  over one kept-alive connection (`outbound.Poster`: every POST checked as any outbound
  call, no redirect followed, a short budget, a capped read), signed as Standard Webhooks
  1.0 says, with the delivery's id as `webhook-id` on every try, each batch's tries
  recorded and committed together. The owner's rights are checked again before each try
  (policies.webhooks.receiving_owner, then the events area's may_still_hear).
- Retries. A 2xx answer succeeds; anything else (3xx included), or no answer, is a failed
  try: recorded, and the delivery is due again after a back-off (exponential, with
  jitter, up to four hours apart) until about a day after it was made; the drain's last
  look wakes a job for the next due try. Each try is recorded (status, latency, a capped
  excerpt of the answer, the error).
- Switch-off. A subscription whose tries have all failed for WEBHOOK_DISABLE_AFTER_DAYS is
  switched off and its owner mailed.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.orm import selectinload
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer
from app.errors import Conflict, NotFound
from app.extensions import db
from app.integrations import outbound
from app.models.base import utcnow
from app.models.event import Event, Notification
from app.models.user import User
from app.models.webhook import (
    ATTEMPT_ERROR_MAX_LENGTH,
    EXCERPT_MAX_LENGTH,
    DeliveryState,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSubscription,
)
from app.platform.database import begin_immediate
from app.platform.jobs import JobKind, Task, enqueue
from app.platform.mail import Mail, deliver
from app.policies import webhooks as policy
from app.services import events
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.webhooks import signing
from app.services.webhooks.subscriptions import outbound_settings, signing_secrets

DRAIN = "webhooks.drain"
DRAIN_BATCH = 50  # tries recorded and committed together
DRAIN_BUDGET = timedelta(seconds=30)  # then the job hands over to a new one
DISABLED_MAIL = "webhooks.disabled_mail"
TEST_EVENT = "webhook.test"
RETRY_WINDOW = timedelta(days=1)
MAX_TRIES = 16  # the back-off reaches a day after about 14 (with the jitter's mean)
DELIVERY_ORDER = Order(WebhookDelivery.created_utc.desc(), WebhookDelivery.id.desc())


# --- who hears of an event ---------------------------------------------------------------


def listens_to(subscription: WebhookSubscription, event_type: str) -> bool:
    return not subscription.event_types or event_type in subscription.event_types


def payload(event: Event) -> dict[str, Any]:
    """The body of an event's deliveries: its type, time, ids and public fields."""
    ids = {
        "eventId": event.id,
        "trackableId": event.trackable_id,
        "groupId": event.group_id,
        "noteId": event.note_id,
        "teamId": event.team_id,
    }
    data = {name: str(value) for name, value in ids.items() if value is not None}
    data.update(event.fields)
    return {"type": event.event_type, "timestamp": _iso(event.created_utc), "data": data}


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def on_event(event: Event, written: Sequence[Any]) -> None:
    """The event listener (app.hooks): a delivery for each subscription that hears of it:
    a personal one when its owner's inbox did (the inbox rows of the event, read by a
    subquery, so thousands of hearers are one statement), a team's for its team's
    events."""
    hears: list[ColumnElement[bool]] = []
    if written:
        inbox = select(Notification.user_id).where(Notification.event_id == event.id)
        hears.append(
            (WebhookSubscription.team_id.is_(None)) & (WebhookSubscription.owner_user_id.in_(inbox))
        )
    if event.team_id is not None:
        hears.append(WebhookSubscription.team_id == event.team_id)
    if not hears:
        return
    already = select(WebhookDelivery.subscription_id).where(WebhookDelivery.event_id == event.id)
    found = db.session.scalars(
        select(WebhookSubscription)
        .where(or_(*hears), WebhookSubscription.is_enabled, WebhookSubscription.id.not_in(already))
        .order_by(WebhookSubscription.id)  # their locks (`wake`) in one order everywhere
    ).all()
    body = payload(event)
    for subscription in found:
        if not listens_to(subscription, event.event_type):
            continue
        if subscription.team_id is not None and not _may_receive(subscription, event):
            continue
        _new_delivery(subscription, event.event_type, body, event_id=event.id)


def _new_delivery(
    subscription: WebhookSubscription,
    event_type: str,
    body: dict[str, Any],
    *,
    event_id: uuid.UUID | None = None,
) -> WebhookDelivery:
    now = utcnow()
    delivery = WebhookDelivery(
        id=uuid.uuid4(),
        subscription_id=subscription.id,
        event_id=event_id,
        event_type=event_type,
        payload=body,
        state=DeliveryState.PENDING,
        created_utc=now,
        retry_until_utc=now + RETRY_WINDOW,
        next_try_utc=now,
    )
    db.session.add(delivery)
    wake(subscription, now)
    return delivery


def wake(subscription: WebhookSubscription, at: datetime) -> None:
    """Make sure the subscription's drain job is due by `at`. The subscription row is
    locked first, so two writers never both miss or both add a job; a running drain
    keeps its mark until its last look (`drain_job`), which sees what this commits."""
    locked = _locked(subscription.id)
    if locked is None:  # pragma: no cover - deleted under us: its deliveries went with it
        return
    waiting = locked.drain_due_utc if locked.drain_job_id is not None else None
    if waiting is not None and waiting <= at:
        return  # one is due by then already
    delay = at - utcnow()
    job = enqueue(
        DRAIN,
        {"webhookId": str(locked.id), "due": at.isoformat()},
        delay=delay if delay > timedelta() else None,
    )
    locked.drain_job_id, locked.drain_due_utc = job.id, at


# --- the job -----------------------------------------------------------------------------


def drain_job(task: Task) -> None:
    """Send a subscription's due deliveries (the job `webhooks.drain`): in batches of
    DRAIN_BATCH, each batch's tries recorded and committed together, over one kept-alive
    connection, until none is due or DRAIN_BUDGET is spent; then wake again for the
    next due try. A crash in a batch leaves its deliveries pending: they are sent again,
    with the same `webhook-id` (at least once, as Standard Webhooks expects)."""
    subscription_id = uuid.UUID(task.payload["webhookId"])
    due = datetime.fromisoformat(task.payload["due"])
    subscription = db.session.get(WebhookSubscription, subscription_id)
    if subscription is None or subscription.drain_job_id != task.id:
        return  # deleted, or another job was named (an earlier one, or this one's rerun)
    config = task.config
    ends = time.monotonic() + DRAIN_BUDGET.total_seconds()
    with outbound.Poster(outbound_settings(config)) as poster:
        while True:
            now = max(utcnow(), due)  # the job runs for the moment it was due
            batch = db.session.scalars(
                select(WebhookDelivery)
                .where(
                    WebhookDelivery.subscription_id == subscription_id,
                    WebhookDelivery.state == DeliveryState.PENDING,
                    WebhookDelivery.next_try_utc <= now,
                )
                .order_by(WebhookDelivery.next_try_utc, WebhookDelivery.id)
                .limit(DRAIN_BATCH)
                .with_for_update(skip_locked=True)
            ).all()
            if not batch:
                break
            subscription = db.session.get_one(WebhookSubscription, subscription_id)
            for delivery in batch:
                _try(poster, subscription, delivery, config, now)
            db.session.commit()
            if time.monotonic() > ends:
                break  # what is still due wakes the next job at once (`_rest`)
    _rest(subscription_id, task.id)


def _locked(subscription_id: uuid.UUID) -> WebhookSubscription | None:
    """The subscription read afresh and locked for this transaction: FOR NO KEY UPDATE on
    PostgreSQL (the deliveries' inserts, which share its key, never wait on it), the
    database's write lock on SQLite."""
    connection = db.session.connection()
    if connection.dialect.name == "sqlite":
        begin_immediate(connection)
    return db.session.scalars(
        select(WebhookSubscription)
        .where(WebhookSubscription.id == subscription_id)
        .with_for_update(key_share=True)
        .execution_options(populate_existing=True)
    ).one_or_none()


def _rest(subscription_id: uuid.UUID, job_id: uuid.UUID) -> None:
    """The drain's last look, under the subscription's lock: its mark is taken off, and
    the next due try gets a job (at once when the budget ran out with tries still due)."""
    subscription = _locked(subscription_id)
    if subscription is None:  # pragma: no cover - deleted while it sent
        return
    if subscription.drain_job_id == job_id:
        subscription.drain_job_id = subscription.drain_due_utc = None
    following = db.session.scalar(
        select(func.min(WebhookDelivery.next_try_utc)).where(
            WebhookDelivery.subscription_id == subscription_id,
            WebhookDelivery.state == DeliveryState.PENDING,
        )
    )
    if following is not None:
        wake(subscription, following)


def _try(
    poster: outbound.Poster,
    subscription: WebhookSubscription,
    delivery: WebhookDelivery,
    config: Mapping[str, Any],
    now: datetime,
) -> None:
    """One try at a delivery: checked, signed, sent, recorded."""
    if not _may_send(subscription, delivery):
        delivery.state, delivery.next_try_utc = DeliveryState.CANCELLED, None
        return
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    headers = signing.headers(
        str(delivery.id), int(now.timestamp()), body, signing_secrets(subscription, config, now)
    )
    attempt = _send(poster, subscription.url, body, headers)
    attempt.delivery_id = delivery.id
    attempt.attempted_utc = now
    db.session.add(attempt)
    delivery.attempt_count += 1
    delivery.last_attempt_utc = now
    if attempt.succeeded:
        delivery.state, delivery.next_try_utc = DeliveryState.SUCCEEDED, None
        subscription.failing_since_utc = None
        return
    _after_failure(subscription, delivery, config, now)


def _may_send(subscription: WebhookSubscription, delivery: WebhookDelivery) -> bool:
    if not subscription.is_enabled:
        return False
    if delivery.event_id is None:
        return delivery.event_type == TEST_EVENT
    event = db.session.get(Event, delivery.event_id)
    return event is not None and _may_receive(subscription, event)


def _may_receive(subscription: WebhookSubscription, event: Event) -> bool:
    """The subscription's rights hold now and its account hears of the event as its inbox
    would (services.events.may_still_hear: one rule for inbox, mail and webhooks)."""
    owner = policy.receiving_owner(subscription, event)
    return owner is not None and events.may_still_hear(event, owner)


def _send(poster: outbound.Poster, url: str, body: bytes, headers: Mapping[str, str]) -> Any:
    try:
        posted = poster.post(url, body, headers)
    except outbound.OutboundError as error:
        return WebhookAttempt(error=error.reason[:ATTEMPT_ERROR_MAX_LENGTH], succeeded=False)
    excerpt = posted.body.decode("utf-8", errors="replace")[:EXCERPT_MAX_LENGTH]
    succeeded = 200 <= posted.status < 300
    return WebhookAttempt(
        status_code=posted.status,
        latency_ms=posted.latency_ms,
        response_excerpt=excerpt,
        error=None if succeeded else f"The endpoint answered HTTP {posted.status}.",
        succeeded=succeeded,
    )


def _after_failure(
    subscription: WebhookSubscription,
    delivery: WebhookDelivery,
    config: Mapping[str, Any],
    now: datetime,
) -> None:
    if subscription.failing_since_utc is None:
        subscription.failing_since_utc = now
    elif now - subscription.failing_since_utc >= timedelta(
        days=float(config["WEBHOOK_DISABLE_AFTER_DAYS"])
    ):
        subscription.is_enabled = False
        subscription.disabled_reason = "failing"
        delivery.state, delivery.next_try_utc = DeliveryState.FAILED, None
        enqueue(DISABLED_MAIL, {"webhookId": str(subscription.id)})
        return
    delay = RETRIES.retry_delay(delivery.attempt_count)
    if delivery.attempt_count >= MAX_TRIES or now + delay > delivery.retry_until_utc:
        delivery.state, delivery.next_try_utc = DeliveryState.FAILED, None
        return
    delivery.next_try_utc = now + delay  # the drain's last look wakes for it


def disabled_mail_job(task: Task) -> None:
    """Tell the owner that their subscription was switched off (job `webhooks.disabled_mail`)."""
    subscription = db.session.get(WebhookSubscription, uuid.UUID(task.payload["webhookId"]))
    if subscription is None or subscription.is_enabled:
        return  # deleted, or switched on again meanwhile
    owner = db.session.get(User, subscription.owner_user_id)
    if owner is None or not owner.email:
        return
    days = task.config["WEBHOOK_DISABLE_AFTER_DAYS"]
    deliver(
        Mail(
            to=owner.email,
            subject="A webhook was switched off",
            text=(
                f"Your Location Notes webhook to {subscription.url} (id {subscription.id}) has "
                f"failed every delivery for {days:g} days, so it was switched off.\n\n"
                "Fix the endpoint, then switch it on again (PATCH /api/webhooks/"
                f'{subscription.id} with {{"isEnabled": true}}). Deliveries missed meanwhile '
                "can be sent again from its delivery list.\n"
            ),
        )
    )


# The back-off between failed tries of one delivery (exponential, with jitter, from half a
# minute to four hours), in the jobs' own terms.
RETRIES = JobKind(
    "webhooks.retries",
    lambda _task: None,
    first_retry=timedelta(seconds=30),
    longest_retry=timedelta(hours=4),
)
DRAIN_KIND = JobKind(
    DRAIN,
    drain_job,
    max_attempts=10,  # runs cut short by a crash; failed tries are the deliveries' own
    max_age=RETRY_WINDOW * 2,
    lease=timedelta(minutes=2),  # above DRAIN_BUDGET and a batch's time budget
)
JOB_KINDS = (
    DRAIN_KIND,
    JobKind(DISABLED_MAIL, disabled_mail_job, max_attempts=30, max_age=timedelta(days=1)),
)


# --- the owner's actions -----------------------------------------------------------------


def list_deliveries(
    viewer: Viewer, webhook_id: uuid.UUID, *, page: Page | None = None, cap: int | None = None
) -> Listing[WebhookDelivery]:
    """A subscription's deliveries, newest first, each with its tries."""
    subscription = policy.get_manageable(viewer, webhook_id)
    query = (
        select(WebhookDelivery)
        .where(WebhookDelivery.subscription_id == subscription.id)
        .options(selectinload(WebhookDelivery.attempts))
    )
    return read_list(query, DELIVERY_ORDER, page=page, cap=cap, scalars=True)


def redeliver(viewer: Viewer, webhook_id: uuid.UUID, delivery_id: uuid.UUID) -> WebhookDelivery:
    """Send a settled delivery again (same `webhook-id`, retried for another day); 409 while
    it is still pending or when the subscription is switched off."""
    subscription = policy.get_manageable(viewer, webhook_id)
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.subscription_id != subscription.id:
        raise _delivery_not_found()
    if not subscription.is_enabled:
        raise Conflict("Switch the webhook on first.", code="webhook_disabled")
    if delivery.state is DeliveryState.PENDING:
        raise Conflict("The delivery is still being tried.", code="webhook_delivery_pending")
    now = utcnow()
    delivery.state = DeliveryState.PENDING
    delivery.retry_until_utc, delivery.next_try_utc = now + RETRY_WINDOW, now
    wake(subscription, now)
    db.session.flush()
    return delivery


def send_test(viewer: Viewer, webhook_id: uuid.UUID) -> WebhookDelivery:
    """A `webhook.test` message, delivered (and retried) as any event would be."""
    subscription = policy.get_manageable(viewer, webhook_id)
    if not subscription.is_enabled:
        raise Conflict("Switch the webhook on first.", code="webhook_disabled")
    body = {
        "type": TEST_EVENT,
        "timestamp": _iso(utcnow()),
        "data": {"webhookId": str(subscription.id)},
    }
    delivery = _new_delivery(subscription, TEST_EVENT, body)
    db.session.flush()
    return delivery


def _delivery_not_found() -> NotFound:
    return NotFound("Delivery not found.", code="webhook_delivery_not_found")


# --- keeping -----------------------------------------------------------------------------


def remove_old_deliveries(now: datetime, config: Mapping[str, Any]) -> int:
    """Deliveries (with their tries) older than WEBHOOK_DELIVERIES_KEEP_DAYS, once settled;
    run on the worker's clean-up path. How many went."""
    before = now - timedelta(days=float(config["WEBHOOK_DELIVERIES_KEEP_DAYS"]))
    result = db.session.execute(
        delete(WebhookDelivery)
        .where(
            and_(
                WebhookDelivery.created_utc < before,
                WebhookDelivery.state != DeliveryState.PENDING,
            )
        )
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)
