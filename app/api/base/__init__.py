"""What every API area builds on, the face of this package: our Api and Blueprint
(`api`, `blueprint`), the camelCase Schema and the strict RequestSchema (`schemas`), the
request parser whose validation is 400 problem details, never 422 (`parsing`), and the
fields every area uses (`fields`)."""

from app.api.base.api import ERROR_RESPONSES, EVERY_OPERATION, Api
from app.api.base.blueprint import Blueprint
from app.api.base.fields import (
    LANGUAGE_TAG,
    NOT_BLANK_PATTERN,
    AnyOf,
    FilePart,
    Guid,
    LanguageTag,
    Refuses,
    Regexp,
    UtcDateTime,
)
from app.api.base.parsing import flatten_messages, parser
from app.api.base.schemas import ProblemSchema, RequestSchema, Schema, camelcase
from app.errors import PROBLEM_JSON

__all__ = [
    "ERROR_RESPONSES",
    "EVERY_OPERATION",
    "LANGUAGE_TAG",
    "NOT_BLANK_PATTERN",
    "PROBLEM_JSON",
    "AnyOf",
    "Api",
    "Blueprint",
    "FilePart",
    "Guid",
    "LanguageTag",
    "ProblemSchema",
    "Refuses",
    "Regexp",
    "RequestSchema",
    "Schema",
    "UtcDateTime",
    "camelcase",
    "flatten_messages",
    "parser",
]
