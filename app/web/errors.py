"""Every error on a website path is a page: styled, translated, never JSON.

The app renders every error as problem details (app.errors), which is right for the API
and wrong for a person: on a website path (`/`, `/{lang}/...`, `/trackable...`,
`/help/...`, `/beta/...`, the pages' static files) an answer that is problem details
becomes the error page in the page's language (the address's, else the browser's), with
the same status and the headers that matter (`Retry-After`, `Allow`). The page says what
happened in words and never echoes the address (a typed code may be a secret).
"""

from __future__ import annotations

from typing import Any

import orjson
from flask import Flask, Response, g, render_template, request
from flask_babel import lazy_gettext as _l
from flask_babel import refresh

from app.errors import PROBLEM_JSON
from app.services import trackables

# First path segments of the website; everything else (the API, images, tiles, probes)
# keeps problem details.
WEBSITE_SEGMENTS = frozenset({"", "trackable", "help", "beta", "static"})
KEPT_HEADERS = ("Retry-After", "Allow")

TITLES: dict[int, Any] = {
    400: _l("This request could not be read"),
    404: _l("Page not found"),
    405: _l("This page does not take that"),
    413: _l("Too large"),
    429: _l("Too many requests"),
    500: _l("Something went wrong"),
    503: _l("Not available right now"),
}
MESSAGES: dict[int, Any] = {
    400: _l("The page could not make sense of what was sent. Open it again and retry."),
    404: _l("There is nothing at this address. Check it, or enter the code printed on the item."),
    405: _l("This address cannot be used this way. Open the page again from its link."),
    413: _l("What was sent is larger than the service accepts."),
    429: _l("Too many requests came from your network. Wait a little, then try again."),
    500: _l("The service failed on its side. Nothing you did caused it."),
    503: _l("The service cannot reach its data right now. Try again in a minute."),
}


def is_website_path(path: str) -> bool:
    first = path.lstrip("/").split("/", 1)[0]
    return first in WEBSITE_SEGMENTS or first in trackables.SITE_LANGUAGES


def website_error_page(response: Response) -> Response:
    """Problem details on a website path, turned into the error page; else unchanged."""
    if response.mimetype != PROBLEM_JSON or not is_website_path(request.path):
        return response
    try:
        problem = orjson.loads(response.get_data())
    except orjson.JSONDecodeError:  # pragma: no cover - problem() always writes JSON
        problem = {}
    status = response.status_code
    _choose_language(status)
    family = status if status in TITLES else (500 if status >= 500 else 400)
    html = render_template(
        "pages/problem.html",
        title=TITLES[family],
        message=MESSAGES[family],
        ticket=problem.get("ticketNumber"),
        retry_minutes=_minutes(response.headers.get("Retry-After")),
    )
    page = Response(html, status=status, mimetype="text/html")
    for name in KEPT_HEADERS:
        if name in response.headers:
            page.headers[name] = response.headers[name]
    page.headers["Cache-Control"] = "no-store"
    page.headers["Referrer-Policy"] = "no-referrer"
    return page


def _choose_language(status: int) -> None:
    first = request.path.lstrip("/").split("/", 1)[0]
    if first in trackables.SITE_LANGUAGES:
        g.page_language = first
    elif g.get("page_language") is None:
        g.page_language = trackables.site_language(request.accept_languages)
    # The language links never repeat the address: the 404 page's own address, else home.
    g.error_page = True
    g.page_not_found = status == 404
    g.pop("language_page", None)
    refresh()


def _minutes(retry_after: str | None) -> int | None:
    if not retry_after or not retry_after.isdigit():
        return None
    return max(1, -(-int(retry_after) // 60))


def install_error_pages(app: Flask) -> None:
    app.after_request(website_error_page)
