"""The served push floor: the least a push served over HTTP does, and nothing else
(bench/sync_push_floor.py, side `served`).

The request body parsed by orjson; the pushed notes written with psycopg2 as the
`insert+tags` floor writes them (one multi-row INSERT of the notes, one of their
clientMutationIds, one transaction, on a connection the worker keeps); the applied ids
answered as JSON, on Flask under plain gunicorn. No token check, no validation, no
rules, no events, no sync clock: the owner comes from the environment.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg2
import psycopg2.extras
from flask import Flask, Response, request

app = Flask(__name__)
NOTE_COLUMNS = (
    "id, owner_user_id, owner_user_name, category_id, title, body, content_language, "
    "latitude, longitude, visibility, comment_policy, external_link_description, "
    "client_mutation_id, is_deleted, is_publicly_discoverable, created_utc, updated_utc, "
    "last_activity_utc, sync_utc"
)
_worker = threading.local()


def write_notes(
    cursor: Any,
    notes: list[dict[str, Any]],
    owner: str,
    owner_name: str,
    *,
    tags: bool,
    stamped: bool = False,
) -> None:
    """The pushed notes as the floors write them: one multi-row INSERT (one page), and
    with `tags` one of their clientMutationIds; `stamped` writes their sync stamp too
    (bench/sync_push_floor.py and bench/sync.py use it too)."""
    now = datetime.now(UTC)
    stamp = now if stamped else None
    rows = [
        (
            n["noteId"],
            owner,
            owner_name,
            n["categoryId"],
            n["title"],
            n["body"],
            "en",
            n["latitude"],
            n["longitude"],
            n["visibility"],
            "LoggedInUsers",
            "",
            n["clientMutationId"],
            False,
            False,
            now,
            now,
            now,
            stamp,
        )
        for n in notes
    ]
    psycopg2.extras.execute_values(
        cursor,
        f"INSERT INTO notes ({NOTE_COLUMNS}) VALUES %s",  # noqa: S608 - constants
        rows,
        page_size=len(rows),
    )
    if tags:
        psycopg2.extras.execute_values(
            cursor,
            "INSERT INTO sync_note_mutations (note_id, client_mutation_id) VALUES %s",
            [(n["noteId"], n["clientMutationId"]) for n in notes],
            page_size=len(rows),
        )


def connection() -> Any:
    found = getattr(_worker, "connection", None)
    if found is None:
        found = psycopg2.connect(os.environ["DATABASE_URL"])
        _worker.connection = found
    return found


@app.post("/api/sync/push")
def push() -> Response:
    notes = orjson.loads(request.get_data())["notes"]
    database = connection()
    with database.cursor() as cursor:
        owner = os.environ["BENCH_PUSH_OWNER"]
        write_notes(cursor, notes, owner, os.environ["BENCH_PUSH_OWNER_NAME"], tags=True)
    database.commit()
    body = {
        "appliedNoteIds": [n["noteId"] for n in notes],
        "appliedCategoryIds": [],
        "conflicts": [],
    }
    return Response(orjson.dumps(body), mimetype="application/json")
