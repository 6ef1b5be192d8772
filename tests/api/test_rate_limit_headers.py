"""The rate-limit headers (documented in the OpenAPI introduction): every answer of a
route with a rate limit says the limit, what is left and when the window starts afresh;
over it, 429 with Retry-After. Counted in the database (the default storage), and
readable by an allowed web origin (CORS)."""

from __future__ import annotations

import time

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
