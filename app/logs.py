"""Logging to stdout, plain or JSON, every line carrying the request id.

`X-Request-ID` is taken from the proxy when it looks sane, otherwise generated, and echoed
back on every response. Secrets never reach the logs: trackable codes in
`/trackable/{code}`, the lookup query string and `accessCode` are redacted.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from typing import Any

from flask import Flask, Response, g, has_request_context, request

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SECRET_PATTERNS = [
    (re.compile(r"(/trackable/)[^/?#\s]+", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r"([?&](?:code|accessCode)=)[^&#\s]*", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r'("accessCode"\s*:\s*")[^"]*', re.IGNORECASE), r"\1[redacted]"),
]


def redact(text: str) -> str:
    for pattern, replacement in SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = g.get("request_id", "-") if has_request_context() else "-"
        record.msg = redact(str(record.msg))
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "requestId": getattr(record, "request_id", "-"),
            "message": redact(record.getMessage()),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(app: Flask) -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.addFilter(RequestIdFilter())
    if app.config["LOG_FORMAT"] == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s")
        )
    root = logging.getLogger("app")
    root.handlers = [handler]
    root.setLevel(app.config["LOG_LEVEL"])
    root.propagate = app.testing  # lets pytest's caplog see app logs

    @app.before_request
    def assign_request_id() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if REQUEST_ID.match(incoming) else uuid.uuid4().hex

    @app.after_request
    def echo_request_id(response: Response) -> Response:
        response.headers["X-Request-ID"] = g.get("request_id") or uuid.uuid4().hex
        return response


try:
    from gunicorn.glogging import Logger as _GunicornLogger
except ImportError:  # gunicorn is not a runtime import for tests or `flask run`
    _GunicornLogger = object  # type: ignore[assignment,misc]


class RedactingGunicornLogger(_GunicornLogger):  # type: ignore[misc,valid-type]
    """gunicorn's logger with trackable secrets removed from the access line."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)  # type: ignore[misc]
        for key in ("r", "U", "q"):
            if isinstance(atoms.get(key), str):
                atoms[key] = redact(atoms[key])
        return atoms
