"""File responses with validators: a strong ETag, Cache-Control, and 304 on If-None-Match.

Used by the image download route of the API and the website's /Images/... URLs, which
answer the same way.
"""

from __future__ import annotations

from flask import Response, request

# An image whose parent is public may sit in shared caches for an hour: a parent made
# private later stops showing it there within that hour. Others only in the caller's cache.
PUBLIC_CACHE = "public, max-age=3600"
PRIVATE_CACHE = "private, max-age=3600"


def cached_file(data: bytes, *, mimetype: str, etag: str, is_public: bool) -> Response:
    """`data` with its ETag, or 304 with no body when the client holds that version."""
    response = Response(data, mimetype=mimetype)
    response.set_etag(etag)  # strong: the bytes under this tag never change
    response.headers["Cache-Control"] = PUBLIC_CACHE if is_public else PRIVATE_CACHE
    if request.if_none_match.contains(etag):
        response.status_code = 304
        response.set_data(b"")
        response.headers.pop("Content-Length", None)
    return response
