#!/usr/bin/env python3
"""Benchmark: sync push of 500 notes and a full sync pull of 10,000 notes, each against a
floor written beside it, on PostgreSQL.

    .venv/bin/python bench/sync.py [--rounds 20] [--reseed]

1. Creates the database (default `bench_sync` on 127.0.0.1:5432) and migrates it.
2. Seeds two users once with COPY: `bsync_0` owns 10,000 personal notes in 20 categories
   (stamped by the change clock as a migration would), `bsync_1` one category to push into.
3. Serves the app with gunicorn (one sync worker, access log off) on a free port.
4. Times, round by round, each side going first in turn (so both see the same machine):
   - `pull`: POST /api/sync/pull without `lastSyncUtc` as `bsync_0` (10,000 note records
     and 20 categories); floor `pull-sql`: the same records read with one plain SELECT
     per kind (ids and times rendered as text by PostgreSQL, as the API does), turned into
     dicts and encoded by orjson, on a psycopg2 connection made per round (as each HTTP
     request opens one);
   - `push`: POST /api/sync/push of 500 new notes as `bsync_1`; floor `push-sql`: the same
     500 rows written with one multi-row INSERT (execute_values) in one transaction, the
     answer (their ids) encoded by orjson. After each round both sides' rows are deleted
     and the tables vacuumed (untimed) so every round starts from the same table.
   The first WARMUP rounds are not counted.
5. Prints p50 and p95 of each side and the API / floor ratios.

It is a measuring tool, not a test: it asserts nothing and bounds every loop.
"""

from __future__ import annotations

import argparse
import random
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from floor_app import KEYS
from notes_discovery import copy_rows, ensure_database, percentile, seed_users
from push_floor_app import write_notes
from trackables import WARMUP, free_port, http_request, interleaved, send, start_server

PULL_NOTES = 10_000
PUSH_NOTES = 500
CATEGORIES = 20

# The note record as the API writes it (app.services.notes.discovery), in plain SQL.
PULL_NOTES_SQL = """
SELECT CAST(n.id AS TEXT), CAST(n.owner_user_id AS TEXT), n.owner_user_name,
    CAST(n.category_id AS TEXT), n.title, n.body, n.content_language, n.latitude,
    n.longitude, n.visibility, n.comment_policy, n.external_link_url,
    n.external_link_description, n.is_deleted,
    to_char(n.updated_utc AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    to_char(n.last_activity_utc AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    n.client_mutation_id, CAST(n.team_id AS TEXT)
FROM notes n
WHERE n.owner_user_id = %s AND n.team_id IS NULL AND NOT n.is_deleted
ORDER BY n.id
"""
RECORD_KEYS = KEYS  # the note record's keys, in the floor's column order
CATEGORY_KEYS = "categoryId name contentLanguage parentCategoryId teamId isDeleted updatedUtc"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="bench_sync")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


def seed(url: str) -> tuple[str, str, str]:
    """(puller id, pusher id, the pusher's category id), seeded once."""
    import psycopg2

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT u.user_name, CAST(u.id AS TEXT), CAST(c.id AS TEXT) FROM users u "
            "JOIN categories c ON c.owner_user_id = u.id "
            "WHERE u.user_name IN ('bsync_0', 'bsync_1') ORDER BY 1"
        )
        found = {name: (user_id, category_id) for name, user_id, category_id in cursor}
    if len(found) == 2:
        print("seed: already there")
        return found["bsync_0"][0], found["bsync_1"][0], found["bsync_1"][1]
    rng = random.Random(20261123)
    puller, pusher = seed_users(connection, 2, rng, prefix="bsync")
    now = datetime.now(UTC)
    folders = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(CATEGORIES)]
    target = str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def categories() -> Iterator[dict[str, object]]:
        for number, (owner, category_id) in enumerate(
            [(puller, folder) for folder in folders] + [(pusher, target)]
        ):
            yield {
                "id": category_id,
                "owner_user_id": owner,
                "team_id": None,
                "parent_category_id": None,
                "name": f"Folder {number}",
                "content_language": "en",
                "is_deleted": False,
                "created_utc": now,
                "updated_utc": now,
                "sync_utc": now,
            }

    def notes() -> Iterator[dict[str, object]]:
        for number in range(PULL_NOTES):
            when = now - timedelta(seconds=rng.randrange(365 * 86400))
            yield {
                "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "owner_user_id": puller,
                "owner_user_name": "bsync_0",
                "team_id": None,
                "category_id": folders[number % CATEGORIES],
                "title": f"Note {number} near the corner",
                "body": "A bench, a view over the river and a good coffee place nearby.",
                "content_language": "en",
                "latitude": rng.uniform(52.3, 52.7),
                "longitude": rng.uniform(13.0, 13.8),
                "visibility": "Private",
                "comment_policy": "LoggedInUsers",
                "external_link_url": None,
                "external_link_description": "",
                "client_mutation_id": f"seed-{number}",
                "is_deleted": False,
                "is_publicly_discoverable": False,
                "created_utc": when,
                "updated_utc": when,
                "last_activity_utc": when,
                "sync_utc": now,
            }

    copy_rows(connection, "categories", categories())
    copy_rows(connection, "notes", notes())
    connection.commit()
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    connection.close()
    print(f"seed: {PULL_NOTES:,} notes")
    return puller, pusher, target


