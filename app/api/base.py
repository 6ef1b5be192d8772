"""What every API area builds on: our Api and Blueprint, the camelCase Schema, the request
parser (validation is 400 problem details, never 422), RequestSchema (a body refuses a field
it does not know unless its resource's read model has it), and the Guid / UtcDateTime fields.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import wraps
from typing import Any, ClassVar

import flask_smorest
import marshmallow as ma
from apispec import BasePlugin
from apispec.ext.marshmallow.common import resolve_schema_instance
from flask import Flask, Request, Response, g, request
from flask_jwt_extended import verify_jwt_in_request
from flask_smorest.fields import Upload
from marshmallow import fields
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request
from werkzeug.datastructures import CombinedMultiDict, FileStorage
from werkzeug.exceptions import HTTPException

from app.api.documentation import DocumentationPlugin
from app.api.documentation import finish as finish_documentation
from app.auth import EXCLUSIVE_ACCOUNT
from app.error_codes import error_code_table
from app.errors import (
    PROBLEM_JSON,
    UnsupportedMediaType,
    ValidationFailed,
    http_exception_response,
    problem,
)
from app.models.text import RefusedCharacters
from app.platform.jsonprovider import InvalidJson, loads_strict


def camelcase(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# --- request parsing ---------------------------------------------------------------------


def flatten_messages(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """webargs' {location: {field: [...]}} -> {"field" or "parent.child": [...]}."""
    flat: dict[str, list[str]] = {}
    if isinstance(messages, list):
        if all(isinstance(item, str) for item in messages):
            flat[prefix or "request"] = list(messages)
            return flat
        for item in messages:
            flat.update(flatten_messages(item, prefix))
        return flat
    if isinstance(messages, Mapping):
        for key, value in messages.items():
            name = "request" if key == "_schema" else str(key)
            path = f"{prefix}.{name}" if prefix and name != "request" else (prefix or name)
            flat.update(flatten_messages(value, path))
        return flat
    flat[prefix or "request"] = [str(messages)]
    return flat


def _boolean_keys(schema: ma.Schema) -> list[str]:
    return [
        field.data_key or name
        for name, field in schema.fields.items()
        if isinstance(field, fields.Boolean) and not field.dump_only
    ]


class Parser(FlaskParser):
    DEFAULT_VALIDATION_STATUS = 400
    # A body (JSON, a form, a multipart form's parts) is loaded with its schema's own
    # rule: RequestSchema refuses unknown fields. Query strings, headers and cookies keep
    # webargs' EXCLUDE: a parameter added by a client or a cache (`_=...`) is ignored.
    DEFAULT_UNKNOWN_BY_LOCATION = {  # noqa: RUF012 - webargs declares it without ClassVar
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "files": None,
    }

    def _raw_load_json(self, req: Request) -> Any:
        body = req.get_data(cache=True)
        if not body:
            return core.missing
        if not is_json_request(req):
            raise UnsupportedMediaType(
                "Send the request body as application/json.",
            )
        from flask import current_app

        return loads_strict(body, max_depth=current_app.config["MAX_JSON_DEPTH"])

    def load_json(self, req: Request, schema: ma.Schema) -> Any:
        """As webargs', but a boolean field takes only JSON true/false (or null where
        allowed): marshmallow would also read 0, 1, "yes" or "off" as booleans, which the
        document (type boolean) does not allow. Query strings keep their "true"/"false"."""
        data = super().load_json(req, schema)
        if isinstance(data, Mapping):
            wrong = {
                name: ["Not a valid boolean."]
                for name in _boolean_keys(schema)
                if name in data and data[name] is not None and not isinstance(data[name], bool)
            }
            if wrong:
                raise ValidationFailed(wrong)
        return data

    def load_querystring(self, req: Request, schema: ma.Schema) -> Any:
        for values in req.args.listvalues():
            if any("\x00" in value for value in values):
                raise ValidationFailed({"query": ["Text must not contain NUL characters."]})
        return super().load_querystring(req, schema)

    def load_form(self, req: Request, schema: ma.Schema) -> Any:
        for values in req.form.listvalues():
            if any("\x00" in value for value in values):
                raise ValidationFailed({"form": ["Text must not contain NUL characters."]})
        return super().load_form(req, schema)

    def load_files(self, req: Request, schema: ma.Schema) -> Any:
        """Location "files" is the whole multipart form: its files and its text fields, so
        one schema documents and validates an upload with its options."""
        for values in req.form.listvalues():
            if any("\x00" in value for value in values):
                raise ValidationFailed({"form": ["Text must not contain NUL characters."]})
        return self._makeproxy(CombinedMultiDict([req.files, req.form]), schema)

    def handle_error(
        self,
        error: ma.ValidationError,
        req: Request,
        schema: ma.Schema,
        *,
        error_status_code: int | None,
        error_headers: Mapping[str, str] | None,
    ) -> Any:
        messages = error.messages
        # webargs nests by location ({"json": {...}}); clients want field names only.
        if isinstance(messages, Mapping) and set(messages) <= set(self.__location_map__):
            merged: dict[str, Any] = {}
            for value in messages.values():
                if isinstance(value, Mapping):
                    merged.update(value)
                else:
                    merged.setdefault("_schema", []).extend(value)
            messages = merged
        raise ValidationFailed(flatten_messages(messages))

    def _handle_invalid_json_error(
        self, error: Any, req: Request, *args: Any, **kwargs: Any
    ) -> Any:
        raise InvalidJson("The request body is not valid JSON.")


