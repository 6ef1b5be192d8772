"""Fixtures of the API tests: about teams, an admin (Ada L.), a member (bob) and their
team ("Hikers"), which modules and packages override where they need another team; and,
with VALIDATE_RESPONSES=1, every 2xx JSON answer checked against the OpenAPI document
(tests.openapi_answers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import openapi_answers
from tests.factories import make_team, make_user


@pytest.fixture
def admin(app):
    return make_user("ada", display_name="Ada L.")


@pytest.fixture
def member(app):
    return make_user("bob")


@pytest.fixture
def team(admin, member):
    return make_team(admin, name="Hikers", members=(member,))


if openapi_answers.ENABLED:

    @pytest.fixture(autouse=True)
    def _answers_as_documented() -> Iterator[None]:
        with openapi_answers.checking() as elsewhere:
            yield
        if elsewhere:
            pytest.fail("\n".join(elsewhere), pytrace=False)
