"""File responses with validators: a strong ETag, Cache-Control, and 304 on If-None-Match
(or, when the request has none, on If-Modified-Since for a response that has a date).

Used by the image download route of the API and the website's /Images/... URLs, which
answer the same way, and by the website's Atom feeds; `attachment` streams a download
(a data export) past every cache.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from flask import Response, request

# An image whose parent is public may sit in shared caches for an hour: a parent made
# private later stops showing it there within that hour. Others only in the caller's cache.
PUBLIC_CACHE = "public, max-age=3600"
PRIVATE_CACHE = "private, max-age=3600"


def cached_file(
    data: bytes,
    *,
    mimetype: str,
    etag: str,
    is_public: bool,
    last_modified: datetime | None = None,
    cache_control: str | None = None,
) -> Response:
    """`data` with its ETag (and Last-Modified when given), or 304 with no body when the
    client holds that version. `cache_control` replaces the default for public or private
    files."""
    response = Response(data, mimetype=mimetype)
    response.set_etag(etag)  # strong: the bytes under this tag never change
    response.headers["Cache-Control"] = cache_control or (
        PUBLIC_CACHE if is_public else PRIVATE_CACHE
    )
    modified = None
    if last_modified is not None:
        aware = last_modified if last_modified.tzinfo else last_modified.replace(tzinfo=UTC)
        modified = aware.astimezone(UTC).replace(microsecond=0)
        response.last_modified = modified
    if request.if_none_match:  # If-None-Match decides when sent (RFC 9110 13.2.2)
        fresh = request.if_none_match.contains(etag)
    else:
        since = request.if_modified_since
        fresh = modified is not None and since is not None and modified <= since
    if fresh:
        response.status_code = 304
        response.set_data(b"")
        response.headers.pop("Content-Length", None)
    return response


def attachment(chunks: Iterable[bytes], *, size: int, mimetype: str, filename: str) -> Response:
    """A file streamed to the client as a download (`Content-Disposition: attachment`)
    that no cache keeps: a personal data export, read chunk by chunk from its store."""
    response = Response(chunks, mimetype=mimetype, direct_passthrough=True)
    response.content_length = size
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["Cache-Control"] = "private, no-store"
    return response
