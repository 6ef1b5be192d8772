"""The category tests' team writes German (its content language is the default of its
categories)."""

from __future__ import annotations

import pytest

from tests.factories import make_team


@pytest.fixture
def team(admin, member):
    return make_team(admin, name="Hikers", members=(member,), content_language="de")
