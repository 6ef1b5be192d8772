"""Website sessions kept on the server, and the account page: the cookie holds only a
session id, sign-out refuses a copy of it at once, the page lists and ends the browsers and
the app's sign-ins (one by one or everywhere), a password change ends them, another
account's id is refused, last use is written at most every five minutes, and the sessions
are in the data export and go with the account."""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
import uuid
import zipfile
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.base import utcnow
from app.models.identity import RefreshToken, WebsiteSession
from app.platform.database.replica import SIGNED_IN_CHECKS, WROTE_COOKIE
from app.platform.jobs import Worker
from app.services import identity
from app.services.identity import website_sessions
from tests.api.privacy.conftest import export_ready
from tests.conftest import ApiClient
from tests.factories import DEFAULT_PASSWORD, count_rows, make_user
from tests.pages import csrf_token
from tests.platform.test_replica import both, replica_url  # noqa: F401 - their fixtures
from tests.racing import stop_after
from tests.web.conftest import notices_of, text_of
from tests.web.test_sign_in import SIGN_IN

ACCOUNT = "/en/account"
COOKIE = "ln_pages"
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)
APP = "LocationNotes/2.1 (Android 14; Pixel 8)"


def browser(app) -> ApiClient:
    """Another browser: a client with cookies of its own."""
    return ApiClient(app.test_client())


def sign_in(client: ApiClient, user, agent: str = FIREFOX):
    token = csrf_token(client, SIGN_IN)
    data = {"csrf_token": token, "email": user.email, "password": DEFAULT_PASSWORD}
    response = client.post(SIGN_IN, data=data, headers={"User-Agent": agent})
    assert response.status_code == 303, text_of(response)
    return response


def signed_in(client: ApiClient) -> bool:
    return 'action="/en/sign-out"' in text_of(client.get("/en/"))


def post_form(client: ApiClient, path: str):
    return client.post(path, data={"csrf_token": csrf_token(client, ACCOUNT)})


def cookie_of(client: ApiClient) -> str:
    cookie = client.client.get_cookie(COOKIE)
    assert cookie is not None
    return cookie.value


def rows_of(user) -> list[WebsiteSession]:
    db.session.expire_all()
    return list(db.session.scalars(select(WebsiteSession).where(WebsiteSession.user_id == user.id)))


def app_login(api: ApiClient, user) -> dict:
    response = api.post(
        "/api/auth/login?useCookies=false&useSessionCookies=false",
        json={"email": user.email, "password": DEFAULT_PASSWORD},
        headers={"User-Agent": APP},
    )
    assert response.status_code == 200, text_of(response)
    return response.get_json()


def refreshes(api: ApiClient, tokens: dict) -> bool:
    response = api.post("/api/auth/refresh", json={"refreshToken": tokens["refreshToken"]})
    return response.status_code == 200


# --- the cookie and sign-out ------------------------------------------------------------------


