"""Logging to stdout, plain or JSON, every line carrying the request id.

`X-Request-ID` is taken from the proxy when it looks sane, otherwise generated, and echoed
back on every response. Secrets never reach the logs: trackable codes in
`/trackable/{code}` and the public page's `/{lang}/trackables/{code}`, the lookup query
string, `accessCode` and a label request's `secretCode` and `qrToken` are redacted, also
where the path or query is percent-encoded (`/trackabl%65/...`, `/trackable%2F...`,
`?%63ode=`): the server routes the decoded form.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

from flask import Flask, Response, g, has_request_context, request

from app.integrations.client_ip import resolve_client_ip
from app.platform.wire import wire_time

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
SECRET_PATTERNS = [
    # The whole rest of the path: the entry route takes anything after /trackable/.
    (re.compile(r"(/trackable/)[^?#\s]+", re.IGNORECASE), r"\1[redacted]"),
    # The public page /{lang}/trackables/{publicCode}: a finder may type the item's secret
    # there instead of its public code (it answers 404, but the path would be logged).
    (re.compile(r"(/[a-z]{2}/trackables/)(?!active/)[^/?#\s]+", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r"([?&](?:code|accessCode)=)[^&#\s]*", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r'("accessCode"\s*:\s*")[^"]*', re.IGNORECASE), r"\1[redacted]"),
    # A bare query string (gunicorn's `q` atom has no `?`), also %2F-encoded /trackable/.
    (re.compile(r"^((?:code|accessCode)=)[^&#\s]*", re.IGNORECASE), r"\1[redacted]"),
    (re.compile(r"(%2Ftrackable%2F)[^/?#&\s%]+", re.IGNORECASE), r"\1[redacted]"),
    # JSON or Python reprs of a lookup body (`code`), an access code (`access_code`), or a
    # label request's item (`secret_code`, `qr_token`; its `scanUrl` holds /trackable/).
    (
        re.compile(
            r"""(["'](?:code|access_?code|secret_?code|qr_?token)["']\s*:\s*["'])[^"']*""",
            re.IGNORECASE,
        ),
        r"\1[redacted]",
    ),
]


# A run of URL characters holding a percent escape (a path, a query, a whole URL).
ENCODED_RUN = re.compile(r"[^\s\"'<>]*%[0-9A-Fa-f]{2}[^\s\"'<>]*")
# Decodings tried: the server decodes once, a proxy in front of it may decode once more.
MAX_DECODINGS = 3
# What a redacted run is written back with: the printable URL characters; anything else
# (spaces, quotes, a decoded line break) stays percent-encoded, so no log line is forged.
URL_SAFE = "/?&=:;,+@!$'()*[]~#"


# A path that matched no route may be a code typed or scanned into the wrong place
# (`/LNJ7CAG1RF`, or a bring-your-own code of any shape): the access log writes it as
# UNMATCHED, without its segments or query.
UNMATCHED = "unmatched"


def redact_unmatched(text: str) -> str:
    """A request line (`GET /x?y HTTP/1.1`) or a path of a request no route matched, with
    the path and query written as UNMATCHED."""
    method, space, rest = text.partition(" ")
    if not space:
        return UNMATCHED
    _uri, space, protocol = rest.rpartition(" ")
    return f"{method} {UNMATCHED} {protocol}" if space else f"{method} {UNMATCHED}"


def redact(text: str) -> str:
    text = _redact_plain(text)
    if "%" in text:
        text = ENCODED_RUN.sub(_redact_encoded, text)
    return text


def _redact_plain(text: str) -> str:
    for pattern, replacement in SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redact_encoded(match: re.Match[str]) -> str:
    """The run as it was, unless a decoded form of it holds a secret: then that form,
    redacted and percent-encoded again (`/trackabl%65/CODE` -> `/trackable/[redacted]`)."""
    run = decoded = match.group()
    for _ in range(MAX_DECODINGS):
        decoded, previous = unquote(decoded), decoded
        if decoded == previous:
            break
        redacted = _redact_plain(decoded)
        if redacted != decoded:
            return quote(redacted, safe=URL_SAFE)
    return run


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = g.get("request_id", "-") if has_request_context() else "-"
        # The message with its arguments: a path passed as `%s` must be redacted too.
        record.msg, record.args = redact(record.getMessage()), None
        return True


class RedactingFormatter(logging.Formatter):
    """A formatter whose tracebacks are redacted too: an exception's text may quote a
    request's path, query or body."""

    def formatException(self, ei: Any) -> str:
        return redact(super().formatException(ei))


