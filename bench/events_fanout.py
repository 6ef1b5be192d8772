"""Fan-out of one event to 10,000 inboxes against its floor.

A journey stop on a trackable whose group 10,000 users watch: the time from the commit of
the stop (with its event and fan-out job) to the commit of the last inbox row, the job
claimed and run by the app's own worker (`Worker.run_due`, in this process: the claim,
`events.fan_out`, the done mark and the commit, as `flask worker` runs them). The floor:
the same 10,000 notification rows written by one multi-row INSERT with psycopg2 and
committed, no project code, same database. Rounds interleave the two sides (each goes
first in turn); the first two are warm-up. Target: fan-out p50 at most 2 x floor p50.

    .venv/bin/python bench/events_fanout.py [--rounds 10] [--watchers 10000] [--reseed]

The database `bench_events` is created, migrated and seeded once (users and group watches
with COPY); `--reseed` starts it again. Every round's event is deleted again (its inbox
rows with it) once timed, so each round sees the same table sizes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notes_discovery import copy_rows, ensure_database, percentile, plain_driver, seed_users

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_events"
WARMUP = 2
PUBLIC_CODE = "LN-FANOUT1"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="counted rounds per side")
    parser.add_argument("--watchers", type=int, default=10_000)
    parser.add_argument("--reseed", action="store_true", help="drop and seed the database")
    return parser.parse_args()


def make_app(url: str) -> Any:
    from app import create_app

    return create_app({"SQLALCHEMY_DATABASE_URI": url, "RATELIMIT_ENABLED": False})


def seed(app: Any, url: str, watchers: int) -> None:
    """An owner, an author, and `watchers` users who watch the group of the one public,
    activated trackable; nothing when the trackable is already there."""
    import psycopg2

    from app.extensions import db
    from app.models.trackable import Trackable, TrackableGroup

    with app.app_context():
        if db.session.scalar(db.select(Trackable.id).where(Trackable.public_code == PUBLIC_CODE)):
            return
    with plain_driver():
        connection = psycopg2.connect(url)
        rng = random.Random(25)
        owner, _author, *watching = seed_users(connection, watchers + 2, rng, prefix="fanout")
    now = datetime.now(UTC)
    with app.app_context():
        group = TrackableGroup(name="Fan-out bench", slug="fan_out_bench", owner_user_id=owner)
        db.session.add(group)
        db.session.flush()
        db.session.add(
            Trackable(
                owner_user_id=uuid.UUID(owner),
                public_code=PUBLIC_CODE,
                name="Bench bug",
                activated_utc=now,
                group_id=group.id,
            )
        )
        db.session.commit()
        group_id = str(group.id)
    with plain_driver():
        copy_rows(
            connection,
            "trackable_group_watches",
            ({"user_id": user, "group_id": group_id, "created_utc": now} for user in watching),
        )
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE)")
        connection.close()


class FanOut:
    """The app's side: a journey stop through HTTP (the Flask test client), then the
    worker runs its fan-out job; timed from the answer (the commit is behind it) to the
    worker's commit. Counts the statements the worker sent."""

    def __init__(self, app: Any) -> None:
        from sqlalchemy import event

        from app.auth import issue_access_token
        from app.extensions import db
        from app.models.trackable import Trackable
        from app.models.user import User

        self.app = app
        self.client = app.test_client()
        self.statements = 0
        with app.app_context():
            trackable = db.session.scalars(
                db.select(Trackable).where(Trackable.public_code == PUBLIC_CODE)
            ).one()
            author = db.session.scalars(db.select(User).where(User.user_name == "fanout_1")).one()
            self.url = f"/api/trackables/{trackable.id}/journey-stops"
            self.headers = {"Authorization": f"Bearer {issue_access_token(author)}"}

            self.follow_up: list[float] = []

            def count(*_: Any) -> None:
                self.statements += 1

            event.listen(db.engine, "before_cursor_execute", count)

    def __call__(self) -> tuple[float, str, int]:
        """Seconds from the commit to the last inbox row, the event's id, statements."""
        from app.platform.jobs import Worker

        response = self.client.post(
            self.url, json={"latitude": 47.37, "longitude": 8.54}, headers=self.headers
        )
        if response.status_code != 201:
            raise SystemExit(f"journey stop: HTTP {response.status_code}")
        self.statements = 0
        started = time.perf_counter()
        worker = Worker(self.app, name="bench")
        ran = worker.run_due(limit=1)
        elapsed = time.perf_counter() - started
        if ran != 1:
            raise SystemExit(f"the worker ran {ran} jobs, not 1")
        # What the fan-out's listeners queued (the watchers' mail: its own job, after the
        # inbox rows are in) runs too, untimed, so every round starts from the same state.
        started = time.perf_counter()
        worker.run_due()
        self.follow_up.append(time.perf_counter() - started)
        with self.app.app_context():
            from app.extensions import db
            from app.models.event import Event

            event_id = db.session.scalars(
                db.select(Event.id).order_by(Event.created_utc.desc()).limit(1)
            ).one()
        return elapsed, str(event_id), self.statements


