"""The active landing /{lang}/trackables/active/{trackableId} and its forms (contract:
website routes; Trackables: comments and journey, rule 1; Trackable activation; Active
secret session): who opens it, each form's success, each error in words in each
language, CSRF refusal, ending the session. The "log a find" form has its own module
(test_find_form.py)."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableAccessSession,
    TrackableComment,
    TrackableVisibility,
)
from tests.factories import count_rows, make_team, make_trackable, make_user
from tests.web.conftest import Finder, errors_of, form_fields, notices_of, text_of

# --- who opens it ----------------------------------------------------------------------------


def test_scanning_the_qr_url_lands_on_the_active_page(api, trackable):
    response = Finder(api, trackable).scan()
    assert response.headers["Location"] == f"/en/trackables/active/{trackable.id}"
    page = api.get(response.headers["Location"])
    assert page.status_code == 200
    assert "Blue bug" in text_of(page)
    assert page.headers["Cache-Control"] == "no-store"


def test_a_german_browser_lands_on_the_german_page(api, trackable):
    response = api.get(
        f"/trackable/{Finder(api, trackable).trackable.public_code}",
        headers={"Accept-Language": "de-CH, en;q=0.5"},
    )
    assert response.headers["Location"] == f"/de/trackables/{trackable.public_code}"
    finder = Finder(api, trackable, lang="de")
    finder.scan()
    page = text_of(api.get(finder.landing))
    for words in ("Fund eintragen", "Breitengrad", "Gesehen am", "Sitzung"):
        assert words in page


def test_without_a_session_the_active_page_is_a_404_page(api, trackable):
    response = api.get(f"/en/trackables/active/{trackable.id}")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert (
        api.as_user(make_user("sam")).get(f"/en/trackables/active/{trackable.id}").status_code
        == 404
    )


def test_the_manager_opens_the_active_page_without_a_session(api, trackable, owner):
    assert api.as_user(owner).get(f"/en/trackables/active/{trackable.id}").status_code == 200


def test_an_unknown_trackable_id_is_a_404_page(api, finder):
    import uuid

    assert api.get(f"/en/trackables/active/{uuid.uuid4()}").status_code == 404
    assert api.get("/en/trackables/active/not-a-guid").status_code == 404


# --- the services' refusals, in words --------------------------------------------------------


def test_an_unactivated_item_asks_to_sign_in_and_refuses_writes_in_words(api, owner):
    unactivated = make_trackable(None, name="Boxed", created_by_user_id=owner.id)
    for lang, words in (
        ("en", "This trackable has to be activated before it takes comments or journey stops."),
        ("de", "Dieser Trackable muss erst aktiviert werden"),
    ):
        finder = Finder(api, unactivated, lang=lang)
        finder.scan()
        page = text_of(api.get(finder.landing))
        assert 'name="body"' not in page  # no comment form, the activation section instead
        fields = form_fields(api.get(finder.landing))
        for data in ({"body": "Hi"}, {"latitude": "1", "longitude": "2"}):
            response = api.post(f"{finder.landing}/find", data={**fields, **data})
            assert response.status_code == 400
            assert words in errors_of(response)[0]
    assert count_rows(TrackableComment) == count_rows(JourneyStop) == 0


def test_an_ended_session_refuses_a_write_in_words(api, finder):
    fields = form_fields(api.get(finder.landing))
    db.session.execute(TrackableAccessSession.__table__.delete())
    db.session.commit()
    response = api.post(f"{finder.landing}/find", data={**fields, "body": "Late"})
    assert response.status_code == 403
    assert errors_of(response) == [
        "This device no longer holds this trackable. Scan its QR code or enter its secret "
        "code again, then try once more."
    ]
    assert count_rows(TrackableComment) == 0


def test_an_ended_session_on_a_hidden_item_is_a_404_page(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = Finder(api, hidden)
    finder.scan()
    fields = form_fields(api.get(finder.landing))
    db.session.execute(TrackableAccessSession.__table__.delete())
    db.session.commit()
    response = api.post(f"{finder.landing}/find", data={**fields, "body": "Late"})
    assert response.status_code == 404
    assert "Trackable not found" in text_of(response)


# --- activation ----------------------------------------------------------------------------


@pytest.fixture
def boxed(owner) -> Trackable:
    return make_trackable(None, name="", created_by_user_id=owner.id)


def test_a_signed_in_holder_activates_personally(api, boxed):
    user = make_user("kim")
    finder = Finder(api.as_user(user), boxed)
    finder.scan()
    page = text_of(finder.api.get(finder.landing))
    assert 'value="personal"' in page
    response = finder.post("activate", {"name": "Red paddle", "context": "personal"})
    assert response.status_code == 303
    db.session.refresh(boxed)
    assert (boxed.owner_user_id, boxed.team_id, boxed.name) == (user.id, None, "Red paddle")
    assert notices_of(finder.api.get(finder.landing)) == ["The trackable is activated."]


def test_a_signed_in_holder_activates_for_their_team(api, boxed):
    user = make_user("kim")
    team = make_team(user, name="Paddlers")
    finder = Finder(api.as_user(user), boxed)
    finder.scan()
    assert "Team Paddlers" in text_of(finder.api.get(finder.landing))
    response = finder.post("activate", {"name": "Red paddle", "context": str(team.id)})
    assert response.status_code == 303
    db.session.refresh(boxed)
    assert boxed.team_id == team.id


def test_activation_errors_are_shown_in_words(api, boxed):
    user = make_user("kim")
    finder = Finder(api.as_user(user), boxed)
    finder.scan()
    response = finder.post("activate", {"name": "", "context": "personal"})
    assert (response.status_code, errors_of(response)) == (
        400,
        ["An activated trackable needs a name: enter one."],
    )
    response = finder.post("activate", {"name": "x" * 201})
    assert errors_of(response) == ["A name may be at most 200 characters long."]
    response = finder.post("activate", {"name": "Paddle", "context": "my-team"})
    assert errors_of(response) == ["Choose personal or one of your teams."]
    stranger_team = make_team(make_user("tara"))  # a public page: seen, not theirs: 403
    response = finder.post("activate", {"name": "Paddle", "context": str(stranger_team.id)})
    assert response.status_code == 403
    assert errors_of(response) == [
        "This was refused: you may only activate for a team you are an active member of."
    ]
    db.session.refresh(boxed)
    assert boxed.owner_user_id is None


def test_an_anonymous_holder_is_asked_to_sign_in_to_activate(api, boxed):
    finder = Finder(api, boxed, lang="de")
    finder.scan()
    page = text_of(api.get(finder.landing))
    assert "Melde dich mit deinem Konto an, um diesen Trackable zu aktivieren" in page
    assert f'href="/de/sign-in?next={finder.landing}"' in page  # and back here after
    assert 'name="context"' not in page
    response = finder.post("activate", {"name": "Mine now"})
    assert response.status_code == 401
    assert "Melde dich mit deinem Konto an" in errors_of(response)[0]
    db.session.refresh(boxed)
    assert boxed.owner_user_id is None


def test_activating_twice_is_refused_in_words(api, boxed):
    user = make_user("kim")
    finder = Finder(api.as_user(user), boxed)
    finder.scan()
    fields = form_fields(finder.api.get(finder.landing))
    assert (
        finder.api.post(f"{finder.landing}/activate", data={**fields, "name": "One"}).status_code
        == 303
    )
    response = finder.api.post(f"{finder.landing}/activate", data={**fields, "name": "Two"})
    assert response.status_code == 400
    assert errors_of(response) == ["This trackable is already activated."]


# --- ending the session --------------------------------------------------------------------


def test_ending_the_session_removes_the_trackable_from_this_device(api, finder):
    response = finder.post("end", {})
    assert response.status_code == 200
    assert "Session ended" in text_of(response)
    assert count_rows(TrackableAccessSession) == 0
    assert api.get(finder.landing).status_code == 404
    assert api.get(finder.public).status_code == 200  # a public item stays public
    assert f'href="{finder.public}"' in response.get_data(as_text=True)  # and is linked


def test_an_ended_session_on_an_item_seen_only_with_it_links_home_in_its_language(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    finder = Finder(api, hidden, lang="de")
    finder.scan()
    response = finder.post("end", {})
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    assert "Sitzung beendet" in text_of(response)
    assert f"/de/trackables/{hidden.public_code}" not in page
    assert 'href="/de/"' in page


# --- CSRF ----------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["find", "activate", "end"])
@pytest.mark.parametrize("token", [None, "forged", "other-session"])
def test_a_form_without_a_valid_csrf_token_is_refused_and_nothing_happens(
    api, app, finder, form, token
):
    data = {"body": "Hi", "latitude": "1", "longitude": "2", "name": "Mine"}
    if token == "forged":
        data["csrf_token"] = "IjRkZTk5Y2E4In0.forged.token"
    elif token == "other-session":
        other = app.test_client()
        Finder(type(api)(other), finder.trackable).scan()
        data["csrf_token"] = form_fields(other.get(finder.landing))["csrf_token"]
    response = api.post(f"{finder.landing}/{form}", data=data)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert "This form has expired or did not come from this page" in text_of(response)
    assert count_rows(TrackableComment) == count_rows(JourneyStop) == 0
    assert count_rows(TrackableAccessSession) == 2 if token == "other-session" else 1


def test_the_page_session_cookie_is_httponly_and_samesite_lax(api, finder):
    response = api.get(finder.landing)
    cookies = [
        value for value in response.headers.getlist("Set-Cookie") if value.startswith("ln_pages=")
    ]
    assert cookies
    for cookie in cookies:
        assert "HttpOnly" in cookie
        assert "SameSite=Lax" in cookie
