"""Cursor pagination on the HTTP side (docs/contract/wire.md, Pagination): the `limit`
and `cursor` query parameters, the cursor itself, and the `Link` header to the next page.

A list route takes `PageQuerySchema` (or a query schema built on it), hands the loaded
`page` to its service (services.shared.pages, which reads the page by key), and answers
through `list_answer`. Without `limit` and `cursor` the route answers as it always did:
the whole list, or the first cap with `X-Result-Truncated`. The cursor is the sort key of
a page's last item, signed with SECRET_KEY for the path it was made on: an altered
cursor, or one of another list, is 400 naming `cursor`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from flask import current_app, request
from itsdangerous import BadData, URLSafeSerializer
from marshmallow import ValidationError, fields, post_load, validate, validates

from app.api.base import Schema
from app.platform.secret_keys import signing_keys
from app.services.shared.pages import FOREIGN_CURSOR, Key, Listing, Page
from config import Config

CURSOR_MAX_LENGTH = 1000

LINK_HEADERS = {
    "Link": {
        "description": 'On a page that is not the last: `<url>; rel="next"` (RFC 8288), the '
        "same request with the next page's `cursor` (a root-relative URL). Absent on the last "
        "page and on requests without `limit` or `cursor`.",
        "schema": {"type": "string"},
    }
}


class PageQuerySchema(Schema):
    """`limit` and `cursor`; loads as `page` (None for an unpaged request)."""

    limit = fields.Integer(
        metadata={
            "description": "Page size: answer at most this many items, with a `Link` header "
            "to the next page. At most `limits.pageSizeMax` of GET /api/system/status "
            "(setting PAGE_SIZE_MAX). Without `limit` and `cursor` the list is answered "
            "whole, as before paging existed.",
            "minimum": 1,
            # The setting as the environment gives it (instance/config.py could differ).
            "maximum": Config.PAGE_SIZE_MAX,
            "example": 50,
        }
    )
    cursor = fields.String(
        validate=validate.Length(min=1, max=CURSOR_MAX_LENGTH),
        metadata={
            "description": "Opaque: where the next page starts, as the previous page's `Link` "
            "gives it. Only valid on the list it came from. With a cursor and no `limit`, "
            "pages are `limits.pageSizeMax` long.",
            "pattern": "^[A-Za-z0-9_.-]+$",
        },
    )

    @validates("limit")
    def check_limit(self, value: int, **kwargs: Any) -> None:
        most = current_app.config["PAGE_SIZE_MAX"]
        if not 1 <= value <= most:
            raise ValidationError(f"Must be between 1 and {most}.")

    @post_load
    def load_page(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        limit, cursor = data.pop("limit", None), data.pop("cursor", None)
        page = None
        if limit is not None or cursor is not None:
            size = limit if limit is not None else current_app.config["PAGE_SIZE_MAX"]
            after = decode_cursor(cursor) if cursor is not None else None
            page = Page(limit=size, after=after)
        return {**data, "page": page}


# --- the cursor --------------------------------------------------------------------------


def _serializer() -> URLSafeSerializer:
    """Signs for the path the list is read at: a cursor of another list is foreign."""
    salt = f"location-notes.page-cursor:{request.path}"
    return URLSafeSerializer(signing_keys(current_app.config), salt=salt)


def _tagged(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, uuid.UUID):
        return ["u", value.hex]
    if isinstance(value, datetime):
        return ["d", value.isoformat()]
    raise TypeError(f"A sort key of type {type(value).__name__} has no cursor form.")


def _untagged(item: Any) -> Any:
    tag, value = item
    readers: dict[str, Callable[[Any], Any]] = {
        "b": lambda text: text if isinstance(text, bool) else None,
        "i": lambda text: text if isinstance(text, int) else None,
        "s": lambda text: text if isinstance(text, str) else None,
        "u": uuid.UUID,
        "d": datetime.fromisoformat,
    }
    result = readers[tag](value)
    if result is None:
        raise ValueError("a value of another type")
    return result


def encode_cursor(key: Key) -> str:
    return str(_serializer().dumps([_tagged(value) for value in key]))


def decode_cursor(cursor: str) -> Key:
    """The key a cursor carries; 400 naming `cursor` when it was altered or made for
    another list."""
    try:
        items = _serializer().loads(cursor)
        if not isinstance(items, list):
            raise ValueError("not a list")
        return tuple(_untagged(item) for item in items)
    except (BadData, ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValidationError({"cursor": [FOREIGN_CURSOR]}) from error


# --- the answer --------------------------------------------------------------------------


def next_link(key: Key) -> str:
    """`<url>; rel="next"`: this request's path and query, with the next cursor."""
    query = [(name, value) for name, value in request.args.items(multi=True) if name != "cursor"]
    query.append(("cursor", encode_cursor(key)))
    return f'<{request.script_root}{request.path}?{urlencode(query)}>; rel="next"'


def list_headers(listing: Any) -> dict[str, str]:
    """`X-Result-Truncated` when a cap cut an unpaged list; `Link` when a page follows."""
    headers = {}
    if listing.truncated:
        headers["X-Result-Truncated"] = "true"
    if listing.next_after is not None:
        headers["Link"] = next_link(listing.next_after)
    return headers


def list_answer(listing: Listing[Any], items: Any = None) -> Any:
    """A list route's return value: the listing's items (or `items`, their shape for the
    response), with the headers of `list_headers`."""
    body = listing.items if items is None else items
    headers = list_headers(listing)
    return (body, 200, headers) if headers else body
