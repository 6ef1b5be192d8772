"""The Android beta page (app/web/beta.py): in each site language, at the status's
language-free address too; how to join, with the download when one is configured; the
versions from the same settings as GET /api/system/beta-android."""

from __future__ import annotations

import pytest

from tests.web.conftest import text_of


@pytest.mark.parametrize(
    ("lang", "heading", "versions"),
    [("en", "The Android app beta", "Versions"), ("de", "Die Beta der Android-App", "Versionen")],
)
def test_the_page_in_each_language(api, lang, heading, versions):
    response = api.get(f"/{lang}/beta/android")
    assert response.status_code == 200
    page = text_of(response)
    assert f'<html lang="{lang}">' in page
    assert f"<h1>{heading}</h1>" in page
    assert f"<h2>{versions}</h2>" in page
    other = "de" if lang == "en" else "en"
    assert f'href="/{other}/beta/android"' in page  # the language switch


def test_the_language_free_address_follows_the_browser(api):
    german = text_of(api.get("/beta/android", headers={"Accept-Language": "de-AT"}))
    assert "Die Beta der Android-App" in german
    english = api.get("/beta/android", headers={"Accept-Language": "fr, en;q=0.8"})
    assert "The Android app beta" in text_of(english)
    assert 'href="/de/beta/android"' in text_of(english)
    assert "Die Beta" not in text_of(api.get("/beta/android"))  # no header: English


def test_without_a_download_the_page_says_none_is_offered(api):
    page = text_of(api.get("/en/beta/android"))
    assert "No beta build is offered for download right now." in page
    assert 'class="download"' not in page


def test_a_language_the_site_does_not_have_is_the_404_page(api):
    response = api.get("/fr/beta/android")
    assert response.status_code == 404
    assert response.mimetype == "text/html"


class TestConfiguredBeta:
    @pytest.fixture
    def app_overrides(self):
        return {
            "ANDROID_BETA_DISPLAY_VERSION": "1.5.0-beta.2",
            "ANDROID_BETA_VERSION_CODE": "152",
            "ANDROID_MIN_DISPLAY_VERSION": "1.4.0",
            "ANDROID_MIN_VERSION_CODE": "140",
            "ANDROID_BETA_RELEASE_NOTES": "Offline maps <for> saved areas.",
            "ANDROID_BETA_DOWNLOAD_URL": "https://downloads.example.org/notes-beta.apk",
        }

    def test_the_page_shows_the_download_versions_and_release_notes(self, api):
        page = text_of(api.get("/de/beta/android"))
        assert (
            '<a class="download" href="https://downloads.example.org/notes-beta.apk">'
            "Version 1.5.0-beta.2 herunterladen</a>"
        ) in page
        assert "Versionscode 152" in page
        assert "1.4.0" in page
        assert "Versionscode 140" in page
        assert "Offline maps &lt;for&gt; saved areas." in page  # escaped, never markup

    def test_the_page_and_the_metadata_route_agree(self, api):
        beta = api.get("/api/system/beta-android").get_json()
        page = text_of(api.get("/en/beta/android"))
        for field in ("displayVersion", "versionCode", "minimumCompatibleDisplayVersion"):
            assert beta[field] in page
