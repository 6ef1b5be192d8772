"""File responses with validators: a strong ETag, Cache-Control, and 304 on If-None-Match
(or, when the request has none, on If-Modified-Since for a response that has a date).

Used by the image download route of the API and the website's /Images/... URLs, which
answer the same way, and by the website's Atom feeds; `attachment` streams a download
(a data export) past every cache. /Images/... may also answer without the bytes (README:
Images from storage): a redirect to a presigned store URL (`redirect_file`), or an empty
body nginx fills from an internal location (`internal_file`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from flask import Response, request

# An image whose parent is public may sit in shared caches for an hour: a parent made
# private later stops showing it there within that hour. Others only in the caller's cache.
PUBLIC_CACHE = "public, max-age=3600"
PRIVATE_CACHE = "private, max-age=3600"
# A redirect to a presigned URL is kept by no cache: the next request checks visibility
# again, so a parent made private or an image deleted stops being served at once.
REDIRECT_CACHE = "private, no-store"


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
    if _is_fresh(etag, modified):
        _not_modified(response)
    return response


def redirect_file(url: str, *, etag: str, cache_control: str) -> Response:
    """302 to `url` (a presigned store URL), with no body and `Cache-Control: private,
    no-store`; 304 (no `Location`, `cache_control`: what the store answers with) when
    the client holds `etag`, as a streamed file's would."""
    if _is_fresh(etag, None):
        response = Response(status=304)
        response.set_etag(etag)
        response.headers["Cache-Control"] = cache_control
        return response
    response = Response(status=302)
    response.headers["Location"] = url
    response.headers["Cache-Control"] = REDIRECT_CACHE
    return response


def internal_file(uri: str, *, mimetype: str, etag: str, is_public: bool) -> Response:
    """An empty body with `X-Accel-Redirect: uri`: nginx sends the file from its internal
    location, keeping this Content-Type and Cache-Control (it sends its own ETag and
    Last-Modified, and answers If-None-Match itself); 304 as `cached_file` when the
    client holds `etag`."""
    response = cached_file(b"", mimetype=mimetype, etag=etag, is_public=is_public)
    if response.status_code != 304:
        response.headers["X-Accel-Redirect"] = uri
        response.headers.pop("ETag", None)  # nginx's, of the file it sends, stands
    return response


def _is_fresh(etag: str, modified: datetime | None) -> bool:
    if request.if_none_match:  # If-None-Match decides when sent (RFC 9110 13.2.2)
        return request.if_none_match.contains(etag)
    since = request.if_modified_since
    return modified is not None and since is not None and modified <= since


def _not_modified(response: Response) -> None:
    response.status_code = 304
    response.set_data(b"")
    response.headers.pop("Content-Length", None)


def attachment(chunks: Iterable[bytes], *, size: int, mimetype: str, filename: str) -> Response:
    """A file streamed to the client as a download (`Content-Disposition: attachment`)
    that no cache keeps: a personal data export, read chunk by chunk from its store."""
    response = Response(chunks, mimetype=mimetype, direct_passthrough=True)
    response.content_length = size
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["Cache-Control"] = "private, no-store"
    return response
