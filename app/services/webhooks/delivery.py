"""Deliveries: which subscriptions hear of an event, the job that sends them, retries, the
circuit of a receiver that keeps timing out, the switch-offs, redelivery, test messages
and the clean-up.

Each matching enabled subscription gets one delivery per event. A subscription has at most
one waiting drain job, and sends with no transaction open, so the owner's edits never wait
on a try. The owner's rights are checked again before each try. A 2xx answer succeeds;
anything else (3xx included), or no answer, is a failed try, due again after a back-off
until about a day after the delivery was made. A receiver that keeps timing out is paused;
one that keeps refusing, or failing for days, is switched off and its owner mailed.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import selectinload
from sqlalchemy.sql.elements import ColumnElement

from app.auth import Viewer
from app.error_codes import Code
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
from app.platform.wire import wire_time
from app.policies import webhooks as policy
from app.services import events
from app.services.shared import budgets
from app.services.shared.pages import Listing, Order, Page, read_list
from app.services.webhooks import signing
from app.services.webhooks.subscriptions import outbound_settings, signing_secrets

DRAIN = "webhooks.drain"
LANE = "webhooks"
# A drain starts a try only if the try's deadline ends within its budget; then the job
# hands over to a new one. Its lease is the budget and room for its short transactions.
DRAIN_BUDGET = timedelta(seconds=20)
DRAIN_LEASE = DRAIN_BUDGET + timedelta(seconds=40)
DRAIN_BATCH = 50  # deliveries claimed together
TRY_MARGIN = timedelta(seconds=5)  # a claimed delivery is due again after the budget and this
RECORD_EVERY = 0.25  # seconds between records of successful tries (a failure: at once)
CIRCUIT_TIMEOUTS = 3
FIRST_PAUSE = timedelta(minutes=1)
LONGEST_PAUSE = timedelta(hours=1)
REFUSED_SWITCH_OFF = 3
# What a failed try's record says; a refusal never tells whether a name resolves, nor to
# what kind of address.
REFUSED = "Not a public address, or the name does not resolve."
REFUSED_FAILURE, TIMEOUT_FAILURE, CONNECT_FAILURE, ANSWER_FAILURE = (
    "refused",
    "timeout",
    "connect",
    "answer",
)
# Why a subscription was switched off (`disabledReason`).
OWNER, FAILING, UNREACHABLE = "owner", "failing", "unreachable"
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
    return {"type": event.event_type, "timestamp": wire_time(event.created_utc), "data": data}


# Runs after an event's fan-out, in its transaction: a personal subscription hears what its owner's
# inbox just received (a notification written for its owner); a team subscription hears the events
# of its team. One delivery per (subscription, event).
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
    """Make sure the subscription's drain job is due by `at` (or by the end of its pause,
    while its circuit is open). The subscription row is locked first, so two writers
    never both miss or both add a job; a running drain keeps its mark until its last look
    (`_rest`), which sees what this commits. The job's fair key is the owner: one
    account's drains take one thread of the lane at a time."""
    locked = _locked(subscription.id)
    if locked is None:  # pragma: no cover - deleted under us: its deliveries went with it
        return
    if locked.paused_until_utc is not None:
        at = max(at, locked.paused_until_utc)
    waiting = locked.drain_due_utc if locked.drain_job_id is not None else None
    if waiting is not None and waiting <= at:
        return  # one is due by then already
    delay = at - utcnow()
    job = enqueue(
        DRAIN,
        {"webhookId": str(locked.id), "due": at.isoformat()},
        delay=delay if delay > timedelta() else None,
        fair_key=f"user:{locked.owner_user_id}",
    )
    locked.drain_job_id, locked.drain_due_utc = job.id, at


# --- the job -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Claimed:
    """A delivery taken for one try, with all the try needs: nothing of the database is
    held while it is sent."""

    delivery_id: uuid.UUID
    url: str
    body: bytes
    secrets: list[str]


@dataclass(frozen=True)
class Outcome:
    """What one try came to: when it started, how long it took (a timeout: the time it
    waited), and the answer or why there was none (`failure`: None on success, else
    REFUSED_FAILURE, TIMEOUT_FAILURE, CONNECT_FAILURE or ANSWER_FAILURE)."""

    started_utc: datetime
    latency_ms: int
    status_code: int | None = None
    excerpt: str = ""
    error: str | None = None
    failure: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None


