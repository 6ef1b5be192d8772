"""The registry of machine `code`s: every problem response carries one of these.

Code names every code, so a misspelt one fails lint and mypy; ERROR_CODES gives each
its statuses and a one-line meaning, and must hold every Code (checked at import).
`app.errors` takes only a Code, so no client ever meets an unlisted code. The OpenAPI
document publishes the table as `x-error-codes` (app.api.base).

A code is stable snake_case; once published it keeps its meaning. `title` and `detail`
are English for people and may change. New codes may be added: a client treats a code it
does not know as the general meaning of the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from werkzeug.exceptions import default_exceptions


class Code(StrEnum):
    """Every problem `code` by name: a misspelt one fails lint and mypy, not a request.
    ERROR_CODES gives each its statuses and meaning, and holds exactly these."""

    BAD_REQUEST = "bad_request"
    VALIDATION_FAILED = "validation_failed"
    INVALID_JSON = "invalid_json"
    ROUTE_NOT_FOUND = "route_not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    URI_TOO_LONG = "uri_too_long"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    RANGE_NOT_SATISFIABLE = "range_not_satisfiable"
    RATE_LIMITED = "rate_limited"
    REQUEST_HEADERS_TOO_LARGE = "request_headers_too_large"
    INTERNAL_ERROR = "internal_error"
    DATABASE_UNAVAILABLE = "database_unavailable"
    DATABASE_DEADLOCK = "database_deadlock"
    RATE_LIMITS_UNAVAILABLE = "rate_limits_unavailable"
    REQUEST_TIMEOUT = "request_timeout"
    SERVICE_UNAVAILABLE = "service_unavailable"
    GATEWAY_TIMEOUT = "gateway_timeout"
    HTTP_ERROR = "http_error"
    AUTHENTICATION_REQUIRED = "authentication_required"
    INVALID_TOKEN = "invalid_token"  # noqa: S105 - an error code, not a secret
    TOKEN_EXPIRED = "token_expired"  # noqa: S105 - an error code, not a secret
    TOKEN_REVOKED = "token_revoked"  # noqa: S105 - an error code, not a secret
    ACCOUNT_DELETED = "account_deleted"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    MOBILE_VERSION_UNSUPPORTED = "mobile_version_unsupported"
    INVALID_CREDENTIALS = "invalid_credentials"
    ACCOUNT_LOCKED_OUT = "account_locked_out"
    TWO_FACTOR_REQUIRED = "two_factor_required"
    EMAIL_NOT_CONFIRMED = "email_not_confirmed"
    INVALID_REFRESH_TOKEN = "invalid_refresh_token"  # noqa: S105 - an error code, not a secret
    INVALID_EMAIL_CODE = "invalid_email_code"
    EMAIL_TAKEN = "email_taken"
    NOTE_NOT_FOUND = "note_not_found"
    NOTE_CHANGE_FORBIDDEN = "note_change_forbidden"
    NOTE_COMMENT_FORBIDDEN = "note_comment_forbidden"
    CATEGORY_NOT_FOUND = "category_not_found"
    CATEGORY_NOT_EMPTY = "category_not_empty"
    PROFILE_NOT_FOUND = "profile_not_found"
    TEAM_NOT_FOUND = "team_not_found"
    TEAM_MEMBERSHIP_REQUIRED = "team_membership_required"
    TEAM_ADMIN_REQUIRED = "team_admin_required"
    TEAM_INVITE_ONLY = "team_invite_only"
    TEAM_LAST_ADMIN = "team_last_admin"
    MEMBERSHIP_NOT_FOUND = "membership_not_found"
    MEMBERSHIP_ACTION_FORBIDDEN = "membership_action_forbidden"
    MEMBERSHIP_STATE_CONFLICT = "membership_state_conflict"
    INVITE_LINK_NOT_FOUND = "invite_link_not_found"
    TRACKABLE_NOT_FOUND = "trackable_not_found"
    TRACKABLE_COMMENT_NOT_FOUND = "trackable_comment_not_found"
    TRACKABLE_JOURNEY_STOP_NOT_FOUND = "trackable_journey_stop_not_found"
    TRACKABLE_ALREADY_ACTIVATED = "trackable_already_activated"
    TRACKABLE_ACTIVATION_REQUIRED = "trackable_activation_required"
    TRACKABLE_ACCESS_CODE_REQUIRED = "trackable_access_code_required"
    TRACKABLE_ACCESS_CODE_INVALID = "trackable_access_code_invalid"
    TRACKABLE_GROUP_DETACH_FORBIDDEN = "trackable_group_detach_forbidden"
    TRACKABLE_GROUP_ATTACH_FORBIDDEN = "trackable_group_attach_forbidden"
    TRACKABLE_COMMENT_EDIT_FORBIDDEN = "trackable_comment_edit_forbidden"
    TRACKABLE_COMMENT_DELETE_FORBIDDEN = "trackable_comment_delete_forbidden"
    TRACKABLE_JOURNEY_STOP_DELETE_FORBIDDEN = "trackable_journey_stop_delete_forbidden"
    TRACKABLE_JOURNEY_STOP_CONVERT_FORBIDDEN = "trackable_journey_stop_convert_forbidden"
    TRACKABLE_JOURNEY_STOP_CONVERT_REJECTED = "trackable_journey_stop_convert_rejected"
    TRACKABLE_REQUEST_REJECTED = "trackable_request_rejected"
    TRACKABLE_HOURLY_LIMIT_REACHED = "trackable_hourly_limit_reached"
    CLIENT_MUTATION_ID_REUSED = "client_mutation_id_reused"
    SECRET_GUESS_LIMIT_REACHED = "secret_guess_limit_reached"  # noqa: S105 - an error code, not a secret
    SECRET_ROTATION_LIMIT_REACHED = "secret_rotation_limit_reached"  # noqa: S105 - an error code, not a secret
    IMAGE_NOT_FOUND = "image_not_found"
    IMAGE_VARIANT_NOT_FOUND = "image_variant_not_found"
    IMAGE_CHANGE_FORBIDDEN = "image_change_forbidden"
    IMAGE_REJECTED = "image_rejected"
    IMAGE_ASPECT_RATIO = "image_aspect_ratio"
    IMAGE_TRUNCATED = "image_truncated"
    IMAGE_MEMORY_LIMIT = "image_memory_limit"
    IMAGE_LIMIT_REACHED = "image_limit_reached"
    IMAGE_DAILY_LIMIT_REACHED = "image_daily_limit_reached"
    FINDER_PHOTO_LIMIT_REACHED = "finder_photo_limit_reached"
    TILE_NOT_FOUND = "tile_not_found"
    AREA_WATCH_NOT_FOUND = "area_watch_not_found"
    AREA_WATCH_LIMIT_REACHED = "area_watch_limit_reached"
    LINK_VERIFICATION_FAILED = "link_verification_failed"
    REPORT_NOT_FOUND = "report_not_found"
    ERROR_TICKET_NOT_FOUND = "error_ticket_not_found"
    SUPERADMIN_REQUIRED = "superadmin_required"
    WEBHOOK_NOT_FOUND = "webhook_not_found"
    WEBHOOK_DELIVERY_NOT_FOUND = "webhook_delivery_not_found"
    WEBHOOK_LIMIT_REACHED = "webhook_limit_reached"
    WEBHOOK_URL_NOT_ALLOWED = "webhook_url_not_allowed"
    WEBHOOK_DISABLED = "webhook_disabled"
    WEBHOOK_DELIVERY_PENDING = "webhook_delivery_pending"
    WEBHOOK_SENDS_LIMITED = "webhook_sends_limited"
    ACCOUNT_EXPORT_NOT_FOUND = "account_export_not_found"
    ACCOUNT_EXPORT_IN_PROGRESS = "account_export_in_progress"
    ACCOUNT_EXPORT_NOT_READY = "account_export_not_ready"
    ACCOUNT_EXPORT_EXPIRED = "account_export_expired"
    ACCOUNT_EXPORT_DAILY_LIMIT_REACHED = "account_export_daily_limit_reached"


@dataclass(frozen=True)
class ErrorCode:
    code: str
    statuses: tuple[int, ...]
    meaning: str


class UnknownErrorCode(ValueError):
    """A code that is not in the registry: a programming error, never sent to a client."""


# Werkzeug's HTTP exceptions (and gunicorn's own answers) by status; a status without an
# entry gets `http_error`.
HTTP_STATUS_CODES: Mapping[int, Code] = {
    400: Code.BAD_REQUEST,
    403: Code.FORBIDDEN,
    404: Code.ROUTE_NOT_FOUND,
    405: Code.METHOD_NOT_ALLOWED,
    413: Code.PAYLOAD_TOO_LARGE,
    414: Code.URI_TOO_LONG,
    415: Code.UNSUPPORTED_MEDIA_TYPE,
    416: Code.RANGE_NOT_SATISFIABLE,
    429: Code.RATE_LIMITED,
    431: Code.REQUEST_HEADERS_TOO_LARGE,
    500: Code.INTERNAL_ERROR,
}
OTHER_HTTP_STATUSES = tuple(
    sorted(status for status in default_exceptions if status not in HTTP_STATUS_CODES)
)


def _entries(*rows: tuple[Code, int | tuple[int, ...], str]) -> dict[str, ErrorCode]:
    table: dict[str, ErrorCode] = {}
    for code, statuses, meaning in rows:
        if code in table:
            raise ValueError(f"error code {code} is listed twice")
        table[code] = ErrorCode(
            code, statuses if isinstance(statuses, tuple) else (statuses,), meaning
        )
    return table


ERROR_CODES: Mapping[str, ErrorCode] = _entries(
    # --- any operation: the request itself ---
    (Code.BAD_REQUEST, 400, "The request was refused; `detail` says why."),
    (
        Code.VALIDATION_FAILED,
        400,
        "A field or parameter is invalid; `errors` maps each (camelCase, dotted when "
        "nested; `request` for the whole body) to messages.",
    ),
    (
        Code.INVALID_JSON,
        400,
        "The body is not valid JSON, or holds NaN, Infinity, a NUL character or nesting "
        "deeper than the limit.",
    ),
    (Code.ROUTE_NOT_FOUND, 404, "Nothing is served at this path."),
    (
        Code.METHOD_NOT_ALLOWED,
        405,
        "The path does not take this method; `Allow` lists those it takes.",
    ),
    (
        Code.PAYLOAD_TOO_LARGE,
        413,
        "The body, or one of its form parts, is over the server's limit.",
    ),
    (Code.URI_TOO_LONG, 414, "The request line is longer than the server reads."),
    (Code.UNSUPPORTED_MEDIA_TYPE, 415, "The body is not of a media type this operation reads."),
    (Code.RANGE_NOT_SATISFIABLE, 416, "The `Range` asked for lies outside the file."),
    (Code.RATE_LIMITED, 429, "Too many requests from this client or account; wait `Retry-After`."),
    (Code.REQUEST_HEADERS_TOO_LARGE, 431, "The headers are more or larger than the server reads."),
    (Code.INTERNAL_ERROR, 500, "An unexpected failure; quote `ticketNumber` to support."),
    (
        Code.DATABASE_UNAVAILABLE,
        503,
        "The database cannot be reached or is overloaded; nothing was done, retry after "
        "`Retry-After`.",
    ),
    (
        Code.DATABASE_DEADLOCK,
        503,
        "The request collided with a concurrent one (a deadlock) and was not carried out; retry.",
    ),
    (
        Code.RATE_LIMITS_UNAVAILABLE,
        503,
        "The store that counts the rate limits (Redis) cannot be reached; nothing was done, "
        "retry after `Retry-After`.",
    ),
    # Answered by the reverse proxy of deploy/nginx, never by the app itself.
    (Code.REQUEST_TIMEOUT, 408, "The proxy did not receive the whole request in time."),
    (
        Code.SERVICE_UNAVAILABLE,
        (502, 503),
        "The proxy reached no application instance (a restart, an outage); retry later.",
    ),
    (
        Code.GATEWAY_TIMEOUT,
        504,
        "The application did not answer the proxy in time; the request may have been carried "
        "out, so check before retrying a write.",
    ),
    (
        Code.HTTP_ERROR,
        OTHER_HTTP_STATUSES,
        "Another HTTP-level refusal with no code of its own; act on the status.",
    ),
    # --- any operation: the caller ---
    (
        Code.AUTHENTICATION_REQUIRED,
        401,
        "The operation needs a bearer access token; none was sent.",
    ),
    (Code.INVALID_TOKEN, 401, "The bearer token is malformed, forged or otherwise invalid."),
    (Code.TOKEN_EXPIRED, 401, "The access token expired: get a new one with the refresh token."),
    (
        Code.TOKEN_REVOKED,
        401,
        "The token was revoked (the password changed or the sessions ended): sign in again.",
    ),
    (Code.ACCOUNT_DELETED, 401, "The bearer token's account no longer exists."),
    (Code.FORBIDDEN, 403, "Authenticated, but not allowed to do this."),
    (Code.NOT_FOUND, 404, "Nothing by that identity, or nothing this caller may see."),
    (Code.CONFLICT, 409, "The target's current state does not allow this."),
    (
        Code.MOBILE_VERSION_UNSUPPORTED,
        400,
        "This mobile build is older than the minimum compatible version; update the app.",
    ),
    # --- identity ---
    (
        Code.INVALID_CREDENTIALS,
        401,
        "Sign-in failed: wrong email or password, or a wrong two-factor code.",
    ),
    (
        Code.ACCOUNT_LOCKED_OUT,
        401,
        "Too many failed sign-ins in a row: the email is locked for minutes.",
    ),
    (
        Code.TWO_FACTOR_REQUIRED,
        401,
        "Right password; send it again with `twoFactorCode` or `twoFactorRecoveryCode`.",
    ),
    (Code.EMAIL_NOT_CONFIRMED, 401, "Right password, but the email is not confirmed yet."),
    (
        Code.INVALID_REFRESH_TOKEN,
        401,
        "The refresh token is unknown, expired, revoked or already used.",
    ),
    (
        Code.INVALID_EMAIL_CODE,
        400,
        "The confirmation or password-reset code is wrong, used or expired: ask for a new mail.",
    ),
    (
        Code.EMAIL_TAKEN,
        400,
        "An account already has this email (the `errors` map may name other fields too).",
    ),
    # --- notes, categories, profiles ---
    (Code.NOTE_NOT_FOUND, 404, "No such note, or the caller may not see it."),
    (
        Code.NOTE_CHANGE_FORBIDDEN,
        403,
        "Only the note's owner or an admin of its team may change it.",
    ),
    (Code.NOTE_COMMENT_FORBIDDEN, 403, "The note takes comments from its team's members only."),
    (Code.CATEGORY_NOT_FOUND, 404, "No such category in the caller's tree."),
    (
        Code.CATEGORY_NOT_EMPTY,
        400,
        "A root category that still holds notes or categories cannot be deleted.",
    ),
    (Code.PROFILE_NOT_FOUND, 404, "No such public profile."),
    # --- teams ---
    (Code.TEAM_NOT_FOUND, 404, "No such team, or the caller may not see it."),
    (Code.TEAM_MEMBERSHIP_REQUIRED, 403, "Only the team's active members may do this."),
    (Code.TEAM_ADMIN_REQUIRED, 403, "Only an admin of the team may do this."),
    (Code.TEAM_INVITE_ONLY, 403, "The team takes no membership requests; it joins by invitation."),
    (Code.TEAM_LAST_ADMIN, 409, "The team's last admin cannot go; promote another member first."),
    (Code.MEMBERSHIP_NOT_FOUND, 404, "No such membership, or the caller may not see it."),
    (
        Code.MEMBERSHIP_ACTION_FORBIDDEN,
        403,
        "This operation on the membership is the invited user's alone.",
    ),
    (
        Code.MEMBERSHIP_STATE_CONFLICT,
        409,
        "The membership's current state does not allow this (or changed meanwhile); reload.",
    ),
    (Code.INVITE_LINK_NOT_FOUND, 404, "No such invite link, or it was used up or revoked."),
    # --- trackables (the contract's codes first, unchanged) ---
    (Code.TRACKABLE_NOT_FOUND, 404, "The trackable or group does not exist or cannot be resolved."),
    (Code.TRACKABLE_COMMENT_NOT_FOUND, 404, "The comment no longer exists on that trackable."),
    (Code.TRACKABLE_JOURNEY_STOP_NOT_FOUND, 404, "The stop no longer exists on that trackable."),
    (Code.TRACKABLE_ALREADY_ACTIVATED, 400, "The trackable already has an owner."),
    (Code.TRACKABLE_ACTIVATION_REQUIRED, 400, "The trackable is not activated yet."),
    (
        Code.TRACKABLE_ACCESS_CODE_REQUIRED,
        403,
        "An anonymous write needs an active session or the trackable's secret code.",
    ),
    (
        Code.TRACKABLE_ACCESS_CODE_INVALID,
        403,
        "The code sent does not resolve to this trackable (counts against the guess budget).",
    ),
    (
        Code.TRACKABLE_GROUP_DETACH_FORBIDDEN,
        403,
        "Neither the activator nor an eligible group admin.",
    ),
    (
        Code.TRACKABLE_GROUP_ATTACH_FORBIDDEN,
        403,
        "The caller may not put this trackable into that group.",
    ),
    (
        Code.TRACKABLE_COMMENT_EDIT_FORBIDDEN,
        403,
        "Only the comment's signed-in author may edit it.",
    ),
    (
        Code.TRACKABLE_COMMENT_DELETE_FORBIDDEN,
        403,
        "Neither the comment's signed-in author nor an owner or team admin.",
    ),
    (
        Code.TRACKABLE_JOURNEY_STOP_DELETE_FORBIDDEN,
        403,
        "Neither the stop's signed-in author nor an owner or team admin.",
    ),
    (
        Code.TRACKABLE_JOURNEY_STOP_CONVERT_FORBIDDEN,
        403,
        "Only the signed-in creator of a direct report may convert it.",
    ),
    (
        Code.TRACKABLE_JOURNEY_STOP_CONVERT_REJECTED,
        400,
        "The conversion is not valid for that stop and note.",
    ),
    (
        Code.TRACKABLE_REQUEST_REJECTED,
        (400, 403, 404),
        "A trackable rule refused the request with no more specific code (404: a `teamId` "
        "the caller cannot see).",
    ),
    (
        Code.TRACKABLE_HOURLY_LIMIT_REACHED,
        429,
        "The account created its trackables for the hour; wait `Retry-After`.",
    ),
    (
        Code.CLIENT_MUTATION_ID_REUSED,
        409,
        "The `clientMutationId` already wrote another record (`originalId`); use a new tag.",
    ),
    (
        Code.SECRET_GUESS_LIMIT_REACHED,
        429,
        "Too many codes that match nothing from this address, its network or this account; "
        "wait `Retry-After` (`detail` says which).",
    ),
    (
        Code.SECRET_ROTATION_LIMIT_REACHED,
        429,
        "The account rotated too many secret codes; wait `Retry-After`.",
    ),
    # --- images ---
    (Code.IMAGE_NOT_FOUND, 404, "No such image, or its parent is hidden from the caller."),
    (Code.IMAGE_VARIANT_NOT_FOUND, 404, "No such variant: thumbnail, small, medium or large."),
    (
        Code.IMAGE_CHANGE_FORBIDDEN,
        403,
        "Only whoever manages the image's parent may do this (a finder's photo: its "
        "entry's writer adds; the writer or the trackable's owner side removes).",
    ),
    (
        Code.IMAGE_REJECTED,
        400,
        "Not an accepted image: format, bytes, pixels or broken data (`detail` says which).",
    ),
    (
        Code.IMAGE_ASPECT_RATIO,
        400,
        "One side of the image is more than the allowed times the other.",
    ),
    (Code.IMAGE_TRUNCATED, 400, "The image data cannot hold the size its header claims."),
    (Code.IMAGE_MEMORY_LIMIT, 400, "Decoding the image would take more memory than allowed."),
    (Code.IMAGE_LIMIT_REACHED, 400, "The parent holds the most images allowed; delete one first."),
    (
        Code.IMAGE_DAILY_LIMIT_REACHED,
        429,
        "The account uploaded its images for the day; wait `Retry-After`.",
    ),
    (
        Code.FINDER_PHOTO_LIMIT_REACHED,
        429,
        "An anonymous finder's session or network uploaded its photos for now; wait `Retry-After`.",
    ),
    (Code.TILE_NOT_FOUND, 404, "No such hosted map tile."),
    # --- events ---
    (Code.AREA_WATCH_NOT_FOUND, 404, "No such area watch of the caller's."),
    (Code.AREA_WATCH_LIMIT_REACHED, 400, "The account keeps the most area watches allowed."),
    # --- links, compliance ---
    (
        Code.LINK_VERIFICATION_FAILED,
        400,
        "The external link is malformed, not allowed, unreachable or answered an HTTP error.",
    ),
    (Code.REPORT_NOT_FOUND, 404, "No such content report, or the caller may not see it."),
    (Code.ERROR_TICKET_NOT_FOUND, 404, "No error ticket has this number."),
    (Code.SUPERADMIN_REQUIRED, 403, "Only super-admins may do this."),
    # --- webhooks ---
    (Code.WEBHOOK_NOT_FOUND, 404, "No such webhook, or the caller may not manage it."),
    (Code.WEBHOOK_DELIVERY_NOT_FOUND, 404, "The webhook has no delivery with this id."),
    (
        Code.WEBHOOK_LIMIT_REACHED,
        400,
        "The user, or the team, has the most webhooks allowed; delete one first.",
    ),
    (
        Code.WEBHOOK_URL_NOT_ALLOWED,
        400,
        "The webhook URL is not an http(s) address on an allowed port, or it names an "
        "address that is not public; `errors.url` says why.",
    ),
    (Code.WEBHOOK_DISABLED, 409, "The webhook is switched off; switch it on first."),
    (
        Code.WEBHOOK_DELIVERY_PENDING,
        409,
        "The delivery is still being tried; wait for its outcome.",
    ),
    (
        Code.WEBHOOK_SENDS_LIMITED,
        429,
        "Test messages and redeliveries past the hourly limit of the account or of the "
        "webhook (`Retry-After` says when).",
    ),
    # --- data export ---
    (Code.ACCOUNT_EXPORT_NOT_FOUND, 404, "No such data export of the caller's."),
    (
        Code.ACCOUNT_EXPORT_IN_PROGRESS,
        409,
        "The account's previous export is still being made (`exportId`); wait for it.",
    ),
    (Code.ACCOUNT_EXPORT_NOT_READY, 409, "The export is not made yet, or it failed: see `state`."),
    (Code.ACCOUNT_EXPORT_EXPIRED, 410, "The export's download time ran out; ask for a new one."),
    (
        Code.ACCOUNT_EXPORT_DAILY_LIMIT_REACHED,
        429,
        "The account asked for its exports for the day; wait `Retry-After`.",
    ),
)
_unlisted = sorted(set(Code) - set(ERROR_CODES))
if _unlisted:
    raise ValueError(f"error codes without a registry row: {_unlisted}")


def require_code(code: str) -> Code:
    """`code` as its constant when it is in the registry, else UnknownErrorCode."""
    if code not in ERROR_CODES:
        raise UnknownErrorCode(f"{code!r} is not in the error code registry (app.error_codes)")
    return Code(code)


def code_for_status(status: int) -> Code:
    """The code of an HTTP-level refusal (werkzeug's exceptions, gunicorn's answers)."""
    return HTTP_STATUS_CODES.get(status, Code.HTTP_ERROR)


def error_code_table() -> dict[str, tuple[tuple[int, ...], str]]:
    """The registry as data: code -> (statuses, meaning), in registry order (for the docs
    and the OpenAPI document)."""
    return {code: (entry.statuses, entry.meaning) for code, entry in ERROR_CODES.items()}
