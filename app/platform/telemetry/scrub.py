"""What of a request or a failure may leave the service in an error report or a trace.

A trackable code is removed by the logs' own redaction (`app.platform.logs.redact`, the one
place that knows where codes travel), and so is the current request's own code wherever it
appears (an exception may quote it bare); on top of that, text that leaves the service
loses what names a person: e-mail addresses, IP addresses, ids (UUIDs), and the lines in which a
database repeats the values of a failed statement (PostgreSQL's `DETAIL: Key (email)=(...)`,
SQLAlchemy's `[parameters: ...]`). A request is named by its route's template
(`/trackable/<path:code>`), never by its path; one that no route matched is `unmatched`.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from flask import has_request_context, request

from app.platform.logs import redact

log = logging.getLogger(__name__)

REDACTED = "[redacted]"
UNMATCHED = "unmatched"  # as the metrics name a request no route matched

# Lines of an exception's text that quote a failed statement's values: PostgreSQL's detail
# and context lines, and SQLAlchemy's rendering of the bound parameters.
VALUE_LINES = re.compile(r"^[ \t]*(?:DETAIL|CONTEXT|\[parameters):.*$", re.MULTILINE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
# Candidates only: each is kept unless it parses as an address (`12:30:45` stays).
IPV4_CANDIDATE = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)")
IPV6_CANDIDATE = re.compile(
    r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![\w:]|\.\d)"
)

# Where a request's codes are (request_secrets), and what is too short to be one.
SECRETS_KEY = "location_notes.secrets"
SECRET_FIELDS = frozenset({"code", "accessCode", "secretCode", "qrToken"})
MIN_SECRET_LENGTH = 4
MAX_SCANNED_BODY = 64 * 1024  # a bigger body is an upload or a sync push: not looked at
MAX_SCANNED_ITEMS = 200  # a label sheet's items at most

# Request headers a report may carry: what describes the client's software and the body's
# kind, never who sent it (cookies, Authorization, forwarded addresses).
SAFE_HEADERS = frozenset({"user-agent", "content-type", "accept", "content-length"})


def scrub_text(text: str) -> str:
    """`text` with trackable codes redacted (where the logs redact them, and anywhere the
    current request's own codes appear) and no e-mail address, IP address, id or quoted
    statement value left."""
    text = _scrubbed(text)
    secrets = request_secrets()
    return secrets.sub(REDACTED, text) if secrets is not None else text


@functools.lru_cache(maxsize=4096)
def _scrubbed(text: str) -> str:
    """What does not depend on the request; kept for the texts that recur (a span's SQL
    statement and name), each pattern run only where it could match."""
    text = VALUE_LINES.sub(REDACTED, redact(text))
    if "@" in text:
        text = EMAIL.sub(REDACTED, text)
    if "-" in text:
        text = UUID.sub(REDACTED, text)
    if ":" in text:
        text = IPV6_CANDIDATE.sub(_address, text)
    if "." in text:
        text = IPV4_CANDIDATE.sub(_address, text)
    return text


def _address(match: re.Match[str]) -> str:
    try:
        ipaddress.ip_address(match.group())
    except ValueError:
        return match.group()
    return REDACTED


def request_secrets() -> re.Pattern[str] | None:
    """The current request's codes, in any case and with or without the spaces and
    hyphens a person types: its path's code (`/trackable/{code}`, a team invite's code),
    the `code` and `accessCode` of its query or form, and the code fields of a small JSON
    body (a lookup, an access code, a label sheet's items). An exception's text may
    quote one where `redact` cannot see it. Found once per request."""
    if not has_request_context():
        return None
    cached = request.environ.get(SECRETS_KEY, False)
    if cached is not False:
        return cached  # type: ignore[no-any-return]
    found: set[str] = set()
    try:
        for name, value in (request.view_args or {}).items():
            if "code" in name.lower() or "token" in name.lower():
                found.add(str(value))
        for name in SECRET_FIELDS:
            found.update(request.args.getlist(name))
        if _small_body() and request.mimetype == "application/x-www-form-urlencoded":
            for name in SECRET_FIELDS:
                found.update(request.form.getlist(name))
        if _small_body() and request.is_json:
            _collect(request.get_json(silent=True), found, depth=0)
    except Exception:  # a body that cannot be read (too large, cut off): the rest is known
        log.debug("the request's body was not searched for codes", exc_info=True)
    variants = {
        variant
        for value in found
        for variant in (value.strip(), re.sub(r"[\s-]+", "", value))
        if len(variant) >= MIN_SECRET_LENGTH
    }
    pattern = (
        re.compile("|".join(map(re.escape, sorted(variants, key=len, reverse=True))), re.I)
        if variants
        else None
    )
    request.environ[SECRETS_KEY] = pattern
    return pattern


def _small_body() -> bool:
    length = request.content_length
    return length is not None and length <= MAX_SCANNED_BODY


def _collect(value: Any, found: set[str], depth: int) -> None:
    if depth > 3:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in SECRET_FIELDS and isinstance(item, str):
                found.add(item)
            else:
                _collect(item, found, depth + 1)
    elif isinstance(value, list):
        for item in value[:MAX_SCANNED_ITEMS]:
            _collect(item, found, depth + 1)


def scrub_value(value: Any) -> Any:
    """`value` with `scrub_text` applied to every string in it, however deeply nested."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, Mapping):
        return {key: scrub_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_value(item) for item in value)
    return value


def current_route() -> str | None:
    """The template of the rule the current request matched, if any."""
    if not has_request_context():
        return None
    rule = request.url_rule
    return rule.rule if rule is not None else None


def origin(url: str, host: str | None = None) -> str:
    """`scheme://host[:port]` of `url`: no user, path, query or fragment. `host` (the name
    the request was sent to, when the URL holds the address it was pinned to) replaces the
    URL's; a host that is an IP address is redacted."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    name = (host or parts.hostname or "").strip("[]").lower()
    try:
        ipaddress.ip_address(name)
        name = REDACTED
    except ValueError:
        pass
    scheme = parts.scheme or "http"
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{name}" + (f":{port}" if port and port != default else "")


def host_name(netloc: str) -> str | None:
    """The host of a `Host` header's value (`example.org:8443` -> `example.org`)."""
    try:
        return urlsplit(f"//{netloc}").hostname
    except ValueError:
        return None


def safe_headers(headers: Iterable[tuple[str, Any]]) -> dict[str, str]:
    """The request headers a report may keep (SAFE_HEADERS), their values scrubbed."""
    return {name: scrub_text(str(value)) for name, value in headers if name.lower() in SAFE_HEADERS}