# webhooks.drain (wake names it on the subscription, under its row lock) runs in the worker's
# webhooks lane, where one owner's drains run one at a time (JobKind.fair). It takes one delivery at
# a time in a short transaction, sends it with no transaction open, and records the outcome in
# another. Every try has one deadline for resolving, connecting, sending and reading
# (outbound.Poster, which also checks the addresses and follows no redirect); a try starts only if
# it can end within DRAIN_BUDGET, from which the job's lease follows. Signed as Standard Webhooks
# 1.0 says, with the delivery's id as webhook-id on every try. Rights:
# policies.webhooks.receiving_owner, then the events area's may_still_hear.
def drain_job(task: Task) -> None:
    """Send a subscription's due deliveries (the job `webhooks.drain`): a batch at a time
    claimed in a short transaction, each sent with no transaction open, their outcomes
    recorded in short transactions of their own (after every failed try, else every
    RECORD_EVERY), until none is due, the circuit opens, the subscription goes or is
    switched off, or the next try could not end within DRAIN_BUDGET; then wake again for
    the next due try. A worker killed during a try leaves the batch's unrecorded
    deliveries claimed: they are sent again, with the same `webhook-id`, once the claim
    (the budget and TRY_MARGIN) has run out (at least once, as Standard Webhooks
    expects)."""
    subscription_id = uuid.UUID(task.payload["webhookId"])
    due = datetime.fromisoformat(task.payload["due"])
    subscription = db.session.get(WebhookSubscription, subscription_id)
    named = subscription is not None and subscription.drain_job_id == task.id
    db.session.rollback()  # nothing read here is held while sending
    if not named:
        return  # deleted, or another job was named (an earlier one, or this one's rerun)
    config = task.config
    settings = try_settings(config)
    ends = time.monotonic() + DRAIN_BUDGET.total_seconds()

    def now() -> datetime:
        return max(utcnow(), due)  # the job runs for the moment it was due

    with outbound.Poster(settings) as poster:
        while time.monotonic() + settings.timeout_seconds <= ends:  # before every try
            batch = _claim(subscription_id, now(), config)
            db.session.commit()
            if batch is None:
                break
            if batch and not _send(poster, subscription_id, batch, ends, now, config):
                break
    _rest(subscription_id, task.id)


def try_settings(config: Mapping[str, Any]) -> outbound.OutboundSettings:
    """The outbound rules of a try, its deadline at most half the drain's budget (so a
    run always has room for its first try)."""
    settings = outbound_settings(config)
    deadline = min(settings.timeout_seconds, DRAIN_BUDGET.total_seconds() / 2)
    return dataclasses.replace(settings, timeout_seconds=deadline)


def _locked(subscription_id: uuid.UUID) -> WebhookSubscription | None:
    """The subscription read afresh and locked for this (short) transaction: FOR NO KEY
    UPDATE on PostgreSQL (the deliveries' inserts, which share its key, never wait on it),
    the database's write lock on SQLite."""
    connection = db.session.connection()
    if connection.dialect.name == "sqlite":
        begin_immediate(connection)
    return db.session.scalars(
        select(WebhookSubscription)
        .where(WebhookSubscription.id == subscription_id)
        .with_for_update(key_share=True)
        .execution_options(populate_existing=True)
    ).one_or_none()


def _claim(
    subscription_id: uuid.UUID, now: datetime, config: Mapping[str, Any]
) -> list[Claimed] | None:
    """The oldest DRAIN_BATCH due deliveries, taken for this run: none is due again until
    the budget and TRY_MARGIN have passed (the run records or releases each before then).
    One whose owner may no longer hear of it, or whose subscription is switched off, is
    cancelled instead. None when nothing may be tried now (none due, the circuit open, the
    subscription gone)."""
    subscription = _locked(subscription_id)
    if subscription is None or _paused(subscription, now):
        return None
    found = db.session.scalars(
        select(WebhookDelivery)
        .where(
            WebhookDelivery.subscription_id == subscription_id,
            WebhookDelivery.state == DeliveryState.PENDING,
            WebhookDelivery.next_try_utc <= now,
        )
        .order_by(WebhookDelivery.next_try_utc, WebhookDelivery.id)
        .limit(DRAIN_BATCH)
    ).all()
    if not found:
        return None
    secrets = signing_secrets(subscription, config, now) if subscription.is_enabled else []
    batch = []
    for delivery in found:
        if not _may_send(subscription, delivery):
            delivery.state, delivery.next_try_utc = DeliveryState.CANCELLED, None
            continue
        delivery.next_try_utc = now + DRAIN_BUDGET + TRY_MARGIN
        body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
        batch.append(Claimed(delivery.id, subscription.url, body, secrets))
    return batch


