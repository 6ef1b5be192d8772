"""Receivers that hang or trickle: every try ends at its deadline and records its own start
and the time it waited; no transaction is open while a try waits, so the owner's changes
and everyone's writes go on meanwhile; timeouts in a row open the subscription's circuit.
Tries run in a worker thread here, each with its own connection, on both databases."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select

from app.extensions import db
from app.models.job import Job, JobState
from app.models.webhook import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookSubscription,
)
from app.platform.jobs import Worker
from app.services.webhooks import delivery as delivery_module
from tests.factories import make_user
from tests.hanging_peers import BlackHole
from tests.jobs import run_jobs
from tests.receivers import deliveries, subscribe


def send_tests(api: Any, owner: Any, hook: dict[str, Any], count: int) -> None:
    client = api.as_user(owner)
    for _ in range(count):
        assert client.post(f"/api/webhooks/{hook['webhookId']}/test").status_code == 202


def subscription(hook: dict[str, Any]) -> WebhookSubscription:
    db.session.expire_all()
    found = db.session.get(WebhookSubscription, uuid.UUID(hook["webhookId"]))
    db.session.rollback()
    return found


def attempts() -> list[WebhookAttempt]:
    db.session.expire_all()
    found = db.session.scalars(select(WebhookAttempt).order_by(WebhookAttempt.attempted_utc))
    return list(found)


@contextmanager
def drain_in_a_thread(app: Any, hole: BlackHole) -> Iterator[None]:
    """A worker thread runs the due drain; the block runs once its try hangs in `hole`."""
    db.session.commit()  # the test's session holds nothing while the worker runs
    failed: list[BaseException] = []

    def work() -> None:
        try:
            Worker(app, name="tests").run_due(limit=1)
        except BaseException as error:  # pragma: no cover - shown by the assertion below
            failed.append(error)

    worker = threading.Thread(target=work)
    worker.start()
    deadline = time.monotonic() + 10
    while hole.connections == 0:
        assert time.monotonic() < deadline, "the try never reached the black hole"
        time.sleep(0.01)
    try:
        yield
    finally:
        worker.join(timeout=30)
        assert not worker.is_alive()
        assert failed == []


def timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


# --- deadlines and records ---------------------------------------------------------------


def test_a_trickling_receiver_is_cut_off_at_the_deadline(app, api, trickler):
    owner = make_user()
    hook = subscribe(api, owner, trickler.url())
    send_tests(api, owner, hook, 1)
    started = time.monotonic()
    run_jobs(app)
    assert time.monotonic() - started < 3  # the whole answer would take 9.6 s
    (attempt,) = deliveries(api, owner, hook["webhookId"])[0]["attempts"]
    assert attempt["succeeded"] is False
    assert attempt["statusCode"] is None
    assert attempt["error"] == "Timed out: no whole answer within 1 seconds."
    assert 1000 <= attempt["latencyMs"] < 2000


def test_each_try_has_its_own_start_and_latency_and_its_back_off_counts_from_its_end(
    app, api, receiver
):
    app.config["WEBHOOK_TIMEOUT_SECONDS"] = 2.0
    receiver.plan.statuses = [500]
    receiver.plan.delay_seconds = 0.3
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    send_tests(api, owner, hook, 3)
    run_jobs(app)
    tries = attempts()
    assert len(tries) == 3
    starts = [attempt.attempted_utc for attempt in tries]
    for earlier, later in itertools.pairwise(starts):
        assert later - earlier >= timedelta(seconds=0.3)  # not the batch's one moment
    assert all(300 <= attempt.latency_ms < 2000 for attempt in tries)
    for attempt in tries:
        delivery = db.session.get(WebhookDelivery, attempt.delivery_id)
        ended = attempt.attempted_utc + timedelta(milliseconds=attempt.latency_ms)
        # The first back-off is drawn from 15 to 30 s, counted from the try's end.
        waits = (delivery.next_try_utc - ended).total_seconds()
        assert 15 - 0.01 <= waits <= 30 + 0.01


def test_a_black_hole_is_timed_out_with_the_time_it_waited(app, api, black_hole):
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 1)
    run_jobs(app)
    (attempt,) = attempts()
    assert attempt.error == "Timed out: no whole answer within 1 seconds."
    assert 1000 <= attempt.latency_ms < 2000


# --- nothing waits on a try in flight ----------------------------------------------------


def test_the_owner_switches_a_webhook_off_during_a_hanging_try(app, api, black_hole):
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 2)
    url = f"/api/webhooks/{hook['webhookId']}"
    with drain_in_a_thread(app, black_hole):
        answer, seconds = timed(lambda: api.as_user(owner).patch(url, json={"isEnabled": False}))
        assert answer.status_code == 200
        assert seconds < 0.5  # not the second the try waits
    states = [one["state"] for one in deliveries(api, owner, hook["webhookId"])]
    assert states == ["cancelled", "cancelled"]  # recorded, not retried
    assert len(attempts()) == 1
    waiting = select(func.count()).where(Job.kind == delivery_module.DRAIN)
    assert db.session.scalar(waiting.where(Job.state == JobState.QUEUED)) == 0


def test_the_owner_deletes_a_webhook_during_a_hanging_try(app, api, black_hole):
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 1)
    url = f"/api/webhooks/{hook['webhookId']}"
    with drain_in_a_thread(app, black_hole):
        answer, seconds = timed(lambda: api.as_user(owner).delete(url))
        assert answer.status_code == 204
        assert seconds < 0.5
    assert attempts() == []  # nothing left to record the try on
    assert db.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0


def test_a_registration_goes_through_during_a_hanging_try(app, api, black_hole):
    """On SQLite the database's write lock is free while a try waits."""
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 1)
    body = {
        "email": "newcomer@example.com",
        "userName": "newcomer",
        "password": "a long pass phrase",
    }
    with drain_in_a_thread(app, black_hole):
        answer, seconds = timed(lambda: api.post("/api/auth/register", json=body))
        assert answer.status_code == 200
        assert seconds < 1


