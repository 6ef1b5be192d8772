"""Flask's JSON provider on orjson: several times faster than the standard library on the
large public lists, and strict on input (no NaN or Infinity, no NUL, bounded depth)."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import orjson
from flask import Response
from flask.json.provider import JSONProvider

from app.api.base import loads_strict


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class OrjsonProvider(JSONProvider):
    mimetype = "application/json"

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads_strict(s, max_depth=self._app.config["MAX_JSON_DEPTH"])

    def response(self, *args: Any, **kwargs: Any) -> Response:
        obj = self._prepare_response_obj(args, kwargs)
        body = orjson.dumps(obj, default=_default, option=orjson.OPT_NON_STR_KEYS)
        return Response(body, mimetype=self.mimetype)
