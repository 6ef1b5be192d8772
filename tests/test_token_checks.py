"""What every authenticated request does first (app.auth, app.extensions): verify the
bearer token (remembered per process until it expires) and load its account (on
PostgreSQL through the driver, app.platform.database.get_by_driver). Both are shortcuts: these
tests hold them to the answers of the long way."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from flask_jwt_extended import JWTManager, create_access_token
from sqlalchemy import inspect

from app.extensions import db
from app.models.user import User
from app.platform.database import get_by_driver
from tests.conftest import assert_problem, needs_fast_path
from tests.factories import DEFAULT_PASSWORD, make_user

INFO = "/api/auth/manage/info"


@pytest.fixture
def decodes(monkeypatch):
    """Counts the full verifications (claims, header, signature) of a token."""
    calls = []
    verify = JWTManager._decode_jwt_from_config

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return verify(self, *args, **kwargs)

    monkeypatch.setattr(JWTManager, "_decode_jwt_from_config", counting)
    return calls


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@needs_fast_path("jwt_decode_cache")
def test_a_token_is_verified_once_while_it_is_valid(api, decodes):
    user = make_user("ada")
    client = api.as_user(user)
    for _ in range(3):
        assert client.get(INFO).status_code == 200
    assert len(decodes) == 1


@needs_fast_path("jwt_decode_cache")
def test_a_verified_tokens_header_is_read_once(api, monkeypatch):
    import jwt as pyjwt

    reads = []
    read = pyjwt.get_unverified_header

    def counting(token):
        reads.append(token)
        return read(token)

    monkeypatch.setattr(pyjwt, "get_unverified_header", counting)
    client = api.as_user(make_user("ada"))
    assert client.get(INFO).status_code == 200
    when_verified = len(reads)
    for _ in range(3):
        assert client.get(INFO).status_code == 200
    assert len(reads) == when_verified  # the kept header since


def test_a_token_with_a_changed_header_is_refused_after_the_original_was_kept(api):
    user = make_user("ada")
    client = api.as_user(user)
    assert client.get(INFO).status_code == 200  # verified, its header kept
    _header, claims, signature = client.token.split(".")
    other = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IngifQ"  # a kid added
    response = api.client.get(INFO, headers=bearer(f"{other}.{claims}.{signature}"))
    assert_problem(response, 401, code="invalid_token")


def test_a_remembered_token_is_refused_once_it_expires(app, api, decodes):
    user = make_user("ada")
    token = create_access_token(
        identity=str(user.id),
        additional_claims={"stamp": user.security_stamp},
        expires_delta=timedelta(seconds=1),
    )
    assert api.client.get(INFO, headers=bearer(token)).status_code == 200
    time.sleep(1.2)
    response = api.client.get(INFO, headers=bearer(token))
    assert_problem(response, 401)
    assert "expired" in response.get_json()["detail"]


def test_a_remembered_token_is_refused_after_the_password_changes(api):
    user = make_user("ada")
    client = api.as_user(user)
    assert client.get(INFO).status_code == 200
    changed = client.post(
        INFO, json={"oldPassword": DEFAULT_PASSWORD, "newPassword": "Another-horse-battery-10"}
    )
    assert changed.status_code == 200, changed.get_data(as_text=True)
    assert_problem(client.get(INFO), 401)


def test_a_token_signed_with_another_key_is_refused_even_with_the_same_claims(app, api):
    user = make_user("ada")
    good = api.as_user(user).token
    header, claims, signature = good.split(".")
    forged = f"{header}.{claims}.{signature[::-1]}"
    assert api.client.get(INFO, headers=bearer(good)).status_code == 200
    assert_problem(api.client.get(INFO, headers=bearer(forged)), 401)


# --- the account, loaded through the driver ----------------------------------------------


def fresh_session() -> None:
    """Forget every loaded object, as a new request's session would have none."""
    db.session.remove()


def test_the_driver_loads_what_the_orm_loads(app):
    user_id = make_user("ada", experience_mode="no_3rd_parties").id
    fresh_session()
    loaded = get_by_driver(db.session(), User, user_id)
    state = inspect(loaded)
    assert state.persistent
    assert not state.modified
    assert loaded in db.session
    by_driver = {c.key: getattr(loaded, c.key) for c in inspect(User).column_attrs}
    fresh_session()
    by_orm_user = db.session.get(User, user_id)
    by_orm = {c.key: getattr(by_orm_user, c.key) for c in inspect(User).column_attrs}
    assert by_driver == by_orm
    assert isinstance(by_driver["id"], uuid.UUID)
    assert by_driver["created_utc"].utcoffset() == timedelta(0)


def test_the_driver_finds_nothing_for_an_unknown_key(app):
    assert get_by_driver(db.session(), User, uuid.uuid4()) is None


def test_an_account_loaded_by_the_driver_saves_its_changes(app):
    user_id = make_user("ada").id
    fresh_session()
    user = get_by_driver(db.session(), User, user_id)
    user.map_source = "openstreetmap"
    db.session.commit()
    fresh_session()
    assert db.session.get(User, user_id).map_source == "openstreetmap"


@needs_fast_path("driver_reads")
def test_a_read_requests_caller_is_read_in_no_session(app, database_url):
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite reads through the session")
    user_id = make_user("ada").id
    fresh_session()
    user = get_by_driver(db.session(), User, user_id, attach=False)
    state = inspect(user)
    assert state.detached
    assert state.identity == (user_id,)
    assert user not in db.session
    assert not db.session().in_transaction()  # nothing for the request's end to roll back
    assert user.email == "ada@example.com"  # every column loaded


def test_a_request_with_a_fresh_session_reads_and_changes_its_account(api):
    user = make_user("ada")
    client = api.as_user(user)
    fresh_session()
    assert client.get(INFO).get_json()["email"] == "ada@example.com"
    fresh_session()
    response = client.post(INFO, json={"mapSource": "google"})
    assert response.status_code == 200, response.get_data(as_text=True)
    fresh_session()
    assert client.get(INFO).get_json()["mapSource"] == "google"