def tokens(url: str, user_ids: list[str]) -> list[str]:
    from app import create_app
    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User

    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "RATELIMIT_ENABLED": False})
    with app.app_context():
        found = [issue_access_token(db.session.get(User, uuid.UUID(i))) for i in user_ids]
        db.engine.dispose()
    return found


def pull_sql(url: str, owner: str) -> Callable[[int], float]:
    import psycopg2

    def run(number: int) -> float:
        started = time.perf_counter()
        connection = psycopg2.connect(url)
        with connection.cursor() as cursor:
            cursor.execute(PULL_NOTES_SQL, (owner,))
            notes = [dict(zip(RECORD_KEYS, row, strict=True)) for row in cursor.fetchall()]
            cursor.execute(
                "SELECT CAST(id AS TEXT), name, content_language, "
                "CAST(parent_category_id AS TEXT), CAST(team_id AS TEXT), is_deleted, "
                "to_char(updated_utc AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') "
                "FROM categories WHERE owner_user_id = %s AND NOT is_deleted",
                (owner,),
            )
            keys = CATEGORY_KEYS.split()
            categories = [dict(zip(keys, row, strict=True)) for row in cursor.fetchall()]
        connection.rollback()
        orjson.dumps({"serverSyncUtc": "", "userNotes": notes, "userCategories": categories})
        connection.close()
        return time.perf_counter() - started

    return run


def push_body(category_id: str, rng: random.Random) -> dict[str, Any]:
    return {
        "deviceId": str(uuid.uuid4()),
        "notes": [
            {
                "noteId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                "categoryId": category_id,
                "title": f"Pushed {number}",
                "body": "Written offline on the trail.",
                "latitude": rng.uniform(52.3, 52.7),
                "longitude": rng.uniform(13.0, 13.8),
                "visibility": "Private",
                "clientMutationId": str(uuid.uuid4()),
                "updatedUtc": None,
            }
            for number in range(PUSH_NOTES)
        ],
    }


def push_sql(
    url: str, owner: str, bodies: list[dict], clean: Callable[[], None]
) -> Callable[[int], float]:
    import psycopg2

    def run(number: int) -> float:
        body = bodies[number]
        started = time.perf_counter()
        connection = psycopg2.connect(url)
        with connection.cursor() as cursor:
            # the notes, stamped, and the applied clientMutationIds, as the API keeps them
            write_notes(cursor, body["notes"], owner, "bsync_1", tags=True, stamped=True)
        connection.commit()
        answer = {"appliedNoteIds": [n["noteId"] for n in body["notes"]], "conflicts": []}
        orjson.dumps(answer)
        connection.close()
        elapsed = time.perf_counter() - started
        clean()
        return elapsed

    return run


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    puller, pusher, target = seed(url)
    pull_token, push_token = tokens(url, [puller, pusher])
    port = free_port()
    server = start_server(url, port)
    rounds = args.rounds + WARMUP
    rng = random.Random(5)
    api_bodies = [push_body(target, rng) for _ in range(rounds)]
    sql_bodies = [push_body(target, rng) for _ in range(rounds)]
    import psycopg2

    cleaner = psycopg2.connect(url)
    cleaner.autocommit = True  # VACUUM runs outside a transaction

    def clean() -> None:
        """Untimed, after each push: the next one starts from the same table, vacuumed as
        autovacuum keeps a live one (the servers here run with autovacuum off;
        sync_push_floor.py says what the dead rows cost)."""
        with cleaner.cursor() as cursor:
            cursor.execute("DELETE FROM notes WHERE owner_user_id = %s", (pusher,))
            cursor.execute("VACUUM notes, sync_note_mutations")

    def api(
        path: str, token: str, body: Callable[[int], dict], after: Callable[[], None] | None
    ) -> Callable[[int], float]:
        def run(number: int) -> float:
            payload = orjson.dumps(body(number))
            request = http_request(port, "POST", path, payload, (f"Authorization: Bearer {token}",))
            elapsed, answer = send(port, request, 200)
            if after is not None:
                if orjson.loads(answer)["conflicts"]:
                    raise SystemExit(f"the bench push was refused: {answer[:500]!r}")
                after()
            return elapsed

        return run

    try:
        pulls = interleaved(
            {
                "pull": api("/api/sync/pull", pull_token, lambda _: {"lastSyncUtc": None}, None),
                "pull-sql": pull_sql(url, puller),
            },
            args.rounds,
        )
        pushes = interleaved(
            {
                "push": api("/api/sync/push", push_token, lambda n: api_bodies[n], clean),
                "push-sql": push_sql(url, pusher, sql_bodies, clean),
            },
            args.rounds,
        )
    finally:
        server.terminate()
        server.wait()
        clean()
        cleaner.close()
    print(f"{'side':10} {'p50 ms':>9} {'p95 ms':>9}")
    results = {**pulls, **pushes}
    for name in ("pull", "pull-sql", "push", "push-sql"):
        p50, p95 = (percentile(results[name], share) * 1000 for share in (0.5, 0.95))
        print(f"{name:10} {p50:9.1f} {p95:9.1f}")
    for api_side, floor in (("pull", "pull-sql"), ("push", "push-sql")):
        ratio = percentile(results[api_side], 0.5) / percentile(results[floor], 0.5)
        print(f"{api_side} / {floor} p50: {ratio:.2f}")


if __name__ == "__main__":
    main()
