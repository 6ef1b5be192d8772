"""Our flask-smorest Blueprint: one schema instance per route, strict bodies, bearer
authentication that the document states, and each operation's stable `operationId`."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import flask_smorest
from flask import g
from flask_jwt_extended import verify_jwt_in_request

from app.api.base.parsing import parser
from app.api.base.schemas import (
    BODY_LOCATIONS,
    body_schema_problems,
    camelcase,
)
from app.auth import EXCLUSIVE_ACCOUNT

BEARER = "bearerAuth"


def operation_id(blueprint: str, view: Callable[..., Any]) -> str:
    """The view function's name in camelCase (`create_journey_stop`: `createJourneyStop`);
    a view that a function makes for several blueprints (`add_category_routes`: its
    qualified name has `<locals>`) has the blueprint's name first
    (`teamCategoriesListCategories`). Generated clients name their methods after it:
    renaming one breaks them, and CHANGELOG.md says so."""
    name = view.__name__
    if "<locals>" in view.__qualname__:
        name = f"{blueprint.replace('-', '_')}_{name}"
    return camelcase(name)


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = parser

    def route(self, rule: str, *, parameters: Any = None, tags: Any = None, **options: Any) -> Any:
        """As flask-smorest's, with the operation's `operationId` (operation_id)."""
        register = super().route(rule, parameters=parameters, tags=tags, **options)

        def decorator(func: Callable[..., Any]) -> Any:
            return register(self.doc(operationId=operation_id(self.name, func))(func))

        return decorator

    def arguments(self, schema: Any, *args: Any, **kwargs: Any) -> Any:
        """As flask-smorest's, with one instance of a schema class per route (webargs
        would build a new instance, copying every field, on each request; schemas keep
        no per-request state), and a JSON body documented as required only when one of
        its fields is."""
        if isinstance(schema, type):
            schema = schema()
        if kwargs.get("location", "json") in BODY_LOCATIONS:
            # Unknown body fields are refused everywhere (RequestSchema): a route with a
            # body schema that would swallow them does not start.
            problems = body_schema_problems(schema)
            if problems:
                raise TypeError("; ".join(problems))
        if kwargs.get("location", "json") == "json" and "required" not in kwargs:
            # A body with no required field may be left out (it reads as `{}`), and the
            # document says so; flask-smorest would mark every body required.
            kwargs["required"] = any(
                field.required for field in schema.fields.values() if not field.dump_only
            )
        return super().arguments(schema, *args, **kwargs)

    def auth(
        self, *, optional: bool = False, exclusive_account: bool = False
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Require a bearer token (401), or accept one when `optional` ("Anonymous or
        Bearer"): a token that is sent must still be valid. `exclusive_account`: the
        token's account is locked exclusively for this write (its deletion; app.auth)."""

        def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
            @wraps(func)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if exclusive_account:
                    g.setdefault(EXCLUSIVE_ACCOUNT, True)
                verify_jwt_in_request(optional=optional)
                g.token_checked = True
                return func(*args, **kwargs)

            security: list[dict[str, list[str]]] = [{BEARER: []}]
            if optional:
                security.append({})
            return self.doc(security=security)(wrapper)

        return decorator
