"""The ApiError family and the one application/problem+json renderer.

Every error a client sees goes through `problem()`: ApiError subclasses raised by services
and policies, werkzeug's HTTP exceptions (unknown route, 405, 413, 415, 429), validation
failures from the request parser, flask-jwt-extended's token failures and, last, any
unexpected exception, which becomes a 500 carrying a tracked `ticketNumber`.

Every problem carries a machine `code` from the registry (app.error_codes): each ApiError
class has a default one, a raise site may name a more specific one, and a code that is
not in the registry is refused where it is named (UnknownErrorCode).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

import orjson
from flask import Flask, Response, current_app, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from app.error_codes import Code, code_for_status, require_code

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"


# RFC 9457: with `type: about:blank` the `title` is the status's phrase (RFC 9110's words,
# fixed here rather than taken from the running Python, whose phrases change between
# versions); what went wrong is said by `detail` and `code`.
STATUS_TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    410: "Gone",
    413: "Content Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    426: "Upgrade Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def status_title(status: int) -> str:
    """The problem `title` of `status`: its phrase."""
    return STATUS_TITLES.get(status) or HTTPStatus(status).phrase


def problem(
    status: int,
    detail: str = "",
    *,
    code: Code,
    headers: Mapping[str, str] | None = None,
    **fields: Any,
) -> Response:
    """Build an RFC 7807 problem-details response with its registered machine `code`;
    extra fields are added when not None."""
    body: dict[str, Any] = {"type": "about:blank", "title": status_title(status), "status": status}
    body["detail"] = detail
    body["code"] = require_code(code)
    body.update({key: value for key, value in fields.items() if value is not None})
    response = Response(orjson.dumps(body), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


class ApiError(Exception):
    """A rejection a client can act on; rendered as problem details. `code` names a more
    specific registered code than the class's own."""

    status = 400
    code = Code.BAD_REQUEST

    def __init__(
        self,
        detail: str,
        *,
        code: Code | None = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.code = require_code(code or type(self).code)
        self.headers = dict(headers or {})
        self.extra = extra

    def to_response(self) -> Response:
        return problem(
            self.status,
            self.detail,
            headers=self.headers,
            code=self.code,
            **self.extra,
        )


class ValidationFailed(ApiError):
    """400 with an `errors` map: field name (camelCase, dotted when nested) -> messages."""

    code = Code.VALIDATION_FAILED

    def __init__(
        self,
        errors: Mapping[str, list[str]],
        detail: str | None = None,
        *,
        code: Code | None = None,
    ) -> None:
        fields = ", ".join(sorted(errors)) or "request"
        super().__init__(detail or f"Invalid value for: {fields}.", code=code, errors=dict(errors))


class Unauthorized(ApiError):
    status = 401
    code = Code.AUTHENTICATION_REQUIRED

    def __init__(
        self,
        detail: str = "Authentication is required.",
        *,
        code: Code | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail, code=code, headers={"WWW-Authenticate": "Bearer"}, **extra)


class Forbidden(ApiError):
    status = 403
    code = Code.FORBIDDEN


class NotFound(ApiError):
    status = 404
    code = Code.NOT_FOUND


class Conflict(ApiError):
    status = 409
    code = Code.CONFLICT


class UnsupportedMediaType(ApiError):
    status = 415
    code = Code.UNSUPPORTED_MEDIA_TYPE


TRACKABLE_ERROR_STATUS = {
    Code.TRACKABLE_NOT_FOUND: 404,
    Code.TRACKABLE_COMMENT_NOT_FOUND: 404,
    Code.TRACKABLE_JOURNEY_STOP_NOT_FOUND: 404,
    Code.TRACKABLE_ALREADY_ACTIVATED: 400,
    Code.TRACKABLE_ACTIVATION_REQUIRED: 400,
    Code.TRACKABLE_ACCESS_CODE_REQUIRED: 403,
    Code.TRACKABLE_ACCESS_CODE_INVALID: 403,
    Code.TRACKABLE_GROUP_DETACH_FORBIDDEN: 403,
    Code.TRACKABLE_GROUP_ATTACH_FORBIDDEN: 403,
    Code.TRACKABLE_COMMENT_EDIT_FORBIDDEN: 403,
    Code.TRACKABLE_COMMENT_DELETE_FORBIDDEN: 403,
    Code.TRACKABLE_JOURNEY_STOP_DELETE_FORBIDDEN: 403,
    Code.TRACKABLE_JOURNEY_STOP_CONVERT_FORBIDDEN: 403,
    Code.TRACKABLE_JOURNEY_STOP_CONVERT_REJECTED: 400,
    Code.TRACKABLE_REQUEST_REJECTED: 400,
}


class TrackableError(ApiError):
    """A trackable rule's rejection, with the contract's stable `code`."""

    def __init__(self, code: Code, detail: str | None = None, *, status: int | None = None) -> None:
        super().__init__(detail or code.replace("_", " ").capitalize() + ".", code=code)
        self.status = status or TRACKABLE_ERROR_STATUS[code]


class FormLimitExceeded(RequestEntityTooLarge):
    """A 413 for a form limit other than the body's size; its description names it."""


def http_exception_response(error: HTTPException) -> Response:
    """Render a werkzeug HTTP exception (404, 405 with Allow, 413, ...) as problem details."""
    status = error.code or 500
    headers = {
        name: value
        for name, value in error.get_headers()
        if name.lower() not in {"content-type", "content-length"}
    }
    if status == 429 and "Retry-After" not in headers:
        headers["Retry-After"] = str(_retry_after_seconds(error))
    detail = error.description or ""
    if status == 404:
        detail = f"Nothing is served at {request.path}."
    elif status == 405:
        detail = f"{request.method} is not allowed on {request.path}."
    elif status == 413 and not isinstance(error, FormLimitExceeded):
        limit = request.max_content_length
        detail = "The request body is larger than this server accepts" + (
            f" ({limit} bytes)." if limit is not None else "."
        )
    return problem(status, detail, code=code_for_status(status), headers=headers)


def _retry_after_seconds(error: HTTPException) -> int:
    limit = getattr(error, "limit", None)
    try:
        # The app's limiter (Flask-Limiter keeps itself there): errors import no extension.
        (limiter,) = current_app.extensions.get("limiter", ())
        window = limiter.current_limit
        if window is not None:
            from datetime import UTC, datetime

            return max(1, int(window.reset_at - datetime.now(UTC).timestamp()))
    except Exception:
        log.debug("no rate-limit window for %s", limit)
    return 60


def unexpected_error_response(ticket: str) -> Response:
    """A 500 carrying the ticket number under which the failure was tracked."""
    return problem(
        500,
        "Something went wrong on our side. Quote the ticket number when you contact support.",
        code=Code.INTERNAL_ERROR,
        ticketNumber=ticket,
    )


def register_errors(app: Flask, track_unexpected: Callable[[Exception], str]) -> None:
    """`track_unexpected` logs and stores an unexpected failure and returns its ticket
    number (the compliance area's; the factory passes it in)."""
    app.register_error_handler(ApiError, lambda error: error.to_response())
    app.register_error_handler(
        Exception, lambda error: unexpected_error_response(track_unexpected(error))
    )
    # HTTPException is handled by the Api (flask-smorest) subclass in app.api.base.
