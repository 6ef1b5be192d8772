"""What the sync tests share: calling push and pull, and records as a device sends them."""

from __future__ import annotations

import uuid
from typing import Any

PUSH, PULL = "/api/sync/push", "/api/sync/pull"
DEVICE = str(uuid.uuid4())


def push(api: Any, user: Any, *, notes=(), categories=(), headers=None) -> Any:
    body = {"deviceId": DEVICE, "notes": list(notes), "categories": list(categories)}
    return api.as_user(user).post(PUSH, json=body, headers=headers)


def pushed(api: Any, user: Any, **records: Any) -> dict[str, Any]:
    response = push(api, user, **records)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def pull(api: Any, user: Any, last: str | None = None, area: dict | None = None, **kw: Any) -> Any:
    body: dict[str, Any] = {"lastSyncUtc": last}
    if area is not None:
        body["publicArea"] = area
    return api.as_user(user).post(PULL, json=body, **kw)


def pulled(api: Any, user: Any, last: str | None = None, area: dict | None = None) -> dict:
    response = pull(api, user, last, area)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def note_record(note_id: Any = None, **fields: Any) -> dict[str, Any]:
    record = {
        "noteId": str(note_id or uuid.uuid4()),
        "title": "Old oak",
        "body": "",
        "contentLanguage": "en",
        "latitude": None,
        "longitude": None,
        "visibility": "Private",
        "commentPolicy": "LoggedInUsers",
        "clientMutationId": str(uuid.uuid4()),
        "updatedUtc": None,
    }
    record.update(fields)
    return record


def category_record(category_id: Any = None, **fields: Any) -> dict[str, Any]:
    record = {
        "categoryId": str(category_id or uuid.uuid4()),
        "name": "Walks",
        "contentLanguage": "en",
        "parentCategoryId": None,
        "updatedUtc": None,
    }
    record.update(fields)
    return record


def by_id(records: list[dict], key: str = "noteId") -> dict[str, dict]:
    return {record[key]: record for record in records}


def wire_time(value: Any) -> str:
    """A stored time as the API writes it (milliseconds, Z)."""
    return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
