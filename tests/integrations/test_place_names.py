"""Place names in a page's language (app.integrations.place_names): what a saved label
names, and the label rendered from it with CLDR's names."""

from __future__ import annotations

import pytest

from app.integrations import geo_data, place_names
from app.integrations.place_names import PlaceIds, identify, localized_label


@pytest.fixture(scope="module")
def index() -> geo_data.GeoIndex:
    return geo_data.get_index("")


@pytest.mark.parametrize(
    ("latitude", "longitude", "label", "code", "german"),
    [
        (52.52, 13.405, "Berlin, Germany", "DE", "Berlin, Deutschland"),
        # a city a time zone is named after takes CLDR's name for it
        (48.2082, 16.3738, "Vienna, Austria", "AT", "Wien, Österreich"),
        # any other keeps its GeoNames name: no source says which alternate name is German
        (48.1374, 11.5755, "Munich, Germany", "DE", "Munich, Deutschland"),
        (
            30.2672,
            -97.7431,
            "Austin, Texas, United States",
            "US",
            "Austin, Texas, Vereinigte Staaten",
        ),
        # one part for the city and the country, in both languages
        (1.2897, 103.8501, "Singapore", "SG", "Singapur"),
        (49.6116, 6.1319, "Luxembourg", "LU", "Luxemburg"),
    ],
)
def test_a_geonames_label_is_identified_and_rendered_in_german(
    index, latitude, longitude, label, code, german
):
    ids = identify(label, latitude, longitude, index)
    assert ids.country_code == code
    assert ids.geonameid is not None
    rendered = localized_label(
        label, country_code=ids.country_code, geonameid=ids.geonameid, language="de"
    )
    assert rendered == german
    english = localized_label(
        label, country_code=ids.country_code, geonameid=ids.geonameid, language="en"
    )
    assert english == label


def test_another_geocoders_label_gives_its_country_only(index):
    ids = identify("Potsdam, Brandenburg, Germany", 52.3906, 13.0645, index)  # Nominatim's
    assert ids == PlaceIds("DE", None)
    rendered = localized_label(
        "Potsdam, Brandenburg, Germany", country_code="DE", geonameid=None, language="de"
    )
    assert rendered == "Potsdam, Brandenburg, Deutschland"


def test_a_country_name_holding_the_separator_is_found_whole(index):
    label = "Kralendijk, Bonaire, Saint Eustatius and Saba"  # not GeoNames' own label
    assert identify(label, 52.52, 13.405, index) == PlaceIds("BQ", None)
    rendered = localized_label(label, country_code="BQ", geonameid=None, language="de")
    assert rendered == "Kralendijk, Karibische Niederlande"


def test_no_label_or_an_unknown_country_identifies_nothing(index):
    assert identify("", 0.0, -30.0, index) == PlaceIds()
    assert identify("Somewhere, Atlantis", 52.52, 13.405, index) == PlaceIds()


@pytest.mark.parametrize(
    ("label", "code"),
    [
        ("", ""),  # mid-ocean: nothing to name
        ("Berlin, Germany", ""),  # saved before the ids were
        ("Berlin, Germ", "DE"),  # cut short
        ("Berlin, West Germany", "DE"),  # ends like the name, is not it
        ("Berlin, Germany", "ZZ"),  # a code neither GeoNames nor CLDR knows
    ],
)
def test_what_cannot_be_rendered_is_shown_as_saved(label, code):
    assert localized_label(label, country_code=code, geonameid=None, language="de") == label


def test_a_language_babel_does_not_know_shows_the_label_as_saved():
    rendered = localized_label("Berlin, Germany", country_code="DE", geonameid=None, language="xx")
    assert rendered == "Berlin, Germany"


def test_the_time_zone_cities_are_the_namesakes_of_their_zones():
    cities = place_names._time_zone_cities()
    assert cities[2761369] == ("Vienna", "Europe/Vienna")
    assert 2867714 not in cities  # Munich names no zone
    zones = [zone for _name, zone in cities.values()]
    assert len(zones) == len(set(zones))  # one city a zone
