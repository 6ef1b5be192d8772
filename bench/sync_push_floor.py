#!/usr/bin/env python3
"""Benchmark: a sync push of 500 new notes against the least work that stores the same
rows, on PostgreSQL.

    .venv/bin/python bench/sync_push_floor.py [--rounds 20] [--notes 500] [--reseed]

1. Creates the database (default `bench_push_h` on 127.0.0.1:5432) and migrates it.
2. Seeds once one user (`bpush_0`) with one category to push into.
3. Serves the app with gunicorn (one sync worker, access log off) on a free port.
4. Times, round by round, each side going first in turn (so all see the same machine):
   - `push`: POST /api/sync/push of `--notes` new notes (each with its own
     `clientMutationId`, a position, `Private`) over HTTP;
   - `insert` (the floor): the same rows written by psycopg2 with no project code, one
     multi-row INSERT (execute_values, one page) in one transaction, on a connection
     opened before the run (the app's pool keeps its connection too);
   - `insert+tags`: the floor plus the one thing a push must keep besides the notes, the
     applied `clientMutationId`s (a second multi-row INSERT, into sync_note_mutations);
   - `served`: `insert+tags` served over HTTP the way `push` is (bench/push_floor_app.py
     under plain gunicorn, one sync worker: the body parsed by orjson, the two INSERTs,
     the applied ids answered), so the request's own transfer and parsing count on
     both sides.
   After each side's round its rows are deleted and the tables vacuumed (untimed), so
   every round starts from the same table. The first WARMUP rounds are not counted.
5. Prints the median (p50) and p90 of each side and the push / floor ratios.

It is a measuring tool, not a test: it asserts nothing and bounds every loop.
"""

from __future__ import annotations

import argparse
import os
import random
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson
from discovery_floor import start_floor
from notes_discovery import copy_rows, ensure_database, percentile, seed_users
from push_floor_app import write_notes
from trackables import WARMUP, free_port, http_request, interleaved, send, start_server

USER = "bpush_0"
TARGET = 3.0  # push p50 / insert p50


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="bench_push_h")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--notes", type=int, default=500)
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


def seed(url: str) -> tuple[str, str]:
    """(the pusher's id, its category's id), seeded once."""
    import psycopg2

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CAST(u.id AS TEXT), CAST(c.id AS TEXT) FROM users u "
            "JOIN categories c ON c.owner_user_id = u.id WHERE u.user_name = %s",
            (USER,),
        )
        found = cursor.fetchone()
    if found is not None:
        connection.close()
        return found[0], found[1]
    rng = random.Random(20261130)
    (user_id,) = seed_users(connection, 1, rng, prefix="bpush")
    category_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    now = datetime.now(UTC)
    row = {
        "id": category_id,
        "owner_user_id": user_id,
        "team_id": None,
        "parent_category_id": None,
        "name": "Field trip",
        "content_language": "en",
        "is_deleted": False,
        "created_utc": now,
        "updated_utc": now,
        "sync_utc": now,
    }
    copy_rows(connection, "categories", iter([row]))
    connection.commit()
    connection.close()
    print("seed: one user, one category")
    return user_id, category_id


def token_of(url: str, user_id: str) -> str:
    from app import create_app
    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User

    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "RATELIMIT_ENABLED": False})
    with app.app_context():
        token = issue_access_token(db.session.get(User, uuid.UUID(user_id)))
        db.engine.dispose()
    return token


def push_body(category_id: str, count: int, rng: random.Random) -> dict[str, Any]:
    """A phone back from a field trip: `count` new notes in one category."""
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
            for number in range(count)
        ],
        "categories": [],
    }


def floor(
    connection: Any, owner: str, bodies: list[dict], clean: Callable[[], None], *, tags: bool
) -> Callable[[int], float]:
    """The same rows, the least work: one multi-row INSERT (and, with `tags`, the
    clientMutationIds' one), one transaction."""

    def run(number: int) -> float:
        notes = bodies[number]["notes"]
        started = time.perf_counter()
        with connection.cursor() as cursor:
            write_notes(cursor, notes, owner, USER, tags=tags)
        connection.commit()
        elapsed = time.perf_counter() - started
        clean()
        return elapsed

    return run


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    owner, category_id = seed(url)
    token = token_of(url, owner)
    port, served_port = free_port(), free_port()
    server = start_server(url, port)
    os.environ.update(BENCH_PUSH_OWNER=owner, BENCH_PUSH_OWNER_NAME=USER)
    try:
        served = start_floor("the served floor", served_port, 1, "bench.push_floor_app:app", url)
    except BaseException:
        server.terminate()
        raise
    rounds = args.rounds + WARMUP
    rng = random.Random(30)
    bodies = {
        side: [push_body(category_id, args.notes, rng) for _ in range(rounds)]
        for side in ("push", "insert", "insert+tags", "served")
    }
    import psycopg2

    cleaner = psycopg2.connect(url)
    cleaner.autocommit = True  # VACUUM runs outside a transaction
    writer = psycopg2.connect(url)

    def clean() -> None:
        """Untimed, after each side's round: the next one starts from the same table (its
        clientMutationIds go with the notes: ON DELETE CASCADE), vacuumed as autovacuum
        keeps a live table (the servers here run with autovacuum off: without it every
        round left 500 dead rows more in each table and index, and the push's stamping
        UPDATE, which finds its rows through the partial index of unstamped notes, grew
        slower round by round)."""
        with cleaner.cursor() as cursor:
            cursor.execute("DELETE FROM notes WHERE owner_user_id = %s", (owner,))
            cursor.execute("VACUUM notes, sync_note_mutations")

    def over_http(side: str, to: int) -> Callable[[int], float]:
        def run(number: int) -> float:
            payload = orjson.dumps(bodies[side][number])
            request = http_request(
                to, "POST", "/api/sync/push", payload, (f"Authorization: Bearer {token}",)
            )
            elapsed, answer = send(to, request, 200)
            found = orjson.loads(answer)
            if found["conflicts"] or len(found["appliedNoteIds"]) != args.notes:
                raise SystemExit(f"{side}: the push was not applied whole: {answer[:500]!r}")
            clean()
            return elapsed

        return run

    try:
        clean()
        results = interleaved(
            {
                "push": over_http("push", port),
                "insert": floor(writer, owner, bodies["insert"], clean, tags=False),
                "insert+tags": floor(writer, owner, bodies["insert+tags"], clean, tags=True),
                "served": over_http("served", served_port),
            },
            args.rounds,
        )
    finally:
        for process in (server, served):
            process.terminate()
            process.wait()
        clean()
        cleaner.close()
        writer.close()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{args.notes} notes, {args.rounds} counted rounds, load average now {load}")
    print(f"{'side':12} {'p50 ms':>9} {'p90 ms':>9}")
    for name, values in results.items():
        p50, p90 = (percentile(values, share) * 1000 for share in (0.5, 0.9))
        print(f"{name:12} {p50:9.1f} {p90:9.1f}")
    for floor_name in ("insert", "insert+tags", "served"):
        ratio = percentile(results["push"], 0.5) / percentile(results[floor_name], 0.5)
        print(f"push / {floor_name} p50: {ratio:.2f}")
    ratio = percentile(results["push"], 0.5) / percentile(results["insert"], 0.5)
    print(f"target push / insert <= {TARGET:g}: {'met' if ratio <= TARGET else 'not met'}")


if __name__ == "__main__":
    main()
