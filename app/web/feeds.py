"""Atom feeds (RFC 4287) of a trackable and of a group, for people who follow them in a
feed reader (docs/contract/events.md, Feeds), beside the public pages.

What a feed holds is what the anonymous viewer may see (app.services.trackables.items.feeds),
whoever asks; a trackable or group hidden from them is the HTML 404 page, as their public
page is. Links are absolute, under PUBLIC_BASE_URL; texts are in the URL's language. Cached
as `public, no-cache`: a cache may keep a feed but asks again each time, so a trackable made
private leaves every feed at once.
"""

from __future__ import annotations

import hashlib
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, current_app, redirect, url_for
from flask_babel import gettext as _

from app.error_codes import Code
from app.errors import TrackableError
from app.platform.http_files import cached_file
from app.services import trackables
from app.web.i18n import page_language

ATOM = "http://www.w3.org/2005/Atom"
ATOM_TYPE = "application/atom+xml"
FEED_ENTRIES_MAX = 50
FEED_CACHE = "public, no-cache"
SUMMARY_MAX = 280
# Characters XML 1.0 cannot carry (the services refuse them in texts; never in a feed).
NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def absolute(path: str) -> str:
    """`path` on this site, under PUBLIC_BASE_URL (as links in mail are)."""
    return f"{current_app.config['PUBLIC_BASE_URL'].rstrip('/')}{path}"


def public_page_url(public_code: str) -> str:
    return absolute(url_for("pages.public_page", public_code=public_code))


def trackable_feed_url(public_code: str) -> str:
    return absolute(url_for("pages.trackable_feed", public_code=public_code))


def group_feed_url(group_id: uuid.UUID) -> str:
    return absolute(url_for("pages.group_feed", group_id=group_id))


def feed_links(trackable: Any, view: trackables.TrackableView) -> list[tuple[str, str]]:
    """The (title, URL) of the feeds a public page links: none when the anonymous viewer
    may not see the trackable (its feeds would be 404)."""
    if not trackables.has_public_feed(trackable):
        return []
    links = [(_("%(name)s (Atom feed)", name=_name(view)), trackable_feed_url(view.public_code))]
    if view.group is not None:
        title = _("Group %(name)s (Atom feed)", name=view.group.name)
        links.append((title, group_feed_url(view.group.id)))
    return links


def _name(view: trackables.TrackableView) -> str:
    return view.name or view.public_code


def _moment(value: datetime) -> str:
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _clean(text: str) -> str:
    return NOT_IN_XML.sub("", text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 1].rstrip() + "…"


def _add(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = _clean(text)
    return element


def _entry_texts(entry: trackables.FeedEntry) -> tuple[str, str, str, str | None]:
    """(title, summary, page anchor, author) of an entry in the page language."""
    name = _name(entry.trackable)
    if entry.stop is not None:
        stop = entry.stop
        place = stop.place_label(page_language()) or f"{stop.latitude:.4f}, {stop.longitude:.4f}"
        summary = _("Seen at %(place)s (%(latitude).4f, %(longitude).4f) by %(who)s.")
        values = {"latitude": stop.latitude, "longitude": stop.longitude}
        return (
            _("%(name)s: journey stop at %(place)s", name=name, place=place),
            summary % {"place": place, "who": stop.creator_display_text, **values},
            "journey",
            stop.creator_display_text or None,
        )
    if entry.comment is not None:
        comment = entry.comment
        return (
            _("%(name)s: comment by %(who)s", name=name, who=comment.author_display_text),
            _short(comment.body),
            "comments",
            comment.author_display_text or None,
        )
    return (
        _("%(name)s was activated", name=name),
        _("%(name)s started its journey.", name=name),
        "top",
        entry.trackable.owner_user_name or entry.trackable.team_name,
    )


def atom_document(feed: trackables.Feed, *, title: str, self_url: str, page: str | None) -> bytes:
    """The feed as Atom XML (UTF-8, with its declaration)."""
    # Unprefixed names under the Atom default namespace, declared on the root.
    root = ET.Element("feed", xmlns=ATOM)
    _add(root, "id", feed.feed_id.urn)
    _add(root, "title", title)
    _add(root, "subtitle", _("Journey stops and comments, newest first."))
    _add(root, "updated", _moment(feed.updated))
    _add(root, "link", rel="self", type=ATOM_TYPE, href=self_url)
    if page is not None:
        _add(root, "link", rel="alternate", type="text/html", href=page)
    author = _add(root, "author")
    _add(author, "name", _("Location Notes"))
    _add(author, "uri", absolute("/"))
    _add(root, "generator", "Location Notes")
    for entry in feed.entries:
        title_text, summary, anchor, by = _entry_texts(entry)
        element = _add(root, "entry")
        _add(element, "id", entry.entry_id.urn)
        _add(element, "title", title_text)
        _add(element, "published", _moment(entry.published))
        _add(element, "updated", _moment(entry.updated))
        href = f"{public_page_url(entry.trackable.public_code)}#{anchor}"
        _add(element, "link", rel="alternate", type="text/html", href=href)
        if by:
            _add(_add(element, "author"), "name", by)
        _add(element, "summary", summary, type="text")
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document


# application/atom+xml; charset=utf-8 with a strong ETag (the bytes' hash) and Last-Modified (the
# feed's updated), 304 on a conditional GET.
def _answer(document: bytes, updated: datetime) -> Any:
    return cached_file(
        document,
        mimetype=ATOM_TYPE,
        etag=hashlib.sha256(document).hexdigest()[:32],
        is_public=True,
        last_modified=updated,
        cache_control=FEED_CACHE,
    )


# GET /{lang}/trackables/{publicCode}/feed.atom and GET
# /{lang}/trackables/groups/{groupId}/feed.atom (merged over the group's items), at most
# FEED_ENTRIES_MAX entries, newest first.
def add_routes(pages: Blueprint, not_found: Callable[[], Any]) -> None:
    """The two feeds, on the pages blueprint (its languages and its 404 page)."""

    def trackable_feed(public_code: str) -> Any:
        settings = trackables.CodeSettings.from_config(current_app.config)
        try:
            feed = trackables.trackable_feed(public_code, settings, cap=FEED_ENTRIES_MAX)
        except TrackableError as error:
            if error.code == Code.TRACKABLE_NOT_FOUND:
                return not_found()
            raise
        view = feed.items[0]
        if view.public_code != public_code:  # a typed form of the code: the canonical URL
            return redirect(url_for("pages.trackable_feed", public_code=view.public_code), 301)
        document = atom_document(
            feed,
            title=feed.name,
            self_url=trackable_feed_url(view.public_code),
            page=public_page_url(view.public_code),
        )
        return _answer(document, feed.updated)

    def group_feed(group_id: uuid.UUID) -> Any:
        try:
            feed = trackables.group_feed(group_id, cap=FEED_ENTRIES_MAX)
        except TrackableError as error:
            if error.code == Code.TRACKABLE_NOT_FOUND:
                return not_found()
            raise
        document = atom_document(
            feed,
            title=_("Group %(name)s", name=feed.name),
            self_url=group_feed_url(feed.feed_id),
            page=None,
        )
        return _answer(document, feed.updated)

    pages.add_url_rule(
        "/<string(length=2):lang>/trackables/<public_code>/feed.atom",
        endpoint="trackable_feed",
        view_func=trackable_feed,
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/trackables/groups/<uuid:group_id>/feed.atom",
        endpoint="group_feed",
        view_func=group_feed,
    )
