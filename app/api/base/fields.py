"""Fields and validators every area uses: Guid, UtcDateTime, language tags, file parts,
and text rules the server and the OpenAPI document read alike."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any, ClassVar

import marshmallow as ma
from flask_smorest.fields import Upload
from marshmallow import fields
from werkzeug.datastructures import FileStorage

from app.models.text import RefusedCharacters
from app.platform.wire import wire_time


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
        return wire_time(value)

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


class AnyOf(fields.Raw):
    """A value of one of several read models (a record, or its tombstone), written by the
    route as it is: documented as `anyOf` their components (`any_of`)."""

    def __init__(self, *schemas: type[ma.Schema], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.schemas = schemas


def any_of(converter: Any, field: fields.Field, ret: dict[str, Any], **kwargs: Any) -> dict:
    """apispec attribute function: an AnyOf field as `anyOf` its schemas' references."""
    if not isinstance(field, AnyOf):
        return {}
    return {"anyOf": [converter.resolve_nested_schema(schema) for schema in field.schemas]}


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