def test_a_second_workers_drain_never_waits_on_a_try_in_flight(app, api, black_hole):
    """Another worker's run of the same subscription (its job's lease ran out) finds the
    delivery claimed and ends at once, with no lock to wait for."""
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 1)
    with drain_in_a_thread(app, black_hole):
        job_id = subscription(hook).drain_job_id
        task = delivery_module.Task(
            id=job_id,
            kind=delivery_module.DRAIN,
            payload={
                "webhookId": hook["webhookId"],
                "due": datetime.now(tz=subscription(hook).created_utc.tzinfo).isoformat(),
            },
            attempt=2,
            config=app.config,
        )
        with app.app_context():
            _, seconds = timed(lambda: delivery_module.drain_job(task))
            db.session.commit()
            db.session.remove()
        assert seconds < 0.5
    assert len(attempts()) == 1  # the rerun sent nothing


# --- the circuit -------------------------------------------------------------------------


def test_timeouts_in_a_row_open_the_circuit_and_one_try_follows_each_pause(
    app, api, black_hole, receiver
):
    app.config["WEBHOOK_TIMEOUT_SECONDS"] = 0.3
    owner = make_user()
    hook = subscribe(api, owner, black_hole.url())
    send_tests(api, owner, hook, 5)
    run_jobs(app)
    assert len(attempts()) == delivery_module.CIRCUIT_TIMEOUTS  # then it paused
    paused = subscription(hook)
    ended = max(one.attempted_utc + timedelta(milliseconds=one.latency_ms) for one in attempts())
    assert paused.paused_until_utc - ended == delivery_module.FIRST_PAUSE
    shown = api.as_user(owner).get(f"/api/webhooks/{hook['webhookId']}").get_json()
    assert shown["pausedUntilUtc"] is not None

    assert run_jobs(app, clock=lambda: paused.paused_until_utc - timedelta(seconds=1)) == 0
    after = paused.paused_until_utc + timedelta(seconds=1)
    run_jobs(app, clock=lambda: after)
    assert len(attempts()) == delivery_module.CIRCUIT_TIMEOUTS + 1  # one try, timed out
    again = subscription(hook)
    assert again.pause_seconds == 2 * delivery_module.FIRST_PAUSE.total_seconds()
    assert again.paused_until_utc > after + delivery_module.FIRST_PAUSE

    # A new address is a fresh start: the circuit closes, the due deliveries go.
    patched = api.as_user(owner).patch(
        f"/api/webhooks/{hook['webhookId']}", json={"url": receiver.url()}
    )
    assert patched.get_json()["pausedUntilUtc"] is None
    run_jobs(app, clock=lambda: after + timedelta(hours=5))
    assert len(receiver.received) == 5


def test_an_answer_closes_the_circuit(app, api, receiver):
    receiver.plan.statuses = [503]
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    half_open = subscription(hook)
    half_open.timeouts_in_a_row = delivery_module.CIRCUIT_TIMEOUTS
    half_open.pause_seconds = 600
    db.session.add(half_open)
    db.session.commit()
    send_tests(api, owner, hook, 1)
    run_jobs(app)
    closed = subscription(hook)
    assert (closed.timeouts_in_a_row, closed.pause_seconds, closed.paused_until_utc) == (0, 0, None)
