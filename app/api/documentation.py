"""Finishes the OpenAPI document for readers, linters and client generators, in one place:
the introduction (`info.description`, from introduction.md with the table of error codes),
the server (this origin), an example on every body (from app.api.examples), the headers of
429 and 503 answers, and the rate-limit headers on every answer of a rate-limited route.

Applied as the document is built: `DocumentationPlugin` as each operation is registered,
`finish` once per app on the shared component responses. An example a route gives itself
is kept.
"""

from __future__ import annotations

import copy
import http
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from apispec import APISpec, BasePlugin
from flask import Flask
from flask_limiter.util import get_qualified_name

from app.api import examples
from app.error_codes import error_code_table
from app.errors import PROBLEM_JSON
from app.extensions import limiter

INTRODUCTION = Path(__file__).with_name("introduction.md")
ERROR_CODES_PLACEHOLDER = "{error_codes}"


def documented_codes() -> dict[str, tuple[tuple[int, ...], str]]:
    """The codes the introduction lists, code -> (statuses, meaning): the registry."""
    return error_code_table()


def error_codes_table(codes: Mapping[str, tuple[tuple[int, ...], str]]) -> str:
    """A Markdown table of `codes` (code -> (statuses, meaning)), by first status, then code."""
    rows = ["| code | status | meaning |", "|---|---|---|"]
    for code, (statuses, meaning) in sorted(
        codes.items(), key=lambda item: (item[1][0][0], item[0])
    ):
        cell = " ".join(meaning.replace("|", "\\|").split())
        rows.append(f"| `{code}` | {', '.join(map(str, statuses))} | {cell} |")
    return "\n".join(rows)


def introduction(codes: Mapping[str, tuple[tuple[int, ...], str]] | None = None) -> str:
    """The document's `info.description`: introduction.md with its table of codes."""
    table = error_codes_table(documented_codes() if codes is None else codes)
    return INTRODUCTION.read_text(encoding="utf-8").replace(ERROR_CODES_PLACEHOLDER, table)


# --- headers of 429 and 503, and of every answer of a rate-limited route ---------------------

HEADERS: dict[str, dict[str, Any]] = {
    "RetryAfter": {
        "description": "Seconds to wait before trying again.",
        "required": True,
        "schema": {"type": "integer", "minimum": 0},
    },
    "XRateLimitLimit": {
        "description": "On routes with a rate limit (`limits.rateLimits` of the status): "
        "requests allowed in its window.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "XRateLimitRemaining": {
        "description": "On routes with a rate limit: requests left in the window.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "XRateLimitReset": {
        "description": "On routes with a rate limit: when the window starts afresh, in Unix "
        "seconds.",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimitRetryAfter": {
        "description": "On routes with a rate limit, on every answer: seconds until the "
        "window starts afresh.",
        "schema": {"type": "integer", "minimum": 0},
    },
}
HEADER_NAMES = {
    "RetryAfter": "Retry-After",
    "XRateLimitLimit": "X-RateLimit-Limit",
    "XRateLimitRemaining": "X-RateLimit-Remaining",
    "XRateLimitReset": "X-RateLimit-Reset",
    "RateLimitRetryAfter": "Retry-After",
}
RESPONSE_HEADERS: dict[int, tuple[str, ...]] = {
    429: ("RetryAfter",),
    503: ("RetryAfter",),
}
# Flask-Limiter's headers, with Retry-After (which a 429 and a 503 require), on the answers
# of a route it counts, once it has counted the request: none is required, as a body that
# is not JSON is refused before. Never on the answers given before any count: a body over
# the limit (413), and what the server in front of the app refuses (414, 431).
RATE_LIMIT_HEADERS = ("XRateLimitLimit", "XRateLimitRemaining", "XRateLimitReset")
UNCOUNTED = frozenset({"413", "414", "431"})


