"""One-click unsubscribe (RFC 8058): every notification mail (each and digest) links the
settings page in its language and carries List-Unsubscribe with the account's signed link
and List-Unsubscribe-Post; account mail carries none. A POST of the link, as a mail client
sends it, sets that account's mail to none and nothing else, without sign-in or CSRF
token, twice as once; a GET changes nothing; a changed token is refused; the token
outlives a SECRET_KEY rotation and answers a clear page once the account is deleted."""

from __future__ import annotations

import email
import email.policy
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.base import utcnow
from app.models.notification_mail import NotificationSettings
from app.models.trackable import TrackableWatch
from app.models.user import User
from app.platform.mail import Mail, build_message, outbox
from app.services.events import unsubscribe_token
from tests.api.identity.helpers import mails_to, register
from tests.api.notifications.test_mail_delivery import choose, comment, confirmed
from tests.conftest import ApiClient
from tests.factories import make_user
from tests.inboxes import World
from tests.jobs import run_jobs
from tests.racing import run_together, stop_after
from tests.web.conftest import errors_of, text_of
from tests.web.test_sign_in import sign_in

BASE = "https://notes.example.org"
ONE_CLICK = {"List-Unsubscribe": "One-Click"}
SETTINGS_API = "/api/notifications/settings"
OLD = "old-secret-key-" + "o" * 40
NEW = "new-secret-key-" + "n" * 40
RECORDS = "records-key-" + "r" * 40


@pytest.fixture(autouse=True)
def public_base(app, monkeypatch):
    monkeypatch.setitem(app.config, "PUBLIC_BASE_URL", BASE)


def headers_of(mail: Mail) -> dict[str, str]:
    return dict(mail.headers)


def link_of(mail: Mail) -> str:
    """The path of the mail's List-Unsubscribe link."""
    field = headers_of(mail)["List-Unsubscribe"]
    assert field.startswith("<"), field
    assert field.endswith(">"), field
    return urlsplit(field[1:-1]).path


def each_mail(app, api, world: World, language: str = "en") -> Mail:
    watcher = confirmed(world.item_watcher)
    choose(api, watcher, mail="each", language=language)
    comment(api, world)
    run_jobs(app)
    (mail,) = outbox(app)
    return mail


def settings_of(api, user: User) -> dict[str, str]:
    return api.as_user(user).get(SETTINGS_API).get_json()


def page_client(app) -> Any:
    """A browser or mail client of its own: no cookie, no token."""
    return app.test_client()


# --- the mail -----------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["en", "de"])
def test_each_mail_links_the_settings_page_and_unsubscribes_in_one_click(app, api, world, language):
    mail = each_mail(app, api, world, language)
    fields = headers_of(mail)
    token = unsubscribe_token(world.item_watcher.id, app.config)
    url = f"{BASE}/{language}/account/notifications/unsubscribe/{token}"
    assert fields == {
        "List-Unsubscribe": f"<{url}>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
    }
    assert f"{BASE}/{language}/account/notifications\n" in mail.text
    assert "/api/notifications/settings" not in mail.text


