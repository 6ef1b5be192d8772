"""The public page of a trackable, `GET /{lang}/trackables/{publicCode}`: name, status,
description, photos, the journey on a map of hosted tiles with the stops listed below
it, the comments, the external link (with the public code appended when it opts in),
the code box, and its Atom feeds linked when they are public. Anyone who may see the
trackable (the trackables policies) sees it; anyone else gets the 404 page.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, current_app, redirect, render_template, url_for

from app.auth import Viewer, current_viewer
from app.errors import TrackableError
from app.models.image import ImageTarget
from app.services import images, trackables
from app.web.feeds import feed_links
from app.web.i18n import page_language
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
        comments=comments,
        photos=photos,
        holds_it=_holds(viewer, view.trackable_id),
        feeds=feed_links(trackable, view),
    )
    return html, 200, {"Cache-Control": "private, no-cache"}


def _holds(viewer: Viewer, trackable_id: uuid.UUID) -> bool:
    """Whether the active landing opens for this viewer (its link is shown)."""
    try:
        trackables.active_landing(viewer, trackable_id, client_key())
    except TrackableError:
        return False
    return True


def add_routes(pages: Blueprint) -> None:
    pages.add_url_rule("/<string(length=2):lang>/trackables/<public_code>", view_func=public_page)
