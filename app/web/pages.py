"""The website's trackable pages (contract: Trackables: lookup and active sessions, website
routes; Trackables: comments and journey): server-rendered, mobile-first, usable without
JavaScript (a small script adds "use my location"), in every SITE_LANGUAGES language.

- `GET /{lang}/trackables/{publicCode}`: the public page (name, status, description, the
  journey on a map of hosted tiles with the stops listed below it, the comments, the
  external link with the public code appended when it opts in).
  It links the trackable's and its group's Atom feeds (app.web.feeds) when they are
  public.
- `GET /{lang}/trackables/active/{trackableId}`: the active landing of a client holding
  the trackable (its access-session cookie, an account unlock, or managing it):
  activation (signed in: personally or for a team), "log a find" (a comment, a journey
  stop typed in any usual notation or from the browser's geolocation, or both, with an
  optional "seen on" day; app.web.find), ending the session on this device.
- The forms post to `/{lang}/trackables/active/{trackableId}/{find|activate|end}` and
  answer 303 to the form's own section of the landing (post/redirect/get), the notice
  there; a refused form is the landing again with the status the API gives and its
  error in words, what was typed kept. The find form carries a fresh
  `clientMutationId`, so a form sent twice (a double tap, a retry) writes once.
- Every rule is the trackables services' (the API's): who may see, write, activate. An
  invisible or unknown trackable, and a language the site does not have, are an HTML 404.
- CSRF: each form carries Flask-WTF's token, bound to a signed session cookie
  (HttpOnly, SameSite=Lax, Secure where the access cookie is); a POST without a valid
  token is refused (400) before anything runs; on the landing, that is the landing again
  with what was typed kept and a fresh token (the token lasts as long as the session
  cookie: WTF_CSRF_TIME_LIMIT is None). No secret code or QR token is ever in a
  page: the services never hand one out after creation.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import (
    Blueprint,
    Flask,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_babel import refresh
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.wrappers import Response as BaseResponse

from app.auth import Viewer, current_viewer
from app.errors import ApiError, TrackableError, ValidationFailed
from app.extensions import client_ip, db
from app.models.image import ImageTarget
from app.models.trackable import (
    COMMENT_BODY_MAX_LENGTH,
    COMMENT_NAME_MAX_LENGTH,
    TRACKABLE_NAME_MAX_LENGTH,
)
from app.services import images, trackables
from app.web import account, beta, entry, help_pages
from app.web.errors import install_error_pages
from app.web.feeds import add_routes as add_feed_routes
from app.web.feeds import feed_links
from app.web.find import log_find
from app.web.forms import CodeForm, FindForm
from app.web.i18n import install_i18n
from app.web.maps import journey_map
from app.web.photos import photos_of
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
account.add_routes(pages)
beta.add_routes(pages)
help_pages.add_routes(pages)
LANGUAGE_FREE = {**entry.LANGUAGE_FREE, **beta.LANGUAGE_FREE, **help_pages.LANGUAGE_FREE}

# The API's trackable error codes, in words (the API's own details are English only).
ERROR_WORDS: Mapping[str, Any] = {
    "trackable_access_code_required": _l(
        "This device no longer holds this trackable. Scan its QR code or enter its secret "
        "code again, then try once more."
    ),
    "trackable_access_code_invalid": _l("This code is not a secret code of this trackable."),
    "trackable_activation_required": _l(
        "This trackable has to be activated before it takes comments or journey stops."
    ),
    "trackable_already_activated": _l("This trackable is already activated."),
    "trackable_request_rejected": _l(
        "This was refused: you may only activate for a team you are an active member of."
    ),
    "trackable_not_found": _l("Trackable not found."),
    # The find form's id sent again with other words (the browser's Back, then an edit).
    "client_mutation_id_reused": _l(
        "This form was sent before with other content, so nothing was saved now. Check "
        "it and send it again."
    ),
}
REFUSED = _l("This was refused. Reload the page and try again.")
SIGN_IN_TO_ACTIVATE = _l(
    "Sign in with your account to activate this trackable; then it takes comments and "
    "journey stops."
)
NAME_REQUIRED = _l("An activated trackable needs a name: enter one.")
EXPIRED = _l(
    "This form has expired or did not come from this page, so nothing was saved. Check "
    "it and send it again."
)
# The active landing's forms by endpoint: a refused CSRF token shows the landing again.
LANDING_FORMS = {
    "pages.post_find": "find",
    "pages.post_activation": "activate",
    "pages.end_session": "end",
}


class PageNotFound(Exception):
    """Answered with the HTML 404 page."""


@dataclass
class FormState:
    """What a refused form shows again: its values and its errors in words."""

    form: str = ""
    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    status: int = 200
    find_form: FindForm | None = None  # "log a find" as sent, with its errors


# --- language ------------------------------------------------------------------------------


@pages.url_value_preprocessor
def take_language(endpoint: str | None, values: dict[str, Any] | None) -> None:
    g.pop("page_language", None)
    g.pop("page_not_found", None)
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


@pages.before_request
def check_csrf() -> None:
    if request.method == "POST":
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
    if g.get("page_not_found") or request.endpoint in entry.LANGUAGE_FREE:
        return None
    return request.path if request.method == "GET" else None


def _other_language_url(lang: str) -> str | None:
    """This page in another language (a refused form's page: its landing); None on
    pages without an address of their own."""
    args = dict(request.view_args or {})
    if g.get("page_not_found"):  # never echo what was typed into the address
        return None
    if request.endpoint == "pages.public_page":
        return url_for("pages.public_page", **args, lang=lang)
    endpoint = request.endpoint or ""
    endpoint = LANGUAGE_FREE.get(endpoint, endpoint)
    if endpoint in LANGUAGE_FREE.values():  # a page that takes no arguments
        return url_for(endpoint, lang=lang)
    if "trackable_id" in args:
        return url_for("pages.active_page", trackable_id=args["trackable_id"], lang=lang)
    return None


# --- errors --------------------------------------------------------------------------------


@pages.errorhandler(PageNotFound)
def page_not_found(_error: PageNotFound) -> tuple[str, int, dict[str, str]]:
    return not_found_page()


def not_found_page() -> tuple[str, int, dict[str, str]]:
    g.page_not_found = True
    if g.get("page_language") is None:
        g.page_language = trackables.site_language(request.accept_languages)
        refresh()
    return render_template("pages/not_found.html"), 404, {"Cache-Control": "no-store"}


add_feed_routes(pages, not_found_page)  # the Atom feeds answer a hidden item as a page does


@pages.errorhandler(CSRFError)
def csrf_refused(_error: CSRFError) -> tuple[str, int, dict[str, str]]:
    if request.endpoint == "pages.entry_form":  # the code box again, the code not echoed
        html = render_template("pages/entry_form.html", form=CodeForm(formdata=None), expired=True)
        return html, 400, {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    trackable_id = (request.view_args or {}).get("trackable_id")
    form = LANDING_FORMS.get(request.endpoint or "")
    if form and isinstance(trackable_id, uuid.UUID):
        # A token made earlier in this app context is not this session's: make a new one.
        g.pop(current_app.config["WTF_CSRF_FIELD_NAME"], None)
        # The landing again, what was typed kept (its forms hold no secret) and a fresh
        # token: a new browser session or a page left open must not lose a comment.
        values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
        find_form = FindForm() if form == "find" else None
        state = FormState(form, values, {"form": str(EXPIRED)}, 400, find_form)
        try:
            return _landing(trackable_id, state)
        except PageNotFound:
            pass  # this browser no longer holds it: the page below says what happened
    back = request.path.rsplit("/", 1)[0] if request.path.count("/") > 4 else None
    html = render_template("pages/refused.html", back=back)
    return html, 400, {"Cache-Control": "no-store"}


def _not_found_on_miss(error: TrackableError) -> None:
    if error.code == "trackable_not_found":
        raise PageNotFound from error


# --- the public page -------------------------------------------------------------------------


@pages.get("/<string(length=2):lang>/trackables/<public_code>")
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
        _not_found_on_miss(error)
        raise
    if view.public_code != public_code:  # a typed form of the code: the canonical URL
        return redirect(url_for("pages.public_page", public_code=view.public_code), 301)
    config = current_app.config
    journey_view = journey_map(
        [(stop.latitude, stop.longitude, stop.location_label) for stop in journey],
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
        trackables.active_landing(viewer, trackable_id, _client_key())
    except TrackableError:
        return False
    return True


# --- the active landing ----------------------------------------------------------------------


def _access_cookie() -> trackables.AccessCookie:
    return trackables.AccessCookie.from_config(current_app.config)


def _client_key() -> str | None:
    return _access_cookie().client_key(request.cookies)


def _landing(trackable_id: uuid.UUID, state: FormState | None = None) -> Any:
    viewer = current_viewer()
    try:
        landing = trackables.active_landing(viewer, trackable_id, _client_key())
        view = trackables.get_trackable(viewer, trackable_id)
    except TrackableError as error:
        _not_found_on_miss(error)
        raise
    state = state or FormState()
    html = render_template(
        "pages/active.html",
        landing=landing,
        trackable=view,
        signed_in=viewer.is_authenticated,
        state=state,
        sign_in_to_activate=SIGN_IN_TO_ACTIVATE,
        new_mutation_id=lambda: str(uuid.uuid4()),
        find_form=_find_form(state),
        limits={"body": COMMENT_BODY_MAX_LENGTH, "name": COMMENT_NAME_MAX_LENGTH},
        name_limit=TRACKABLE_NAME_MAX_LENGTH,
    )
    return html, state.status, {"Cache-Control": "no-store"}


def _find_form(state: FormState) -> FindForm:
    """The "log a find" form: as sent when it was refused (what was typed kept), else
    empty; either way with a fresh clientMutationId, since nothing of it was written."""
    form = state.find_form or FindForm(formdata=None)
    form.client_mutation_id.data = str(uuid.uuid4())
    return form


@pages.get("/<string(length=2):lang>/trackables/active/<uuid:trackable_id>")
def active_page(trackable_id: uuid.UUID) -> Any:
    return _landing(trackable_id)


def _back(trackable_id: uuid.UUID, anchor: str) -> BaseResponse:
    return redirect(url_for("pages.active_page", trackable_id=trackable_id, _anchor=anchor), 303)


def _refused(trackable_id: uuid.UUID, form: str, error: ApiError) -> Any:
    """The landing again with the service's refusal in words; when this client may no
    longer open the landing (its session ended), a page with the refusal alone. A hidden
    or unknown trackable is the 404 page."""
    db.session.rollback()
    if isinstance(error, TrackableError):
        _not_found_on_miss(error)
    words = ERROR_WORDS.get(error.code or "")
    if words is not None:
        message = str(words)
    elif isinstance(error, ValidationFailed) and "name" in error.extra.get("errors", {}):
        message = str(NAME_REQUIRED)
    else:
        message = str(REFUSED)
    values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
    find_form = FindForm() if form == "find" else None  # what was typed, again
    state = FormState(form, values, {"form": message}, error.status, find_form)
    try:
        return _landing(trackable_id, state)
    except PageNotFound:
        html = render_template("pages/error.html", message=message)
        return html, error.status, {"Cache-Control": "no-store"}


def _invalid(trackable_id: uuid.UUID, form: str, errors: dict[str, str]) -> Any:
    values = {key: str(value) for key, value in request.form.items() if key != "csrf_token"}
    return _landing(trackable_id, FormState(form, values, errors, 400))


def _credential() -> trackables.Credential:
    """Pages write with the session cookie only: no code is ever typed into them."""
    return trackables.Credential(
        access_code=None,
        guess_client=trackables.guess_key(client_ip(), current_app.config),
        config=current_app.config,
    )


@pages.post("/<string(length=2):lang>/trackables/active/<uuid:trackable_id>/find")
def post_find(trackable_id: uuid.UUID) -> Any:
    form = FindForm()
    if not form.validate():
        return _landing(trackable_id, FormState("find", status=400, find_form=form))
    try:
        posted = log_find(current_viewer(), trackable_id, form, _credential())
    except ApiError as error:
        return _refused(trackable_id, "find", error)
    db.session.commit()
    for kind, entry_id in posted.items():  # the notice and its links, by the form
        flash(entry_id, f"find-{kind}")
    return _back(trackable_id, "find")


@pages.post("/<string(length=2):lang>/trackables/active/<uuid:trackable_id>/activate")
def post_activation(trackable_id: uuid.UUID) -> Any:
    viewer = current_viewer()
    if not viewer.is_authenticated:
        state = FormState("activate", {}, {"form": str(SIGN_IN_TO_ACTIVATE)}, 401)
        return _landing(trackable_id, state)
    errors: dict[str, str] = {}
    name = request.form.get("name", "").strip()
    if len(name) > TRACKABLE_NAME_MAX_LENGTH:
        errors["name"] = _(
            "A name may be at most %(count)d characters long.", count=TRACKABLE_NAME_MAX_LENGTH
        )
    context = request.form.get("context", "personal")
    team_id = None
    if context != "personal":
        try:
            team_id = uuid.UUID(context)
        except ValueError:
            errors["context"] = _("Choose personal or one of your teams.")
    if errors:
        return _invalid(trackable_id, "activate", errors)
    try:
        trackables.activate(viewer, trackable_id, name=name, team_id=team_id)
    except ApiError as error:
        return _refused(trackable_id, "activate", error)
    db.session.commit()
    flash(_("The trackable is activated."))
    return _back(trackable_id, "top")


@pages.post("/<string(length=2):lang>/trackables/active/<uuid:trackable_id>/end")
def end_session(trackable_id: uuid.UUID) -> Any:
    trackables.end_active(_client_key(), trackable_id)
    db.session.commit()
    html = render_template("pages/ended.html")
    return html, 200, {"Cache-Control": "no-store"}


def install_pages(app: Flask) -> None:
    """The pages blueprint with its catalogues and its CSRF protection (pages only: the
    API takes bearer tokens and JSON, never a cookie-authenticated form)."""
    install_i18n(app)
    install_error_pages(app)
    app.config["SESSION_COOKIE_SECURE"] = trackables.AccessCookie.from_config(app.config).secure
    csrf.init_app(app)
    app.register_blueprint(pages)
