"""Security headers on every response, and CORS for an allow-list of web origins.

Every response: nosniff, `Referrer-Policy: no-referrer` (trackable URLs carry codes) and
`X-Frame-Options: DENY`; HTML also gets a Content-Security-Policy (`page_policy`). Token
and account responses are `no-store` unless the route set its own. HSTS only in production
with HSTS_MAX_AGE_SECONDS above 0: a development server on plain HTTP must not pin browsers
to HTTPS. CORS is off unless CORS_ALLOWED_ORIGINS lists the caller's `Origin` exactly; the
origin is then echoed (never `*`: requests carry bearer tokens). The `Server` header is the
server's: gunicorn sends `gunicorn` without a version.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from flask import Flask, Response, current_app, request

PAGE_POLICY = (
    "default-src 'none'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
NO_STORE_PREFIXES = ("/api/auth/", "/api/account")
CORS_METHODS = "GET, POST, PUT, DELETE"
CORS_REQUEST_HEADERS = "Authorization, Content-Type, X-Request-ID"
# What a browser client may read: the next page's Link, and the rate-limit headers (and
# Retry-After), which are not CORS-safelisted, so a web client can page and pace itself.
CORS_EXPOSED_HEADERS = (
    "X-Request-ID, X-Result-Truncated, Link, WWW-Authenticate, Retry-After, "
    "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"
)
CORS_MAX_AGE_SECONDS = "600"
ALWAYS = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)


# Our pages load only their own images (map tiles), style sheet and script files, never inline
# script or style (default-src 'none'), with frame-ancestors 'none'; the API documentation page
# loads its local assets and runs Swagger UI's inline start-up script. Images may also come from
# image_origins: where /Images/... redirects (an S3 store's presigned URLs), since a browser checks
# img-src where a redirect lands.
@functools.cache
def page_policy(image_origins: tuple[str, ...] = ()) -> str:
    """PAGE_POLICY, its `img-src` also naming `image_origins`."""
    if not image_origins:
        return PAGE_POLICY
    return PAGE_POLICY.replace(
        "img-src 'self' data:", f"img-src 'self' data: {' '.join(image_origins)}"
    )


@functools.cache
def allowed_origins(setting: str | tuple[str, ...]) -> frozenset[str]:
    """The setting's origins: a comma-separated string or a tuple, without trailing '/'."""
    items = setting.split(",") if isinstance(setting, str) else list(setting)
    return frozenset(item.strip().rstrip("/") for item in items if item.strip())


def install_security_headers(
    app: Flask, image_origins: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda _: ()
) -> None:
    """Add the headers (see the module notes) to every response of `app`; pages allow
    images from what `image_origins(config)` names."""

    @app.after_request
    def add_security_headers(response: Response) -> Response:
        # Every response passes here: one look at the headers the route set, then
        # appends (Headers.setdefault would search the list once per name).
        config = current_app.config
        origins = allowed_origins(config.get("CORS_ALLOWED_ORIGINS", ""))
        headers = response.headers
        present = {name.lower() for name, _ in headers.items()}
        for name, value in ALWAYS:
            if name.lower() not in present:
                headers.add(name, value)
        path = request.path
        if "content-security-policy" not in present and response.mimetype == "text/html":
            docs = path.startswith("/api/docs")
            policy = DOCS_POLICY if docs else page_policy(image_origins(config))
            headers.add("Content-Security-Policy", policy)
        if "cache-control" not in present and path.startswith(NO_STORE_PREFIXES):
            headers.add("Cache-Control", "no-store")
        hsts_seconds = int(config.get("HSTS_MAX_AGE_SECONDS", 0))
        if hsts_seconds > 0 and config.get("ENV_NAME") == "production":
            headers["Strict-Transport-Security"] = f"max-age={hsts_seconds}; includeSubDomains"
        if origins:
            origin = request.environ.get("HTTP_ORIGIN", "")
            if origin and origin.rstrip("/") in origins:
                headers["Access-Control-Allow-Origin"] = origin
                headers["Access-Control-Expose-Headers"] = CORS_EXPOSED_HEADERS
                if request.method == "OPTIONS":
                    headers["Access-Control-Allow-Methods"] = CORS_METHODS
                    headers["Access-Control-Allow-Headers"] = CORS_REQUEST_HEADERS
                    headers["Access-Control-Max-Age"] = CORS_MAX_AGE_SECONDS
            headers.add("Vary", "Origin")  # caches keep one answer per origin
        return response
