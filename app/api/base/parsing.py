"""Request parsing: webargs' parser as this API reads bodies, queries and forms (a
validation failure is 400 problem details, never 422; JSON is read strictly)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import marshmallow as ma
from flask import Request
from marshmallow import fields
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request
from werkzeug.datastructures import CombinedMultiDict

from app.errors import (
    UnsupportedMediaType,
    ValidationFailed,
)
from app.platform.jsonprovider import InvalidJson, loads_strict


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
