"""Identity routes (contract: Identity and account, Authentication): register, login,
refresh, email confirmation and password reset under /api/auth. They mirror the well-known
identity API (ASP.NET Core Identity's MapIdentityApi), so its clients find the shapes and
strings they expect. manage/* and DELETE /api/account are in `manage`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from flask import Response, current_app, redirect, request, url_for
from werkzeug.wrappers import Response as BaseResponse

from app.api.base import Blueprint, ProblemSchema
from app.api.identity.schemas import (
    AccessTokenSchema,
    ConfirmEmailQuerySchema,
    EmailSchema,
    LoginQuerySchema,
    LoginSchema,
    RefreshSchema,
    RegisterSchema,
    ResetPasswordSchema,
)
from app.auth import issue_access_token
from app.error_codes import Code
from app.errors import PROBLEM_JSON, Unauthorized, ValidationFailed
from app.extensions import db, limiter
from app.models.user import User
from app.services import identity, trackables

blp = Blueprint(
    "identity", __name__, url_prefix="/api", description="Identity and account (bearer tokens)"
)

CONFIRMED_TEXT = "Thank you for confirming your email."
COOKIES_NOT_OFFERED = (
    "Cookie sign-in is not offered by this API; sign in with useCookies=false and "
    "useSessionCookies=false and send the bearer access token."
)
REFRESH_REFUSED = "The refresh token is unknown, expired, revoked or already used."
SIGN_IN_FAILURES = {
    "Failed": "Wrong email or password, or a wrong two-factor code.",
    "LockedOut": "Too many failures in a row: the email is locked for a few minutes.",
    "RequiresTwoFactor": "Right password; send it again with twoFactorCode or a recovery code.",
    "NotAllowed": "The email is not confirmed yet (REQUIRE_CONFIRMED_EMAIL).",
}
# The machine code of each failure (app.error_codes): `detail` stays the identity API's word.
SIGN_IN_CODES = {
    "Failed": Code.INVALID_CREDENTIALS,
    "LockedOut": Code.ACCOUNT_LOCKED_OUT,
    "RequiresTwoFactor": Code.TWO_FACTOR_REQUIRED,
    "NotAllowed": Code.EMAIL_NOT_CONFIRMED,
}


# --- rate limits: per client IP and per email of the JSON body -------------------------------


def body_email() -> str:
    data = request.get_json(silent=True)
    value = data.get("email") if isinstance(data, dict) else None
    return identity.normalize_email(value) if isinstance(value, str) else ""


def rate_limited(setting: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The limit named by `setting`, counted per client IP and, separately, per email."""

    def limit() -> str:
        return str(current_app.config[setting])

    per_ip = limiter.limit(limit, scope=lambda endpoint: f"{endpoint}:ip")
    per_email = limiter.limit(
        limit,
        key_func=lambda: "email:" + body_email(),
        exempt_when=lambda: not body_email(),
        scope=lambda endpoint: f"{endpoint}:email",
    )

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        return per_ip(per_email(func))

    return decorator


def empty_ok() -> Response:
    """200 with an empty body, as the identity API answers register, forgot and reset: no
    `Content-Type` either (the document lists no content; werkzeug would say text/html)."""
    response = Response(status=200)
    del response.headers["Content-Type"]
    return response


def token_response(user: User, refresh_token: str) -> dict[str, Any]:
    expires = current_app.config["JWT_ACCESS_TOKEN_EXPIRES"]
    seconds = int(expires.total_seconds()) if isinstance(expires, timedelta) else int(expires)
    return {
        "token_type": "Bearer",
        "access_token": issue_access_token(user),
        "expires_in": seconds,
        "refresh_token": refresh_token,
    }


# --- routes -----------------------------------------------------------------------------


@blp.route("/auth/register", methods=["POST"])
@rate_limited("RATE_LIMIT_REGISTER")
@blp.arguments(RegisterSchema)
@blp.response(200, description="Registered; a confirmation mail is on its way. Empty body.")
def register(data: dict[str, Any]) -> Response:
    """Register an account

    Creates the account and reserves the public user name; no token is returned (sign in
    next). Every rejection is 400 problem details whose `errors` names the field: `email`
    (invalid or taken), `userName` (format, reserved or taken), `password` (8-128
    characters, not a common password, not the email or user name).
    """
    identity.register(**data, config=current_app.config)
    db.session.commit()
    return empty_ok()