parser = Parser()


# --- schemas and fields ------------------------------------------------------------------


class Schema(ma.Schema):
    """snake_case attributes in Python, camelCase names on the wire."""

    class Meta:
        # Records and query strings: a query parameter we do not know is ignored (clients
        # and caches add their own, such as `_=...`), and the document leaves records open
        # (a newer server may add a field). Request bodies are RequestSchema: strict.
        unknown = ma.EXCLUDE

    def on_bind_field(self, field_name: str, field_obj: fields.Field) -> None:
        field_obj.data_key = camelcase(field_obj.data_key or field_name)


UNKNOWN_FIELD = "Unknown field."


class _Without(Mapping[str, Any]):
    """`data` without some keys; reads go through `data` (a webargs proxy of a multipart
    form answers a list field with all its values)."""

    def __init__(self, data: Mapping[str, Any], hidden: frozenset[str]) -> None:
        self.data, self.hidden = data, hidden

    def __getitem__(self, key: str) -> Any:
        if key in self.hidden:
            raise KeyError(key)
        return self.data[key]

    def __iter__(self) -> Any:
        return (key for key in self.data if key not in self.hidden)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@functools.cache
def _read_model_keys(read_models: tuple[type[ma.Schema], ...]) -> frozenset[str]:
    return frozenset(
        field.data_key or name for model in read_models for name, field in model().fields.items()
    )


class RequestSchema(Schema):
    """A request body (JSON, a multipart form, an object nested in one, a sync record).

    A field that is neither one of its own nor one of the resource's read model is refused:
    400 naming it ("Unknown field.", dotted when nested), so a misspelt field is never
    dropped without a word. The read model's fields (`read_models`: what a client read and
    may send back whole, `noteId`, `updatedUtc`, ...) are accepted and ignored unless the
    body has a field of that name, which is validated as usual. Every body schema and
    every schema nested in one is a RequestSchema and says which read models it tolerates,
    () for none (Blueprint.arguments refuses other body schemas). In a query string the
    same schema still ignores what it does not know (the parser loads queries with
    EXCLUDE)."""

    class Meta:
        unknown = ma.RAISE

    read_models: ClassVar[tuple[type[ma.Schema], ...]]

    def own_fields(self) -> frozenset[str]:
        """The wire names of this body's fields."""
        return self._names()[0]

    def tolerated_fields(self) -> frozenset[str]:
        """The read models' wire names that are not fields of this body."""
        return self._names()[1]

    def unknown_fields(self, data: Mapping[str, Any]) -> dict[str, list[str]]:
        """The keys of `data` this body refuses (its own level only), as errors."""
        own, tolerated = self._names()
        return {
            str(key): [UNKNOWN_FIELD] for key in data if key not in own and key not in tolerated
        }

    def _names(self) -> tuple[frozenset[str], frozenset[str]]:
        """(own, tolerated) wire names, worked out once per set of load fields: one
        instance loads every record of a sync push."""
        fields_now = self.load_fields
        cached = self.__dict__.get("_names_of")
        if cached is None or cached[0] is not fields_now:
            own = frozenset(field.data_key or name for name, field in fields_now.items())
            tolerated = _read_model_keys(type(self).read_models) - own
            cached = (fields_now, own, tolerated)
            self.__dict__["_names_of"] = cached
        return cached[1], cached[2]

    @ma.pre_load
    def _ignore_read_model_fields(self, data: Any, *, unknown: str | None, **_: Any) -> Any:
        if unknown != ma.RAISE or not isinstance(data, Mapping):
            return data
        echoed = self.tolerated_fields() & set(data)
        if not echoed:
            return data
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if key not in echoed}
        return _Without(data, frozenset(echoed))


