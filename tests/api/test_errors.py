"""Every error is application/problem+json (decisions: Wire format)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import jwt as pyjwt
import pytest
from flask import Flask
from marshmallow import fields, validate

from app.api import api as smorest_api
from app.api.base import Blueprint, RequestSchema
from app.auth import issue_access_token
from app.extensions import db, limiter
from app.models.compliance import ContentReport
from tests.conftest import ApiClient, assert_problem, serve_test_app
from tests.factories import make_user

probe = Blueprint("probe", __name__, url_prefix="/api/probe")


class EchoSchema(RequestSchema):
    read_models = ()

    display_name = fields.String(required=True, validate=validate.Length(min=1, max=50))
    count = fields.Integer(load_default=1, validate=validate.Range(min=1, max=10))
    latitude = fields.Float(allow_none=True, validate=validate.Range(-90, 90))


@probe.route("/echo", methods=["POST"])
@probe.arguments(EchoSchema)
@probe.response(200, EchoSchema)
def echo(data: dict[str, Any]) -> dict[str, Any]:
    """Echo a body"""
    return data


@probe.route("/private", methods=["GET"])
@probe.auth()
@probe.response(204)
def private() -> None:
    """Need a token"""


@probe.route("/boom", methods=["GET"])
@probe.response(204)
def boom() -> None:
    """Fail unexpectedly"""
    db.session.execute(db.text("SELECT * FROM no_such_table_for_sure"))


@probe.route("/limited", methods=["GET"])
@limiter.limit("2 per minute")
@probe.response(204)
def limited() -> None:
    """Rate limited"""


def register_probe(app: Flask) -> None:
    smorest_api.register_blueprint(probe)


@pytest.fixture
def app(database_url, tmp_path_factory):
    yield from serve_test_app(
        database_url, tmp_path_factory, {"MAX_CONTENT_LENGTH": 10_000}, register_probe
    )


def post_json(api: ApiClient, body: str | bytes, content_type: str = "application/json"):
    return api.post("/api/probe/echo", data=body, headers={"Content-Type": content_type})


def test_unknown_route_is_404_problem(api):
    body = assert_problem(api.get("/api/does-not-exist"), 404)
    assert "/api/does-not-exist" in body["detail"]


def test_wrong_method_is_405_problem_with_allow(api):
    response = api.delete("/api/system/status")
    assert_problem(response, 405)
    assert "GET" in response.headers["Allow"]


def test_oversized_body_is_413_problem(api):
    response = post_json(api, '{"displayName": "' + "x" * 20_000 + '"}')
    assert_problem(response, 413)


def test_malformed_json_is_400(api):
    body = assert_problem(post_json(api, '{"displayName": '), 400)
    assert "JSON" in body["detail"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(api, literal):
    assert_problem(post_json(api, f'{{"displayName": "a", "latitude": {literal}}}'), 400)


def test_deeply_nested_json_is_400(api):
    body = assert_problem(post_json(api, '{"displayName": ' + "[" * 100 + "]" * 100 + "}"), 400)
    assert "nested deeper" in body["detail"]


@pytest.mark.parametrize(
    "document",
    [
        '{"displayName": "a\\u0000b"}',
        '{"displayName": "a", "tags": [["x", "b\\u0000"]]}',
        '{"displayName": "a", "extra": {"inner": {"k\\u0000": 1}}}',
        '"\\u0000"',
    ],
)
def test_nul_character_in_json_is_400(api, document):
    body = assert_problem(post_json(api, document), 400)
    assert "NUL" in body["detail"]


def test_an_escaped_backslash_before_u0000_is_text_not_nul(api):
    # The six characters \u0000 (a backslash escaped, then "u0000"): no NUL in them.
    answer = post_json(api, '{"displayName": "a\\\\u0000b"}')
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["displayName"] == "a\\u0000b"


def test_nul_character_in_query_is_400(api):
    assert_problem(api.get("/api/system/coordinate-locality?latitude=1%00"), 400)


def test_wrong_content_type_is_415(api):
    assert_problem(post_json(api, "displayName=a", "application/x-www-form-urlencoded"), 415)


def test_validation_failure_is_400_with_camelcase_errors_map(api):
    body = assert_problem(post_json(api, '{"count": 99}'), 400)
    assert set(body["errors"]) == {"displayName", "count"}
    assert all(isinstance(message, str) for message in body["errors"]["count"])


def test_empty_body_reports_required_fields(api):
    body = assert_problem(api.post("/api/probe/echo"), 400)
    assert "displayName" in body["errors"]


def test_valid_body_passes(api):
    response = post_json(api, '{"displayName": "Ada", "latitude": 52.5}')
    assert response.status_code == 200
    assert response.get_json() == {"displayName": "Ada", "count": 1, "latitude": 52.5}


def test_missing_token_is_401_with_bearer_challenge(api):
    response = api.get("/api/probe/private")
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def _token_for(app: Flask, **claims: Any) -> str:
    payload = {"sub": claims.pop("sub", "00000000-0000-4000-8000-000000000000"), **claims}
    return pyjwt.encode(payload, app.config["JWT_SECRET_KEY"], algorithm="HS256")


@pytest.mark.parametrize(
    "token",
    ["not-a-jwt", "a.b.c", "Bearer", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."],
    ids=["garbage", "three-parts", "word", "alg-none"],
)
def test_malformed_tokens_are_401(api, token):
    response = api.with_token(token).get("/api/probe/private")
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_tampered_token_is_401(api, app):
    user = make_user()
    token = issue_access_token(user)
    head, payload, signature = token.split(".")
    tampered = f"{head}.{payload}.{signature[:-4]}AAAA"
    assert_problem(api.with_token(tampered).get("/api/probe/private"), 401)


def test_token_signed_with_another_key_is_401(api):
    forged = pyjwt.encode(
        {"sub": "x", "type": "access"},
        "another-key-that-is-long-enough-for-hs256",
        algorithm="HS256",
    )
    assert_problem(api.with_token(forged).get("/api/probe/private"), 401)


def test_expired_token_is_401(api, app):
    user = make_user()
    from flask_jwt_extended import create_access_token

    token = create_access_token(
        identity=str(user.id),
        additional_claims={"stamp": user.security_stamp},
        expires_delta=timedelta(seconds=-10),
    )
    body = assert_problem(api.with_token(token).get("/api/probe/private"), 401)
    assert "expired" in body["detail"]


def test_token_of_deleted_user_is_401(api):
    user = make_user()
    token = issue_access_token(user)
    db.session.delete(user)
    db.session.commit()
    assert_problem(api.with_token(token).get("/api/probe/private"), 401)


def test_token_with_old_security_stamp_is_401(api):
    user = make_user()
    token = issue_access_token(user)
    user.security_stamp = "rotated"
    db.session.commit()
    assert_problem(api.with_token(token).get("/api/probe/private"), 401)


def test_valid_token_passes(api):
    user = make_user()
    assert api.as_user(user).get("/api/probe/private").status_code == 204


def test_invalid_token_on_optional_route_is_401(api):
    assert_problem(api.with_token("garbage").get("/api/system/status"), 401)


def test_unexpected_error_is_500_with_stored_ticket_and_no_internals(api):
    response = api.get("/api/probe/boom")
    body = assert_problem(response, 500)
    ticket = body["ticketNumber"]
    assert ticket.startswith("ERR-")
    text = response.get_data(as_text=True)
    assert "no_such_table" not in text
    assert "Traceback" not in text
    stored = db.session.query(ContentReport).filter_by(ticket_number=ticket).one()
    assert (stored.page_type, stored.content_type) == (5, 6)
    assert stored.error_details["exceptionType"]


def test_rate_limit_is_429_with_retry_after(api):
    assert api.get("/api/probe/limited").status_code == 204
    assert api.get("/api/probe/limited").status_code == 204
    response = api.get("/api/probe/limited")
    assert_problem(response, 429)
    assert int(response.headers["Retry-After"]) > 0


def test_request_id_is_echoed_or_generated(api):
    echoed = api.get("/healthz", headers={"X-Request-ID": "abc-123"})
    assert echoed.headers["X-Request-ID"] == "abc-123"
    generated = api.get("/healthz", headers={"X-Request-ID": "bad id with spaces"})
    assert generated.headers["X-Request-ID"] not in ("", "bad id with spaces")


@pytest.mark.parametrize(
    "url",
    [
        "/api/teams/invite-links/a%00b/code/join",
        "/api/teams/invite-links/team/a%00b/join",
        "/api/public/profiles/a%00b/notes/nearby?latitude=1&longitude=1",
    ],
)
def test_a_nul_character_in_a_path_segment_names_nothing(api, url):
    # PostgreSQL refuses NUL in text: the look-up used to fail with a 500 there.
    user = make_user()
    method = "POST" if url.endswith("/join") else "GET"
    assert_problem(api.as_user(user).open(method, url), 404)
