"""The corpus's app: rate limits far above what a test sends, so every case reaches the
validation it tests (the limits have tests of their own), and the operations of the
OpenAPI document."""

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


# Limits raised, not switched off: Flask-Limiter's on/off switch is one for every app of
# the process, while each limit is read from the app's own settings.
GENEROUS_LIMITS = {
    "RATE_LIMIT_LOGIN": "100000 per minute",
    "RATE_LIMIT_REGISTER": "100000 per minute",
    "RATE_LIMIT_ACCOUNT_MAIL": "100000 per minute",
    "RATE_LIMIT_LINK_VERIFY": "100000 per minute",
    "RATE_LIMIT_COMPLIANCE": "100000 per minute",
    "RATE_LIMIT_TRACKABLE_LABELS": "100000 per minute",
    "SECRET_GUESS_LIMIT": 100000,
    "SECRET_GUESS_NETWORK_LIMIT": 100000,
    "SECRET_GUESS_ACCOUNT_LIMIT": 100000,
    "SECRET_GUESS_ACCOUNT_NETWORK_LIMIT": 100000,
    "TRACKABLES_PER_USER_PER_HOUR": 100000,
    "SECRET_ROTATE_LIMIT": 100000,
    "EXPORTS_PER_USER_PER_DAY": 100000,
}


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    return dict(GENEROUS_LIMITS)