@blp.route("/auth/login", methods=["POST"])
@rate_limited("RATE_LIMIT_LOGIN")
@blp.arguments(LoginQuerySchema, location="query")
@blp.arguments(LoginSchema)
@blp.response(200, AccessTokenSchema)
@blp.alt_response(
    401,
    schema=ProblemSchema,
    content_type=PROBLEM_JSON,
    description="Sign-in failed; `detail` is exactly one of the four strings, `code` "
    "its machine code: `invalid_credentials` (Failed), `account_locked_out` (LockedOut), "
    "`two_factor_required` (RequiresTwoFactor), `email_not_confirmed` (NotAllowed).",
    examples={
        detail: {
            "summary": summary,
            "value": {
                "type": "about:blank",
                "title": "Unauthorized",
                "status": 401,
                "detail": detail,
                "code": SIGN_IN_CODES[detail],
            },
        }
        for detail, summary in SIGN_IN_FAILURES.items()
    },
)
def login(query: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Sign in and get a bearer access token and a refresh token

    Send `useCookies=false&useSessionCookies=false` (cookie sign-in is not offered: 400).
    When two-factor sign-in is on, add `twoFactorCode` (each code works once) or a
    `twoFactorRecoveryCode`. Failures are 401 with `detail` `Failed`, `LockedOut` (5
    failures in a row lock the email for 5 minutes, counted whether or not the account
    exists), `RequiresTwoFactor` or `NotAllowed` (unconfirmed email, when required).
    """
    if query["use_cookies"] or query["use_session_cookies"]:
        raise ValidationFailed({"useCookies": [COOKIES_NOT_OFFERED]}, detail=COOKIES_NOT_OFFERED)
    result = identity.sign_in(
        **data, config=current_app.config, user_agent=request.headers.get("User-Agent")
    )
    db.session.commit()  # failure counters too
    if result.user is None or result.refresh_token is None:
        failure = result.failure or identity.FAILED
        raise Unauthorized(failure, code=SIGN_IN_CODES[failure])
    return token_response(result.user, result.refresh_token)


@blp.route("/auth/refresh", methods=["POST"])
@blp.arguments(RefreshSchema)
@blp.response(200, AccessTokenSchema)
@blp.alt_response(
    401,
    schema=ProblemSchema,
    content_type=PROBLEM_JSON,
    description="The refresh token is unknown, expired, revoked or already used.",
    example={
        "type": "about:blank",
        "title": "Unauthorized",
        "status": 401,
        "detail": REFRESH_REFUSED,
        "code": Code.INVALID_REFRESH_TOKEN,
    },
)
def refresh(data: dict[str, Any]) -> dict[str, Any]:
    """Exchange a refresh token for new tokens

    A refresh token works once. An unknown, expired, revoked or already used token is
    401; presenting a used token again also revokes every token issued from the same
    sign-in (someone else may hold a copy).
    """
    rotated = identity.rotate_refresh_token(data["refresh_token"], config=current_app.config)
    db.session.commit()  # a reuse revokes the family even though the answer is 401
    if rotated is None:
        raise Unauthorized(REFRESH_REFUSED, code=Code.INVALID_REFRESH_TOKEN)
    return token_response(*rotated)


@blp.before_request
def browsers_to_the_confirmation_page() -> BaseResponse | None:
    """The mailed link opened in a browser (text/html preferred over JSON and text): the
    website's page, with the same query, confirms and says what happened with a way on."""
    if request.endpoint != "identity.confirm_email":
        return None
    offered = ["application/json", "text/plain", "text/html"]
    if request.accept_mimetypes.best_match(offered) != "text/html":
        return None
    query = request.query_string.decode("ascii", "replace")
    # The website's language for this browser, as the trackables' entry addresses choose it.
    page = url_for("pages.confirm_email", lang=trackables.site_language(request.accept_languages))
    return redirect(f"{page}?{query}" if query else page, 303)


@blp.route("/auth/confirmEmail", methods=["GET"])
@blp.arguments(ConfirmEmailQuerySchema, location="query")
@blp.response(
    200,
    content_type="text/plain",
    description="Confirmed.",
    example=CONFIRMED_TEXT,
)
@blp.alt_response(
    303,
    description="A browser (an `Accept` preferring text/html) is sent to the website's "
    "confirmation page with the same query; it confirms there and is told what happened.",
    headers={"Location": {"schema": {"type": "string"}, "description": "The page."}},
)
def confirm_email(query: dict[str, Any]) -> Response:
    """Confirm an email address with the mailed link

    The link's `code` works once and expires after a day. With `changedEmail` it
    confirms a change of address started in manage/info. An invalid, used or expired code
    is 400 with `errors.code`. Opened in a browser, the link leads to the website's page.
    """
    identity.confirm_email(**query, config=current_app.config)
    db.session.commit()
    return Response(CONFIRMED_TEXT, status=200, mimetype="text/plain")


@blp.route("/auth/resendConfirmationEmail", methods=["POST"])
@rate_limited("RATE_LIMIT_ACCOUNT_MAIL")
@blp.arguments(EmailSchema)
@blp.response(200, description="Always, whether or not the email exists. Empty body.")
def resend_confirmation_email(data: dict[str, Any]) -> Response:
    """Send the confirmation mail again

    Always 200 with an empty body, in the same time, whether or not an unconfirmed account
    has this email: the answer tells nobody who is registered. The mail follows shortly.
    """
    identity.resend_confirmation(data["email"])
    db.session.commit()
    return empty_ok()


@blp.route("/auth/forgotPassword", methods=["POST"])
@rate_limited("RATE_LIMIT_ACCOUNT_MAIL")
@blp.arguments(EmailSchema)
@blp.response(200, description="Always, whether or not the email exists. Empty body.")
def forgot_password(data: dict[str, Any]) -> Response:
    """Mail a password reset code

    Always 200 with an empty body, in the same time, whether or not an account has this
    email. The code works once and expires after a day. The mail follows shortly.
    """
    identity.forgot_password(data["email"])
    db.session.commit()
    return empty_ok()


@blp.route("/auth/resetPassword", methods=["POST"])
@rate_limited("RATE_LIMIT_ACCOUNT_MAIL")
@blp.arguments(ResetPasswordSchema)
@blp.response(200, description="Password changed; every session ended. Empty body.")
def reset_password(data: dict[str, Any]) -> Response:
    """Set a new password with the mailed reset code

    A wrong, used or expired code, or an email that does not match it, is 400 with
    `errors.resetCode`; a refused password is 400 with `errors.newPassword`. Success ends
    every session of the account (access and refresh tokens).
    """
    identity.reset_password(**data, config=current_app.config)
    db.session.commit()
    return empty_ok()
