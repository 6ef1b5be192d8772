"""The public page of a trackable, `GET /{lang}/trackables/{publicCode}`: name, status,
description, photos, the journey on a map of hosted tiles with the stops listed below
it, the comments (each stop and comment with its finder's photos), the external link
(with the public code appended when it opts in), the code box, and its Atom feeds linked
when they are public. Above the map, the journey's statistics (distance, stops,
countries named in the page's language by Babel's territory names, first and latest
stop). Anyone who may see the trackable (the trackables policies) sees it; anyone else
gets the 404 page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from babel import Locale
from flask import Blueprint, current_app, redirect, render_template, url_for
from flask_babel import format_decimal

from app.auth import Viewer, current_viewer
from app.errors import TrackableError
from app.models.image import ImageTarget
from app.services import images, trackables
from app.web.feeds import feed_links
from app.web.i18n import page_language
from app.web.leaflet import LEAFLET_VERSION
from app.web.maps import journey_map
from app.web.page_common import client_key, not_found_on_miss
from app.web.photos import photos_of


def public_page(public_code: str) -> Any:
    viewer = current_viewer()
    settings = trackables.CodeSettings.from_config(current_app.config)
    try:
        trackable = trackables.find_by_public_code(viewer, public_code, settings)
        view = trackables.trackable_view(viewer, trackable)
        journey = trackables.get_journey(viewer, view.trackable_id).items
        comments = trackables.list_comments(
            viewer, view.trackable_id, cap=current_app.config["PUBLIC_LIST_CAP"]
        )
        photos = photos_of(images.list_images(viewer, ImageTarget.TRACKABLE, view.trackable_id))
        finders_photos = {
            entry_id: photos_of(found)
            for entry_id, found in images.entry_images(viewer, view.trackable_id).items()
        }
    except TrackableError as error:
        not_found_on_miss(error)
        raise
    if view.public_code != public_code:  # a typed form of the code: the canonical URL
        return redirect(url_for("pages.public_page", public_code=view.public_code), 301)
    config = current_app.config
    journey_view = journey_map(
        [(stop.latitude, stop.longitude, stop.place_label(page_language())) for stop in journey],
        tile_url=config["HOSTED_MAP_TILE_URL_TEMPLATE"],
        max_zoom=int(config["MAP_PAGE_MAX_ZOOM"]),
    )
    html = render_template(
        "pages/public.html",
        trackable=view,
        journey=journey,
        map=journey_view,
        map_attribution=config["MAP_TILE_ATTRIBUTION"],
        leaflet_version=LEAFLET_VERSION,
        comments=comments,
        photos=photos,
        entry_photos=finders_photos,
        statistics=journey_statistics(view.journey_statistics, page_language()),
        holds_it=_holds(viewer, view.trackable_id),
        feeds=feed_links(trackable, view),
    )
    return html, 200, {"Cache-Control": "private, no-cache"}


@dataclass(frozen=True)
class ShownStatistics:
    """The journey's statistics as the page shows them, in the page's language."""

    distance_km: str
    stop_count: int
    countries: list[str]
    first_stop_utc: datetime | None
    last_stop_utc: datetime | None


def journey_statistics(found: trackables.JourneyStatistics, lang: str) -> ShownStatistics:
    """Distance to a tenth of a kilometre in the language's number format, and country
    names from Babel's territory names (the code itself where Babel has no name)."""
    territories = Locale.parse(lang).territories
    return ShownStatistics(
        distance_km=format_decimal(round(found.distance_km, 1), format="#,##0.0"),
        stop_count=found.stop_count,
        countries=[territories.get(code, code) for code in found.countries],
        first_stop_utc=found.first_stop_utc,
        last_stop_utc=found.last_stop_utc,
    )


def _holds(viewer: Viewer, trackable_id: uuid.UUID) -> bool:
    """Whether the active landing opens for this viewer (its link is shown)."""
    try:
        trackables.active_landing(viewer, trackable_id, client_key())
    except TrackableError:
        return False
    return True


def add_routes(pages: Blueprint) -> None:
    pages.add_url_rule("/<string(length=2):lang>/trackables/<public_code>", view_func=public_page)