def _header_ref(component: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{component}"}


def _add_headers(status: int, response: dict[str, Any]) -> None:
    """The headers a 429 or 503 carries, where the response does not name them itself."""
    if status not in RESPONSE_HEADERS:
        return
    headers = response.setdefault("headers", {})
    for component in RESPONSE_HEADERS[status]:
        headers.setdefault(HEADER_NAMES[component], _header_ref(component))


def _add_rate_limit_headers(status: str, response: dict[str, Any]) -> None:
    """Flask-Limiter's headers on one answer of a rate-limited route."""
    headers = response.setdefault("headers", {})
    for component in RATE_LIMIT_HEADERS:
        headers.setdefault(HEADER_NAMES[component], _header_ref(component))
    if not (status.isdigit() and int(status) in RESPONSE_HEADERS):
        headers.setdefault("Retry-After", _header_ref("RateLimitRetryAfter"))


def rate_limited_endpoint(app: Flask, endpoint: str) -> bool:
    """Whether Flask-Limiter counts requests to this endpoint: a limit declared on its view
    (read through the limiter's `limit_manager`, as its own CLI does)."""
    view = app.view_functions.get(endpoint)
    if view is None:
        return False
    with app.app_context():  # a limit may be a function of the settings
        return bool(limiter.limit_manager.decorated_limits(get_qualified_name(view)))


# --- examples --------------------------------------------------------------------------------

REF = re.compile(r"^#/components/schemas/(\w+)$")


def _schema_name(schema: Any) -> str | None:
    match = REF.match(schema.get("$ref", "")) if isinstance(schema, dict) else None
    return match.group(1) if match else None


def _is_binary(schema: Any) -> bool:
    """Bytes (an image): no JSON example can show them."""
    return isinstance(schema, dict) and schema.get("format") == "binary"


def example_for(operation: str, status: str, schema: Any) -> Any:
    """The example of one body: the operation's own, else its schema's (a list of one
    for an array), else a problem of its status; None when there is none."""
    own = examples.OPERATIONS.get(operation, {})
    if status in own:
        return own[status]
    name = _schema_name(schema)
    if name is None and isinstance(schema, dict) and schema.get("type") == "array":
        item = _schema_name(schema.get("items"))
        return [examples.SCHEMAS[item]] if item in examples.SCHEMAS else None
    if name in examples.SCHEMAS:
        return examples.SCHEMAS[name]
    if name == "ProblemDetails" and status.isdigit():
        return examples.problem(int(status))
    return None


def _add_example(operation: str, status: str, content: Any) -> None:
    for media in (content or {}).values():
        if not isinstance(media, dict) or {"example", "examples"} & media.keys():
            continue
        if _is_binary(media.get("schema")):
            continue
        found = example_for(operation, status, media.get("schema"))
        if found is not None:
            media["example"] = found


RESPONSE_REF = re.compile(r"^#/components/responses/(\w+)$")


def _never(endpoint: str) -> bool:
    return False


class DocumentationPlugin(BasePlugin):
    """Puts an example on each body of an operation as it is registered, the headers of its
    429 and 503 answers where the operation describes those itself, and, on a rate-limited
    route, the rate-limit headers on each of its answers (a shared response copied into the
    operation to carry them). `rate_limited(endpoint)` is set per app (Api.init_app)."""

    def __init__(self) -> None:
        self.spec: APISpec | None = None
        self.rate_limited: Callable[[str], bool] = _never

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        self.spec = spec

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        rule = kwargs.get("rule")
        limited = rule is not None and self.rate_limited(rule.endpoint)
        for method, operation in (operations or {}).items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            key = f"{method.upper()} {path}"
            _add_example(key, "request", operation.get("requestBody", {}).get("content"))
            responses = operation["responses"]
            for status, response in list(responses.items()):
                counted = limited and str(status) not in UNCOUNTED
                if counted:
                    response = responses[status] = self._own_copy(response)
                if not isinstance(response, dict) or "$ref" in response:
                    continue
                if counted:
                    _add_rate_limit_headers(str(status), response)
                _add_example(key, str(status), response.get("content"))
                if str(status).isdigit():
                    _add_headers(int(status), response)

    def _own_copy(self, response: Any) -> Any:
        """A shared response (a component's name or `$ref`) as the operation's own copy."""
        name = response if isinstance(response, str) else None
        if isinstance(response, dict) and "$ref" in response:
            match = RESPONSE_REF.match(response["$ref"])
            name = match.group(1) if match else None
        if name is None or self.spec is None:
            return response
        components = self.spec.components
        for registry in (components.responses, components.responses_lazy):
            if name in registry:
                return copy.deepcopy(registry[name])
        return response


def _status_of(component_id: str) -> int | None:
    """`Problem404` (ours) or `NOT_FOUND` (flask-smorest's) -> 404."""
    if component_id.startswith("Problem") and component_id[7:].isdigit():
        return int(component_id[7:])
    return (
        http.HTTPStatus[component_id].value if component_id in http.HTTPStatus.__members__ else None
    )


SERVERS = [{"url": "/", "description": "The origin this document is served from."}]


def finish(spec: APISpec) -> None:
    """The introduction, the server, the shared headers, and an example and the headers on
    each problem response of the components (those registered lazily too). flask-smorest's
    pagination header and its schema are left out: lists here page by `Link` headers."""
    spec.options.setdefault("info", {})["description"] = introduction()
    spec.options.setdefault("servers", copy.deepcopy(SERVERS))
    spec.components.headers_lazy.pop("PAGINATION", None)
    spec.components.schemas.pop("PaginationMetadata", None)
    for component, header in HEADERS.items():
        spec.components.header(component, header)
    for registry in (spec.components.responses, spec.components.responses_lazy):
        for component_id, response in registry.items():
            status = _status_of(component_id)
            media = response.get("content", {}).get(PROBLEM_JSON)
            if status is None or media is None:
                continue
            media.setdefault("example", examples.problem(status))
            _add_headers(status, response)
