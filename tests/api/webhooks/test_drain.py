"""A subscription's deliveries are sent by one drain job at a time (services.webhooks):
many deliveries make one waiting job, a batch's tries share a kept-alive connection, a
delivery made while a drain sends is not lost, and a drain cut short by its time budget
hands over to a new job."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from sqlalchemy import func, select

from app.auth import build_viewer
from app.extensions import db
from app.models.job import Job, JobState
from app.models.webhook import DeliveryState, WebhookDelivery, WebhookSubscription
from app.platform.jobs import Worker
from app.services import webhooks
from app.services.webhooks import delivery as delivery_module
from tests.factories import make_user
from tests.jobs import run_jobs
from tests.receivers import subscribe, verify


def waiting_drains() -> int:
    return db.session.scalar(
        select(func.count()).where(Job.kind == delivery_module.DRAIN, Job.state == JobState.QUEUED)
    )


def states() -> dict[DeliveryState, int]:
    rows = db.session.execute(
        select(WebhookDelivery.state, func.count()).group_by(WebhookDelivery.state)
    )
    return dict(rows.all())


def test_many_deliveries_wait_for_one_job_and_all_go(app, api, receiver):
    app.config.update(
        WEBHOOK_MANUAL_SENDS_PER_HOUR=1000, WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR=1000
    )
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    client = api.as_user(owner)
    sent = [client.post(f"/api/webhooks/{hook['webhookId']}/test") for _ in range(120)]
    assert {answer.status_code for answer in sent} == {202}
    assert waiting_drains() == 1
    assert run_jobs(app) == 1  # one job sent all 120, in three batches
    assert states() == {DeliveryState.SUCCEEDED: 120}
    assert sorted(one.headers["webhook-id"] for one in receiver.received) == sorted(
        answer.get_json()["deliveryId"] for answer in sent
    )
    for one in receiver.received:
        verify(hook["secret"], one)
    assert db.session.get(WebhookSubscription, uuid.UUID(hook["webhookId"])).drain_job_id is None


def test_a_delivery_made_while_a_drain_sends_is_not_lost(app, api, receiver, monkeypatch):
    """The drain has found nothing more to send; before its last look, another request
    makes a delivery, whose wake sees the running drain's mark and leaves it to it."""
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    client = api.as_user(owner)
    client.post(f"/api/webhooks/{hook['webhookId']}/test")
    real_rest = delivery_module._rest

    def make_another() -> None:
        with app.app_context():
            viewer = build_viewer(db.session.get(type(owner), owner.id))
            webhooks.send_test(viewer, uuid.UUID(hook["webhookId"]), app.config)
            db.session.commit()
            db.session.remove()

    def another_then_rest(*args: Any) -> None:
        writer = threading.Thread(target=make_another)  # its own connection
        writer.start()
        writer.join(timeout=30)
        real_rest(*args)

    monkeypatch.setattr(delivery_module, "_rest", another_then_rest)
    assert Worker(app, name="tests").run_due(limit=1) == 1
    assert states() == {DeliveryState.SUCCEEDED: 1, DeliveryState.PENDING: 1}
    assert waiting_drains() == 1  # the last look named a job for it
    monkeypatch.setattr(delivery_module, "_rest", real_rest)
    run_jobs(app)
    assert states() == {DeliveryState.SUCCEEDED: 2}
    assert len(receiver.received) == 2
    assert waiting_drains() == 0


def test_a_drain_starts_no_try_it_could_not_end_within_its_budget(app, api, receiver, monkeypatch):
    """Each answer takes 1.2 s and, with a 3 s budget, a try may take 1.5 s (half the
    budget): after two tries (2.4 s) a third could end after the budget, so the job hands
    over to a new one instead."""
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    client = api.as_user(owner)
    for _ in range(3):
        client.post(f"/api/webhooks/{hook['webhookId']}/test")
    receiver.plan.delay_seconds = 1.2
    monkeypatch.setattr(delivery_module, "DRAIN_BUDGET", delivery_module.timedelta(seconds=3))
    started = time.monotonic()
    assert Worker(app, name="tests").run_due(limit=1) == 1
    assert time.monotonic() - started < 3
    assert states() == {DeliveryState.SUCCEEDED: 2, DeliveryState.PENDING: 1}
    assert waiting_drains() == 1  # the next one is named
    receiver.plan.delay_seconds = 0
    assert run_jobs(app) == 1
    assert states() == {DeliveryState.SUCCEEDED: 3}


def test_the_drains_lease_follows_from_its_budget():
    kind = delivery_module.DRAIN_KIND
    assert kind.lease == delivery_module.DRAIN_LEASE > delivery_module.DRAIN_BUDGET
    assert (kind.lane, kind.fair) == ("webhooks", True)


def test_a_batch_uses_one_connection(app, api, receiver):
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    client = api.as_user(owner)
    for _ in range(5):
        client.post(f"/api/webhooks/{hook['webhookId']}/test")
    run_jobs(app)
    assert len(receiver.received) == 5
    assert len(receiver.peers) == 1  # every POST came over the same client port
