"""The account's notification settings on the website, `/{lang}/account/notifications`
(where every notification mail links): mail none, each or daily and its language, and the
item and area watches, each with "stop watching"; and the one-click unsubscribe address
every notification mail carries (RFC 8058).

The settings page is behind the website's sign-in; its forms answer 303 back with a
notice, a refused one the page again with what to fix. The rules are the services': mail
settings, area watches and the unsubscribe link in services.events, item watches in
services.trackables. The unsubscribe address needs no sign-in and no CSRF token (its
signed token is the credential); a GET of it only shows the button.
"""

from __future__ import annotations

import uuid
from typing import Any

from babel import Locale, UnknownLocaleError
from flask import (
    Blueprint,
    current_app,
    flash,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import format_decimal
from flask_babel import gettext as _
from werkzeug.wrappers import Response as BaseResponse

from app.auth import Viewer, current_viewer
from app.errors import ApiError
from app.extensions import db
from app.models.event import AreaWatch
from app.models.notification_mail import MailChoice
from app.services import events, trackables
from app.web.forms import MailSettingsForm, WatchRemovalForm
from app.web.i18n import language_page

SETTINGS = "pages.mail_settings"
UNSUBSCRIBE = "pages.mail_unsubscribe"
# The one POST of the pages without the pages' CSRF token: a mail client's one-click
# unsubscribe carries no cookie, and the signed token in its address is the credential.
CSRF_EXEMPT = frozenset({UNSUBSCRIBE})
ONE_CLICK = ("List-Unsubscribe", "One-Click")  # the body RFC 8058 has mail clients send
NO_STORE = {"Cache-Control": "private, no-store"}


def _sign_in_first() -> BaseResponse | None:
    """To sign-in (and back here) unless this browser is signed in. Only the pages' own
    session counts: a bearer token sent to the website opens nothing."""
    if g.get("page_account") is not None:
        return None
    return redirect(url_for("pages.sign_in", next=url_for(SETTINGS)), 303)


# GET/POST /{lang}/account/notifications
def mail_settings_page() -> Any:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    viewer = current_viewer()
    if request.method == "GET":
        return _page(viewer)
    form = MailSettingsForm()
    if not form.validate():
        return _page(viewer, form, status=400)
    events.update_mail_settings(viewer, mail=form.choice, language=form.language.data)
    db.session.commit()
    flash(_("Your mail settings are saved."))
    return redirect(url_for(SETTINGS), 303)


# POST /{lang}/account/notifications/stop-watching: kind and target. The services' rules: an
# item watch ends whatever the item's visibility now; another account's area watch is 404,
# as none is (item watches are keyed by the caller, so another's is never touched).
def stop_watching() -> Any:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    viewer = current_viewer()
    language_page(SETTINGS)  # a refused form's page, in another language: the settings
    form = WatchRemovalForm()
    if not form.validate():
        refused = _(
            "This form was not complete, so nothing changed. Reload the page and try again."
        )
        return _page(viewer, status=400, error=refused)
    try:
        changed = _stop(viewer, form.kind.data or "", form.target_id)
    except ApiError as error:
        if error.status != 404:
            raise
        db.session.rollback()
        return _page(viewer, status=404, error=_("This watch was not found: it has ended already."))
    db.session.commit()
    flash(_("You no longer watch it.") if changed else _("This watch had ended already."))
    return redirect(url_for(SETTINGS), 303)


def _stop(viewer: Viewer, kind: str, target_id: uuid.UUID) -> bool:
    """End the caller's watch; whether there was one to end."""
    if kind == "trackable":
        return trackables.unwatch_trackable(viewer, target_id).changed
    if kind == "group":
        return trackables.unwatch_group(viewer, target_id).changed
    events.delete_area_watch(viewer, target_id)
    return True


def _page(
    viewer: Viewer,
    form: MailSettingsForm | None = None,
    *,
    status: int = 200,
    error: str | None = None,
) -> Any:
    if form is None:
        settings = events.get_mail_settings(viewer)
        form = MailSettingsForm(
            formdata=None, data={"mail": settings.mail.value, "language": settings.language}
        )
    html = render_template(
        "pages/mail_settings.html",
        form=form,
        error=error,
        confirmed=viewer.account.is_email_confirmed,
        digest_hour=int(current_app.config["NOTIFICATION_DIGEST_HOUR_UTC"]),
        watches=trackables.describe_watches(viewer),
        areas=[_area(watch) for watch in events.list_area_watches(viewer).items],
    )
    return html, status, NO_STORE


def _area(watch: AreaWatch) -> dict[str, Any]:
    """An area watch as the page words it: its window, and its notes' language."""
    north, south = _("%(degrees)s° N"), _("%(degrees)s° S")
    east, west = _("%(degrees)s° E"), _("%(degrees)s° W")
    window = _(
        "From %(south)s to %(north)s and from %(west)s to %(east)s",
        south=_degrees(watch.min_latitude, north, south),
        north=_degrees(watch.max_latitude, north, south),
        west=_degrees(watch.min_longitude, east, west),
        east=_degrees(watch.max_longitude, east, west),
    )
    if watch.content_language:
        notes = _("New notes in %(language)s only", language=_language(watch.content_language))
    else:
        notes = _("New notes in every language")
    return {"id": watch.id, "window": window, "notes": notes, "created_utc": watch.created_utc}


def _language(tag: str) -> str:
    """A content language's name in the page's language; the tag itself when the
    catalogues do not know it (a watch may name any BCP 47 tag)."""
    try:
        name = Locale.parse(tag, sep="-").get_display_name(g.page_language)
    except (ValueError, UnknownLocaleError):
        return tag
    return name or tag


def _degrees(value: float, positive: str, negative: str) -> str:
    """A latitude or longitude with its hemisphere, in the page's decimal notation."""
    degrees = format_decimal(abs(value), format="0.####")
    return (positive if value >= 0 else negative) % {"degrees": degrees}


# GET/POST /{lang}/account/notifications/unsubscribe/<token>: GET shows the button (mail
# scanners open links, so a GET changes nothing); POST, a mail client's one-click or the
# button, sets the token's account's mail to none.
def unsubscribe_page(token: str) -> Any:
    config = current_app.config
    if request.method == "POST" and request.form.get(ONE_CLICK[0]) != ONE_CLICK[1]:
        return _unsubscribe_answer("not_one_click", token, 400)
    if request.method == "POST":
        link, outcome = events.unsubscribe(token, config), "done"
    else:
        link = events.read_unsubscribe_link(token, config)
        none = link.settings is not None and link.settings.mail is MailChoice.NONE
        outcome = "already" if none else "ask"
    if link.state is events.LinkState.INVALID:
        return _unsubscribe_answer("invalid", token, 400)
    if link.state is events.LinkState.ACCOUNT_GONE:
        return _unsubscribe_answer("gone", token, 410)
    db.session.commit()
    return _unsubscribe_answer(outcome, token, 200)


def _unsubscribe_answer(outcome: str, token: str, status: int) -> Any:
    html = render_template("pages/unsubscribe.html", outcome=outcome, token=token)
    return html, status, NO_STORE


def add_routes(pages: Blueprint) -> None:
    """The settings page, its "stop watching" form and the unsubscribe address, on the
    pages blueprint (its languages, session, CSRF but for `CSRF_EXEMPT`)."""
    pages.add_url_rule(
        "/<string(length=2):lang>/account/notifications",
        view_func=mail_settings_page,
        endpoint="mail_settings",
        methods=["GET", "POST"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/notifications/stop-watching",
        view_func=stop_watching,
        endpoint="mail_settings_stop_watching",
        methods=["POST"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/notifications/unsubscribe/<token>",
        view_func=unsubscribe_page,
        endpoint="mail_unsubscribe",
        methods=["GET", "POST"],
    )
