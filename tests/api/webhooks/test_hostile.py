"""Hostile endpoints: names that resolve to private addresses or not at all (through a
stub resolver), redirects to them, slow and huge answers. Every connection not to
127.0.0.1 fails the test (only_loopback), so a regression can never send traffic
elsewhere. A refused try tells the owner nothing of what an internal name resolves to."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest

from app.extensions import db
from app.models.base import utcnow
from app.models.webhook import WebhookSubscription
from app.platform.mail import outbox
from app.services.webhooks.delivery import REFUSED, REFUSED_SWITCH_OFF
from tests.inboxes import World
from tests.integrations.test_outbound import fake_dns
from tests.jobs import run_jobs
from tests.receivers import HUGE_BYTES, deliveries, subscribe


def comment(api: Any, world: World) -> None:
    url = f"/api/trackables/{world.trackable.id}/comments"
    assert api.as_user(world.author).post(url, json={"body": "Hi"}).status_code == 201


def only_attempt(api: Any, world: World, hook: dict[str, Any]) -> dict[str, Any]:
    (delivery,) = deliveries(api, world.item_watcher, hook["webhookId"])
    return delivery["attempts"][0]


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("10.0.0.7", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("127.0.0.1", "loopback"),  # the loopback setting is off for this subscription
        ("::ffff:192.168.1.1", "private, inside an IPv6 address"),
    ],
)
def test_a_name_resolving_to_a_private_address_is_never_connected(
    app, api, world, receiver, only_loopback, monkeypatch, address, reason
):
    app.config["WEBHOOKS_ALLOW_LOOPBACK"] = address != "127.0.0.1"
    lookups = fake_dns(monkeypatch, {"hooks.example.org": [address]})
    hook = subscribe(api, world.item_watcher, f"http://hooks.example.org:{receiver.port}/hook")
    comment(api, world)
    run_jobs(app)
    attempt = only_attempt(api, world, hook)
    assert attempt["succeeded"] is False
    assert attempt["statusCode"] is None
    assert attempt["error"] == REFUSED  # the same words whatever the kind of address
    assert reason not in attempt["error"]
    assert lookups == ["hooks.example.org"]
    assert only_loopback == []
    assert receiver.received == []


def test_a_name_that_does_not_resolve_reads_as_one_that_is_refused(
    app, api, world, receiver, only_loopback, monkeypatch
):
    fake_dns(monkeypatch, {"internal.example.org": ["10.0.0.7"]})
    refused = subscribe(api, world.item_watcher, f"http://internal.example.org:{receiver.port}/")
    unknown = subscribe(api, world.item_watcher, f"http://missing.example.org:{receiver.port}/")
    comment(api, world)
    run_jobs(app)
    tries = [only_attempt(api, world, hook) for hook in (refused, unknown)]
    assert [one["error"] for one in tries] == [REFUSED, REFUSED]
    assert [one["statusCode"] for one in tries] == [None, None]
    assert only_loopback == []


def test_refused_tries_in_a_row_switch_the_webhook_off_and_tell_its_owner(
    app, api, world, receiver, only_loopback, monkeypatch
):
    fake_dns(monkeypatch, {})
    hook = subscribe(api, world.item_watcher, f"http://missing.example.org:{receiver.port}/")
    comment(api, world)
    for hours in range(REFUSED_SWITCH_OFF):
        moment = utcnow() + timedelta(hours=5 * hours)  # past any back-off
        run_jobs(app, clock=lambda moment=moment: moment)
    answer = api.as_user(world.item_watcher).get(f"/api/webhooks/{hook['webhookId']}").get_json()
    assert (answer["isEnabled"], answer["disabledReason"]) == (False, "unreachable")
    (delivery,) = deliveries(api, world.item_watcher, hook["webhookId"])
    assert delivery["state"] == "failed"
    assert [one["error"] for one in delivery["attempts"]] == [REFUSED] * REFUSED_SWITCH_OFF
    mail = [one for one in outbox(app) if one.subject == "A webhook was switched off"]
    assert len(mail) == 1
    assert "not a public one, or its name does not resolve" in mail[0].text


def test_a_refusal_between_answers_does_not_add_up(app, api, world, receiver, monkeypatch):
    """Only refusals in a row count: an answer in between starts the count again."""
    hook = subscribe(api, world.item_watcher, receiver.url())
    subscription = db.session.get(WebhookSubscription, uuid.UUID(hook["webhookId"]))
    subscription.refused_in_a_row = REFUSED_SWITCH_OFF - 1
    db.session.commit()
    comment(api, world)
    run_jobs(app)
    db.session.expire_all()
    assert db.session.get(WebhookSubscription, subscription.id).refused_in_a_row == 0


@pytest.mark.parametrize(
    "url", ["http://localhost/hook", "https://hooks.localhost/", "http://LOCALHOST./x"]
)
def test_a_localhost_name_is_refused_when_made(app, api, world, url):
    app.config["WEBHOOKS_ALLOW_LOOPBACK"] = False
    answer = api.as_user(world.item_watcher).post("/api/webhooks", json={"url": url})
    assert answer.status_code == 400
    assert answer.get_json()["code"] == "webhook_url_not_allowed"


def test_a_name_that_rebinds_is_still_checked_at_each_try(
    app, api, world, receiver, only_loopback, monkeypatch
):
    """A name is not resolved at creation (it may move): each try resolves and checks it."""
    fake_dns(monkeypatch, {"hooks.example.org": ["10.1.2.3"]})
    hook = subscribe(api, world.item_watcher, f"http://hooks.example.org:{receiver.port}/")
    comment(api, world)
    run_jobs(app)
    assert only_attempt(api, world, hook)["error"] == REFUSED
    assert only_loopback == []


@pytest.mark.parametrize(
    "location", ["http://10.0.0.7/admin", "http://169.254.169.254/latest/meta-data/"]
)
def test_a_redirect_is_never_followed(app, api, world, receiver, only_loopback, location):
    receiver.plan.statuses = [307]
    receiver.plan.location = location
    hook = subscribe(api, world.item_watcher, receiver.url())
    comment(api, world)
    run_jobs(app)
    attempt = only_attempt(api, world, hook)
    assert attempt["statusCode"] == 307
    assert attempt["succeeded"] is False
    assert len(receiver.received) == 1
    assert only_loopback == []


def test_a_slow_endpoint_fails_within_the_time_limit(app, api, world, receiver, only_loopback):
    app.config["WEBHOOK_TIMEOUT_SECONDS"] = 0.5
    receiver.plan.delay_seconds = 2.0
    hook = subscribe(api, world.item_watcher, receiver.url())
    comment(api, world)
    run_jobs(app)
    attempt = only_attempt(api, world, hook)
    assert attempt["succeeded"] is False
    assert attempt["error"] == "Timed out: no whole answer within 0.5 seconds."
    assert 500 <= attempt["latencyMs"] < 1500  # the time it waited, not 0


def test_a_huge_answer_is_read_only_up_to_the_cap(app, api, world, receiver, only_loopback):
    receiver.plan.huge = True
    hook = subscribe(api, world.item_watcher, receiver.url())
    comment(api, world)
    run_jobs(app)
    attempt = only_attempt(api, world, hook)
    assert attempt["succeeded"] is True
    assert attempt["statusCode"] == 200
    assert len(attempt["responseExcerpt"]) <= 1000
    deadline = time.monotonic() + 5
    while not receiver.huge_bytes_sent and time.monotonic() < deadline:
        time.sleep(0.05)  # the server notices the closed connection on its next write
    assert receiver.huge_bytes_sent
    assert receiver.huge_bytes_sent[0] < HUGE_BYTES
