"""The help pages the API links to (app/web/help_pages.py): the lookup's `helpUrl` for
another system's code and the link verification's `supportUrl`, in each site language, at
their language-free addresses too, with the prefixes and limits the rules really use."""

from __future__ import annotations

import pytest

from tests.web.conftest import text_of

PAGES = {
    "foreign-codes": {
        "en": "Codes of other tracking systems",
        "de": "Codes anderer Tracking-Systeme",
    },
    "external-links": {"en": "Why a link was refused", "de": "Warum ein Link abgelehnt wurde"},
}


@pytest.mark.parametrize("page", list(PAGES))
@pytest.mark.parametrize("lang", ["en", "de"])
def test_each_page_in_each_language(api, page, lang):
    response = api.get(f"/{lang}/help/{page}")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    body = text_of(response)
    assert f'<html lang="{lang}">' in body
    assert f"<h1>{PAGES[page][lang]}</h1>" in body
    other = "de" if lang == "en" else "en"
    assert f'href="/{other}/help/{page}"' in body  # the language switch
    assert 'name="robots"' not in body  # public help: search engines may list it


@pytest.mark.parametrize("page", list(PAGES))
def test_the_language_free_address_follows_the_browser(api, page):
    german = api.get(f"/help/{page}", headers={"Accept-Language": "de-AT, en;q=0.5"})
    assert german.status_code == 200
    assert f"<h1>{PAGES[page]['de']}</h1>" in text_of(german)
    assert "Accept-Language" in german.headers.get("Vary", "")
    english = text_of(api.get(f"/help/{page}", headers={"Accept-Language": "fr, en;q=0.8"}))
    assert f"<h1>{PAGES[page]['en']}</h1>" in english
    assert f'href="/de/help/{page}"' in english
    assert f"<h1>{PAGES[page]['en']}</h1>" in text_of(api.get(f"/help/{page}"))  # no header


@pytest.mark.parametrize("page", list(PAGES))
def test_a_language_the_site_does_not_have_is_the_404_page(api, page):
    response = api.get(f"/fr/help/{page}")
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_the_foreign_codes_page_names_the_default_prefixes(api):
    page = text_of(api.get("/en/help/foreign-codes"))
    for shape in ("LN-…", "LN…", "TB…", "GT…"):
        assert f'<span class="code">{shape}</span>' in page
    assert "(starting with LN)" in page
    assert "must not start with LN, GT, or TB," in page
    german = text_of(api.get("/de/help/foreign-codes"))
    assert "nicht mit LN, GT oder TB beginnen" in german


def test_the_external_links_page_states_the_default_limits(api):
    page = text_of(api.get("/en/help/external-links"))
    assert "Ports other than 80 and 443," in page
    assert "longer than 2048 characters" in page
    assert "within 5 seconds" in page
    assert "redirects more than 5 times" in page
    german = text_of(api.get("/de/help/external-links"))
    assert "Andere Ports als 80 und 443," in german
    assert "innerhalb von 5 Sekunden" in german


class TestConfiguredRules:
    @pytest.fixture
    def app_overrides(self):
        return {
            "TRACKABLE_FOREIGN_PREFIX": "xq",
            "TRACKABLE_SISTER_PREFIX": "LN",  # the same as ours: no sister codes here
            "OUTBOUND_ALLOWED_PORTS": [443, 80, 8443],
            "OUTBOUND_TIMEOUT_SECONDS": 2.5,
            "OUTBOUND_MAX_REDIRECTS": 1,
        }

    def test_the_foreign_codes_page_follows_the_code_settings(self, api):
        page = text_of(api.get("/en/help/foreign-codes"))
        assert '<span class="code">XQ…</span>' in page
        assert "TB…" not in page
        assert "sister service" not in page
        # and the lookup answers that very prefix with the page
        result = api.post("/api/trackables/lookup", json={"code": "xq12345"}).get_json()
        assert result["helpUrl"] == "/help/foreign-codes"

    def test_the_external_links_page_follows_the_outbound_settings(self, api):
        page = text_of(api.get("/en/help/external-links"))
        assert "Ports other than 80, 443, and 8443," in page
        assert "within 2.5 seconds" in page
        assert "redirects more than 1 time," in page
        assert "innerhalb von 2,5 Sekunden" in text_of(api.get("/de/help/external-links"))