BODY_LOCATIONS = frozenset({"json", "form", "files", "json_or_form"})


def body_schema_problems(schema: ma.Schema, path: str = "body") -> list[str]:
    """Why `schema` (a body, with the schemas nested in it) would not refuse unknown
    fields; empty when it does."""
    problems: list[str] = []
    seen: set[type] = set()

    def visit(current: ma.Schema, where: str) -> None:
        if type(current) in seen:
            return
        seen.add(type(current))
        name = type(current).__name__
        if not isinstance(current, RequestSchema):
            problems.append(f"{where}: {name} is not a RequestSchema")
            return
        if not hasattr(type(current), "read_models"):
            problems.append(f"{where}: {name} declares no read_models (() for none)")
        if current.unknown != ma.RAISE:
            problems.append(f"{where}: {name} does not refuse unknown fields")
        for field_name, field in current.load_fields.items():
            inner = field.inner if isinstance(field, fields.List) else field
            if isinstance(inner, fields.Nested) and isinstance(inner.schema, ma.Schema):
                visit(inner.schema, f"{where}.{field.data_key or field_name}")

    visit(schema, path)
    return problems


class Guid(fields.UUID):
    """A GUID, dumped as a lowercase hyphenated string."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


class UtcDateTime(fields.DateTime):
    """ISO 8601 in UTC, ending in Z; naive input is read as UTC."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> datetime:
        parsed = super()._deserialize(value, attr, data, **kwargs)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


class Refuses(ma.validate.Validator):
    """Refuses text holding any of `characters`. Its `regex` is what the document states
    (apispec writes it as the field's `pattern`), and the check is that pattern's meaning
    in JSON Schema: no such character anywhere. (Python's `$` would also let one final
    line break through.)"""

    def __init__(self, characters: RefusedCharacters, error: str) -> None:
        self.characters = characters
        self.regex = re.compile(characters.pattern)
        self.message = error

    def __call__(self, value: str) -> str:
        if self.characters.search(value):
            raise ma.ValidationError(self.message)
        return value


# Text anywhere (JSON, query strings, forms) is refused with a NUL in it (jsonprovider and
# Parser); a text field without a pattern of its own states that as its pattern.
NO_NUL = "^[^\\x00]*$"


