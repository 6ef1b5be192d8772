"""Sign-in on the website with the API's accounts: so an item can be activated on its page,
and a signed-in finder's logs carry their name.

The identity area's sign-in decides (its lockout, its rules on unconfirmed addresses and
two-factor codes), under the API login's rate limits. The pages' cookie holds only a
website session's random id (identity: website sessions), a new one at each sign-in (no
fixation); sign-out deletes the session, so a copy of the cookie stops working at once. It
counts on the pages blueprint only, never on the API, which takes bearer tokens alone.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response as BaseResponse

from app.errors import ValidationFailed
from app.extensions import db, limiter
from app.models.user import User
from app.services import identity
from app.web.forms import SignInForm
from app.web.i18n import language_page

SESSION_KEY = "account"
FAILURES: dict[str, Any] = {
    identity.FAILED: _l("The email or the password is not right."),
    identity.LOCKED_OUT: _l(
        "Too many failed sign-ins for this email. Wait five minutes, then try again."
    ),
    identity.REQUIRES_TWO_FACTOR: _l(
        "Enter the code from your authenticator app (or a recovery code), and your password again."
    ),
    identity.NOT_ALLOWED: _l("Confirm your email address first: open the link we mailed you."),
}


def signed_in_browser() -> identity.SignedInBrowser | None:
    """This browser's live website session, if its cookie names one. A cookie naming a
    session that ended loses the id (and reads the replica again where it may)."""
    raw = session.get(SESSION_KEY)
    if raw is None:
        return None
    found = identity.website_session_user(str(raw), config=current_app.config)
    if found is None:
        session.pop(SESSION_KEY, None)
    return found


# The cookie is ln_pages: HttpOnly, SameSite=Lax, Secure in production. The session is read
# from the primary: a cookie holding an id keeps the request off the replica (pages.py).
def use_page_session() -> None:
    """Before a page request: a signed-in browser's account is its viewer, unless the
    request carries a bearer token (which app.auth reads as for the API). Its last use
    is written (and committed) when due, before the page's own work."""
    # A context shared by requests (tests, several browsers) starts clean: no account,
    # and no form token another browser's page left (Flask-WTF keeps it on `g`).
    for name in ("page_account", "page_session_id", current_app.config["WTF_CSRF_FIELD_NAME"]):
        g.pop(name, None)
    if request.headers.get("Authorization") or request.endpoint == "pages.static":
        return
    browser = signed_in_browser()
    if browser is None:
        return
    if identity.note_use(browser):
        db.session.commit()
    g.token_user, g.token_checked = browser.user, True
    g.page_account = browser.user  # shown in the page's bar, with "sign out"
    g.page_session_id = browser.session_id  # "this browser" on the account page


def _next_path() -> str | None:
    """`next` when it is a path on this site (never another site's address), judged as
    a browser reads it (WHATWG URL): C0 controls and spaces trimmed at both ends, tabs and
    newlines dropped anywhere, a backslash taken for a slash. `/\t/evil.example` is
    `//evil.example` to a browser, another site; any other control character refuses it."""
    target = request.values.get("next", "")
    read = "".join(c for c in target.strip("".join(map(chr, range(33)))) if c not in "\t\n\r")
    read = read.replace("\\", "/")
    if any(ord(c) < 32 or ord(c) == 127 for c in read):
        return None
    parts = urlsplit(read)
    if read.startswith("/") and not read.startswith("//") and not parts.scheme:
        return read
    return None


def _email() -> str:
    return identity.normalize_email(request.form.get("email", "")) if request.form else ""


def _sign_in_limit() -> str:
    return str(current_app.config["RATE_LIMIT_LOGIN"])


