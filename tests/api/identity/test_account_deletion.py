"""DELETE /api/account: the per-area clean-ups the factory lists, identity's own part, and every
token stopping at the next request."""

from __future__ import annotations

import dataclasses

from app.extensions import db
from app.models.identity import EmailCode, LoginFailure, RecoveryCode, RefreshToken
from app.models.user import User
from tests.api.identity.helpers import LOGIN_URL, STRONG_PASSWORD, bearer, register, totp
from tests.conftest import assert_problem
from tests.factories import DEFAULT_PASSWORD, login, make_user
from tests.jobs import run_jobs


def delete_account(client):
    return client.delete("/api/account")


def test_deletion_answers_the_contract_result(api):
    response = delete_account(api.as_user(make_user()))
    assert response.status_code == 200
    assert response.get_json() == {
        "deletedAccount": True,
        "notesDeleted": 0,
        "categoriesDeleted": 0,
        "linkedProvidersDeleted": 0,
        "imagesDeleted": 0,
    }


def test_deletion_needs_a_bearer_token(api):
    assert_problem(delete_account(api), 401)


def test_deleted_account_is_gone_and_its_tokens_stop_working(api):
    user = make_user()
    tokens = login(api, user)
    assert delete_account(bearer(api, tokens)).status_code == 200
    assert db.session.get(User, user.id) is None
    assert_problem(bearer(api, tokens).get("/api/auth/manage/info"), 401)
    refreshed = api.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    assert_problem(refreshed, 401)
    signed_in = api.post(LOGIN_URL, json={"email": user.email, "password": DEFAULT_PASSWORD})
    assert assert_problem(signed_in, 401)["detail"] == "Failed"


def test_deletion_removes_identity_secrets_and_counters(app, api):
    user = make_user()
    login(api, user)
    key = api.as_user(user).post("/api/auth/manage/2fa", json={}).get_json()["sharedKey"]
    api.as_user(user).post(
        "/api/auth/manage/2fa", json={"enable": True, "twoFactorCode": totp(key)}
    )
    api.post("/api/auth/forgotPassword", json={"email": user.email})
    run_jobs(app)  # the worker stores the reset code as it mails it
    assert db.session.query(EmailCode).count() == 1
    api.post(LOGIN_URL, json={"email": user.email, "password": "wrong-password-1"})
    delete_account(api.as_user(user))
    for model in (RefreshToken, RecoveryCode, EmailCode, LoginFailure):
        assert db.session.query(model).count() == 0, model.__name__


def test_deletion_leaves_other_users_alone(api):
    ada, ben = make_user(), make_user()
    ben_tokens = login(api, ben)
    delete_account(api.as_user(ada))
    assert bearer(api, ben_tokens).get("/api/auth/manage/info").status_code == 200
    refreshed = api.post("/api/auth/refresh", json={"refreshToken": ben_tokens["refreshToken"]})
    assert refreshed.status_code == 200


def test_email_and_user_name_are_free_again_after_deletion(api):
    user = make_user("ada_walks", email="ada@example.com")
    delete_account(api.as_user(user))
    assert register(api, "ada@example.com", "ada_walks").status_code == 200
    login(api, "ada@example.com", STRONG_PASSWORD)


def test_the_factory_lists_every_area_clean_up_in_order(app):
    from app.services import (
        categories,
        compliance,
        events,
        identity,
        images,
        notes,
        privacy,
        teams,
        trackables,
        webhooks,
    )
    from app.services.shared import budgets

    assert list(app.extensions["area_hooks"].account_cleanups) == [
        teams.end_account_memberships,
        trackables.delete_account_trackables,
        notes.delete_account_notes,
        categories.delete_account_categories,
        compliance.detach_account_reports,
        images.delete_account_images,
        budgets.delete_account_spends,
        events.delete_account_mail,
        events.delete_account_notifications,
        events.delete_account_area_watches,
        webhooks.delete_account_webhooks,
        privacy.delete_account_exports,
        identity.remove_identity_data,
    ]


def with_cleanups(app, *cleanups):
    """The app's hooks with `cleanups` instead of the areas' own (for this test's app)."""
    hooks = app.extensions["area_hooks"]
    app.extensions["area_hooks"] = dataclasses.replace(hooks, account_cleanups=cleanups)


def test_an_area_plugs_in_its_clean_up_and_its_counts_reach_the_answer(app, api):
    seen: list[str] = []

    def fake_notes_cleanup(user, counts):
        seen.append(user.user_name)
        counts.notes_deleted += 3
        counts.categories_deleted += 2

    with_cleanups(app, fake_notes_cleanup)
    user = make_user("ada_walks")
    body = delete_account(api.as_user(user)).get_json()
    assert seen == ["ada_walks"]
    assert (body["notesDeleted"], body["categoriesDeleted"]) == (3, 2)
    assert db.session.get(User, user.id) is None


def test_clean_ups_run_in_the_listed_order(app, api):
    order: list[int] = []

    def cleanup(position):
        return lambda user, counts: order.append(position)

    with_cleanups(app, cleanup(300), cleanup(100), cleanup(200))
    delete_account(api.as_user(make_user()))
    assert order == [300, 100, 200]
