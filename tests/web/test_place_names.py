"""Journey stops' place names in the page's language: the public page's
list and map and the feeds render the saved English label in the URL's language from the
country code and GeoNames city saved beside it; the API's `locationLabel` stays as saved."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import JourneyStop
from tests.web.conftest import text_of
from tests.web.test_public_page import record

BERLIN = (52.52, 13.405)
VIENNA = (48.2082, 16.3738)
MID_ATLANTIC = (0.0, -30.0)


def stops_list(page: str) -> str:
    return page[page.index('<ol class="stops">') : page.index("</ol>")]


@pytest.mark.parametrize(
    ("lang", "berlin", "vienna"),
    [
        ("en", "Berlin, Germany", "Vienna, Austria"),
        ("de", "Berlin, Deutschland", "Wien, Österreich"),
    ],
)
def test_a_stop_reads_in_the_page_language(api, trackable, lang, berlin, vienna):
    record(trackable, *BERLIN)
    record(trackable, *VIENNA)
    page = text_of(api.get(f"/{lang}/trackables/{trackable.public_code}"))
    listed = stops_list(page)
    assert f"<strong>{berlin}</strong>" in listed
    assert f"<strong>{vienna}</strong>" in listed
    assert f"<title>1. {berlin}</title>" in page  # the map's stop too
    assert f"<title>2. {vienna}</title>" in page


def test_the_saved_label_and_the_api_stay_english(api, trackable):
    record(trackable, *BERLIN)
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.location_label, stop.country_code) == ("Berlin, Germany", "DE")
    assert stop.place_geonameid == 2950159
    journey = api.get(f"/api/trackables/{trackable.id}/journey").get_json()
    assert [item["locationLabel"] for item in journey] == ["Berlin, Germany"]
    assert "countryCode" not in journey[0]


@pytest.mark.parametrize(("lang", "words"), [("en", "Unnamed place"), ("de", "Ort ohne Namen")])
def test_a_stop_at_sea_has_no_place_name_in_either_language(api, trackable, lang, words):
    record(trackable, *MID_ATLANTIC)
    stop = db.session.scalars(select(JourneyStop)).one()
    assert (stop.location_label, stop.country_code, stop.place_geonameid) == ("", "", None)
    listed = stops_list(text_of(api.get(f"/{lang}/trackables/{trackable.public_code}")))
    assert f"<strong>{words}</strong>" in listed
    assert "0.0000, -30.0000" in listed


def test_a_stop_without_the_ids_shows_its_label_as_saved(api, trackable):
    record(trackable, *BERLIN)
    stop = db.session.scalars(select(JourneyStop)).one()
    stop.country_code, stop.place_geonameid = "", None  # as a stop saved before them
    db.session.commit()
    listed = stops_list(text_of(api.get(f"/de/trackables/{trackable.public_code}")))
    assert "<strong>Berlin, Germany</strong>" in listed


def test_a_feed_names_the_place_in_its_language(api, trackable):
    record(trackable, *VIENNA)
    german = text_of(api.get(f"/de/trackables/{trackable.public_code}/feed.atom"))
    english = text_of(api.get(f"/en/trackables/{trackable.public_code}/feed.atom"))
    assert "Wien, Österreich" in german
    assert "Vienna" not in german
    assert "Vienna, Austria" in english
