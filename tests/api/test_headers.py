"""Security headers and CORS (app/platform/headers.py)."""

from __future__ import annotations

import pytest

from tests.factories import DEFAULT_PASSWORD, make_trackable, make_user

STATUS = "/api/system/status"
WEB_CLIENT = "https://app.example.org"


def test_every_response_has_nosniff_a_referrer_policy_and_no_framing(api):
    for response in (api.get(STATUS), api.get("/api/no-such-route")):
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        assert response.headers["X-Frame-Options"] == "DENY"
        assert "Content-Security-Policy" not in response.headers  # JSON, not a page


def test_html_pages_carry_a_content_security_policy_that_forbids_framing(api):
    trackable = make_trackable(make_user())
    response = api.get(f"/trackable/{trackable.public_code}")
    assert response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy
    assert "frame-ancestors 'none'" in policy


def test_the_api_documentation_page_may_run_its_own_scripts_only(api):
    response = api.get("/api/docs")
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self' 'unsafe-inline'" in policy
    assert "frame-ancestors 'none'" in policy


def test_token_and_account_responses_are_not_stored(api):
    user = make_user()
    login = api.post("/api/auth/login", json={"email": user.email, "password": DEFAULT_PASSWORD})
    assert login.status_code == 200
    assert login.headers["Cache-Control"] == "no-store"
    info = api.as_user(user).get("/api/auth/manage/info")
    assert info.headers["Cache-Control"] == "no-store"
    assert "no-store" not in api.get(STATUS).headers.get("Cache-Control", "")


def test_hsts_is_sent_in_production_only(app, api):
    assert "Strict-Transport-Security" not in api.get(STATUS).headers
    app.config["ENV_NAME"] = "production"
    assert api.get(STATUS).headers["Strict-Transport-Security"].startswith("max-age=31536000")
    app.config["HSTS_MAX_AGE_SECONDS"] = 0
    assert "Strict-Transport-Security" not in api.get(STATUS).headers


def test_no_server_version_comes_from_the_app(api):
    assert "Server" not in api.get(STATUS).headers


def test_cors_is_off_by_default(api):
    response = api.get(STATUS, headers={"Origin": WEB_CLIENT})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = api.open("OPTIONS", STATUS, headers={"Origin": WEB_CLIENT})
    assert "Access-Control-Allow-Origin" not in preflight.headers


class TestAllowList:
    @pytest.fixture
    def app_overrides(self):
        return {"CORS_ALLOWED_ORIGINS": f"{WEB_CLIENT}/, https://other.example.org"}

    def test_an_allowed_origin_is_echoed_never_a_wildcard(self, api):
        response = api.get(STATUS, headers={"Origin": WEB_CLIENT})
        assert response.headers["Access-Control-Allow-Origin"] == WEB_CLIENT
        assert "X-Request-ID" in response.headers["Access-Control-Expose-Headers"]
        assert "Origin" in response.headers.getlist("Vary")

    def test_a_preflight_names_the_methods_and_headers_a_client_may_send(self, api):
        preflight = api.open(
            "OPTIONS",
            "/api/notes/mine",
            headers={
                "Origin": WEB_CLIENT,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "Authorization, Content-Type",
            },
        )
        assert preflight.status_code < 300
        assert preflight.headers["Access-Control-Allow-Origin"] == WEB_CLIENT
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]

    def test_an_origin_off_the_list_gets_no_cors_headers(self, api):
        response = api.get(STATUS, headers={"Origin": "https://evil.example.org"})
        assert "Access-Control-Allow-Origin" not in response.headers
