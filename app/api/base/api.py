"""Our flask-smorest Api: problem+json for every error, documented on every operation,
with the error-code registry and the request-body rule in the document."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import flask_smorest
from apispec import BasePlugin
from apispec.ext.marshmallow.common import resolve_schema_instance
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from app.api.base.blueprint import BEARER
from app.api.base.fields import (
    NO_NUL,
    any_of,
    nul_refused,
)
from app.api.base.schemas import (
    ProblemSchema,
    RequestSchema,
    camelcase,
)
from app.api.documentation import DocumentationPlugin, rate_limited_endpoint
from app.api.documentation import finish as finish_documentation
from app.error_codes import Code, error_code_table
from app.errors import (
    PROBLEM_JSON,
    http_exception_response,
    problem,
)

ERROR_RESPONSES = {
    400: "Validation or business-rule rejection.",
    401: "Missing or invalid bearer token.",
    403: "Authenticated, but not allowed to do this.",
    404: "Not found, or not visible to this caller.",
    413: "The request body is larger than this server accepts.",
    415: "The request body is not of a media type this operation reads.",
    414: "The request line (method, path and query) is longer than the server accepts"
    " (4094 bytes); answered by the server in front of the app.",
    429: "Too many requests; see Retry-After.",
    431: "The request's headers are more (over 100) or larger (over 8190 bytes each) than"
    " the server accepts; answered by the server in front of the app.",
    500: "Unexpected failure; quote ticketNumber to support.",
    503: "The database cannot be reached or is overloaded; try again after Retry-After.",
}

# Answered to any operation: the limits of the server in front of the app (gunicorn's
# request line and header limits), rate limits, an unreachable database, a failure.
EVERY_OPERATION = frozenset({414, 429, 431, 500, 503})


# Problem statuses an operation answers beyond the rules of ProblemResponsesPlugin (which
# add 400 for input, 404 for a path naming something, 401/403 for a bearer token, 413/415
# for a body, EVERY_OPERATION everywhere), keyed as the document names operations. The
# generated suites (bad-input corpus, authorization matrix, schemathesis) fail on an
# answer that is not documented, which keeps this table complete.
EXTRA_PROBLEMS: dict[str, frozenset[int]] = {
    # a ticket number that names no ticket
    "POST /api/compliance/errors": frozenset({404}),
    # a parentCategoryId that names no category of the caller's tree
    "GET /api/categories/mine/tree/children": frozenset({404}),
    # a teamId that names no team the caller may see
    "POST /api/trackables": frozenset({404}),
    "POST /api/trackables/groups": frozenset({404}),
    "POST /api/webhooks": frozenset({404}),
}


PATH_PARAMETER = re.compile(r"\{(\w+)\}")


def _camel_path_parameters(parameters: Any) -> None:
    for parameter in parameters or []:
        if isinstance(parameter, dict) and parameter.get("in") == "path":
            parameter["name"] = camelcase(parameter["name"])
            schema = parameter.get("schema", {})
            # A NUL in a path segment names nothing (refuse_nul_in_path: 404).
            if schema.get("type") == "string" and not {"pattern", "format"} & schema.keys():
                schema["pattern"] = NO_NUL


class ProblemResponsesPlugin(BasePlugin):
    """Documents the problem+json error answers and the security of every operation, and
    names path parameters as the contract does (`{noteId}`; Flask rules stay snake_case)."""

    def path_helper(
        self,
        path: str | None = None,
        operations: dict[str, Any] | None = None,
        parameters: list[Any] | None = None,
        **kwargs: Any,
    ) -> str | None:
        if path is None:
            return None
        _camel_path_parameters(parameters)
        for operation in (operations or {}).values():
            if isinstance(operation, dict):
                _camel_path_parameters(operation.get("parameters"))
        return PATH_PARAMETER.sub(lambda match: "{" + camelcase(match.group(1)) + "}", path)

    @staticmethod
    def _document_path(path: str | None) -> str:
        """The path as the document names it: `{noteId}` for Flask's `{note_id}`."""
        return PATH_PARAMETER.sub(lambda match: "{" + camelcase(match.group(1)) + "}", path or "")

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        for method, operation in (operations or {}).items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            wanted = set(EVERY_OPERATION)
            if operation.get("parameters") or operation.get("requestBody") or "{" in (path or ""):
                wanted.add(400)
            if operation.get("requestBody"):
                wanted |= {413, 415}
            if "{" in (path or ""):
                wanted.add(404)
            # An operation open to anyone says so (`security: []`): the document has no
            # root `security`, and a linter or client cannot tell "open" from "forgotten".
            operation.setdefault("security", [])
            if any(BEARER in item for item in operation["security"]):
                wanted |= {401, 403}
            wanted |= EXTRA_PROBLEMS.get(f"{method.upper()} {self._document_path(path)}", set())
            for status in sorted(wanted):
                if status in responses:  # documented by the route (alt_response, int keys)
                    continue
                responses.setdefault(
                    str(status), {"$ref": "#/components/responses/Problem" + str(status)}
                )


