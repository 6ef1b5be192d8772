"""Rate limits on login, register, forgot-password, resend and reset: per client IP and,
separately, per email; 429 problem details with Retry-After."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from tests.api.identity.helpers import LOGIN_URL, STRONG_PASSWORD
from tests.conftest import assert_problem, needs_fast_path

_addresses = itertools.count(1)


@pytest.fixture
def app_overrides():
    return {
        "RATE_LIMIT_LOGIN": "3 per minute",
        "RATE_LIMIT_REGISTER": "2 per hour",
        "RATE_LIMIT_ACCOUNT_MAIL": "2 per 15 minutes",
    }


def from_ip(ip: str | None = None) -> dict:
    """A request from its own client address (a new one unless given)."""
    return {"environ_base": {"REMOTE_ADDR": ip or f"203.0.113.{next(_addresses)}"}}


def assert_limited(response) -> None:
    assert_problem(response, 429)
    assert int(response.headers["Retry-After"]) > 0


ROUTES = {
    "login": (LOGIN_URL, 3, lambda email: {"email": email, "password": "whatever-1"}),
    "register": (
        "/api/auth/register",
        2,
        lambda email: {"email": email, "userName": "bad name", "password": STRONG_PASSWORD},
    ),
    "forgot": ("/api/auth/forgotPassword", 2, lambda email: {"email": email}),
    "resend": ("/api/auth/resendConfirmationEmail", 2, lambda email: {"email": email}),
    "reset": (
        "/api/auth/resetPassword",
        2,
        lambda email: {"email": email, "resetCode": "x", "newPassword": STRONG_PASSWORD},
    ),
}


@pytest.mark.parametrize("route", ROUTES)
def test_one_client_ip_is_limited_across_emails(api, route):
    url, allowed, body = ROUTES[route]
    ip = from_ip()
    for number in range(allowed):
        response = api.post(url, json=body(f"person{number}@example.com"), **ip)
        assert response.status_code != 429
    assert_limited(api.post(url, json=body("another@example.com"), **ip))


@pytest.mark.parametrize("route", ROUTES)
def test_one_email_is_limited_across_client_ips(api, route):
    url, allowed, body = ROUTES[route]
    for _ in range(allowed):
        assert api.post(url, json=body("ada@example.com"), **from_ip()).status_code != 429
    assert_limited(api.post(url, json=body("ADA@example.com"), **from_ip()))


def test_the_email_limit_leaves_other_emails_alone(api):
    url, allowed, body = ROUTES["login"]
    for _ in range(allowed + 1):
        api.post(url, json=body("ada@example.com"), **from_ip())
    assert api.post(url, json=body("ben@example.com"), **from_ip()).status_code == 401


def test_the_ip_limit_leaves_other_clients_alone(api):
    url, allowed, body = ROUTES["forgot"]
    ip = from_ip()
    for number in range(allowed + 1):
        api.post(url, json=body(f"p{number}@example.com"), **ip)
    assert api.post(url, json=body("ben@example.com"), **from_ip()).status_code == 200


def test_limits_are_per_route(api):
    ip = from_ip()
    for number in range(3):
        api.post("/api/auth/forgotPassword", json={"email": f"p{number}@example.com"}, **ip)
    response = api.post("/api/auth/resendConfirmationEmail", json={"email": "q@example.com"}, **ip)
    assert response.status_code == 200


def test_limited_answer_is_the_same_for_known_and_unknown_emails(api):
    from tests.factories import make_user

    user = make_user()
    ip = from_ip()
    for email in (user.email, "ghost@example.com"):
        api.post("/api/auth/forgotPassword", json={"email": email}, **ip)
    known = api.post("/api/auth/forgotPassword", json={"email": user.email}, **ip)
    unknown = api.post("/api/auth/forgotPassword", json={"email": "ghost@example.com"}, **ip)
    assert known.status_code == unknown.status_code == 429
    assert known.get_json(force=True) == unknown.get_json(force=True)


@needs_fast_path("limiter_hook")
def test_no_limiter_check_runs_before_requests_without_app_wide_limits(app):
    """The limits above are checked by their routes' decorators; with no default,
    application or meta limit the limiter's before-request check is not installed (it
    cost every request of every route), and those limits still answer 429 above."""
    from app.extensions import limiter

    assert limiter._check_request_limit not in app.before_request_funcs.get(None, [])


def test_an_app_with_rate_limits_off_starts_and_serves(tmp_path):
    """RATELIMIT_ENABLED=false installs no limiter hooks at all. In a process of its own:
    the limiter is one object, and turning it off here would turn it off for the other
    apps of this test process."""
    script = (
        "from app import create_app\n"
        "app = create_app({'TESTING': True, 'RATELIMIT_ENABLED': False,\n"
        f"    'SQLALCHEMY_DATABASE_URI': 'sqlite:///{tmp_path / 'off.db'}'}})\n"
        "print(app.test_client().get('/healthz').status_code)\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1:] == ["200"], done.stderr[-2000:]
