"""JSON Schemas (2020-12) of a data export's JSON files, made from the catalogue as the
README is: each file's lists, each record's columns with their stored types, and the
fields derived from a row. They go into the ZIP (`schemas/`) and are served by the API,
so a reader can check a file; a column added to an exported table changes its schema
with it, and a column type without a JSON form fails when the schemas are made.
"""

from __future__ import annotations

import enum
import functools
import uuid
from datetime import date, datetime
from typing import Any

import orjson
from sqlalchemy import JSON, Column, TypeDecorator

from app.error_codes import Code
from app.errors import NotFound
from app.models.image import ImageTarget
from app.services.privacy.catalogue import FILES, JsonFile, Part, camel, exported_columns
from app.storage.imaging import VARIANTS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS_FOLDER = "schemas"
MEDIA_TYPE = "application/schema+json"
SCHEMA_ABOUT = (
    "A JSON Schema (2020-12) of each JSON file: `schemas/notes.schema.json` describes "
    "`notes.json`, and so on. Every field a record lists is always there (null where its "
    "schema allows null), and a record has no other. The service also publishes them at "
    "`/api/account/export/schemas/{name}`."
)

_BY_PYTHON_TYPE: dict[type, dict[str, Any]] = {
    uuid.UUID: {"type": "string", "format": "uuid"},
    datetime: {"type": "string", "format": "date-time"},
    date: {"type": "string", "format": "date"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
}

# Fields written beside a row's columns (archive.DERIVED), per table.
DERIVED_FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "content_images": {
        "targetKind": {
            "type": ["string", "null"],
            "enum": [*(target.name.lower() for target in ImageTarget), None],
            "description": "The parent's kind (`targetType` by name); null for a kind "
            "this release does not name.",
        },
        "variants": {
            "type": "array",
            "description": "The sizes kept, each with its website address.",
            "items": {
                "type": "object",
                "required": ["name", "size", "url"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "enum": [variant.name for variant in VARIANTS]},
                    "size": {"type": "integer", "minimum": 1},
                    "url": {"type": "string"},
                },
            },
        },
        "file": {
            "type": ["string", "null"],
            "description": "Where the largest kept size is in this ZIP; null when the "
            "images' total was over the export's cap.",
        },
    },
}


def schema_name(json_file: str) -> str:
    """`notes.json` -> `notes.schema.json`: the schema's name in `schemas/` and the API."""
    return f"{json_file.removesuffix('.json')}.schema.json"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if kind is None:  # any JSON value, null included
        return schema
    nullable = {**schema, "type": [kind, "null"]}
    if "enum" in schema:
        nullable["enum"] = [*schema["enum"], None]
    return nullable


def column_schema(column: Column[Any]) -> dict[str, Any]:
    """The JSON form of a stored column's values, as the archive writes them."""
    where = f"{column.table.name}.{column.name}"
    stored = column.type
    if isinstance(stored, TypeDecorator):  # ours (UtcDateTime): the type it stores as
        stored = stored.impl_instance
    if isinstance(stored, JSON):
        schema: dict[str, Any] = {"description": "Stored JSON, as stored."}
    else:
        try:
            python_type = stored.python_type
        except NotImplementedError as error:
            raise TypeError(f"{where}: no JSON Schema for {stored!r}") from error
        if issubclass(python_type, enum.Enum):
            schema = {"type": "string", "enum": [str(member.value) for member in python_type]}
        elif python_type in _BY_PYTHON_TYPE:
            schema = dict(_BY_PYTHON_TYPE[python_type])
        else:
            raise TypeError(f"{where}: no JSON Schema for {stored!r}")
    return _nullable(schema) if column.nullable else schema


def record_schema(part: Part) -> dict[str, Any]:
    """A record of `part`: every exported column, and the fields derived from its table."""
    properties = {camel(name): column_schema(part.table.c[name]) for name in exported_columns(part)}
    properties.update(DERIVED_FIELDS.get(part.table.name, {}))
    return {
        "type": "object",
        "required": list(properties),
        "additionalProperties": False,
        "properties": properties,
    }


def file_schema(json_file: JsonFile) -> dict[str, Any]:
    """The schema of one JSON file: its header, then one list per part."""
    lists = {
        part.key: {"type": "array", "description": part.about, "items": record_schema(part)}
        for part in json_file.parts
    }
    properties = {
        "exportedUtc": {"type": "string", "format": "date-time"},
        "accountId": {"type": "string", "format": "uuid"},
        **lists,
    }
    return {
        "$schema": DIALECT,
        "title": json_file.name,
        "description": json_file.about,
        "type": "object",
        "required": list(properties),
        "additionalProperties": False,
        "properties": properties,
    }


@functools.cache
def schema_files() -> dict[str, bytes]:
    """Schema name -> its JSON text, for every JSON file of an export (made once)."""
    return {
        schema_name(json_file.name): orjson.dumps(
            file_schema(json_file), option=orjson.OPT_INDENT_2
        )
        for json_file in FILES
    }


def schema_file(name: str) -> bytes:
    """The JSON text of the schema called `name` (`notes.schema.json`); 404 for another
    name."""
    found = schema_files().get(name)
    if found is None:
        raise NotFound(f"No export file has a schema called {name!r}.", code=Code.ROUTE_NOT_FOUND)
    return found
