"""Content reports for the tests: the body of a report (another page each time, so never
a duplicate), and filing one through the API."""

from __future__ import annotations

import itertools
from typing import Any

_pages = itertools.count(1)


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
