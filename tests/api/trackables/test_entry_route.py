"""The website entry route GET /trackable/{code} (contract: Trackables: lookup and active
sessions, website routes; Versioning item 4; decisions: Trackable codes, Access sessions for
secret codes): public codes, secret codes and QR tokens each go to their page; a miss is a
plain HTML page with the lookup form; the code is never echoed nor logged."""

from __future__ import annotations

import html.parser
import logging
from urllib.parse import quote

import pytest

from app.extensions import db
from app.models.trackable import TrackableAccessSession, TrackableVisibility
from tests.factories import codes_of, count_guess_misses, count_rows, make_trackable, make_user
from tests.pages import post_code

COOKIE = "ln_trackable_access"
SECRET = "LN5V10AB01"
PUBLIC = "LN-5V10A0"
ACTIVE = "/api/trackables/active"


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner, public_code=PUBLIC, secret_code=SECRET)


def visit(api, code: str, **kwargs):
    return api.get(f"/trackable/{quote(code, safe='')}", **kwargs)


def access_cookies(response) -> list[str]:
    return [value for value in response.headers.getlist("Set-Cookie") if value.startswith(COOKIE)]


class _Forms(html.parser.HTMLParser):
    """The forms of a page and the names of their inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "form":
            self.forms.append({**dict(attrs), "inputs": []})
        elif tag == "input" and self.forms:
            self.forms[-1]["inputs"].append(dict(attrs).get("name"))


def forms_of(text: str) -> list[dict]:
    parser = _Forms()
    parser.feed(text)
    return parser.forms


# --- public codes ------------------------------------------------------------------------


def test_a_public_code_redirects_to_the_public_page(api, trackable):
    response = visit(api, PUBLIC)
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == f"/en/trackables/{PUBLIC}"


def test_a_typed_public_code_is_normalised_before_redirecting(api, trackable):
    response = visit(api, "ln-sv1oao")
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == f"/en/trackables/{PUBLIC}"


def test_a_public_code_opens_no_session_and_sets_no_cookie(api, trackable):
    response = visit(api, PUBLIC)
    assert access_cookies(response) == []
    assert count_rows(TrackableAccessSession) == 0


def test_the_public_code_of_a_hidden_trackable_is_a_miss(api, owner):
    hidden = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    response = visit(api, hidden.public_code)
    assert response.status_code == 404
    assert response.mimetype == "text/html"


# --- secret codes and QR tokens ----------------------------------------------------------


@pytest.mark.parametrize("typed", [SECRET, "ln5u1oab0i"])
def test_a_secret_code_sets_the_cookie_and_redirects_to_the_active_landing(api, trackable, typed):
    response = visit(api, typed)
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == f"/en/trackables/active/{trackable.id}"
    (cookie,) = access_cookies(response)
    assert SECRET not in cookie.upper()


def test_a_qr_token_sets_the_cookie_and_redirects_to_the_active_landing(api, trackable):
    _, token = codes_of(trackable)
    response = visit(api, token)
    assert response.status_code in (302, 303)
    assert response.headers["Location"] == f"/en/trackables/active/{trackable.id}"
    (cookie,) = access_cookies(response)
    assert token not in cookie


def test_the_cookie_from_a_visit_opens_the_active_session_for_the_api(api, trackable):
    _, token = codes_of(trackable)
    visit(api, token)
    assert [item["trackableId"] for item in api.get(ACTIVE).get_json()] == [str(trackable.id)]
    assert api.get(f"{ACTIVE}/{trackable.id}").status_code == 200


def test_the_redirect_never_carries_the_secret(api, trackable):
    _, token = codes_of(trackable)
    for code in (SECRET, token):
        response = visit(api, code)
        assert code not in response.headers["Location"]
        assert code not in response.get_data(as_text=True)


def test_answers_are_not_cached_and_send_no_referer_onward(api, trackable):
    for code in (PUBLIC, SECRET, "LN7777777Z"):
        response = visit(api, code)
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["Referrer-Policy"] == "no-referrer"


def test_the_secret_of_an_unactivated_trackable_goes_to_the_active_landing(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    secret, _ = codes_of(fresh)
    response = visit(api, secret)
    assert response.headers["Location"] == f"/en/trackables/active/{fresh.id}"
    assert api.get(f"{ACTIVE}/{fresh.id}").get_json()["activationRequired"] is True


# --- language ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "lang"),
    [
        (None, "en"),
        ("de", "de"),
        ("de-DE,de;q=0.9,en;q=0.5", "de"),
        ("en-US,en;q=0.9,de;q=0.5", "en"),
        ("fr-FR,fr;q=0.9", "en"),
        ("fr;q=0.9,de-AT;q=0.8", "de"),
    ],
)
def test_the_page_language_comes_from_accept_language(api, trackable, accept, lang):
    headers = {"Accept-Language": accept} if accept else {}
    assert visit(api, PUBLIC, headers=headers).headers["Location"] == f"/{lang}/trackables/{PUBLIC}"
    assert (
        visit(api, SECRET, headers=headers).headers["Location"]
        == f"/{lang}/trackables/active/{trackable.id}"
    )


def test_the_miss_page_is_in_the_accepted_language(api, trackable):
    response = visit(api, "LN7777777Z", headers={"Accept-Language": "de-DE"})
    assert '<html lang="de">' in response.get_data(as_text=True)


# --- misses ------------------------------------------------------------------------------


def test_a_miss_is_a_plain_html_404_page_with_the_lookup_form(api, trackable):
    response = visit(api, "LN7777777Z")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert text.lstrip().lower().startswith("<!doctype html>")
    (form,) = forms_of(text)
    # POST, so a typed secret stays out of URLs, history and access logs.
    assert form["method"].lower() == "post"
    assert form["action"] == "/trackable"
    assert "code" in form["inputs"]
    assert access_cookies(response) == []


def typed(api, code: str, **kwargs):
    """Submit the code box."""
    return post_code(api, code, **kwargs)


def test_the_form_routes_a_public_code_to_its_public_page(api, trackable):
    response = typed(api, " ln-5v1oao ")
    assert response.status_code == 303
    assert response.headers["Location"] == f"/en/trackables/{PUBLIC}"
    assert access_cookies(response) == []


def test_the_form_routes_a_secret_to_the_active_landing_with_the_cookie(api, trackable):
    response = typed(api, SECRET.lower(), headers={"Accept-Language": "de"})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/de/trackables/active/{trackable.id}"
    assert len(access_cookies(response)) == 1
    assert SECRET not in response.get_data(as_text=True)
    assert api.get(f"{ACTIVE}/{trackable.id}").status_code == 200


def test_the_form_answers_a_miss_with_the_miss_page_and_counts_it(api, trackable):
    response = typed(api, "<b>LN7777777Z</b>")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert "LN7777777Z" not in text
    assert "<b>" not in text
    assert forms_of(text)[0]["action"] == "/trackable"
    assert count_guess_misses() == 1
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("code", ["", "   ", None])
def test_an_empty_form_asks_for_a_code_without_counting_a_miss(api, trackable, code):
    response = post_code(api, code)
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert forms_of(response.get_data(as_text=True))[0]["action"] == "/trackable"
    assert count_guess_misses() == 0


@pytest.mark.parametrize(
    "code",
    [
        "<script>alert(1)</script>",
        '"><img src=x onerror=alert(1)>',
        "LN7777777Z",
        "TB1A2B3C",  # another system's: the page carries the help link, not the code
    ],
)
def test_the_miss_page_never_echoes_the_code(api, trackable, code):
    response = visit(api, code)
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert code not in text
    assert "alert(1)" not in text  # the page's own script tag is not the typed one
    assert "onerror" not in text.lower()


def test_another_systems_code_gets_a_help_link_on_the_miss_page(app, api, trackable):
    text = visit(api, "TB1A2B3C", headers={"Accept-Language": "de"}).get_data(as_text=True)
    link = f"/de{app.config['TRACKABLE_FOREIGN_HELP_URL']}"
    assert f'href="{link}"' in text
    assert api.get(link).status_code == 200  # the page it points at is there, in German
    assert '<html lang="de">' in api.get(link).get_data(as_text=True)


def test_a_help_link_to_another_site_is_kept_as_configured(app, api, trackable, monkeypatch):
    monkeypatch.setitem(app.config, "TRACKABLE_FOREIGN_HELP_URL", "https://help.example.org/codes")
    text = visit(api, "TB1A2B3C").get_data(as_text=True)
    assert 'href="https://help.example.org/codes"' in text


def test_a_code_with_a_nul_character_is_a_plain_miss(api, trackable):
    response = visit(api, "LN\x00777")
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_a_very_long_code_is_a_plain_miss(api, trackable):
    response = visit(api, "A" * 5000)
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_a_miss_counts_toward_the_guess_budget_and_a_hit_does_not(api, trackable):
    visit(api, "LN7777777Z")
    visit(api, "<script>x</script>")
    visit(api, PUBLIC)
    visit(api, SECRET)
    assert count_guess_misses() == 2


def test_an_unknown_route_below_trackable_stays_a_problem_404(api):
    response = api.get("/trackable/")
    assert response.status_code == 404
    assert count_guess_misses() == 0


# --- logs --------------------------------------------------------------------------------


def test_no_code_reaches_a_log_line(api, trackable, caplog):
    _, token = codes_of(trackable)
    codes = [SECRET, token, PUBLIC, "LN7777777Z", "<script>alert(1)</script>"]
    db.session.commit()  # the requests' SQL runs on connections opened while logging is on
    with (
        caplog.at_level(logging.DEBUG),
        caplog.at_level(logging.DEBUG, logger="app"),
        caplog.at_level(logging.DEBUG, logger="werkzeug"),
        caplog.at_level(logging.INFO, logger="sqlalchemy.engine"),
    ):
        for code in codes:
            visit(api, code)
    logged = "\n".join(
        [caplog.text]
        + [record.getMessage() for record in caplog.records]
        + [str(record.args) for record in caplog.records]
    )
    assert "trackable_codes" in logged  # the SQL was logged, parameters included
    for code in codes:
        assert code not in logged
        assert quote(code, safe="") not in logged