def _send(
    poster: outbound.Poster,
    subscription_id: uuid.UUID,
    batch: list[Claimed],
    ends: float,
    now: Callable[[], datetime],
    config: Mapping[str, Any],
) -> bool:
    """Try the claimed deliveries in turn while a try can end within the budget; True
    when the drain may claim more (the subscription is still there, on, not paused, and
    the budget allows). What was not tried is released (due again at once)."""
    deadline = poster.settings.timeout_seconds
    done: list[tuple[Claimed, Outcome]] = []
    recorded_at = time.monotonic()
    tried = 0
    go_on = True
    for claimed in batch:
        if time.monotonic() + deadline > ends:
            go_on = False
            break
        outcome = _post(poster, claimed, now(), deadline)
        done.append((claimed, outcome))
        tried += 1
        if not outcome.succeeded or time.monotonic() - recorded_at >= RECORD_EVERY:
            go_on = _record(subscription_id, done, config)
            db.session.commit()
            done, recorded_at = [], time.monotonic()
            if not go_on:
                break
    untried = [claimed.delivery_id for claimed in batch[tried:]]
    if done or untried:
        still = _record(subscription_id, done, config, release=untried)
        db.session.commit()
        go_on = go_on and still
    return go_on


def _paused(subscription: WebhookSubscription, now: datetime) -> bool:
    paused = subscription.paused_until_utc
    return paused is not None and paused > now


def _post(
    poster: outbound.Poster, claimed: Claimed, started: datetime, deadline_seconds: float
) -> Outcome:
    """One try: signed for the moment it starts, sent, timed (a failure too)."""
    headers = signing.headers(
        str(claimed.delivery_id), int(started.timestamp()), claimed.body, claimed.secrets
    )
    clock = time.monotonic()

    def waited() -> int:
        return int((time.monotonic() - clock) * 1000)

    try:
        posted = poster.post(claimed.url, claimed.body, headers)
    except (outbound.BlockedDestination, outbound.Unresolvable):
        return Outcome(started, waited(), error=REFUSED, failure=REFUSED_FAILURE)
    except outbound.TimedOut:
        error = f"Timed out: no whole answer within {deadline_seconds:g} seconds."
        return Outcome(started, waited(), error=error, failure=TIMEOUT_FAILURE)
    except outbound.TlsFailed:
        error = "Could not connect: the TLS certificate could not be verified."
        return Outcome(started, waited(), error=error, failure=CONNECT_FAILURE)
    except outbound.OutboundError:
        return Outcome(started, waited(), error="Could not connect.", failure=CONNECT_FAILURE)
    excerpt = posted.body.decode("utf-8", errors="replace")[:EXCERPT_MAX_LENGTH]
    if 200 <= posted.status < 300:
        return Outcome(started, posted.latency_ms, posted.status, excerpt)
    return Outcome(
        started,
        posted.latency_ms,
        posted.status,
        excerpt,
        error=f"The endpoint answered HTTP {posted.status}.",
        failure=ANSWER_FAILURE,
    )


def _record(
    subscription_id: uuid.UUID,
    outcomes: Sequence[tuple[Claimed, Outcome]],
    config: Mapping[str, Any],
    *,
    release: Sequence[uuid.UUID] = (),
) -> bool:
    """Tries' outcomes, in a short transaction: each attempt, its delivery's next step and
    the subscription's counts; and the claimed deliveries not tried (`release`), due again
    at once. Nothing when the subscription went meanwhile (its deliveries went with it); a
    subscription switched off meanwhile has a failed delivery cancelled, not retried, and
    those not tried cancelled.
    Whether tries may go on: the subscription is still there, on and not paused."""
    subscription = _locked(subscription_id)
    if subscription is None:
        return False  # deleted while it was tried: nothing left to record it on
    deliveries = (
        {
            delivery.id: delivery
            for delivery in db.session.scalars(
                select(WebhookDelivery)
                .where(WebhookDelivery.id.in_([claimed.delivery_id for claimed, _ in outcomes]))
                .execution_options(populate_existing=True)
            )
        }
        if outcomes
        else {}
    )
    with db.session.no_autoflush:  # the attempts go in one INSERT at the commit
        for claimed, outcome in outcomes:
            delivery = deliveries.get(claimed.delivery_id)
            if delivery is not None and delivery.state is DeliveryState.PENDING:
                _record_try(subscription, delivery, outcome, config)
    if release:
        # Due again at once; cancelled at once when the subscription was switched off.
        after = (
            {"next_try_utc": utcnow()}
            if subscription.is_enabled
            else {"state": DeliveryState.CANCELLED, "next_try_utc": None}
        )
        db.session.execute(
            update(WebhookDelivery)
            .where(
                WebhookDelivery.id.in_(release),
                WebhookDelivery.state == DeliveryState.PENDING,
            )
            .values(**after)
            .execution_options(synchronize_session=False)
        )
    return subscription.is_enabled and not _paused(subscription, utcnow())


