"""Deliveries to a receiver on 127.0.0.1: signed as Standard Webhooks says, to exactly
the subscriptions whose owner (or team) hears of the event, retried with the same id,
never for a rolled-back change, switched off after three failing days, kept 30 days."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update
from standardwebhooks.webhooks import WebhookVerificationError

from app.extensions import db
from app.models.base import utcnow
from app.models.team import TeamMembership
from app.models.webhook import WebhookDelivery, WebhookSubscription
from app.platform.jobs import Worker
from app.platform.mail import outbox
from app.services import events
from app.services.webhooks import delivery as delivery_module
from tests.inboxes import World
from tests.jobs import run_jobs
from tests.receivers import deliveries, subscribe, verify

pytestmark = pytest.mark.usefixtures("only_loopback")


def comment(api: Any, world: World) -> str:
    url = f"/api/trackables/{world.trackable.id}/comments"
    response = api.as_user(world.author).post(url, json={"body": "Found it"})
    assert response.status_code == 201
    return response.get_json()["trackableCommentId"]


def later(hours: float) -> Any:
    return lambda: utcnow() + timedelta(hours=hours)


def test_a_watchers_webhook_receives_the_event_signed(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    comment_id = comment(api, world)
    run_jobs(app)
    assert len(receiver.received) == 1
    got = receiver.received[0]
    verify(hook["secret"], got)
    assert got.headers["content-type"] == "application/json"
    assert got.json["type"] == "trackable.comment.written"
    data = got.json["data"]
    assert data["trackableId"] == str(world.trackable.id)
    assert data["commentId"] == comment_id
    assert data["publicCode"] == world.trackable.public_code
    assert "body" not in data
    assert "Found it" not in got.body.decode()
    (delivery,) = deliveries(api, world.item_watcher, hook["webhookId"])
    assert delivery["deliveryId"] == got.headers["webhook-id"]
    assert delivery["state"] == "succeeded"
    (attempt,) = delivery["attempts"]
    assert attempt["statusCode"] == 200
    assert attempt["succeeded"] is True
    assert attempt["responseExcerpt"] == "ok"
    assert attempt["latencyMs"] >= 0


def test_only_subscriptions_of_who_hears_receive_it(app, api, world, receiver):
    subscribe(api, world.stranger, receiver.url("/stranger"))
    subscribe(api, world.author, receiver.url("/actor"))  # the actor hears nothing
    subscribe(api, world.owner, receiver.url("/other-type"), eventTypes=["trackable.activated"])
    subscribe(api, world.group_watcher, receiver.url("/group"))
    comment(api, world)
    run_jobs(app)
    assert [one.headers.get("host") for one in receiver.received] == [f"127.0.0.1:{receiver.port}"]
    assert len(receiver.received) == 1


def test_a_team_webhook_receives_its_teams_events(app, api, world, receiver):
    hook = subscribe(api, world.admin, receiver.url(), teamId=str(world.team.id))
    comment(api, world)
    run_jobs(app)
    assert len(receiver.received) == 1
    verify(hook["secret"], receiver.received[0])
    assert receiver.received[0].json["data"]["teamId"] == str(world.team.id)


def test_a_team_webhook_falls_silent_when_its_admin_is_no_longer_one(app, api, world, receiver):
    hook = subscribe(api, world.admin, receiver.url(), teamId=str(world.team.id))
    comment(api, world)
    db.session.execute(
        update(TeamMembership)
        .where(TeamMembership.user_id == world.admin.id)
        .values(is_admin=False)
    )
    db.session.commit()
    run_jobs(app)
    assert receiver.received == []
    state = db.session.scalar(select(WebhookDelivery.state))
    assert state is None or state.value == "cancelled"
    assert hook["webhookId"]


def test_a_rolled_back_change_sends_nothing(app, api, world, receiver):
    subscribe(api, world.item_watcher, receiver.url())
    events.record(events.EventType.ACTIVATED, world.trackable, actor_id=None)
    db.session.rollback()
    run_jobs(app)
    assert receiver.received == []


def test_a_failed_try_is_retried_with_the_same_id(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    receiver.plan.statuses = [500, 500, 204]
    comment(api, world)
    run_jobs(app)
    assert len(receiver.received) == 1
    run_jobs(app)  # not due yet: the back-off holds it
    assert len(receiver.received) == 1
    run_jobs(app, clock=later(1))
    run_jobs(app, clock=later(2))
    ids = {one.headers["webhook-id"] for one in receiver.received}
    assert len(receiver.received) == 3
    assert len(ids) == 1
    for one in receiver.received:
        verify(hook["secret"], one)
    (delivery,) = deliveries(api, world.item_watcher, hook["webhookId"])
    assert delivery["state"] == "succeeded"
    assert delivery["attemptCount"] == 3
    assert [one["statusCode"] for one in delivery["attempts"]] == [500, 500, 204]
    assert delivery["attempts"][0]["error"] == "The endpoint answered HTTP 500."


def test_tries_back_off_and_stop_about_a_day_after_the_delivery(
    app, api, world, receiver, monkeypatch
):
    hook = subscribe(api, world.item_watcher, receiver.url())
    receiver.plan.statuses = [503]
    comment(api, world)
    start, offset = utcnow(), [timedelta()]
    clock = lambda: start + offset[0]  # noqa: E731 - the worker's and the handler's time
    monkeypatch.setattr(delivery_module, "utcnow", clock)
    monkeypatch.setattr("app.platform.jobs.queue.utcnow", clock)  # when a retry is due
    for minutes in range(0, 30 * 60, 5):
        offset[0] = timedelta(minutes=minutes)
        run_jobs(app, clock=clock)
    (delivery,) = deliveries(api, world.item_watcher, hook["webhookId"])
    assert delivery["state"] == "failed"
    assert 10 <= delivery["attemptCount"] <= 16
    times = [one["attemptedUtc"] for one in delivery["attempts"]]
    gaps = [
        (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
        for a, b in itertools.pairwise(times)
    ]
    assert gaps[0] <= 5 * 60  # half a minute, seen at the next 5-minute step
    assert max(gaps) > 3600
    assert (datetime.fromisoformat(times[-1]) - datetime.fromisoformat(times[0])) <= timedelta(
        days=1, minutes=5
    )


def test_three_failing_days_switch_it_off_and_mail_its_owner(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    db.session.execute(
        update(WebhookSubscription).values(failing_since_utc=utcnow() - timedelta(days=3, hours=1))
    )
    db.session.commit()
    receiver.plan.statuses = [500]
    comment(api, world)
    run_jobs(app)
    read = api.as_user(world.item_watcher).get(f"/api/webhooks/{hook['webhookId']}").get_json()
    assert read["isEnabled"] is False
    assert read["disabledReason"] == "failing"
    (mail,) = outbox(app)
    assert mail.to == world.item_watcher.email
    assert hook["webhookId"] in mail.text
    comment(api, world)
    run_jobs(app, clock=later(2))
    assert len(receiver.received) == 1  # nothing more while it is off


def test_a_success_clears_the_failing_time(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    receiver.plan.statuses = [500, 200]
    comment(api, world)
    run_jobs(app)
    url = f"/api/webhooks/{hook['webhookId']}"
    assert api.as_user(world.item_watcher).get(url).get_json()["failingSinceUtc"] is not None
    run_jobs(app, clock=later(1))
    assert api.as_user(world.item_watcher).get(url).get_json()["failingSinceUtc"] is None


def test_during_a_rotation_both_secrets_sign(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    url = f"/api/webhooks/{hook['webhookId']}/secret/rotate"
    rotated = api.as_user(world.item_watcher).post(url)
    assert rotated.status_code == 200
    new = rotated.get_json()
    assert new["secret"] != hook["secret"]
    assert new["previousSecretExpiresUtc"]
    comment(api, world)
    run_jobs(app)
    (got,) = receiver.received
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    verify(hook["secret"], got)
    verify(new["secret"], got)


def test_after_the_overlap_only_the_new_secret_signs(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    new = (
        api.as_user(world.item_watcher)
        .post(f"/api/webhooks/{hook['webhookId']}/secret/rotate")
        .get_json()
    )
    db.session.execute(
        update(WebhookSubscription).values(previous_secret_expires_utc=utcnow() - timedelta(1))
    )
    db.session.commit()
    comment(api, world)
    run_jobs(app)
    (got,) = receiver.received
    assert len(got.headers["webhook-signature"].split(" ")) == 1
    verify(new["secret"], got)
    with pytest.raises(WebhookVerificationError):
        verify(hook["secret"], got)


def documented(api: Any, method: str, path: str) -> set[int]:
    """The statuses the OpenAPI document gives an operation."""
    operation = api.get("/api/openapi.json").get_json()["paths"][path][method]
    return {int(status) for status in operation["responses"]}


REDELIVER = "/api/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver"


def test_a_test_message_and_a_redelivery_keep_their_id(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    base = f"/api/webhooks/{hook['webhookId']}"
    sent = api.as_user(world.item_watcher).post(f"{base}/test")
    assert sent.status_code == 202
    delivery_id = sent.get_json()["deliveryId"]
    pending = api.as_user(world.item_watcher).post(f"{base}/deliveries/{delivery_id}/redeliver")
    assert pending.status_code == 409
    assert pending.get_json()["code"] == "webhook_delivery_pending"
    assert 409 in documented(api, "post", REDELIVER)
    run_jobs(app)
    again = api.as_user(world.item_watcher).post(f"{base}/deliveries/{delivery_id}/redeliver")
    assert again.status_code == 202
    run_jobs(app)
    assert [one.headers["webhook-id"] for one in receiver.received] == [delivery_id] * 2
    assert receiver.received[0].json["type"] == "webhook.test"
    verify(hook["secret"], receiver.received[1])
    other = api.as_user(world.stranger).post(f"{base}/deliveries/{delivery_id}/redeliver")
    assert other.status_code == 404


def test_deliveries_are_kept_thirty_days(app, api, world, receiver):
    subscribe(api, world.item_watcher, receiver.url())
    comment(api, world)
    run_jobs(app)
    Worker(app, name="tests", clock=later(24 * 29)).clean_up()
    assert db.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 1
    Worker(app, name="tests", clock=later(24 * 31)).clean_up()
    assert db.session.scalar(select(func.count()).select_from(WebhookDelivery)) == 0


def test_the_delivery_list_is_paged_newest_first(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    client = api.as_user(world.item_watcher)
    base = f"/api/webhooks/{hook['webhookId']}"
    sent = [client.post(f"{base}/test").get_json()["deliveryId"] for _ in range(3)]
    first = client.get(f"{base}/deliveries?limit=2")
    assert first.status_code == 200
    link = first.headers["Link"]
    following = client.get(link[1 : link.index(">")])
    assert "Link" not in following.headers
    listed = [one["deliveryId"] for one in first.get_json() + following.get_json()]
    assert sorted(listed) == sorted(sent)
    assert client.get(f"{base}/deliveries?limit=101").status_code == 400


def test_a_switched_off_webhook_sends_no_test_and_no_redelivery(app, api, world, receiver):
    hook = subscribe(api, world.item_watcher, receiver.url())
    base = f"/api/webhooks/{hook['webhookId']}"
    as_watcher = api.as_user(world.item_watcher)
    delivery_id = as_watcher.post(f"{base}/test").get_json()["deliveryId"]
    run_jobs(app)
    switched = as_watcher.open("PATCH", base, json={"isEnabled": False})
    assert switched.status_code == 200
    for path, url in (
        ("/api/webhooks/{webhookId}/test", f"{base}/test"),
        (REDELIVER, f"{base}/deliveries/{delivery_id}/redeliver"),
    ):
        refused = as_watcher.post(url)
        assert refused.status_code == 409, url
        assert refused.content_type == "application/problem+json"
        assert refused.get_json()["code"] == "webhook_disabled"
        assert 409 in documented(api, "post", path)
    run_jobs(app)
    assert len(receiver.received) == 1
