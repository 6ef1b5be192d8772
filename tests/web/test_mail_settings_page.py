"""The notification settings page, /{lang}/account/notifications: behind the website's
sign-in, it shows and changes the mail setting and its language (the API's choices, a
refused one said in words, CSRF required) and lists the account's item and area watches,
each with "stop watching", which ends the account's own watch and never another's."""

from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models.event import AreaWatch
from app.models.notification_mail import NotificationSettings
from app.models.trackable import TrackableGroupWatch, TrackableVisibility, TrackableWatch
from tests.factories import DEFAULT_PASSWORD, make_trackable
from tests.inboxes import World, around, watch
from tests.pages import csrf_token
from tests.web.conftest import errors_of, notices_of, text_of
from tests.web.test_sign_in import SIGN_IN, sign_in

PAGE = "/en/account/notifications"
STOP = "/en/account/notifications/stop-watching"
SETTINGS_API = "/api/notifications/settings"
CHECKED = re.compile(r'<input checked id="mail-\d" name="mail" type="radio" value="(\w+)">')
SELECTED = re.compile(r'<option selected value="(\w+)">')


def settings_of(api, user) -> dict[str, str]:
    return api.as_user(user).get(SETTINGS_API).get_json()


def save(api, **fields: str):
    return api.post(PAGE, data={"csrf_token": csrf_token(api, PAGE), **fields})


def stop(api, kind: str, target: object):
    data = {"csrf_token": csrf_token(api, PAGE), "kind": kind, "target": str(target)}
    return api.post(STOP, data=data)


def settings_rows() -> int:
    return db.session.scalar(select(func.count()).select_from(NotificationSettings)) or 0


def watching(user, model, **key: uuid.UUID) -> bool:
    db.session.expire_all()
    return db.session.get(model, {"user_id": user.id, **key}) is not None


# --- sign-in ------------------------------------------------------------------------------


def test_a_visitor_not_signed_in_is_sent_to_sign_in_and_back(api, world: World):
    assert api.get(PAGE).status_code == 303
    assert api.get(PAGE).headers["Location"] == f"{SIGN_IN}?next={PAGE}"
    token = csrf_token(api, SIGN_IN)
    for address in (PAGE, STOP):
        response = api.post(address, data={"csrf_token": token, "mail": "none"})
        assert response.status_code == 303
        assert response.headers["Location"] == f"{SIGN_IN}?next={PAGE}"
    assert settings_rows() == 0
    data = {"csrf_token": token, "email": world.item_watcher.email, "next": PAGE}
    signed_in = api.post(SIGN_IN, data={**data, "password": DEFAULT_PASSWORD})
    assert signed_in.headers["Location"] == PAGE
    assert api.get(PAGE).status_code == 200


def test_a_bearer_token_opens_nothing_on_the_website(api, world: World):
    response = api.as_user(world.item_watcher).get(PAGE)
    assert response.status_code == 303
    assert response.headers["Location"].startswith(SIGN_IN)


# --- the mail setting ---------------------------------------------------------------------


def test_the_page_shows_the_defaults_a_daily_digest_in_english(api, world: World):
    sign_in(api, world.item_watcher)
    response = api.get(PAGE)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "private, no-store"
    html = text_of(response)
    assert CHECKED.findall(html) == ["daily"]
    assert SELECTED.findall(html) == ["en"]
    assert "The daily digest comes at 07:00 UTC" in html
    assert 'href="/de/account/notifications"' in html  # the page in the other language


def test_a_change_is_saved_said_and_the_api_reads_it(api, world: World):
    watcher = world.item_watcher
    sign_in(api, watcher)
    response = save(api, mail="each", language="de")
    assert response.status_code == 303
    assert response.headers["Location"] == PAGE
    page = api.get(PAGE)
    assert notices_of(page) == ["Your mail settings are saved."]
    assert (CHECKED.findall(text_of(page)), SELECTED.findall(text_of(page))) == (["each"], ["de"])
    assert settings_of(api, watcher) == {"mail": "each", "language": "de"}
    assert save(api, mail="none", language="en").status_code == 303
    assert settings_of(api, watcher) == {"mail": "none", "language": "en"}


def test_the_page_speaks_german(api, world: World):
    sign_in(api, world.item_watcher)
    html = text_of(api.get("/de/account/notifications"))
    assert "<h1>Benachrichtigungen</h1>" in html
    assert "Nie" in html
    assert "Deutsch" in html


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"mail": "weekly", "language": "en"}, "Choose how often mail tells you"),
        ({"language": "en"}, "Choose how often mail tells you"),
        ({"mail": "none", "language": "fr"}, "Choose one of the languages listed."),
        ({"mail": "none"}, "Choose one of the languages listed."),
    ],
)
def test_a_refused_value_is_said_and_nothing_changes(api, world: World, fields, words):
    sign_in(api, world.item_watcher)
    response = save(api, **fields)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert any(words in error for error in errors_of(response))
    assert settings_rows() == 0