class Floor:
    """One multi-row INSERT of the same rows (ids drawn, timestamps made, inside the
    timing), committed: the least any fan-out can cost in this database."""

    def __init__(self, url: str) -> None:
        import psycopg2

        self.connection = psycopg2.connect(url)
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, group_id, owner_user_id FROM trackables WHERE public_code = %s",
                (PUBLIC_CODE,),
            )
            self.trackable_id, self.group_id, owner = cursor.fetchone()
            cursor.execute(
                "SELECT user_id FROM trackable_group_watches WHERE group_id = %s",
                (self.group_id,),
            )
            # The audience the fan-out finds: the watchers and the owner side.
            self.user_ids = [owner, *(row[0] for row in cursor.fetchall())]
        self.connection.commit()

    def __call__(self) -> tuple[float, str]:
        from psycopg2.extras import execute_values

        event_id = str(uuid.uuid4())
        with self.connection.cursor() as cursor:  # the event, untimed
            cursor.execute(
                "INSERT INTO events (id, event_type, trackable_id, group_id, fields, "
                "created_utc) VALUES (%s, 'trackable.journey_stop.added', %s, %s, '{}', now())",
                (event_id, self.trackable_id, self.group_id),
            )
        self.connection.commit()
        started = time.perf_counter()
        now = datetime.now(UTC)
        rows = [(str(uuid.uuid4()), event_id, user, now) for user in self.user_ids]
        with self.connection.cursor() as cursor:
            execute_values(
                cursor,
                "INSERT INTO notifications (id, event_id, user_id, created_utc) VALUES %s",
                rows,
                page_size=len(rows),  # one statement
            )
        self.connection.commit()
        return time.perf_counter() - started, event_id

    def inbox_rows(self, event_id: str) -> int:
        with self.connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM notifications WHERE event_id = %s", (event_id,))
            (found,) = cursor.fetchone()
        self.connection.commit()
        return int(found)

    def forget(self, event_id: str) -> None:
        """The event and its inbox rows deleted again (untimed)."""
        with self.connection.cursor() as cursor:
            cursor.execute("DELETE FROM events WHERE id = %s", (event_id,))
        self.connection.commit()


def main() -> None:
    args = parse_args()
    url = ensure_database(SERVER, DATABASE, reseed=args.reseed)
    app = make_app(url)
    seed(app, url, args.watchers)
    fan_out = FanOut(app)
    with plain_driver():
        floor = Floor(url)
    watchers = len(floor.user_ids)
    times: dict[str, list[float]] = {"fan-out": [], "floor": []}
    statements: list[int] = []
    for number in range(args.rounds + WARMUP):
        for side in ("fan-out", "floor") if number % 2 else ("floor", "fan-out"):
            if side == "fan-out":
                elapsed, event_id, sent = fan_out()
            else:
                with plain_driver():
                    elapsed, event_id = floor()
            with plain_driver():
                if floor.inbox_rows(event_id) != watchers:
                    raise SystemExit(f"{side}: {floor.inbox_rows(event_id)} inbox rows")
                floor.forget(event_id)
            if number >= WARMUP:
                times[side].append(elapsed * 1000)
                if side == "fan-out":
                    statements.append(sent)
    fan_p50, floor_p50 = statistics.median(times["fan-out"]), statistics.median(times["floor"])
    print(f"{watchers} inbox rows per event, {args.rounds} rounds per side (ms)")
    print(f"{'side':8} {'p50':>9} {'p95':>9} {'min':>9}")
    for side, values in times.items():
        print(
            f"{side:8} {statistics.median(values):9.1f} {percentile(values, 0.95):9.1f} "
            f"{min(values):9.1f}"
        )
    ratio = fan_p50 / floor_p50
    verdict = "met" if ratio <= 2 else "missed"
    print(f"fan-out / floor p50: {ratio:.2f} (target 2.0, {verdict})")
    print(f"statements per fan-out (claim to commit): {statistics.median(statements):.0f}")
    follow = statistics.median(fan_out.follow_up[WARMUP:]) * 1000
    print(
        f"then the listeners' own jobs (the watchers' mail queued), untimed above: {follow:.0f} ms"
    )


if __name__ == "__main__":
    main()
