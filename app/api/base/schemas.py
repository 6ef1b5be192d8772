"""The camelCase Schema, RequestSchema (a body refuses a field it does not know unless its
resource's read model has it) and the problem details' schema."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import marshmallow as ma
from marshmallow import fields

from app.api.base.fields import (
    Regexp,
)


def camelcase(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


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
