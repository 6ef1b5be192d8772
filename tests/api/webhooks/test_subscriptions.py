"""Webhook subscriptions through HTTP: who may create, see and change which, the secret
shown once, the checks on URLs and event types, the cap, and what deletions take along."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import func, select

from app.auth import build_viewer
from app.extensions import db
from app.models.user import User
from app.models.webhook import WebhookSubscription
from app.services import webhooks
from app.services.events import EventType
from app.services.webhooks.subscriptions import WebhookLimitReached
from tests.factories import make_team, make_user
from tests.receivers import subscribe

URL = "https://hooks.example.org/notes"
PROBLEM = "application/problem+json"


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.get_json()
    assert response.content_type == PROBLEM
    body = response.get_json()
    assert body["code"] == code
    return body


def test_creating_answers_201_with_the_secret_once(api):
    ada = make_user("ada")
    created = subscribe(api, ada, URL, eventTypes=["trackable.activated"])
    assert created["secret"].startswith("whsec_")
    assert created["eventTypes"] == ["trackable.activated"]
    assert created["isEnabled"] is True
    assert created["teamId"] is None
    read = api.as_user(ada).get(f"/api/webhooks/{created['webhookId']}").get_json()
    assert "secret" not in read
    listed = api.as_user(ada).get("/api/webhooks").get_json()
    assert [one["webhookId"] for one in listed] == [created["webhookId"]]
    assert all("secret" not in one for one in listed)


def test_the_secret_is_stored_encrypted(api):
    created = subscribe(api, make_user(), URL)
    stored = db.session.scalar(select(WebhookSubscription.secret_encrypted))
    assert created["secret"] not in stored
    assert created["secret"].removeprefix("whsec_") not in stored


def test_no_event_types_means_every_type(api):
    assert subscribe(api, make_user(), URL)["eventTypes"] == []


def test_an_unknown_event_type_is_refused(api):
    response = api.as_user(make_user()).post(
        "/api/webhooks", json={"url": URL, "eventTypes": ["trackable.exploded"]}
    )
    body = problem(response, 400, "validation_failed")
    assert "eventTypes.0" in body["errors"]


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/hook",
        "http://127.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://0x7f000001/hook",
        "ftp://hooks.example.org/",
        "https://user:pw@hooks.example.org/",
        "https://hooks.example.org:22/",
    ],
)
def test_urls_that_are_not_allowed_are_refused_at_creation(api, url):
    response = api.as_user(make_user()).post("/api/webhooks", json={"url": url})
    body = problem(response, 400, "webhook_url_not_allowed")
    assert "url" in body["errors"]


def test_without_a_token_every_route_is_401(api):
    some = "4f1c9e2a-7b3d-4c58-9e06-2a8d5b7c1f34"
    for method, path in [
        ("post", "/api/webhooks"),
        ("get", "/api/webhooks"),
        ("get", f"/api/webhooks/{some}"),
        ("patch", f"/api/webhooks/{some}"),
        ("delete", f"/api/webhooks/{some}"),
        ("get", f"/api/webhooks/{some}/deliveries"),
        ("post", f"/api/webhooks/{some}/deliveries/{some}/redeliver"),
        ("post", f"/api/webhooks/{some}/test"),
        ("post", f"/api/webhooks/{some}/secret/rotate"),
    ]:
        response = api.open(method.upper(), path)
        assert response.status_code == 401, (method, path)


def test_another_users_webhook_is_404_on_every_route(api):
    owner, other = make_user(), make_user()
    hook = subscribe(api, owner, URL)["webhookId"]
    as_other = api.as_user(other)
    for response in (
        as_other.get(f"/api/webhooks/{hook}"),
        as_other.open("PATCH", f"/api/webhooks/{hook}", json={"isEnabled": False}),
        as_other.delete(f"/api/webhooks/{hook}"),
        as_other.get(f"/api/webhooks/{hook}/deliveries"),
        as_other.post(f"/api/webhooks/{hook}/test"),
        as_other.post(f"/api/webhooks/{hook}/secret/rotate"),
    ):
        problem(response, 404, "webhook_not_found")
    assert as_other.get("/api/webhooks").get_json() == []


def test_patch_changes_only_what_is_sent_and_delete_removes(api):
    ada = make_user()
    hook = subscribe(api, ada, URL, eventTypes=["trackable.activated"])["webhookId"]
    changed = api.as_user(ada).open("PATCH", f"/api/webhooks/{hook}", json={"isEnabled": False})
    assert changed.status_code == 200
    body = changed.get_json()
    assert body["isEnabled"] is False
    assert body["disabledReason"] == "owner"
    assert body["eventTypes"] == ["trackable.activated"]
    assert body["url"] == URL
    assert api.as_user(ada).delete(f"/api/webhooks/{hook}").status_code == 204
    problem(api.as_user(ada).get(f"/api/webhooks/{hook}"), 404, "webhook_not_found")


def test_a_team_webhook_is_for_the_teams_admins_only(api):
    admin, second_admin, member, stranger = (make_user() for _ in range(4))
    team = make_team(admin, members=(member,))
    from tests.factories import make_membership

    make_membership(team, second_admin, is_admin=True)
    body = {"url": URL, "teamId": str(team.id)}
    problem(api.as_user(member).post("/api/webhooks", json=body), 403, "team_admin_required")
    # A public team: seen, not theirs (a members-only one would be 404, as teams answer).
    refused = api.as_user(stranger).post("/api/webhooks", json=body)
    problem(refused, 403, "team_membership_required")
    hook = subscribe(api, admin, URL, teamId=str(team.id))
    assert hook["teamId"] == str(team.id)
    seen = api.as_user(second_admin).get("/api/webhooks").get_json()
    assert [one["webhookId"] for one in seen] == [hook["webhookId"]]
    problem(api.as_user(member).get(f"/api/webhooks/{hook['webhookId']}"), 404, "webhook_not_found")
    assert api.as_user(member).get("/api/webhooks").get_json() == []


def test_a_team_that_does_not_exist_is_404_as_documented(api):
    body = {"url": URL, "teamId": "10713c61-830d-4461-b1b7-413155374081"}
    problem(api.as_user(make_user()).post("/api/webhooks", json=body), 404, "team_not_found")
    document = api.get("/api/openapi.json").get_json()
    assert "404" in document["paths"]["/api/webhooks"]["post"]["responses"]
    assert db.session.scalar(select(func.count()).select_from(WebhookSubscription)) == 0


def test_the_list_is_paged(api):
    ada = make_user()
    for number in range(3):
        subscribe(api, ada, f"{URL}/{number}")
    first = api.as_user(ada).get("/api/webhooks?limit=2")
    assert len(first.get_json()) == 2
    link = first.headers["Link"]
    following = api.as_user(ada).get(link[1 : link.index(">")])
    assert len(following.get_json()) == 1
    assert "Link" not in following.headers


@pytest.mark.slow
def test_ten_thousand_subscriptions_are_refused_after_the_cap(app, api):
    """The first hundred tries go through HTTP (201 up to the cap, then 400 with its code);
    the rest straight to the use case the route calls, the same refusal at a fraction of
    the cost: ten thousand HTTP requests took half a minute of a test run."""
    ada = make_user()
    client = api.as_user(ada)
    cap = app.config["WEBHOOKS_PER_OWNER"]
    statuses: dict[int, int] = {}
    started = time.monotonic()
    for number in range(100):
        response = client.post("/api/webhooks", json={"url": f"{URL}/{number}"})
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        if response.status_code == 400:
            assert response.get_json()["code"] == "webhook_limit_reached"
    # Detached, the account keeps its loaded fields across the rollbacks (a request's
    # viewer is new each time; reloading it 9,900 times was half of this test's time).
    account = db.session.get(User, ada.id)
    db.session.expunge(account)
    viewer = build_viewer(account)
    for number in range(100, 10_000):
        try:
            webhooks.create_webhook(viewer, app.config, url=f"{URL}/{number}")
            db.session.commit()  # as the route does
            statuses[201] += 1
        except WebhookLimitReached:
            db.session.rollback()  # as the request's teardown does
            statuses[400] += 1
    assert statuses == {201: cap, 400: 10_000 - cap}
    assert db.session.scalar(select(func.count()).select_from(WebhookSubscription)) == cap
    assert time.monotonic() - started < 300


def test_the_cap_of_a_team_is_its_own(app, api):
    admin = make_user()
    team = make_team(admin)
    app.config["WEBHOOKS_PER_OWNER"] = 1
    subscribe(api, admin, URL)
    subscribe(api, admin, URL, teamId=str(team.id))
    again = api.as_user(admin).post("/api/webhooks", json={"url": URL, "teamId": str(team.id)})
    problem(again, 400, "webhook_limit_reached")


def test_account_deletion_removes_the_users_webhooks(api):
    ada = make_user()
    team = make_team(ada, members=(make_user(),))
    subscribe(api, ada, URL)
    subscribe(api, ada, URL, teamId=str(team.id))
    assert api.as_user(ada).delete("/api/account").status_code == 200
    assert db.session.scalar(select(func.count()).select_from(WebhookSubscription)) == 0


def test_team_deletion_removes_the_teams_webhooks(api):
    admin = make_user()
    team = make_team(admin)
    subscribe(api, admin, URL)
    subscribe(api, admin, URL, teamId=str(team.id))
    assert api.as_user(admin).delete(f"/api/teams/{team.id}").status_code == 204
    left = db.session.scalars(select(WebhookSubscription)).all()
    assert [one.team_id for one in left] == [None]


def test_the_document_lists_every_event_type_in_its_webhooks_section(api):
    document = api.get("/api/openapi.json").get_json()
    assert document["openapi"].startswith("3.1")
    section = document["webhooks"]
    assert set(section) == {kind.value for kind in EventType} | {"webhook.test"}
    entry = section["trackable.comment.written"]["post"]
    schema = entry["requestBody"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/TrackableCommentWrittenPayload"}
    assert {one["name"] for one in entry["parameters"]} == {
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
