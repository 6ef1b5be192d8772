"""Fixtures of the compliance API tests: a reporter, another user and a super-admin."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.factories import make_user

_pages = itertools.count(1)


@pytest.fixture
def reporter(app):
    return make_user("rita", display_name="Rita R.")


@pytest.fixture
def other(app):
    return make_user("olaf")


@pytest.fixture
def superadmin(app):
    return make_user("sam_admin", display_name="Sam (staff)", is_superadmin=True)


def report_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "pageType": 2,
        "contentType": 5,
        "pageTitle": "A note",
        "pageUrl": f"/en/notes/{next(_pages)}",  # another page each time: no duplicate
        "pageReference": "",
        "contentLabel": "Note text",
        "contentReference": "",
        "contentPreview": "Buy cheap watches",
        "reportTitle": "Spam",
        "reportExplanation": "An advert.",
    }
    body.update(overrides)
    return body


def file_report(api: Any, user: Any = None, **overrides: Any) -> dict[str, Any]:
    response = api.as_user(user).post("/api/compliance/reports", json=report_body(**overrides))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()
