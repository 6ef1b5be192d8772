"""The ways into the website without a QR code, and the entry route every code leads to
(contract: Trackables: lookup and active sessions, website routes; Versioning item 4).

`GET /trackable/{code}` is the one shareable URL for a public code, a short secret code or
a long QR token; the code box POSTs to `/trackable`, so a typed secret stays out of URLs,
the browser history and access logs. The code is a secret in most of these URLs: no page
echoes it, nothing is cached, and the pages send no Referer onward (the access log redacts
it: app.platform.logs). What is typed is matched as the services match it (their
normalisation and guess budget).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, current_app, g, redirect, render_template, request, url_for
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response as BaseResponse

from app.auth import current_viewer
from app.extensions import client_ip, db
from app.services import trackables
from app.web.forms import CodeForm

# Each address without a language and the page that stands for it in another language
# (app.web.pages: LANGUAGE_FREE): the entry pages switch to the home page's code box.
LANGUAGE_FREE: Mapping[str, str] = {
    "pages.root": "pages.home",
    "pages.entry_code": "pages.home",
    "pages.entry_form": "pages.home",
}

# How many trackables the public list shows: a page read on a phone, not an export (the
# API's GET /api/trackables/public has the longer list).
PUBLIC_LIST_PAGE_SIZE = 100

MISS_WORDS: Mapping[str, Any] = {
    "not_found": _l("No trackable matches this code. Check it and enter it again."),
    "foreign": _l(
        "This looks like a code of another tracking system; it is not a code of this service."
    ),
    "sister": _l("This looks like a secret code of a sister service; enter it on that service."),
    # The API's words (services.trackables: the lookup's `error`), in the page's language.
    "not_activated": _l(
        "This trackable has not been activated yet. Whoever holds its secret code can activate "
        "it: sign in and enter the secret code."
    ),
}
# The miss page's heading by reason, where it is not "Trackable not found".
MISS_HEADINGS: Mapping[str, Any] = {"not_activated": _l("Not activated yet")}


def _private(response: Any) -> Any:
    """No cache keeps the answer and no Referer leaves it: the URL may hold a secret."""
    body, status, headers = response if isinstance(response, tuple) else (response, None, {})
    if isinstance(body, BaseResponse):
        body.headers["Cache-Control"] = "no-store"
        body.headers["Referrer-Policy"] = "no-referrer"
        return body
    return body, status, {**headers, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}


# GET / sends the browser to its language's home page; GET /{lang}/ says what the service is, has
# the code box and links to the public list; GET /{lang}/trackables is that list (the most recently
# active public trackables).
def root() -> BaseResponse:
    response = redirect(url_for("pages.home"), 302)
    response.headers["Vary"] = "Accept-Language"
    return response


def home() -> Any:
    html = render_template("pages/home.html", form=CodeForm())
    return html, 200, {"Cache-Control": "no-store"}  # its form's token is this browser's


def public_list() -> Any:
    found = trackables.public_trackables(current_viewer(), cap=PUBLIC_LIST_PAGE_SIZE)
    html = render_template("pages/public_list.html", found=found, form=CodeForm())
    return html, 200, {"Cache-Control": "no-store"}


# GET /trackable is the code box alone; a match is 303 to its page. Like every form of the pages it
# carries a CSRF token, so no other site can set an access cookie in a visitor's browser. An empty
# box is a 400 page with the box again.
def entry_form() -> Any:
    """`GET /trackable`: the code box; `POST /trackable`: what was typed into it."""
    form = CodeForm()
    if request.method == "GET":
        return _private((render_template("pages/entry_form.html", form=form), 200, {}))
    if not form.validate():
        form.code.data = ""  # never echo what was typed
        return _private((render_template("pages/entry_form.html", form=form), 400, {}))
    return _open(form.code.data or "", redirect_status=303)  # the page is then a GET


# `path`, not `string`: no code holds a slash, but whatever a visitor pasted after
# /trackable/ (`</script>` included) gets the miss page.
def entry_code(code: str) -> Any:
    """Route a public code, secret code or QR token to its page (see the module)."""
    return _open(code, redirect_status=302)


# A public code the visitor may see: 302 to its public page. A secret code or QR token: opens the
# access session (cookie) and 302 to the active landing. Anything else: the miss page (404) with the
# code box, saying why (an unactivated item's public code: not activated yet); it counts against the
# guess budget, and over it the answer is the 429 page, its wait in words.
def _open(code: str, *, redirect_status: int) -> Any:
    lang = g.page_language
    cookie = trackables.AccessCookie.from_config(current_app.config)
    client_id = cookie.client_id(request.cookies) or trackables.new_client_id()
    viewer = current_viewer()
    try:
        result = trackables.lookup_code(
            viewer,
            code,
            lang=lang,
            client_id=client_id,
            guess_client=trackables.guess_key(client_ip(), current_app.config, viewer.user),
            config=current_app.config,
        )
    except trackables.GuessBudgetExceeded as refused:
        db.session.rollback()
        return _private(too_many_guesses(refused))
    db.session.commit()
    if result.redirect_url is None:
        g.page_not_found = True  # no link to this address in another language
        reason = result.reason or "not_found"
        html = render_template(
            "pages/entry_miss.html",
            heading=MISS_HEADINGS.get(reason, _l("Trackable not found")),
            message=MISS_WORDS[reason],
            help_url=_localised(result.help_url),
            form=CodeForm(formdata=None),
        )
        return _private((html, 404, {}))
    response = redirect(result.redirect_url, code=redirect_status)
    if result.uses_secret_access:
        response.set_cookie(cookie.name, cookie.sign(client_id), **cookie.options())
    return _private(response)


def _localised(help_url: str | None) -> str | None:
    """The help page in the page's language when it is the service's own help page."""
    if help_url and help_url.startswith("/help/"):
        return f"/{g.page_language}{help_url}"
    return help_url


def too_many_guesses(refused: trackables.GuessBudgetExceeded) -> tuple[str, int, dict[str, str]]:
    """The 429 page of the guess budget: whose budget is spent, how long to wait, and the
    way out for a finder in a crowd (a confirmed account's own budget), in words."""
    html = render_template(
        "pages/too_many_guesses.html",
        scope=refused.scope,
        limit=refused.budget.limit,
        window=refused.window_minutes,
        minutes=max(1, -(-refused.retry_after // 60)),
    )
    return html, 429, {"Retry-After": str(refused.retry_after)}


def add_routes(pages: Blueprint) -> None:
    """The entry addresses, on the pages blueprint (its languages, templates, CSRF)."""
    pages.add_url_rule("/", view_func=root, endpoint="root")
    pages.add_url_rule("/<string(length=2):lang>/", view_func=home, endpoint="home")
    pages.add_url_rule(
        "/<string(length=2):lang>/trackables", view_func=public_list, endpoint="public_list"
    )
    pages.add_url_rule(
        "/trackable", view_func=entry_form, endpoint="entry_form", methods=["GET", "POST"]
    )
    pages.add_url_rule("/trackable/<path:code>", view_func=entry_code, endpoint="entry_code")