def _record_try(
    subscription: WebhookSubscription,
    delivery: WebhookDelivery,
    outcome: Outcome,
    config: Mapping[str, Any],
) -> None:
    db.session.add(
        WebhookAttempt(
            delivery_id=delivery.id,
            attempted_utc=outcome.started_utc,
            status_code=outcome.status_code,
            latency_ms=outcome.latency_ms,
            response_excerpt=outcome.excerpt,
            error=None if outcome.error is None else outcome.error[:ATTEMPT_ERROR_MAX_LENGTH],
            succeeded=outcome.succeeded,
        )
    )
    delivery.attempt_count += 1
    delivery.last_attempt_utc = outcome.started_utc
    ended = outcome.started_utc + timedelta(milliseconds=outcome.latency_ms)
    _count(subscription, outcome, ended)
    if outcome.succeeded:
        delivery.state, delivery.next_try_utc = DeliveryState.SUCCEEDED, None
        subscription.failing_since_utc = None
        return
    if not subscription.is_enabled:
        delivery.state, delivery.next_try_utc = DeliveryState.CANCELLED, None
        return
    if subscription.refused_in_a_row >= REFUSED_SWITCH_OFF:
        _switch_off(subscription, UNREACHABLE)
        delivery.state, delivery.next_try_utc = DeliveryState.FAILED, None
        return
    _after_failure(subscription, delivery, config, ended)


def _count(subscription: WebhookSubscription, outcome: Outcome, ended: datetime) -> None:
    """The subscription's tries in a row that were refused, and that timed out: the
    circuit opens at CIRCUIT_TIMEOUTS (or opens again, for twice as long, when the one
    try after a pause times out too); any answer closes it."""
    refused = outcome.failure == REFUSED_FAILURE
    subscription.refused_in_a_row = subscription.refused_in_a_row + 1 if refused else 0
    if outcome.failure != TIMEOUT_FAILURE:
        subscription.timeouts_in_a_row = 0
        subscription.pause_seconds = 0
        subscription.paused_until_utc = None
        return
    subscription.timeouts_in_a_row += 1
    if subscription.timeouts_in_a_row >= CIRCUIT_TIMEOUTS:
        pause = min(
            LONGEST_PAUSE, max(FIRST_PAUSE, timedelta(seconds=2 * subscription.pause_seconds))
        )
        subscription.pause_seconds = int(pause.total_seconds())
        subscription.paused_until_utc = ended + pause


def _switch_off(subscription: WebhookSubscription, reason: str) -> None:
    subscription.is_enabled = False
    subscription.disabled_reason = reason
    enqueue(DISABLED_MAIL, {"webhookId": str(subscription.id)})


def _rest(subscription_id: uuid.UUID, job_id: uuid.UUID) -> None:
    """The drain's last look, under the subscription's lock: its mark is taken off, and
    the next due try gets a job (at once when the budget ran out with tries still due; at
    the end of a pause while the circuit is open)."""
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