def test_the_cookie_holds_only_a_session_id_whose_hash_is_stored(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    held = app.session_interface.get_signing_serializer(app).loads(cookie_of(api))
    raw = held["account"]
    assert isinstance(raw, str)
    assert len(raw) >= 43  # 32 random bytes, base64: 256 bits
    assert set(held) <= {"account", "csrf_token", "_flashes"}
    assert str(ada.id) not in json.dumps(held)
    assert ada.security_stamp not in json.dumps(held)
    (row,) = rows_of(ada)
    assert row.token_hash == hashlib.sha256(raw.encode()).hexdigest()


def test_a_cookie_copied_before_sign_out_is_refused_after_it(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    copied = cookie_of(api)
    thief = browser(app)
    thief.client.set_cookie(COOKIE, copied)
    assert signed_in(thief)  # the copy works while the session lasts
    response = api.post("/en/sign-out", data={"csrf_token": csrf_token(api, "/en/")})
    assert response.status_code == 303
    assert rows_of(ada) == []
    assert not signed_in(thief)
    refused = thief.get(ACCOUNT)
    assert refused.status_code == 303
    assert refused.headers["Location"] == f"{SIGN_IN}?next={ACCOUNT}"


def test_a_new_sign_in_replaces_the_browsers_session_with_a_new_id(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    before = cookie_of(api)
    first = [row.id for row in rows_of(ada)]
    sign_in(api, ada)
    second = [row.id for row in rows_of(ada)]  # the first went: one row for this browser
    assert len(first) == len(second) == 1
    assert second != first
    assert cookie_of(api) != before
    thief = browser(app)
    thief.client.set_cookie(COOKIE, before)
    assert not signed_in(thief)


def test_a_session_ends_after_session_max_age_hours(app, api, monkeypatch):
    ada = make_user("ada")
    sign_in(api, ada)
    hours = float(app.config["SESSION_MAX_AGE_HOURS"])
    almost = utcnow() + timedelta(hours=hours) - timedelta(minutes=1)
    monkeypatch.setattr(website_sessions, "utcnow", lambda: almost)
    assert signed_in(api)
    monkeypatch.setattr(website_sessions, "utcnow", lambda: almost + timedelta(minutes=2))
    assert not signed_in(api)
    later = almost + timedelta(minutes=2)
    assert Worker(app, name="tests", clock=lambda: later).clean_up() >= 1
    assert rows_of(ada) == []


# --- the account page ---------------------------------------------------------------------------


def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in_and_back(app, api):
    response = api.get(ACCOUNT)
    assert response.status_code == 303
    assert response.headers["Location"] == f"{SIGN_IN}?next={ACCOUNT}"
    token = csrf_token(api, "/en/")
    for path in (
        f"/en/account/sessions/{uuid.uuid4()}/sign-out",
        f"/en/account/apps/{uuid.uuid4()}/sign-out",
        "/en/account/sign-out-everywhere",
    ):
        refused = api.post(path, data={"csrf_token": token})
        assert refused.status_code == 303
        assert refused.headers["Location"].startswith(SIGN_IN)
    ada = make_user("ada")
    token = csrf_token(api, response.headers["Location"])
    back = api.post(
        response.headers["Location"],
        data={"csrf_token": token, "email": ada.email, "password": DEFAULT_PASSWORD},
    )
    assert back.headers["Location"] == ACCOUNT


def test_a_bearer_token_opens_nothing_on_the_account_page(api):
    response = api.as_user(make_user("ada")).get(ACCOUNT)
    assert response.status_code == 303
    assert response.headers["Location"].startswith(SIGN_IN)


def test_the_header_links_the_account_page(api):
    sign_in(api, make_user("ada"))
    assert 'href="/en/account"' in text_of(api.get("/en/"))
    assert 'href="/de/account">Konto<' in text_of(api.get("/de/"))


def test_the_page_lists_the_browsers_and_the_app_this_browser_marked(app, api):
    ada = make_user("ada")
    sign_in(api, ada, FIREFOX)
    sign_in(browser(app), ada, IPHONE)
    app_login(browser(app), ada)
    response = api.get(ACCOUNT)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "private, no-store"
    page = text_of(response)
    browsers = page.split("<h2>")[1]
    assert browsers.count('class="card session"') == 2
    assert re.search(r"Firefox · Linux\s*<span class=\"badge ok\">This browser</span>", browsers)
    assert "Safari · iPhone" in browsers
    assert browsers.count("This browser") == 1
    apps = page.split("<h2>")[2]
    assert "LocationNotes · Android" in apps
    assert apps.count('class="card session"') == 1
    assert 'href="/en/account/notifications"' in page
    assert 'href="/de/account"' in page  # the page in the other language
    german = text_of(api.get("/de/account"))
    assert "Dieser Browser" in german
    assert "Überall abmelden" in german


def test_an_app_keeps_its_device_and_sign_in_time_through_its_refreshes(app, api):
    ada = make_user("ada")
    app_client = browser(app)
    tokens = app_login(app_client, ada)
    refreshed = app_client.post(
        "/api/auth/refresh",
        json={"refreshToken": tokens["refreshToken"]},
        headers={"User-Agent": "okhttp/4.12.0"},
    )
    assert refreshed.status_code == 200
    db.session.expire_all()
    first, second = db.session.scalars(
        select(RefreshToken)
        .where(RefreshToken.user_id == ada.id)
        .order_by(RefreshToken.created_utc)
    )
    assert first.device == second.device == "LocationNotes · Android"
    assert first.signed_in_utc == second.signed_in_utc == first.created_utc
    sign_in(api, ada)
    apps = text_of(api.get(ACCOUNT)).split("<h2>")[2]
    assert apps.count('class="card session"') == 1  # one sign-in, however often refreshed
    assert "okhttp" not in apps


def test_a_device_is_a_short_label_never_the_header(app, api):
    ada = make_user("ada")
    sign_in(api, ada, '<img src=x onerror="alert(1)"> Firefox/1 ' + "x" * 400)
    sign_in(browser(app), ada, "{evil}/1.0 agent")
    page = text_of(api.get(ACCOUNT))
    assert "onerror" not in page
    assert "evil" not in page
    assert "Unknown device" in page
    assert {row.device for row in rows_of(ada)} == {"Firefox", ""}


def test_browsers_and_the_app_are_signed_out_one_by_one(app, api):
    ada = make_user("ada")
    sign_in(api, ada, FIREFOX)
    phone = browser(app)
    sign_in(phone, ada, IPHONE)
    tokens = app_login(browser(app), ada)
    phone_row = next(row for row in rows_of(ada) if row.device == "Safari · iPhone")

    ended = post_form(api, f"/en/account/sessions/{phone_row.id}/sign-out")
    assert ended.status_code == 303
    assert ended.headers["Location"] == ACCOUNT
    assert notices_of(api.get(ACCOUNT)) == ["That browser is signed out."]
    assert not signed_in(phone)
    assert signed_in(api)

    page = text_of(api.get(ACCOUNT))
    family = re.search(r'action="/en/account/apps/([0-9a-f-]+)/sign-out"', page)
    assert family is not None
    ended = post_form(api, f"/en/account/apps/{family.group(1)}/sign-out")
    assert ended.status_code == 303
    assert notices_of(api.get(ACCOUNT)) == ["The app on that device is signed out."]
    assert not refreshes(browser(app), tokens)
    assert "LocationNotes" not in text_of(api.get(ACCOUNT))

    (mine,) = rows_of(ada)
    ended = post_form(api, f"/en/account/sessions/{mine.id}/sign-out")
    assert ended.status_code == 303
    assert rows_of(ada) == []
    follow = api.get(ACCOUNT)
    assert follow.status_code == 303  # this browser signed out: to sign-in
    assert notices_of(api.get(follow.headers["Location"])) == [
        "You are signed out on this browser."
    ]


def test_sign_out_everywhere_ends_every_browser_and_the_app(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    phone = browser(app)
    sign_in(phone, ada, IPHONE)
    app_client = browser(app)
    tokens = app_login(app_client, ada)
    bearer = {"Authorization": f"Bearer {tokens['accessToken']}"}
    assert app_client.get("/api/auth/manage/info", headers=bearer).status_code == 200

    response = post_form(api, "/en/account/sign-out-everywhere")
    assert response.status_code == 303
    assert response.headers["Location"] == ACCOUNT
    assert rows_of(ada) == []
    assert not signed_in(api)
    assert not signed_in(phone)
    assert not refreshes(app_client, tokens)
    assert app_client.get("/api/auth/manage/info", headers=bearer).status_code == 401


def test_the_forms_need_the_csrf_token(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    (mine,) = rows_of(ada)
    for path in (f"/en/account/sessions/{mine.id}/sign-out", "/en/account/sign-out-everywhere"):
        assert api.post(path, data={}).status_code == 400
    assert len(rows_of(ada)) == 1
    assert signed_in(api)


def test_a_password_change_ends_the_website_sessions(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    changed = api.as_user(ada).post(
        "/api/auth/manage/info",
        json={"oldPassword": DEFAULT_PASSWORD, "newPassword": "a-new-long-secret-42"},
    )
    assert changed.status_code == 200, text_of(changed)
    assert rows_of(ada) == []
    assert not signed_in(api)


def test_a_changed_stamp_alone_ends_the_session(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    ada.security_stamp = uuid.uuid4().hex
    db.session.commit()
    assert len(rows_of(ada)) == 1  # the row is there, its stamp no longer the account's
    assert not signed_in(api)


def test_another_accounts_session_ids_are_refused_and_left_alone(app, api):
    kim = make_user("kim")
    kims_browser = browser(app)
    sign_in(kims_browser, kim)
    (kims_row,) = rows_of(kim)
    kims_app = browser(app)
    tokens = app_login(kims_app, kim)
    sign_in(api, make_user("ada"))
    page = text_of(api.get(ACCOUNT))
    assert str(kims_row.id) not in page
    kims_family = re.search(r"/apps/([0-9a-f-]+)/", text_of(kims_browser.get(ACCOUNT)))
    assert kims_family is not None
    for path in (
        f"/en/account/sessions/{kims_row.id}/sign-out",
        f"/en/account/apps/{kims_family.group(1)}/sign-out",
        f"/en/account/apps/{kims_row.id}/sign-out",  # a session's id names no family
        f"/en/account/sessions/{uuid.uuid4()}/sign-out",
        "/en/account/sessions/not-an-id/sign-out",
    ):
        refused = post_form(api, path)
        assert refused.status_code == 404, path
        assert refused.mimetype == "text/html"
    assert signed_in(kims_browser)
    assert refreshes(kims_app, tokens)
    assert signed_in(api)


def test_last_use_is_written_at_most_every_five_minutes(app, api, monkeypatch):
    ada = make_user("ada")
    start = utcnow()
    clock = [start]
    monkeypatch.setattr(website_sessions, "utcnow", lambda: clock[0])
    sign_in(api, ada)

    def last_use():
        (row,) = rows_of(ada)
        return row.last_used_utc

    for minutes, expected in [(1, 0), (4, 0), (5, 5), (6, 5), (9, 5), (10, 10)]:
        clock[0] = start + timedelta(minutes=minutes)
        assert signed_in(api)
        assert abs(last_use() - (start + timedelta(minutes=expected))) < timedelta(seconds=1)
    assert last_use() > rows_of(ada)[0].created_utc


def test_of_two_page_views_at_once_one_writes_the_last_use(app, api, barrier, monkeypatch):
    ada = make_user("ada")
    sign_in(api, ada)
    cookie = cookie_of(api)
    later = utcnow() + timedelta(minutes=6)
    monkeypatch.setattr(website_sessions, "utcnow", lambda: later)
    # Each stops after the read that finds the last use due, until the other has read too.
    stop_after(monkeypatch, "app.services.identity.website_session_user", barrier)
    written: list[bool] = []
    note_use = identity.note_use

    def noting(browser):
        wrote = note_use(browser)
        written.append(wrote)
        return wrote

    monkeypatch.setattr(identity, "note_use", noting)
    db.session.commit()  # the test's own session holds nothing while the threads run
    pages: list[bool] = []

    def view() -> None:
        client = browser(app)
        client.client.set_cookie(COOKIE, cookie)
        pages.append(signed_in(client))

    threads = [threading.Thread(target=view) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert pages == [True, True]
    assert sorted(written) == [False, True]
    (row,) = rows_of(ada)
    assert abs(row.last_used_utc - later) < timedelta(seconds=1)


# --- the data export and account deletion -------------------------------------------------------


def test_the_export_holds_the_website_sessions_without_their_secret(app, api):
    ada = make_user("ada", is_email_confirmed=True)
    sign_in(api, ada, IPHONE)
    raw = app.session_interface.get_signing_serializer(app).loads(cookie_of(api))["account"]
    app_login(browser(app), ada)
    me = api.as_user(ada)
    record = export_ready(app, me)
    archive = zipfile.ZipFile(io.BytesIO(me.get(record["downloadUrl"]).data))
    sessions = json.loads(archive.read("sessions.json"))
    (website,) = sessions["websiteSessions"]
    assert website["device"] == "Safari · iPhone"
    assert {"createdUtc", "lastUsedUtc", "userId"} <= set(website)
    assert "tokenHash" not in website
    assert "securityStamp" not in website
    (app_session,) = sessions["sessions"]
    assert app_session["device"] == "LocationNotes · Android"
    assert app_session["signedInUtc"]
    contents = b"".join(archive.read(name) for name in archive.namelist())
    assert raw.encode() not in contents
    assert hashlib.sha256(raw.encode()).hexdigest().encode() not in contents


def test_account_deletion_removes_the_website_sessions(app, api):
    ada = make_user("ada")
    sign_in(api, ada)
    assert api.as_user(ada).delete("/api/account").status_code == 200
    assert count_rows(WebsiteSession) == 0
    assert not signed_in(api)


# --- the read replica ---------------------------------------------------------------------------


def test_the_session_check_reads_the_primary_never_the_replica(both, monkeypatch):  # noqa: F811
    app, api, owner = both  # the replica's database holds no session
    sign_in(api, owner)
    api.client.delete_cookie(WROTE_COOKIE)  # the sign-in's write no longer holds it back
    assert signed_in(api)  # the home page, a replica read for anonymous visitors
    # What keeps it on the primary: without the website's sign, the replica answers and
    # knows no such session.
    monkeypatch.setitem(app.extensions, SIGNED_IN_CHECKS, [])
    assert not signed_in(api)


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_page_speaks_the_language_of_its_address(app, api, lang):
    sign_in(api, make_user("ada"))
    page = text_of(api.get(f"/{lang}/account"))
    words = {"en": "Browsers signed in on this website", "de": "Browser, die auf dieser"}
    assert words[lang] in page
    assert f'<html lang="{lang}">' in page
