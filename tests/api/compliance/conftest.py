"""Fixtures of the compliance API tests: a reporter, another user and a super-admin."""

from __future__ import annotations

import pytest

from tests.factories import make_user


@pytest.fixture
def reporter(app):
    return make_user("rita", display_name="Rita R.")


@pytest.fixture
def other(app):
    return make_user("olaf")


@pytest.fixture
def superadmin(app):
    return make_user("sam_admin", display_name="Sam (staff)", is_superadmin=True)
