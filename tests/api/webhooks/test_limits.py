"""Test messages and redeliveries are limited per account and per webhook, counted together
(429 `webhook_sends_limited` with Retry-After), checked after who may ask and whether the
send can go, and published with the other limits."""

from __future__ import annotations

from typing import Any

from app.models.user import User
from tests.conftest import ApiClient
from tests.factories import make_user
from tests.jobs import run_jobs
from tests.racing import BARRIER_SECONDS, LockBarrier, run_together, statuses, stop_after
from tests.receivers import deliveries, subscribe


def limited(answer: Any) -> dict[str, Any]:
    assert answer.status_code == 429, answer.get_json()
    body = answer.get_json()
    assert body["code"] == "webhook_sends_limited"
    assert 1 <= int(answer.headers["Retry-After"]) <= 3600
    return body


def test_one_webhooks_sends_are_limited_redeliveries_and_tests_together(app, api, receiver):
    app.config["WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR"] = 2
    owner = make_user()
    hook = subscribe(api, owner, receiver.url())
    client = api.as_user(owner)
    test_url = f"/api/webhooks/{hook['webhookId']}/test"
    assert client.post(test_url).status_code == 202
    run_jobs(app)
    (sent,) = deliveries(api, owner, hook["webhookId"])
    redeliver = f"/api/webhooks/{hook['webhookId']}/deliveries/{sent['deliveryId']}/redeliver"
    assert client.post(redeliver).status_code == 202
    run_jobs(app)
    body = limited(client.post(redeliver))
    assert "This webhook has had 2" in body["detail"]
    limited(client.post(test_url))
    # Another webhook of the same account has its own count.
    other = subscribe(api, owner, receiver.url("/other"))
    assert client.post(f"/api/webhooks/{other['webhookId']}/test").status_code == 202


def test_an_accounts_sends_are_limited_across_its_webhooks(app, api, receiver):
    app.config["WEBHOOK_MANUAL_SENDS_PER_HOUR"] = 3
    owner = make_user()
    hooks = [subscribe(api, owner, receiver.url(f"/{index}")) for index in range(2)]
    client = api.as_user(owner)
    urls = [f"/api/webhooks/{hook['webhookId']}/test" for hook in hooks]
    assert [client.post(url).status_code for url in (urls[0], urls[1], urls[0])] == [202] * 3
    body = limited(client.post(urls[1]))
    assert "You have asked for 3" in body["detail"]
    # Another user's account is not held up.
    stranger = make_user()
    theirs = subscribe(api, stranger, receiver.url("/theirs"))
    assert (
        api.as_user(stranger).post(f"/api/webhooks/{theirs['webhookId']}/test").status_code == 202
    )


def test_a_refused_send_costs_nothing(app, api, receiver):
    app.config["WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR"] = 1
    owner = make_user()
    hook = subscribe(api, owner, receiver.url(), isEnabled=False)
    client = api.as_user(owner)
    url = f"/api/webhooks/{hook['webhookId']}/test"
    assert client.post(url).status_code == 409  # switched off: not counted
    stranger = make_user()
    assert api.as_user(stranger).post(url).status_code == 404  # not theirs: not counted
    client.patch(f"/api/webhooks/{hook['webhookId']}", json={"isEnabled": True})
    assert client.post(url).status_code == 202


def test_the_limits_are_published(app, api):
    app.config.update(WEBHOOK_MANUAL_SENDS_PER_HOUR=7, WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR=5)
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["webhookSends"] == {"attempts": 7, "windowMinutes": 60}
    assert limits["webhookSendsPerWebhook"] == {"attempts": 5, "windowMinutes": 60}


def test_parallel_test_sends_against_a_limit_of_three_let_exactly_three_through(
    app, receiver, monkeypatch
):
    app.config["WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR"] = 3
    owner = make_user()
    hook = subscribe(ApiClient(app.test_client()), owner, receiver.url())
    # Each thread stops after its budget check; without one step for the check and the
    # count all six would have read "nothing counted yet" and gone on.
    stop_after(
        monkeypatch,
        "app.services.shared.budgets.waits",
        LockBarrier(6, timeout=BARRIER_SECONDS),
    )
    url = f"/api/webhooks/{hook['webhookId']}/test"

    def send(client: Any, headers: dict[str, str]) -> Any:
        return client.post(url, headers=headers)

    calls: list[tuple[User, Any]] = [(owner, send) for _ in range(6)]
    assert statuses(run_together(app, calls)) == [202] * 3 + [429] * 3