# A failed try is recorded with its own start and latency; the delivery is due again after a
# back-off counted from the try's end (exponential, with jitter, up to four hours apart) until about
# a day after it was made. Circuit: CIRCUIT_TIMEOUTS timeouts in a row pause the subscription's
# tries (FIRST_PAUSE, doubling to LONGEST_PAUSE); after a pause one try is made; any answer closes
# it. Switch-off: tries refused before connecting (not a public address, or a name that does not
# resolve: one reason for both) REFUSED_SWITCH_OFF times in a row, or all failing for
# WEBHOOK_DISABLE_AFTER_DAYS.
def _after_failure(
    subscription: WebhookSubscription,
    delivery: WebhookDelivery,
    config: Mapping[str, Any],
    now: datetime,
) -> None:
    """A failed try ended at `now`: the delivery is due again after its back-off, counted
    from then, or has failed; a subscription failing for WEBHOOK_DISABLE_AFTER_DAYS is
    switched off."""
    if subscription.failing_since_utc is None:
        subscription.failing_since_utc = now
    elif now - subscription.failing_since_utc >= timedelta(
        days=float(config["WEBHOOK_DISABLE_AFTER_DAYS"])
    ):
        _switch_off(subscription, FAILING)
        delivery.state, delivery.next_try_utc = DeliveryState.FAILED, None
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
    if subscription.disabled_reason == UNREACHABLE:
        why = (
            f"could not be reached {REFUSED_SWITCH_OFF} times in a row: its address is not a "
            "public one, or its name does not resolve"
        )
    else:
        why = f"has failed every delivery for {task.config['WEBHOOK_DISABLE_AFTER_DAYS']:g} days"
    deliver(
        Mail(
            to=owner.email,
            subject="A webhook was switched off",
            text=(
                f"Your Location Notes webhook to {subscription.url} (id {subscription.id}) "
                f"{why}, so it was switched off.\n\n"
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
    lease=DRAIN_LEASE,
    lane=LANE,
    fair=True,  # one owner's drains one at a time
)
JOB_KINDS = (
    DRAIN_KIND,
    JobKind(
        DISABLED_MAIL,
        disabled_mail_job,
        max_attempts=30,
        max_age=timedelta(days=1),
        lane="events",
    ),
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


def manual_send_budgets(config: Mapping[str, Any]) -> tuple[budgets.Budget, budgets.Budget]:
    """The hourly limits on test messages and redeliveries: per account, per webhook."""
    per_account = int(config["WEBHOOK_MANUAL_SENDS_PER_HOUR"])
    per_webhook = int(config["WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR"])
    return (
        budgets.Budget(
            "webhook_sends",
            per_account,
            timedelta(hours=1),
            f"You have asked for {per_account} test messages and redeliveries in the last "
            "hour, the most allowed.",
            code=Code.WEBHOOK_SENDS_LIMITED,
        ),
        budgets.Budget(
            "webhook_sends_per_webhook",
            per_webhook,
            timedelta(hours=1),
            f"This webhook has had {per_webhook} test messages and redeliveries in the last "
            "hour, the most allowed.",
            code=Code.WEBHOOK_SENDS_LIMITED,
        ),
    )


def _spend_manual_send(
    viewer: Viewer, subscription: WebhookSubscription, config: Mapping[str, Any]
) -> None:
    """Count a test message or redelivery against the account's and the webhook's hourly
    limits, or 429 `webhook_sends_limited` (with Retry-After) and nothing counted. Under
    both subjects' locks (the account's first), until the request commits."""
    per_account, per_webhook = manual_send_budgets(config)
    spenders = [(per_account, str(viewer.account.id)), (per_webhook, str(subscription.id))]
    for budget, subject in spenders:
        budgets.hold(f"{budget.name}:{subject}")
    now = utcnow()
    for (budget, _), wait in zip(spenders, budgets.waits(spenders, now), strict=True):
        if wait is not None:
            raise budget.exceeded(wait)
    budgets.spend_all(spenders, now)


def redeliver(
    viewer: Viewer, webhook_id: uuid.UUID, delivery_id: uuid.UUID, config: Mapping[str, Any]
) -> WebhookDelivery:
    """Send a settled delivery again (same `webhook-id`, retried for another day); 409 while
    it is still pending or when the subscription is switched off, 429 past the hourly
    limits (`manual_send_budgets`)."""
    subscription = policy.get_manageable(viewer, webhook_id)
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.subscription_id != subscription.id:
        raise _delivery_not_found()
    if not subscription.is_enabled:
        raise Conflict("Switch the webhook on first.", code=Code.WEBHOOK_DISABLED)
    if delivery.state is DeliveryState.PENDING:
        raise Conflict("The delivery is still being tried.", code=Code.WEBHOOK_DELIVERY_PENDING)
    _spend_manual_send(viewer, subscription, config)
    now = utcnow()
    delivery.state = DeliveryState.PENDING
    delivery.retry_until_utc, delivery.next_try_utc = now + RETRY_WINDOW, now
    wake(subscription, now)
    db.session.flush()
    return delivery


def send_test(viewer: Viewer, webhook_id: uuid.UUID, config: Mapping[str, Any]) -> WebhookDelivery:
    """A `webhook.test` message, delivered (and retried) as any event would be; 429 past
    the hourly limits (`manual_send_budgets`)."""
    subscription = policy.get_manageable(viewer, webhook_id)
    if not subscription.is_enabled:
        raise Conflict("Switch the webhook on first.", code=Code.WEBHOOK_DISABLED)
    _spend_manual_send(viewer, subscription, config)
    body = {
        "type": TEST_EVENT,
        "timestamp": wire_time(utcnow()),
        "data": {"webhookId": str(subscription.id)},
    }
    delivery = _new_delivery(subscription, TEST_EVENT, body)
    db.session.flush()
    return delivery


def _delivery_not_found() -> NotFound:
    return NotFound("Delivery not found.", code=Code.WEBHOOK_DELIVERY_NOT_FOUND)


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
