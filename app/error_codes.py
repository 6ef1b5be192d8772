"""The registry of machine `code`s: every problem response carries one of these.

Each code has the statuses it is answered with and a one-line meaning. `app.errors`
refuses a code that is not here (an ApiError is built with one, `problem()` renders one),
so no client ever meets an unlisted code. The OpenAPI document publishes the table as
`x-error-codes` (app.api.base) and the docs render it from `error_code_table()`.

A code is stable snake_case; once published it keeps its meaning. `title` and `detail`
are English for people and may change. New codes may be added: a client treats a code it
does not know as the general meaning of the status.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from werkzeug.exceptions import default_exceptions


@dataclass(frozen=True)
class ErrorCode:
    code: str
    statuses: tuple[int, ...]
    meaning: str


class UnknownErrorCode(ValueError):
    """A code that is not in the registry: a programming error, never sent to a client."""


# Werkzeug's HTTP exceptions (and gunicorn's own answers) by status; a status without an
# entry gets `http_error`.
HTTP_STATUS_CODES: Mapping[int, str] = {
    400: "bad_request",
    403: "forbidden",
    404: "route_not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    416: "range_not_satisfiable",
    429: "rate_limited",
    431: "request_headers_too_large",
    500: "internal_error",
}
OTHER_HTTP_STATUSES = tuple(
    sorted(status for status in default_exceptions if status not in HTTP_STATUS_CODES)
)


def _entries(*rows: tuple[str, int | tuple[int, ...], str]) -> dict[str, ErrorCode]:
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
    ("bad_request", 400, "The request was refused; `detail` says why."),
    (
        "validation_failed",
        400,
        "A field or parameter is invalid; `errors` maps each (camelCase, dotted when "
        "nested; `request` for the whole body) to messages.",
    ),
    (
        "invalid_json",
        400,
        "The body is not valid JSON, or holds NaN, Infinity, a NUL character or nesting "
        "deeper than the limit.",
    ),
    ("route_not_found", 404, "Nothing is served at this path."),
    (
        "method_not_allowed",
        405,
        "The path does not take this method; `Allow` lists those it takes.",
    ),
    ("payload_too_large", 413, "The body, or one of its form parts, is over the server's limit."),
    ("uri_too_long", 414, "The request line is longer than the server reads."),
    ("unsupported_media_type", 415, "The body is not of a media type this operation reads."),
    ("range_not_satisfiable", 416, "The `Range` asked for lies outside the file."),
    ("rate_limited", 429, "Too many requests from this client or account; wait `Retry-After`."),
    ("request_headers_too_large", 431, "The headers are more or larger than the server reads."),
    ("internal_error", 500, "An unexpected failure; quote `ticketNumber` to support."),
    (
        "database_unavailable",
        503,
        "The database cannot be reached or is overloaded; nothing was done, retry after "
        "`Retry-After`.",
    ),
    (
        "database_deadlock",
        503,
        "The request collided with a concurrent one (a deadlock) and was not carried out; retry.",
    ),
    # Answered by the reverse proxy of deploy/nginx, never by the app itself.
    ("request_timeout", 408, "The proxy did not receive the whole request in time."),
    (
        "service_unavailable",
        (502, 503),
        "The proxy reached no application instance (a restart, an outage); retry later.",
    ),
    (
        "gateway_timeout",
        504,
        "The application did not answer the proxy in time; the request may have been carried "
        "out, so check before retrying a write.",
    ),
    (
        "http_error",
        OTHER_HTTP_STATUSES,
        "Another HTTP-level refusal with no code of its own; act on the status.",
    ),
    # --- any operation: the caller ---
    ("authentication_required", 401, "The operation needs a bearer access token; none was sent."),
    ("invalid_token", 401, "The bearer token is malformed, forged or otherwise invalid."),
    ("token_expired", 401, "The access token expired: get a new one with the refresh token."),
    (
        "token_revoked",
        401,
        "The token was revoked (the password changed or the sessions ended): sign in again.",
    ),
    ("account_deleted", 401, "The bearer token's account no longer exists."),
    ("forbidden", 403, "Authenticated, but not allowed to do this."),
    ("not_found", 404, "Nothing by that identity, or nothing this caller may see."),
    ("conflict", 409, "The target's current state does not allow this."),
    (
        "mobile_version_unsupported",
        400,
        "This mobile build is older than the minimum compatible version; update the app.",
    ),
    # --- identity ---
    (
        "invalid_credentials",
        401,
        "Sign-in failed: wrong email or password, or a wrong two-factor code.",
    ),
    (
        "account_locked_out",
        401,
        "Too many failed sign-ins in a row: the email is locked for minutes.",
    ),
    (
        "two_factor_required",
        401,
        "Right password; send it again with `twoFactorCode` or `twoFactorRecoveryCode`.",
    ),
    ("email_not_confirmed", 401, "Right password, but the email is not confirmed yet."),
    (
        "invalid_refresh_token",
        401,
        "The refresh token is unknown, expired, revoked or already used.",
    ),
    (
        "invalid_email_code",
        400,
        "The confirmation or password-reset code is wrong, used or expired: ask for a new mail.",
    ),
    (
        "email_taken",
        400,
        "An account already has this email (the `errors` map may name other fields too).",
    ),
    # --- notes, categories, profiles ---
    ("note_not_found", 404, "No such note, or the caller may not see it."),
    ("note_change_forbidden", 403, "Only the note's owner or an admin of its team may change it."),
    ("note_comment_forbidden", 403, "The note takes comments from its team's members only."),
    ("category_not_found", 404, "No such category in the caller's tree."),
    (
        "category_not_empty",
        400,
        "A root category that still holds notes or categories cannot be deleted.",
    ),
    ("profile_not_found", 404, "No such public profile."),
    # --- teams ---
    ("team_not_found", 404, "No such team, or the caller may not see it."),
    ("team_membership_required", 403, "Only the team's active members may do this."),
    ("team_admin_required", 403, "Only an admin of the team may do this."),
    ("team_invite_only", 403, "The team takes no membership requests; it joins by invitation."),
    ("team_last_admin", 409, "The team's last admin cannot go; promote another member first."),
    ("membership_not_found", 404, "No such membership, or the caller may not see it."),
    (
        "membership_action_forbidden",
        403,
        "This operation on the membership is the invited user's alone.",
    ),
    (
        "membership_state_conflict",
        409,
        "The membership's current state does not allow this (or changed meanwhile); reload.",
    ),
    ("invite_link_not_found", 404, "No such invite link, or it was used up or revoked."),
    # --- trackables (the contract's codes first, unchanged) ---
    ("trackable_not_found", 404, "The trackable or group does not exist or cannot be resolved."),
    ("trackable_comment_not_found", 404, "The comment no longer exists on that trackable."),
    ("trackable_journey_stop_not_found", 404, "The stop no longer exists on that trackable."),
    ("trackable_already_activated", 400, "The trackable already has an owner."),
    ("trackable_activation_required", 400, "The trackable is not activated yet."),
    (
        "trackable_access_code_required",
        403,
        "An anonymous write needs an active session or the trackable's secret code.",
    ),
    (
        "trackable_access_code_invalid",
        403,
        "The code sent does not resolve to this trackable (counts against the guess budget).",
    ),
    (
        "trackable_group_detach_forbidden",
        403,
        "Neither the activator nor an eligible group admin.",
    ),
    (
        "trackable_group_attach_forbidden",
        403,
        "The caller may not put this trackable into that group.",
    ),
    ("trackable_comment_edit_forbidden", 403, "Only the comment's signed-in author may edit it."),
    (
        "trackable_comment_delete_forbidden",
        403,
        "Neither the comment's signed-in author nor an owner or team admin.",
    ),
    (
        "trackable_journey_stop_delete_forbidden",
        403,
        "Neither the stop's signed-in author nor an owner or team admin.",
    ),
    (
        "trackable_journey_stop_convert_forbidden",
        403,
        "Only the signed-in creator of a direct report may convert it.",
    ),
    (
        "trackable_journey_stop_convert_rejected",
        400,
        "The conversion is not valid for that stop and note.",
    ),
    (
        "trackable_request_rejected",
        (400, 403, 404),
        "A trackable rule refused the request with no more specific code (404: a `teamId` "
        "the caller cannot see).",
    ),
    (
        "trackable_hourly_limit_reached",
        429,
        "The account created its trackables for the hour; wait `Retry-After`.",
    ),
    (
        "client_mutation_id_reused",
        409,
        "The `clientMutationId` already wrote another record (`originalId`); use a new tag.",
    ),
    (
        "secret_guess_limit_reached",
        429,
        "Too many codes that match nothing from this address, its network or this account; "
        "wait `Retry-After` (`detail` says which).",
    ),
    (
        "secret_rotation_limit_reached",
        429,
        "The account rotated too many secret codes; wait `Retry-After`.",
    ),
    # --- images ---
    ("image_not_found", 404, "No such image, or its parent is hidden from the caller."),
    ("image_variant_not_found", 404, "No such variant: thumbnail, small, medium or large."),
    (
        "image_change_forbidden",
        403,
        "Only whoever manages the image's parent may do this (a finder's photo: its "
        "entry's writer adds; the writer or the trackable's owner side removes).",
    ),
    (
        "image_rejected",
        400,
        "Not an accepted image: format, bytes, pixels or broken data (`detail` says which).",
    ),
    ("image_aspect_ratio", 400, "One side of the image is more than the allowed times the other."),
    ("image_truncated", 400, "The image data cannot hold the size its header claims."),
    ("image_memory_limit", 400, "Decoding the image would take more memory than allowed."),
    ("image_limit_reached", 400, "The parent holds the most images allowed; delete one first."),
    (
        "image_daily_limit_reached",
        429,
        "The account uploaded its images for the day; wait `Retry-After`.",
    ),
    (
        "finder_photo_limit_reached",
        429,
        "An anonymous finder's session or network uploaded its photos for now; wait `Retry-After`.",
    ),
    ("tile_not_found", 404, "No such hosted map tile."),
    # --- events ---
    ("area_watch_not_found", 404, "No such area watch of the caller's."),
    ("area_watch_limit_reached", 400, "The account keeps the most area watches allowed."),
    # --- links, compliance ---
    (
        "link_verification_failed",
        400,
        "The external link is malformed, not allowed, unreachable or answered an HTTP error.",
    ),
    ("report_not_found", 404, "No such content report, or the caller may not see it."),
    ("error_ticket_not_found", 404, "No error ticket has this number."),
    ("superadmin_required", 403, "Only super-admins may do this."),
    # --- webhooks ---
    ("webhook_not_found", 404, "No such webhook, or the caller may not manage it."),
    ("webhook_delivery_not_found", 404, "The webhook has no delivery with this id."),
    (
        "webhook_limit_reached",
        400,
        "The user, or the team, has the most webhooks allowed; delete one first.",
    ),
    (
        "webhook_url_not_allowed",
        400,
        "The webhook URL is not an http(s) address on an allowed port, or it names an "
        "address that is not public; `errors.url` says why.",
    ),
    ("webhook_disabled", 409, "The webhook is switched off; switch it on first."),
    ("webhook_delivery_pending", 409, "The delivery is still being tried; wait for its outcome."),
    (
        "webhook_sends_limited",
        429,
        "Test messages and redeliveries past the hourly limit of the account or of the "
        "webhook (`Retry-After` says when).",
    ),
    # --- data export ---
    ("account_export_not_found", 404, "No such data export of the caller's."),
    (
        "account_export_in_progress",
        409,
        "The account's previous export is still being made (`exportId`); wait for it.",
    ),
    ("account_export_not_ready", 409, "The export is not made yet, or it failed: see `state`."),
    ("account_export_expired", 410, "The export's download time ran out; ask for a new one."),
    (
        "account_export_daily_limit_reached",
        429,
        "The account asked for its exports for the day; wait `Retry-After`.",
    ),
)


def require_code(code: str) -> str:
    """`code` when it is in the registry, else UnknownErrorCode."""
    if code not in ERROR_CODES:
        raise UnknownErrorCode(f"{code!r} is not in the error code registry (app.error_codes)")
    return code


def code_for_status(status: int) -> str:
    """The code of an HTTP-level refusal (werkzeug's exceptions, gunicorn's answers)."""
    return HTTP_STATUS_CODES.get(status, "http_error")


def error_code_table() -> dict[str, tuple[tuple[int, ...], str]]:
    """The registry as data: code -> (statuses, meaning), in registry order (for the docs
    and the OpenAPI document)."""
    return {code: (entry.statuses, entry.meaning) for code, entry in ERROR_CODES.items()}
