"""The corpus's app: rate limits off, so every case reaches the validation it tests (the
limits have tests of their own), and the operations of the OpenAPI document."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tests.hostile.corpus import Operation, operations


@cache
def document() -> dict[str, Any]:
    """The OpenAPI document, built once per process at collection."""
    from app import create_app

    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": "sqlite://"})
    with app.test_client() as client:
        return client.get("/api/openapi.json").get_json()


def all_operations() -> list[Operation]:
    return operations(document())


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return {"RATELIMIT_ENABLED": False}