class JsonFormatter(RedactingFormatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", "-"),  # as on access lines
            "message": redact(record.getMessage()),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


class RedactingFilter(logging.Filter):
    """Redacts a record's message and its traceback (the record is rewritten in place)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "redacted", False):
            return True  # built from redacted parts (a JSON access record): kept whole
        message = record.getMessage()
        if record.exc_info:
            # An exception's text may quote the request (gunicorn's parse errors do).
            message += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            record.exc_info, record.exc_text = None, None
        record.msg, record.args = redact(message), None
        return True


_REDACTING_FILTER = RedactingFilter()


def configure_logging(app: Flask) -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.addFilter(RequestIdFilter())
    if app.config["LOG_FORMAT"] == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            RedactingFormatter("%(asctime)s %(levelname)s [%(request_id)s] %(name)s: %(message)s")
        )
    root = logging.getLogger("app")
    root.handlers = [handler]
    root.setLevel(app.config["LOG_LEVEL"])
    root.propagate = app.testing  # lets pytest's caplog see app logs
    # `flask run` writes its access lines through werkzeug's logger.
    logging.getLogger("werkzeug").addFilter(_REDACTING_FILTER)

    @app.before_request
    def assign_request_id() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if REQUEST_ID.match(incoming) else uuid.uuid4().hex

    @app.after_request
    def echo_request_id(response: Response) -> Response:
        response.headers["X-Request-ID"] = g.get("request_id") or uuid.uuid4().hex
        rule = request.url_rule
        note_for_access_log(rule.rule if rule is not None else None, resolve_client_ip(request))
        return response


# What the app tells the access log of its request (`note_for_access_log`), in the WSGI
# environ the server logs from: the route's template and the client's address as resolved
# behind trusted proxies.
ROUTE_KEY, CLIENT_KEY = "location_notes.route", "location_notes.client"


def note_for_access_log(route: str | None, client: str | None) -> None:
    request.environ[ROUTE_KEY] = route
    request.environ[CLIENT_KEY] = client


def access_record(atoms: Mapping[str, Any], environ: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON access record from gunicorn's (already redacted) atoms: never an id of
    the request's path beyond what `redact` keeps, the route as a template."""

    def atom(name: str) -> Any:
        value = atoms.get(name)
        return None if value in (None, "-") else value

    status = atom("s")
    length = atom("B")
    return {
        "time": wire_time(datetime.now(UTC)),
        "request_id": atom("{x-request-id}o"),
        "method": atom("m"),
        "path": atom("U"),
        "route": environ.get(ROUTE_KEY),
        "status": int(status) if status is not None and str(status).isdigit() else status,
        "bytes": int(length) if length is not None and str(length).isdigit() else 0,
        "duration_ms": round(float(atom("L") or 0) * 1000, 1),
        "client": environ.get(CLIENT_KEY) or atom("h"),
        "peer": atom("h"),
        "user_agent": atom("a"),
    }


try:
    from gunicorn.glogging import Logger as _GunicornLogger
except ImportError:  # gunicorn is not a runtime import for tests or `flask run`
    _GunicornLogger = object  # type: ignore[assignment,misc]


class RedactingGunicornLogger(_GunicornLogger):  # type: ignore[misc,valid-type]
    """gunicorn's logger with trackable secrets removed from the access line and from
    the error log, where a worker names the URI of a request it failed to parse or to
    handle ("Error handling request GET /trackable/..."); with LOG_FORMAT=json both logs
    write JSON lines."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)  # type: ignore[misc]
        for logger in (self.error_log, self.access_log):
            logger.addFilter(_REDACTING_FILTER)  # once: addFilter skips a repeat
        if os.environ.get("LOG_FORMAT", "plain") == "json":
            # The master's and workers' own lines (booting, signals, errors) as the app's.
            for handler in self.error_log.handlers:
                handler.setFormatter(JsonFormatter())

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        """With LOG_FORMAT=json, one JSON object per request (`access_record`), as the
        app's own log lines; otherwise gunicorn's line (`access_log_format`)."""
        if os.environ.get("LOG_FORMAT", "plain") != "json":
            super().access(resp, req, environ, request_time)  # type: ignore[misc]
            return
        if not self.access_log_enabled:
            return
        atoms = self.atoms(resp, req, environ, request_time)
        record = json.dumps(access_record(atoms, environ), ensure_ascii=False)
        self.access_log.info(record, extra={"redacted": True})  # its atoms are redacted

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)  # type: ignore[misc]
        # Every text atom, not only r/U/q: the Referer (`f`, `{referer}i`) of a page
        # opened from /trackable/{code} carries the code too.
        for key, value in atoms.items():
            if isinstance(value, str):
                atoms[key] = redact(value)
        # The app said no route matched (None; absent when the app never ran).
        if ROUTE_KEY in environ and environ[ROUTE_KEY] is None:
            for key in ("r", "U"):
                if isinstance(atoms.get(key), str):
                    atoms[key] = redact_unmatched(atoms[key])
            if atoms.get("q"):  # the query alone, without its `?`
                atoms["q"] = UNMATCHED
        return atoms