@pytest.mark.parametrize("token", [None, "not-the-token"])
def test_the_settings_form_needs_its_csrf_token(api, world: World, token):
    sign_in(api, world.item_watcher)
    data = {"mail": "none", "language": "de"} | ({"csrf_token": token} if token else {})
    response = api.post(PAGE, data=data)
    assert response.status_code == 400
    assert "Form expired" in text_of(response)
    assert settings_rows() == 0
    removal = api.post(STOP, data={"kind": "trackable", "target": str(world.trackable.id)})
    assert removal.status_code == 400
    assert watching(world.item_watcher, TrackableWatch, trackable_id=world.trackable.id)


# --- the watches --------------------------------------------------------------------------


def test_the_watched_items_and_groups_are_listed_by_name(api, world: World):
    watch(world.item_watcher, group=world.group)
    hidden = make_trackable(world.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    watch(world.item_watcher, trackable=hidden)
    sign_in(api, world.item_watcher)
    html = text_of(api.get(PAGE))
    code = world.trackable.public_code
    assert f'<a href="/en/trackables/{code}">Blue bug</a>' in html
    assert "Group Travel bugs" in html
    assert "A trackable you can no longer see" in html
    assert hidden.public_code not in html
    assert "You watch no areas." in html


def test_stopping_an_item_watch_ends_it(api, world: World):
    watcher = world.item_watcher
    sign_in(api, watcher)
    response = stop(api, "trackable", world.trackable.id)
    assert response.status_code == 303
    assert response.headers["Location"] == PAGE
    assert notices_of(api.get(PAGE)) == ["You no longer watch it."]
    assert not watching(watcher, TrackableWatch, trackable_id=world.trackable.id)
    assert "You watch no trackables or groups." in text_of(api.get(PAGE))
    assert stop(api, "trackable", world.trackable.id).status_code == 303  # again: ended already
    assert notices_of(api.get(PAGE)) == ["This watch had ended already."]


def test_stopping_a_group_watch_ends_it(api, world: World):
    sign_in(api, world.group_watcher)
    assert stop(api, "group", world.group.id).status_code == 303
    assert not watching(world.group_watcher, TrackableGroupWatch, group_id=world.group.id)


def test_a_watch_of_an_item_no_longer_visible_can_still_be_ended(api, world: World):
    hidden = make_trackable(world.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    watch(world.item_watcher, trackable=hidden)
    sign_in(api, world.item_watcher)
    assert stop(api, "trackable", hidden.id).status_code == 303
    assert not watching(world.item_watcher, TrackableWatch, trackable_id=hidden.id)


@pytest.mark.parametrize("kind", ["trackable", "group"])
def test_another_accounts_item_watch_is_never_ended(api, world: World, kind):
    sign_in(api, world.stranger)
    target = world.trackable.id if kind == "trackable" else world.group.id
    response = stop(api, kind, target)
    assert response.status_code == 303  # the stranger's own (none) ended: nothing to do
    assert notices_of(api.get(PAGE)) == ["This watch had ended already."]
    assert watching(world.item_watcher, TrackableWatch, trackable_id=world.trackable.id)
    assert watching(world.group_watcher, TrackableGroupWatch, group_id=world.group.id)


def test_a_hidden_item_without_a_watch_is_not_found(api, world: World):
    hidden = make_trackable(world.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    sign_in(api, world.stranger)
    response = stop(api, "trackable", hidden.id)
    assert response.status_code == 404
    assert errors_of(response) == ["This watch was not found: it has ended already."]


def test_area_watches_are_listed_in_the_pages_language_and_ended(app, api, world: World):
    watcher = world.item_watcher
    around(api, watcher)
    around(api, watcher, contentLanguage="de")
    sign_in(api, watcher)
    html = text_of(api.get(PAGE))
    assert html.count("From 47.27° N to 47.47° N and from 8.44° E to 8.64° E") == 2
    assert "New notes in every language" in html
    assert "New notes in German only" in html
    german = text_of(api.get("/de/account/notifications"))
    assert "Von 47,27° N bis 47,47° N und von 8,44° O bis 8,64° O" in german
    assert "Nur neue Notizen auf Deutsch" in german
    first = db.session.scalars(select(AreaWatch)).first()
    assert stop(api, "area", first.id).status_code == 303
    assert notices_of(api.get(PAGE)) == ["You no longer watch it."]
    assert db.session.scalar(select(func.count()).select_from(AreaWatch)) == 1


def test_another_accounts_area_watch_is_not_found_and_stays(api, world: World):
    around(api, world.item_watcher)
    theirs = db.session.scalars(select(AreaWatch)).one()
    sign_in(api, world.stranger)
    response = stop(api, "area", theirs.id)
    assert response.status_code == 404
    assert errors_of(response) == ["This watch was not found: it has ended already."]
    assert db.session.scalar(select(func.count()).select_from(AreaWatch)) == 1


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": "note", "target": str(uuid.uuid4())},
        {"kind": "trackable", "target": "not-an-id"},
        {"kind": "area"},
        {},
    ],
)
def test_an_incomplete_stop_form_is_refused_in_words(api, world: World, fields):
    sign_in(api, world.item_watcher)
    response = api.post(STOP, data={"csrf_token": csrf_token(api, PAGE), **fields})
    assert response.status_code == 400
    assert errors_of(response) == [
        "This form was not complete, so nothing changed. Reload the page and try again."
    ]
    assert watching(world.item_watcher, TrackableWatch, trackable_id=world.trackable.id)
