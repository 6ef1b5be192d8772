"""The account page (`/{lang}/account`): where this account is signed in, on the website
and in the app, with "sign out" for each and "sign out everywhere".

Behind the website's sign-in (a visitor who is not signed in is sent there and back). The
identity area lists and ends the sessions, the caller's own only: another account's
session id is the 404 page and nothing is done with it. Each form posts with the pages'
CSRF token and answers 303 back to this page (post/redirect/get) with a one-time notice.
"""

from __future__ import annotations

import math
import uuid
from datetime import timedelta
from typing import Any

from flask import Blueprint, current_app, flash, g, redirect, render_template, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response as BaseResponse

from app.auth import current_viewer
from app.errors import NotFound
from app.extensions import db
from app.services import identity
from app.web.account import new_page_session
from app.web.page_common import PageNotFound

NO_STORE = {"Cache-Control": "private, no-store"}


def _sign_in_first() -> BaseResponse | None:
    """To sign-in (and back to this page) unless this browser is signed in."""
    if g.get("page_account") is not None:
        return None
    return redirect(url_for("pages.sign_in", next=url_for("pages.account")), 303)


def _back() -> BaseResponse:
    return redirect(url_for("pages.account"), 303)


def _access_minutes() -> int:
    """How long an app's access token lasts: its sign-out takes hold within that."""
    value = current_app.config["JWT_ACCESS_TOKEN_EXPIRES"]
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value or 0)
    return math.ceil(seconds / 60)


def account_page() -> Any:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    sessions = identity.account_sessions(
        current_viewer(), this_browser=g.get("page_session_id"), config=current_app.config
    )
    html = render_template(
        "pages/account.html", sessions=sessions, access_minutes=_access_minutes()
    )
    return html, 200, NO_STORE


def end_website_session(session_id: uuid.UUID) -> BaseResponse:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    try:
        identity.end_own_website_session(current_viewer(), session_id)
    except NotFound as error:
        raise PageNotFound from error
    db.session.commit()
    if session_id == g.get("page_session_id"):  # this browser: its cookie forgets it too
        new_page_session()
        flash(_("You are signed out on this browser."))
    else:
        flash(_("That browser is signed out."))
    return _back()


def end_app_session(family_id: uuid.UUID) -> BaseResponse:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    try:
        identity.end_own_app_session(current_viewer(), family_id)
    except NotFound as error:
        raise PageNotFound from error
    db.session.commit()
    flash(_("The app on that device is signed out."))
    return _back()


def sign_out_everywhere() -> BaseResponse:
    gate = _sign_in_first()
    if gate is not None:
        return gate
    identity.sign_out_everywhere(current_viewer())
    db.session.commit()
    new_page_session()
    flash(_("You are signed out everywhere: on every browser and in the app on every device."))
    return _back()


def add_routes(pages: Blueprint) -> None:
    """The account page and its forms, on the pages blueprint (its languages, its session,
    its CSRF check, its 404 page)."""
    pages.add_url_rule(
        "/<string(length=2):lang>/account", view_func=account_page, endpoint="account"
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/sessions/<uuid:session_id>/sign-out",
        view_func=end_website_session,
        endpoint="end_website_session",
        methods=["POST"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/apps/<uuid:family_id>/sign-out",
        view_func=end_app_session,
        endpoint="end_app_session",
        methods=["POST"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/account/sign-out-everywhere",
        view_func=sign_out_everywhere,
        endpoint="sign_out_everywhere",
        methods=["POST"],
    )
