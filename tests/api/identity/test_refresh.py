"""POST /api/auth/refresh: single-use rotating refresh tokens, reuse revokes the family."""

from __future__ import annotations

import hashlib
from datetime import timedelta

from sqlalchemy import update

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import RefreshToken
from tests.api.identity.helpers import bearer
from tests.conftest import assert_problem
from tests.factories import login, make_user


def refresh(api, token):
    return api.post("/api/auth/refresh", json={"refreshToken": token})


def test_refresh_returns_new_tokens_in_the_login_shape(api):
    tokens = login(api, make_user())
    response = refresh(api, tokens["refreshToken"])
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"tokenType", "accessToken", "expiresIn", "refreshToken"}
    assert body["tokenType"] == "Bearer"
    assert body["expiresIn"] == 3600
    assert body["refreshToken"] != tokens["refreshToken"]


def test_refreshed_access_token_works(api):
    user = make_user()
    body = refresh(api, login(api, user)["refreshToken"]).get_json()
    assert bearer(api, body).get("/api/auth/manage/info").get_json()["email"] == user.email


def test_refreshed_refresh_token_works_in_turn(api):
    first = login(api, make_user())
    second = refresh(api, first["refreshToken"]).get_json()
    assert refresh(api, second["refreshToken"]).status_code == 200


def test_a_refresh_token_works_only_once(api):
    tokens = login(api, make_user())
    assert refresh(api, tokens["refreshToken"]).status_code == 200
    body = assert_problem(refresh(api, tokens["refreshToken"]), 401, code="invalid_refresh_token")
    assert "already used" in body["detail"]


def test_reusing_a_used_token_revokes_its_whole_family(api):
    first = login(api, make_user())
    second = refresh(api, first["refreshToken"]).get_json()
    assert_problem(refresh(api, first["refreshToken"]), 401)  # replay: someone has a copy
    assert_problem(refresh(api, second["refreshToken"]), 401)


def test_reuse_leaves_other_sign_ins_of_the_user_alone(api):
    user = make_user()
    phone, laptop = login(api, user), login(api, user)
    refresh(api, phone["refreshToken"])
    refresh(api, phone["refreshToken"])
    assert refresh(api, laptop["refreshToken"]).status_code == 200


def test_unknown_refresh_token_is_401(api):
    assert_problem(refresh(api, "made-up-token"), 401, code="invalid_refresh_token")


def test_expired_refresh_token_is_401(api):
    tokens = login(api, make_user())
    db.session.execute(update(RefreshToken).values(expires_utc=utcnow() - timedelta(seconds=1)))
    db.session.commit()
    assert_problem(refresh(api, tokens["refreshToken"]), 401)


def test_refresh_tokens_expire_after_14_days(api):
    login(api, make_user())
    token = db.session.query(RefreshToken).one()
    lifetime = token.expires_utc - token.created_utc
    assert lifetime == timedelta(days=14)


def test_refresh_tokens_are_stored_only_as_sha256_hashes(api):
    raw = login(api, make_user())["refreshToken"]
    token = db.session.query(RefreshToken).one()
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in {token.token_hash, str(token.id), str(token.family_id)}


def test_refresh_without_a_token_is_400(api):
    body = assert_problem(api.post("/api/auth/refresh", json={}), 400)
    assert set(body["errors"]) == {"refreshToken"}


def test_refresh_token_of_a_rotated_security_stamp_is_401(api):
    user = make_user()
    tokens = login(api, user)
    user.security_stamp = "rotated-elsewhere"
    db.session.commit()
    assert_problem(refresh(api, tokens["refreshToken"]), 401)
