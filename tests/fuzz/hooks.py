"""Schemathesis hooks of tests/fuzz/schemathesis_run.py (loaded through `hooks` in
schemathesis.toml): this service's own rule as a check, beside the built-in ones. Every
problem response carries a `code` of the registry the document publishes
(`x-error-codes`), registered for the response's status (docs/contract/wire.md, Error
codes). The built-in checks see only that `code` is a string."""

from __future__ import annotations

import json
from typing import Any

import schemathesis

PROBLEM_JSON = "application/problem+json"


@schemathesis.check
def problem_code_is_registered(ctx: Any, response: Any, case: Any) -> None:
    media_type = (response.headers.get("content-type") or [""])[0].split(";")[0].strip()
    if response.status_code < 400 or media_type != PROBLEM_JSON:
        return None  # other checks hold non-problem refusals to the document
    registry = case.operation.schema.raw_schema.get("x-error-codes") or {}
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError("The problem response is not JSON") from None
    code = body.get("code") if isinstance(body, dict) else None
    if code not in registry:
        raise AssertionError(
            f"The {response.status_code} problem has code {code!r}, which is not in the "
            "document's x-error-codes"
        )
    if response.status_code not in registry[code]["statuses"]:
        raise AssertionError(
            f"The {response.status_code} problem has code {code!r}, registered for "
            f"{registry[code]['statuses']} only"
        )
    return None
