"""A view and a service that fail unexpectedly, for the error reporting and tracing tests.

Kept apart from the tests: a report quotes the source lines around a failing frame, and
these hold no test value (codes, addresses) of their own; what they quote comes from the
request."""

from __future__ import annotations

from typing import Any

from flask import request


def failing_view(**values: Any) -> Any:
    """Its message quotes the path and query, the view's values (a code), the client's
    address (X-Forwarded-For) and an e-mail address (the From header)."""
    raise RuntimeError(
        f"cannot answer {request.full_path} for {values}: "
        f"{request.headers.get('From')} at {request.headers.get('X-Forwarded-For')}"
    )


def failing_lookup(viewer: Any, code: str, **settings: Any) -> Any:
    """A lookup failing with the code in its message, as a person typed it, normalised."""
    raise LookupError(f"lookup of {code.replace(' ', '').upper()} failed")
