"""A worker killed (SIGKILL) in the middle of a webhook delivery, with real processes: the
receiver holds the first POST open while the test kills the worker; that try was never
recorded, so once the drain job's short lease and the try's claim on its delivery have
run out a second worker sends the delivery again, with the same `webhook-id`, and
records it once."""

from __future__ import annotations

import time
import uuid

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.job import Job, JobState
from app.models.webhook import DeliveryState, WebhookAttempt, WebhookDelivery
from app.services.webhooks.delivery import DRAIN
from tests.api.notifications.test_crashes import processes, stop, until  # noqa: F401
from tests.factories import make_user
from tests.receivers import subscribe, verify

pytestmark = pytest.mark.processes


def delivery_state(delivery_id: str) -> DeliveryState:
    db.session.expire_all()
    state = db.session.get(WebhookDelivery, uuid.UUID(delivery_id)).state
    db.session.rollback()
    return state


def test_a_worker_killed_mid_delivery_leaves_it_to_another(app, api, receiver, processes):  # noqa: F811
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    sent = api.as_user(owner).post(f"/api/webhooks/{hook['webhookId']}/test")
    delivery_id = sent.get_json()["deliveryId"]
    receiver.plan.delay_seconds = 120  # the first POST is held open
    settings = {
        "WEBHOOK_TEST_PORT": str(receiver.port),
        "DRAIN_LEASE_SECONDS": "3",
        "DRAIN_BUDGET_SECONDS": "2",  # the killed run's claim: its budget and 5 s
    }
    first = processes.worker("first", **settings)
    until(lambda: len(receiver.received) == 1, first, processes.root / "first.log")
    first.kill()  # SIGKILL while the endpoint has the request: nothing recorded
    first.wait(timeout=30)
    killed_at = time.monotonic()
    receiver.plan.delay_seconds = 0
    assert delivery_state(delivery_id) is DeliveryState.PENDING

    second = processes.worker("second", **settings)
    until(
        lambda: delivery_state(delivery_id) is DeliveryState.SUCCEEDED,
        second,
        processes.root / "second.log",
    )
    assert time.monotonic() - killed_at < 30  # the short lease and claim, not the defaults
    stop(second)
    ids = [one.headers["webhook-id"] for one in receiver.received]
    assert ids == [delivery_id, delivery_id]
    verify(hook["secret"], receiver.received[1])
    attempts = db.session.scalars(
        select(WebhookAttempt).where(WebhookAttempt.delivery_id == uuid.UUID(delivery_id))
    ).all()
    assert [attempt.succeeded for attempt in attempts] == [True]  # the killed try left none
    # The killed run's job ran again once its lease was out; the delivery was due again once
    # the try's own claim (its deadline and a margin) was out too, by the same or a new job.
    drains = db.session.scalars(select(Job).where(Job.kind == DRAIN)).all()
    assert {job.state for job in drains} == {JobState.DONE}
    assert sum(job.attempts for job in drains) >= 2