# GET/POST /{lang}/sign-in: email and password, then the two-factor code when the account has 2FA
# on. next (a path on this site) is where a signed-in visitor goes on.
def sign_in_page() -> Any:
    form = SignInForm()
    status, error, two_factor = 200, None, False
    if request.method == "POST":
        if form.validate():
            result = identity.sign_in(
                email=form.email.data or "",
                password=form.password.data or "",
                two_factor_code=form.code.data or None,
                config=current_app.config,
                issue_refresh_token=False,
            )
            if result.user is not None:
                return _signed_in(result.user)
            db.session.commit()  # the failure counters
            failure = result.failure or identity.FAILED
            status, error = 401, FAILURES[failure]
            two_factor = failure == identity.REQUIRES_TWO_FACTOR or bool(form.code.data)
        else:
            status = 400
        form.password.data = form.code.data = ""  # never sent back
    html = render_template(
        "pages/sign_in.html",
        form=form,
        error=error,
        two_factor=two_factor,
        next_path=_next_path(),
    )
    return html, status, {"Cache-Control": "no-store"}


def new_page_session() -> None:
    """Nothing of the session before carries over, its form token included."""
    session.clear()
    g.pop(current_app.config["WTF_CSRF_FIELD_NAME"], None)


def _end_this_session() -> None:
    raw = session.get(SESSION_KEY)
    if raw is not None:
        identity.end_website_session(str(raw))


def _signed_in(user: User) -> BaseResponse:
    """A new website session for this browser, in place of any it had."""
    _end_this_session()
    raw = identity.start_website_session(
        user, user_agent=request.headers.get("User-Agent"), config=current_app.config
    )
    db.session.commit()  # with the failure counters the sign-in reset
    new_page_session()
    session[SESSION_KEY] = raw
    return redirect(_next_path() or url_for("pages.home"), 303)


def sign_out() -> BaseResponse:
    _end_this_session()
    db.session.commit()
    new_page_session()
    return redirect(_next_path() or url_for("pages.home"), 303)


# GET /{lang}/confirm-email: the mailed confirmation link (the API's confirmEmail, as a page
# with a way on). A link used a second time, or whose account is confirmed already, says so.
def confirm_email_page() -> Any:
    # Its other language is the sign-in page: its own address holds the one-time code.
    language_page("pages.sign_in")
    try:
        user_id = uuid.UUID(request.args.get("userId", ""))
    except ValueError:
        user_id = None
    code = request.args.get("code", "")
    changed = request.args.get("changedEmail") or None
    try:
        if user_id is None:
            raise ValidationFailed({"userId": ["Not a valid UUID."]})
        identity.confirm_email(
            user_id=user_id, code=code, changed_email=changed, config=current_app.config
        )
    except ValidationFailed:
        db.session.rollback()
        user = db.session.get(User, user_id) if user_id else None
        confirmed = user is not None and user.is_email_confirmed and changed is None
        page = render_template(
            "pages/confirm_email.html", outcome="already" if confirmed else "bad"
        )
        return page, 200 if confirmed else 400, {"Cache-Control": "no-store"}
    db.session.commit()
    page = render_template("pages/confirm_email.html", outcome="confirmed")
    return page, 200, {"Cache-Control": "no-store"}


def add_routes(pages: Blueprint) -> None:
    """The sign-in and sign-out addresses, on the pages blueprint (its languages,
    templates, CSRF), with the API login's rate limits per address and per email."""
    per_ip = limiter.limit(
        _sign_in_limit,
        exempt_when=lambda: request.method != "POST",
        scope=lambda endpoint: f"{endpoint}:ip",
    )
    per_email = limiter.limit(
        _sign_in_limit,
        key_func=lambda: "email:" + _email(),
        exempt_when=lambda: request.method != "POST" or not _email(),
        scope=lambda endpoint: f"{endpoint}:email",
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/sign-in",
        view_func=per_ip(per_email(sign_in_page)),
        endpoint="sign_in",
        methods=["GET", "POST"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/confirm-email",
        view_func=confirm_email_page,
        endpoint="confirm_email",
        methods=["GET"],
    )
    pages.add_url_rule(
        "/<string(length=2):lang>/sign-out",
        view_func=sign_out,
        endpoint="sign_out",
        methods=["POST"],
    )
