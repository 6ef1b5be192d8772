"""The rate-limit headers (documented in the OpenAPI introduction and on each answer of a
limited operation): every answer of a route with a rate limit says the limit, what is
left and when the window starts afresh; over it, 429 with Retry-After. Counted in the
database (the default storage), and readable by an allowed web origin (CORS). The server
sends them on exactly the operations the document gives them to."""

from __future__ import annotations

import re
import time
import uuid

import pytest

from tests.conftest import assert_problem

LOGIN = "/api/auth/login?useCookies=false&useSessionCookies=false"
WEB_CLIENT = "https://web.example.org"
RATE_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After")


@pytest.fixture
def app_overrides():
    return {
        "RATE_LIMIT_LOGIN": "3 per minute",
        "RATELIMIT_STORAGE_URI": "database://",
        "CORS_ALLOWED_ORIGINS": WEB_CLIENT,
    }


def sign_in(api, email: str = "nobody@example.com"):
    return api.post(
        LOGIN,
        json={"email": email, "password": "not-the-password-1"},
        environ_base={"REMOTE_ADDR": "203.0.113.40"},
    )


def test_each_answer_of_a_limited_route_carries_the_limit_what_is_left_and_the_reset(api):
    before = time.time()
    remaining = []
    for _ in range(3):
        response = sign_in(api)
        assert response.status_code == 401
        assert response.headers["X-RateLimit-Limit"] == "3"
        remaining.append(int(response.headers["X-RateLimit-Remaining"]))
        reset = int(response.headers["X-RateLimit-Reset"])
        assert before - 1 <= reset <= before + 61  # Unix seconds, within the minute
        assert 0 <= int(response.headers["Retry-After"]) <= 60
    assert remaining == [2, 1, 0]


def test_over_the_limit_is_429_with_retry_after_and_the_headers(api):
    for _ in range(3):
        sign_in(api)
    response = sign_in(api)
    assert_problem(response, 429)
    assert 0 < int(response.headers["Retry-After"]) <= 60
    assert response.headers["X-RateLimit-Remaining"] == "0"
    assert response.headers["X-RateLimit-Limit"] == "3"


def test_a_route_without_a_rate_limit_sends_none_of_them(api):
    response = api.get("/api/system/status")
    assert response.status_code == 200
    for name in RATE_HEADERS:
        assert name not in response.headers


def test_an_allowed_web_origin_may_read_them(api):
    response = api.post(
        LOGIN,
        json={"email": "nobody@example.com", "password": "not-the-password-1"},
        headers={"Origin": WEB_CLIENT},
    )
    assert response.headers["Access-Control-Allow-Origin"] == WEB_CLIENT
    exposed = {
        name.strip() for name in response.headers["Access-Control-Expose-Headers"].split(",")
    }
    assert set(RATE_HEADERS) <= exposed
    for name in RATE_HEADERS:
        assert name in response.headers


REGISTER = "/api/auth/register"
METHODS = {"get", "post", "put", "patch", "delete"}


def register(api, **body):
    return api.post(REGISTER, json=body, environ_base={"REMOTE_ADDR": "203.0.113.41"})


def test_a_success_and_a_refusal_of_a_limited_route_carry_them(api):
    accepted = register(
        api, email="walker@example.com", userName="walker_one", password="a long pass phrase 7"
    )
    assert accepted.status_code == 200, accepted.get_data(as_text=True)
    refused = register(api, email="not an email", userName="walker_two", password="x")
    assert_problem(refused, 400)
    for response in (accepted, refused):
        for name in RATE_HEADERS:
            assert name in response.headers, (response.status_code, name)


def test_a_body_refused_before_the_count_carries_none(api, app):
    """Not JSON (400) or over the size limit (413): refused before the route counts the
    request, so the document requires none of the headers and lists none on 413."""
    not_json = api.post(REGISTER, data=b"{not json", content_type="application/json")
    too_large = api.post(
        REGISTER,
        data=b" " * (app.config["MAX_CONTENT_LENGTH"] + 1),
        content_type="application/json",
    )
    assert_problem(not_json, 400)
    assert_problem(too_large, 413)
    for response in (not_json, too_large):
        for name in RATE_HEADERS:
            assert name not in response.headers, (response.status_code, name)


def test_the_server_sends_them_on_exactly_the_operations_the_document_says(api):
    """Each documented operation once, anonymous, with an empty JSON body: a limit counts
    before anything else of its route, so whatever the answer (401, 400, 404), it carries
    the headers where the document lists them and nowhere else."""
    document = api.get("/api/openapi.json").get_json()
    disagree = []
    for path, item in document["paths"].items():
        url = re.sub(r"\{(\w+)\}", lambda match: filler(match.group(1)), path)
        for method, operation in item.items():
            if method not in METHODS:
                continue
            documented = any(
                "X-RateLimit-Limit" in response.get("headers", {})
                for response in operation["responses"].values()
            )
            body = {"json": {}} if "requestBody" in operation else {}
            response = api.open(method.upper(), url, **body)
            assert response.status_code < 500, f"{method.upper()} {url}"
            if ("X-RateLimit-Limit" in response.headers) != documented:
                disagree.append(f"{method.upper()} {path}: {response.status_code}")
    assert disagree == []


def filler(parameter: str) -> str:
    """A value of the path parameter's shape that names nothing."""
    if parameter.endswith("Id"):
        return str(uuid.uuid4())
    return {"variant": "thumbnail", "name": "notes"}.get(parameter, "nobody")
