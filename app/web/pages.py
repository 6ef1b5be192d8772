"""The website's pages blueprint (contract: Trackables: lookup and active sessions, website
routes): server-rendered, mobile-first, usable without JavaScript, in every
SITE_LANGUAGES language. Each page is a module of its own that adds its routes here; this
module keeps what they share: the page language from the URL, CSRF for every form, and the
404 page for what a visitor may not see. Every rule is the services' (the API's): who may
see, write, activate. No secret code or QR token is ever in a page.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import (
    Blueprint,
    Flask,
    current_app,
    g,
    render_template,
    request,
    session,
)
from flask_babel import refresh
from flask_wtf.csrf import CSRFError, CSRFProtect

from app.platform.database import primary_when
from app.services import trackables
from app.web import (
    account,
    account_page,
    active,
    beta,
    entry,
    exports,
    help_pages,
    mail_settings,
    public,
)
from app.web.errors import install_error_pages
from app.web.feeds import add_routes as add_feed_routes
from app.web.forms import CodeForm
from app.web.i18n import install_i18n, other_language_url
from app.web.page_common import PageNotFound
from app.web.times import time_element as when

pages = Blueprint(
    "pages",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/static/pages",
)
csrf = CSRFProtect()

# The home page and the entry route, the Android beta page and the help pages are pages of
# this blueprint too; each has an address without a language as well.
entry.add_routes(pages)
public.add_routes(pages)
active.add_routes(pages)
account.add_routes(pages)
account_page.add_routes(pages)
exports.add_routes(pages)
mail_settings.add_routes(pages)
beta.add_routes(pages)
help_pages.add_routes(pages)
LANGUAGE_FREE = {**entry.LANGUAGE_FREE, **beta.LANGUAGE_FREE, **help_pages.LANGUAGE_FREE}

# --- language ------------------------------------------------------------------------------


# /{lang}/...; an address without one takes the browser's.
@pages.url_value_preprocessor
def take_language(endpoint: str | None, values: dict[str, Any] | None) -> None:
    for name in ("page_language", "page_not_found", "error_page", "language_page"):
        g.pop(name, None)
    if endpoint == "pages.static":  # the style sheet and script have no language
        return
    lang = (values or {}).pop("lang", None)
    if lang is None and endpoint in LANGUAGE_FREE:  # an address without a language
        lang = trackables.site_language(request.accept_languages)
    if lang not in trackables.SITE_LANGUAGES:
        raise PageNotFound
    g.page_language = lang
    # Flask-Babel keeps the locale on the app context, which a request shares with an
    # already pushed one (tests, scripts): choose it afresh for this page.
    refresh()


@pages.url_defaults
def keep_language(endpoint: str, values: dict[str, Any]) -> None:
    expects = current_app.url_map.is_endpoint_expecting(endpoint, "lang")
    if expects and "lang" not in values and g.get("page_language"):
        values["lang"] = g.page_language


# Flask-WTF's token, bound to the pages' signed session cookie (HttpOnly, SameSite=Lax, Secure where
# the access cookie is); a POST without a valid token is refused before anything runs. The token
# lasts as long as the session (WTF_CSRF_TIME_LIMIT is None). The one-click unsubscribe address
# alone is exempt: its signed token is the credential (app.web.mail_settings).
@pages.before_request
def check_csrf() -> None:
    if request.method == "POST" and request.endpoint not in mail_settings.CSRF_EXEMPT:
        csrf.protect()


pages.before_request(account.use_page_session)  # a signed-in browser's account


@pages.app_context_processor  # the error pages of app.web.errors too
def page_helpers() -> dict[str, Any]:
    return {
        "lang": g.get("page_language", "en"),
        "languages": trackables.SITE_LANGUAGES,
        "when": when,
        "other_language_url": _other_language_url,
        "code_form": lambda: CodeForm(formdata=None),
        "account": g.get("page_account"),
        "here": _here,
    }


def _here() -> str | None:
    """This page's path, where a sign-in comes back to; None where the address may hold
    a code (the entry route) or is not a page of its own."""
    if g.get("page_not_found") or g.get("error_page") or request.endpoint in entry.LANGUAGE_FREE:
        return None
    return request.path if request.method == "GET" else None


def _other_language_url(lang: str) -> str:
    return other_language_url(lang, LANGUAGE_FREE)


# --- errors --------------------------------------------------------------------------------


@pages.errorhandler(PageNotFound)
def page_not_found(_error: PageNotFound) -> tuple[str, int, dict[str, str]]:
    return not_found_page()


# GET /{lang}/not-found: the 404 page as such, where another language's 404 page links (a 404
# page never repeats its own address).
@pages.get("/<string(length=2):lang>/not-found", endpoint="not_found")
def not_found_in_language() -> tuple[str, int, dict[str, str]]:
    return not_found_page()


def not_found_page() -> tuple[str, int, dict[str, str]]:
    g.page_not_found = True
    if g.get("page_language") is None:
        g.page_language = trackables.site_language(request.accept_languages)
        refresh()
    return render_template("pages/not_found.html"), 404, {"Cache-Control": "no-store"}


add_feed_routes(pages, not_found_page)  # the Atom feeds answer a hidden item as a page does


# The landing's forms come back with what was typed kept, the code box comes back empty, anything
# else is the "form expired" page.
@pages.errorhandler(CSRFError)
def csrf_refused(_error: CSRFError) -> tuple[str, int, dict[str, str]]:
    if request.endpoint == "pages.entry_form":  # the code box again, the code not echoed
        html = render_template("pages/entry_form.html", form=CodeForm(formdata=None), expired=True)
        return html, 400, {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    trackable_id = (request.view_args or {}).get("trackable_id")
    form = active.LANDING_FORMS.get(request.endpoint or "")
    if form and isinstance(trackable_id, uuid.UUID):
        try:
            return active.after_refused_token(trackable_id, form)  # type: ignore[no-any-return]
        except PageNotFound:
            pass  # this browser no longer holds it: the page below says what happened
    back = request.path.rsplit("/", 1)[0] if request.path.count("/") > 4 else None
    html = render_template("pages/refused.html", back=back)
    return html, 400, {"Cache-Control": "no-store"}


def install_pages(app: Flask) -> None:
    """The pages blueprint with its catalogues and its CSRF protection (pages only: the
    API takes bearer tokens and JSON, never a cookie-authenticated form)."""
    install_i18n(app)
    install_error_pages(app)
    app.config["SESSION_COOKIE_SECURE"] = trackables.AccessCookie.from_config(app.config).secure
    csrf.init_app(app)
    app.register_blueprint(pages)
    # A visitor signed in on the website reads the primary, never the read replica.
    primary_when(app, lambda: session.get(account.SESSION_KEY) is not None)