def test_the_digest_carries_the_same(app, api, world):
    watcher = confirmed(world.item_watcher)
    choose(api, watcher, language="de")
    comment(api, world)
    run_jobs(app)  # the fan-out and the digest's scheduling
    later = utcnow() + timedelta(days=1, hours=1)
    run_jobs(app, clock=lambda: later)
    (mail,) = outbox(app)
    assert mail.subject == "Location Notes: 1 neue Benachrichtigung"
    assert headers_of(mail)["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert link_of(mail).startswith("/de/account/notifications/unsubscribe/")
    assert f"{BASE}/de/account/notifications\n" in mail.text


def test_account_mail_carries_no_unsubscribe(app, api):
    assert register(api, "lee@example.com", "lee").status_code == 200
    (confirmation,) = mails_to(app, "lee@example.com")
    kim = make_user("kim", is_email_confirmed=True)
    assert api.post("/api/auth/forgotPassword", json={"email": kim.email}).status_code == 200
    (reset,) = mails_to(app, kim.email)
    assert (confirmation.headers, reset.headers) == ((), ())


def test_the_fields_are_sent_on_one_line_each(app, api, world):
    mail = each_mail(app, api, world)
    raw = build_message(mail, "service@example.org").as_bytes()
    field = headers_of(mail)["List-Unsubscribe"]
    assert len(field) > 78  # longer than a folded line
    assert f"\nList-Unsubscribe: {field}\n".encode() in raw
    assert b"\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\n" in raw
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert parsed["List-Unsubscribe"] == field


# --- the link -----------------------------------------------------------------------------


def test_a_one_click_post_sets_mail_to_none_and_nothing_else(app, api, world):
    link = link_of(each_mail(app, api, world, "de"))
    other = make_user("olaf")
    choose(api, other, mail="each", language="de")
    for _ in range(2):  # idempotent
        response = page_client(app).post(link, data=ONE_CLICK)
        assert response.status_code == 200
        assert response.headers["Cache-Control"] == "private, no-store"
        assert "Keine Benachrichtigungsmails mehr" in text_of(response)
    assert settings_of(api, world.item_watcher) == {"mail": "none", "language": "de"}
    assert settings_of(api, other) == {"mail": "each", "language": "de"}
    watches = db.session.scalars(select(TrackableWatch.user_id)).all()
    assert watches == [world.item_watcher.id]


def test_a_one_click_post_as_multipart_form_data_works_too(app, api, world):
    link = link_of(each_mail(app, api, world))
    response = page_client(app).post(link, data=ONE_CLICK, content_type="multipart/form-data")
    assert response.status_code == 200
    assert settings_of(api, world.item_watcher)["mail"] == "none"


def test_the_post_needs_no_sign_in_and_ignores_a_signed_in_browser(app, api, world):
    link = link_of(each_mail(app, api, world))
    browser = page_client(app)
    sign_in(ApiClient(browser), world.stranger)
    assert browser.post(link, data=ONE_CLICK).status_code == 200
    assert settings_of(api, world.item_watcher)["mail"] == "none"
    assert settings_of(api, world.stranger)["mail"] == "daily"


def test_a_get_shows_the_button_and_changes_nothing(app, api, world):
    link = link_of(each_mail(app, api, world))
    response = page_client(app).get(link)
    assert response.status_code == 200
    html = text_of(response)
    assert f'<form method="post" action="{link}"' in html
    assert '<input type="hidden" name="List-Unsubscribe" value="One-Click">' in html
    assert settings_of(api, world.item_watcher) == {"mail": "each", "language": "en"}
    untouched = make_user("una")
    token = unsubscribe_token(untouched.id, app.config)
    assert page_client(app).get(f"/en/account/notifications/unsubscribe/{token}").status_code == 200
    assert db.session.get(NotificationSettings, untouched.id) is None  # no row written


def test_a_get_after_unsubscribing_says_mail_is_off(app, api, world):
    link = link_of(each_mail(app, api, world))
    page_client(app).post(link, data=ONE_CLICK)
    html = text_of(page_client(app).get(link))
    assert "gets no mail about notifications already" in html
    assert "List-Unsubscribe" not in html


def test_a_post_without_the_one_click_body_changes_nothing(app, api, world):
    link = link_of(each_mail(app, api, world))
    for data in ({}, {"List-Unsubscribe": "yes"}):
        response = page_client(app).post(link, data=data)
        assert response.status_code == 400
        assert errors_of(response)
    assert settings_of(api, world.item_watcher)["mail"] == "each"


def tampered(token: str, other: User) -> list[str]:
    head, _dot, mac = token.partition(".")
    flipped = mac[:-1] + ("A" if mac[-1] != "A" else "B")
    return [
        f"{head}.{flipped}",  # the signature changed
        f"{other.id.hex}.{mac}",  # another account's id, this one's signature
        f"{head}.{mac[:20]}",  # cut short
        head,
        f"{head.upper()}.{mac}",
        "not-a-token",
        f"{head}.{mac}ä",
    ]


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_changed_token_is_refused_and_changes_nothing(app, api, world, method):
    token = link_of(each_mail(app, api, world)).rsplit("/", 1)[1]
    other = make_user("olaf")
    for bad in tampered(token, other):
        response = getattr(page_client(app), method)(
            f"/en/account/notifications/unsubscribe/{bad}", data=ONE_CLICK
        )
        assert response.status_code == 400, bad
        assert "This link cannot stop any mail" in text_of(response)
    assert settings_of(api, world.item_watcher)["mail"] == "each"
    assert db.session.get(NotificationSettings, other.id) is None


def test_the_token_outlives_a_secret_key_rotation(app, api, world, monkeypatch):
    def keys(current: str, *previous: str, records: str = "") -> None:
        monkeypatch.setitem(app.config, "SECRET_KEY", current)
        monkeypatch.setitem(app.config, "SECRET_KEY_FALLBACKS", list(previous))
        monkeypatch.setitem(app.config, "RECORDS_KEY", records)

    keys(OLD, records=RECORDS)
    link = link_of(each_mail(app, api, world))
    keys(NEW, OLD, records=RECORDS)
    assert page_client(app).get(link).status_code == 200
    keys(NEW, records=RECORDS)  # the overlap is over
    assert page_client(app).post(link, data=ONE_CLICK).status_code == 200
    assert settings_of(api, world.item_watcher)["mail"] == "none"
    keys(NEW)  # under another records key it names nobody
    assert page_client(app).get(link).status_code == 400


@pytest.mark.parametrize("method", ["get", "post"])
def test_the_link_of_a_deleted_account_says_so(app, api, world, method):
    link = link_of(each_mail(app, api, world))
    assert api.as_user(world.item_watcher).delete("/api/account").status_code == 200
    response = getattr(page_client(app), method)(link, data=ONE_CLICK)
    assert response.status_code == 410
    assert "This account no longer exists" in text_of(response)
    assert db.session.scalars(select(NotificationSettings)).all() == []


def test_an_unsubscribe_and_the_accounts_deletion_at_once(app, api, world, monkeypatch, barrier):
    """The deletion holds the account's lock when the unsubscribe reads it: the unsubscribe
    waits, then finds the account gone (410), instead of writing settings for it."""
    watcher, watcher_id = world.item_watcher, world.item_watcher.id
    link = link_of(each_mail(app, api, world))
    stop_after(monkeypatch, "app.services.events.unsubscribe._account_of", barrier)
    stop_after(monkeypatch, "app.services.identity.accounts.get_for_write", barrier)
    results = run_together(
        app,
        [
            (watcher, lambda client, _headers: client.post(link, data=ONE_CLICK)),
            (watcher, lambda client, headers: client.delete("/api/account", headers=headers)),
        ],
    )
    assert [status for status, _body in results] == [410, 200]
    assert db.session.get(User, watcher_id) is None
    assert db.session.scalars(select(NotificationSettings)).all() == []