def refuse_nul_in_path() -> Response | None:
    """An API path segment with a NUL character (`%00`) names nothing: 404 before any
    route reads it (PostgreSQL refuses NUL in text, so a look-up would fail with a 500).
    Pages (the scan entry page) answer such a miss in their own form."""
    if not request.path.startswith("/api/"):
        return None
    if any(
        isinstance(value, str) and "\x00" in value for value in (request.view_args or {}).values()
    ):
        return problem(404, f"Nothing is served at {request.path!r}.", code=Code.ROUTE_NOT_FOUND)
    return None


ERROR_CODES_EXTENSION = "x-error-codes"


def error_codes_document() -> dict[str, dict[str, Any]]:
    """The registry of problem `code`s (app.error_codes) as the document publishes it:
    code -> its statuses and meaning, in registry order."""
    return {
        code: {"statuses": list(statuses), "description": meaning}
        for code, (statuses, meaning) in error_code_table().items()
    }


class RequestSchemaPlugin(BasePlugin):
    """Documents RequestSchema's rule on each body schema: `additionalProperties: false`
    (Schemathesis then sends unknown fields and expects a 400), and the read model's
    fields as `patternProperties` of any value: accepted and ignored. Patterns rather than
    properties keep them out of generated clients' request models."""

    def schema_helper(
        self, name: str, definition: dict[str, Any], **kwargs: Any
    ) -> dict[str, Any] | None:
        schema = kwargs.get("schema")
        instance = resolve_schema_instance(schema) if schema is not None else None
        if not isinstance(instance, RequestSchema):
            return None
        extra: dict[str, Any] = {"additionalProperties": False}
        tolerated = sorted(instance.tolerated_fields())
        if tolerated:
            models = ", ".join(
                model.__name__.removesuffix("Schema") for model in type(instance).read_models
            )
            extra["patternProperties"] = {
                "^(" + "|".join(map(re.escape, tolerated)) + ")$": {
                    "description": f"A field of the read model ({models}), as a client read "
                    "it: accepted and ignored."
                }
            }
        return extra


class Api(flask_smorest.Api):
    DEFAULT_ERROR_RESPONSE_NAME = None
    ERROR_SCHEMA = ProblemSchema

    def __init__(self, app: Flask | None = None) -> None:
        self.documentation = DocumentationPlugin()
        plugins = [ProblemResponsesPlugin(), self.documentation, RequestSchemaPlugin()]
        super().__init__(app, spec_kwargs={"extra_plugins": plugins})

    def init_app(self, app: Flask, *args: Any, **kwargs: Any) -> None:
        # The rate-limit headers go on the answers of this app's rate-limited routes.
        self.documentation.rate_limited = partial(rate_limited_endpoint, app)
        super().init_app(app, *args, **kwargs)
        app.before_request(refuse_nul_in_path)
        self.ma_plugin.converter.add_attribute_function(nul_refused)
        self.ma_plugin.converter.add_attribute_function(any_of)
        self.spec.components.security_scheme(
            BEARER, {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
        )
        self.spec.components.schema("ProblemDetails", schema=ProblemSchema)
        self.spec.options[ERROR_CODES_EXTENSION] = error_codes_document()
        for status, description in ERROR_RESPONSES.items():
            self.spec.components.response(
                f"Problem{status}",
                {
                    "description": description,
                    "content": {
                        PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}
                    },
                },
            )
        finish_documentation(self.spec)

    def _register_responses(self) -> None:
        """flask-smorest's per-status responses, but as problem+json."""
        import http

        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if status >= 400:
                response["content"] = {
                    PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemDetails"}}
                }
            self.spec.components.response(status.name, response, lazy=True)

    def handle_http_exception(self, error: HTTPException) -> Response:  # type: ignore[override]
        return http_exception_response(error)
