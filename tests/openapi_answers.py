"""Answers checked against the OpenAPI document (VALIDATE_RESPONSES=1): each 2xx JSON
answer a test gets through the Flask test client must be documented for its operation,
status and media type, and valid against that schema, with every object closed to
fields the document does not list. tests/api/conftest.py turns it on for its tests.

The document is read once per app and each validator made once per process: a run pays
for the validation of each answer, not for reading the document again."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.test import Client

from app.api.base import camelcase

ENABLED = os.environ.get("VALIDATE_RESPONSES") == "1"
RULE_PARAMETER = re.compile(r"<(?:\w+(?:\([^)]*\))?:)?(\w+)>")
MISMATCHES_SHOWN = 5


def document_path(rule: str) -> str:
    """A Flask rule as the document names its path: `<uuid:note_id>` -> `{noteId}`."""
    return RULE_PARAMETER.sub(lambda match: "{" + camelcase(match.group(1)) + "}", rule)


def closed(components: dict[str, Any]) -> dict[str, Any]:
    """The components with every object schema closed to properties it does not list
    (one that says what else it takes, `additionalProperties`, is kept as it is)."""
    copied = copy.deepcopy(components)

    def close(node: Any) -> None:
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(copied.get("schemas", {}))
    return copied


@dataclass
class Document:
    """One document's paths, its closed components, and the validators made from it."""

    paths: dict[str, Any]
    components: dict[str, Any]
    validators: dict[tuple[str, str, str, str], Draft202012Validator] = field(default_factory=dict)

    def validator(self, path: str, method: str, status: str, media: str) -> Any:
        """The validator of one documented answer with a body, None for a body that is
        not JSON, or why the document has no such answer (a string)."""
        key = (path, method, status, media)
        if key not in self.validators:
            response = self.paths[path][method]["responses"][status]
            while "$ref" in response:
                response = self.components["responses"][response["$ref"].rsplit("/", 1)[-1]]
            content = response.get("content", {})
            if media not in content:
                return f"answered {status} as {media}, documented as {sorted(content) or 'none'}"
            if not is_json(media):
                return None
            schema = {"components": self.components, **content[media].get("schema", {})}
            self.validators[key] = Draft202012Validator(schema, format_checker=FormatChecker())
        return self.validators[key]


def is_json(media: str) -> bool:
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


_documents: dict[str, Document] = {}  # by the document's digest: apps share one
_of_app: weakref.WeakKeyDictionary[Flask, Document] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def document_of(app: Flask) -> Document:
    with _lock:
        if app not in _of_app:
            # A plain werkzeug client: the check does not see its own request.
            text = Client(app).get("/api/openapi.json").get_data()
            digest = hashlib.sha256(text).hexdigest()
            if digest not in _documents:
                loaded = json.loads(text)
                _documents[digest] = Document(loaded["paths"], closed(loaded["components"]))
            _of_app[app] = _documents[digest]
        return _of_app[app]


def mismatch(app: Flask, response: Any) -> str | None:
    """Why a 2xx answer disagrees with the document (a status it does not list, a body
    of a media type it does not list, JSON not valid against its schema), or None; also
    for an answer the check does not cover (not 2xx, not an operation of the document)."""
    request = response.request
    if not 200 <= response.status_code < 300 or request.method == "HEAD":
        return None
    adapter = app.url_map.bind_to_environ(request.environ)
    try:
        rule, _ = adapter.match(request.path, method=request.method, return_rule=True)
    except (HTTPException, RequestRedirect):
        return None
    document = document_of(app)
    path, method = document_path(rule.rule), request.method.lower()
    if method not in document.paths.get(path, {}):
        return None
    operation = f"{request.method} {path}"
    status, data = str(response.status_code), response.get_data()
    if status not in document.paths[path][method]["responses"]:
        listed = ", ".join(sorted(document.paths[path][method]["responses"]))
        return f"{operation}: answered {status}, documented: {listed}"
    if not data:  # no body (204, or a 200 documented as empty): no media type to check
        return None
    found = document.validator(path, method, status, response.mimetype)
    if isinstance(found, str):
        return f"{operation}: {found}"
    if found is None:  # a body that is not JSON, of a documented media type
        return None
    body = json.loads(data)
    errors = [best_match([error]) for error in found.iter_errors(body)]
    if not errors:
        return None
    lines = [
        f"  at /{'/'.join(map(str, error.absolute_path))}: {error.message}"[:300]
        for error in errors[:MISMATCHES_SHOWN]
    ]
    more = len(errors) - MISMATCHES_SHOWN
    if more > 0:
        lines.append(f"  and {more} more")
    return f"{operation} answered {response.status_code} unlike the document:\n" + "\n".join(lines)


@contextmanager
def checking() -> Iterator[list[str]]:
    """While open, every answer of the Flask test client is checked: a mismatch raises in
    the test's own thread; those of other threads (which a test may not hear of) are
    gathered in the list yielded, for the caller to fail on."""
    elsewhere: list[str] = []
    original: Callable[..., Any] = FlaskClient.open
    main = threading.current_thread()

    def open_and_check(self: FlaskClient, *args: Any, **kwargs: Any) -> Any:
        response = original(self, *args, **kwargs)
        wrong = mismatch(self.application, response)
        if wrong is not None:
            if threading.current_thread() is main:
                raise AssertionError(wrong)
            elsewhere.append(wrong)
        return response

    FlaskClient.open = open_and_check  # type: ignore[method-assign]
    try:
        yield elsewhere
    finally:
        FlaskClient.open = original  # type: ignore[method-assign]