# White space as Python and ECMA 262 (JSON Schema) both count it: the union of their `\s`,
# spelt out, so that the server and the document agree on what is blank.
WHITE_SPACE = (
    r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Not blank and without NUL; anchored, so marshmallow's match and the document's search agree.
NOT_BLANK_PATTERN = rf"^[^\x00]*[^\x00{WHITE_SPACE}][^\x00]*$"


def nul_refused(converter: Any, field: fields.Field, ret: dict[str, Any], **kwargs: Any) -> dict:
    """apispec attribute function: `pattern` NO_NUL on a plain text field."""
    kinds = ret.get("type")
    is_text = kinds == "string" or (isinstance(kinds, list) and "string" in kinds)
    if is_text and not {"pattern", "format", "enum"} & ret.keys():
        return {"pattern": NO_NUL}
    return {}


LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


class Regexp(ma.validate.Regexp):
    """marshmallow's Regexp matched against the whole value, as the document's `pattern`
    reads (ECMA 262's `$` is the end of the text): Python's `$` also matches before a final
    newline, so `"ada_walks\\n"` passed a `^...$` user name. Documented as its pattern."""

    def __call__(self, value: Any) -> Any:
        if self.regex.fullmatch(value) is None:
            raise ma.ValidationError(self._format_error(value))
        return value


class FilePart(Upload):
    """A multipart file part. Location "files" also holds the form's text fields, so a
    field sent as text (or urlencoded) would arrive as a string: it is refused (400 on the
    field) instead of reaching a service that reads a stream."""

    default_error_messages: ClassVar[dict[str, str]] = {
        "invalid": "Send this as a file part of a multipart/form-data request, not as text."
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, FileStorage):
            raise self.make_error("invalid")
        return value


class LanguageTag(fields.String):
    """A BCP 47-style language tag such as `en` or `en-US`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("validate", Regexp(LANGUAGE_TAG, error="Not a language tag."))
        kwargs.setdefault("metadata", {"example": "en-US"})
        super().__init__(**kwargs)


CODE_PATTERN = r"^[a-z]+(_[a-z]+)*$"


class ProblemSchema(Schema):
    """RFC 7807 problem details, as every error of this API is answered."""

    type = fields.String(metadata={"example": "about:blank"})
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    code = fields.String(
        required=True,
        validate=Regexp(CODE_PATTERN),
        metadata={
            "description": "Stable machine code, one of the registry `x-error-codes` of "
            "this document (code -> statuses and meaning). Act on `code`, not on `title` or "
            "`detail`, whose English may change. Codes may be added: treat an unknown one "
            "as the general meaning of the status.",
        },
    )
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "Validation failures: field name -> messages."},
    )
    ticket_number = fields.String(metadata={"description": "On 500: the tracked ticket."})


# --- blueprint with bearer auth ----------------------------------------------------------

BEARER = "bearerAuth"


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = parser

    def arguments(self, schema: Any, *args: Any, **kwargs: Any) -> Any:
        """As flask-smorest's, with one instance of a schema class per route (webargs
        would build a new instance, copying every field, on each request; schemas keep
        no per-request state), and a JSON body documented as required only when one of
        its fields is."""
        if isinstance(schema, type):
            schema = schema()
        if kwargs.get("location", "json") in BODY_LOCATIONS:
            # Unknown body fields are refused everywhere (RequestSchema): a route with a
            # body schema that would swallow them does not start.
            problems = body_schema_problems(schema)
            if problems:
                raise TypeError("; ".join(problems))
        if kwargs.get("location", "json") == "json" and "required" not in kwargs:
            # A body with no required field may be left out (it reads as `{}`), and the
            # document says so; flask-smorest would mark every body required.
            kwargs["required"] = any(
                field.required for field in schema.fields.values() if not field.dump_only
            )
        return super().arguments(schema, *args, **kwargs)

    def auth(
        self, *, optional: bool = False, exclusive_account: bool = False
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Require a bearer token (401), or accept one when `optional` ("Anonymous or
        Bearer"): a token that is sent must still be valid. `exclusive_account`: the
        token's account is locked exclusively for this write (its deletion; app.auth)."""

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if exclusive_account:
                    g.setdefault(EXCLUSIVE_ACCOUNT, True)
                verify_jwt_in_request(optional=optional)
                g.token_checked = True
                return func(*args, **kwargs)

            security: list[dict[str, list[str]]] = [{BEARER: []}]
            if optional:
                security.append({})
            return self.doc(security=security)(wrapper)

        return decorator


# --- the Api: problem+json everywhere, documented ----------------------------------------

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
    """Documents the problem+json error answers on every operation, and names path
    parameters as the contract does (`{noteId}`; Flask rules stay snake_case)."""

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
            if any(BEARER in item for item in operation.get("security", [])):
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
        return problem(
            404, "Not found", f"Nothing is served at {request.path!r}.", code="route_not_found"
        )
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
        plugins = [ProblemResponsesPlugin(), DocumentationPlugin(), RequestSchemaPlugin()]
        super().__init__(app, spec_kwargs={"extra_plugins": plugins})

    def init_app(self, app: Flask, *args: Any, **kwargs: Any) -> None:
        super().init_app(app, *args, **kwargs)
        app.before_request(refuse_nul_in_path)
        self.ma_plugin.converter.add_attribute_function(nul_refused)
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


__all__ = [
    "NOT_BLANK_PATTERN",
    "Api",
    "Blueprint",
    "Guid",
    "LanguageTag",
    "ProblemSchema",
    "Refuses",
    "RequestSchema",
    "Schema",
    "UtcDateTime",
    "camelcase",
    "loads_strict",
    "parser",
]
