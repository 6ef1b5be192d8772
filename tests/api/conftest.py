"""Fixtures of the API tests about teams: an admin (Ada L.), a member (bob) and their team
("Hikers"). Modules and packages override them where they need another team."""

from __future__ import annotations

import pytest

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
