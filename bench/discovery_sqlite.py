#!/usr/bin/env python3
"""Benchmark: anonymous discovery on SQLite, the pinned index per window size against
SQLite's own choice.

    .venv/bin/python bench/discovery_sqlite.py [--notes 1000000] [--requests 100]

1. Seeds a SQLite file (default `instance/bench_notes.db`) with the same users and notes
   as bench/notes_discovery.py seeds into PostgreSQL (same generator, same seed), once.
2. Times `services.notes.public_notes` in-process (no HTTP: the database's part is what
   differs) for the scenarios of bench/discovery_floor.py, each with and without a
   language (`ja`), first with the index pinned per window size, then with the pins
   removed so SQLite's planner chooses; prints p50 and p95 of both, scenario by
   scenario, and whether both returned the same ids.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from notes_discovery import LANGUAGES, cities, note_rows, percentile  # noqa: E402

CITY, REGION = 0.05, 2.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default=str(ROOT / "instance" / "bench_notes.db"))
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=100)
    return parser.parse_args()


def typed(row: dict[str, Any], table: Any) -> dict[str, Any]:
    """A seeder row (ids as text) with the column types SQLAlchemy binds."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        if name not in table.c:
            continue
        if isinstance(value, str) and name.endswith("id") and len(value) == 36:
            value = uuid.UUID(value)
        out[name] = value
    return out


def seed(app: Any, notes: int, users: int) -> None:
    from sqlalchemy import func, insert, select

    from app.extensions import db
    from app.models.category import Category
    from app.models.note import Note
    from app.models.user import User

    with app.app_context():
        existing = db.session.scalar(select(func.count()).select_from(Note))
        if existing >= notes:
            print(f"seed: {existing:,} notes already there")
            return
        started = time.perf_counter()
        rng = random.Random(20261122)
        now = datetime.now().astimezone()
        user_ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(users)]
        db.session.execute(
            insert(User),
            [
                {
                    "id": uuid.UUID(user_id),
                    "email": f"bench{number}@example.com",
                    "normalized_email": f"bench{number}@example.com",
                    "user_name": f"bench_{number}",
                    "password_hash": "-",
                    "is_email_confirmed": True,
                    "created_utc": now,
                    "updated_utc": now,
                }
                for number, user_id in enumerate(user_ids)
            ],
        )
        category_ids: dict[tuple[str, str], str] = {}
        categories = []
        for user_id in user_ids:
            for language in sorted(set(LANGUAGES)):
                category_id = str(uuid.uuid4())
                category_ids[(user_id, language)] = category_id
                categories.append(
                    {
                        "id": uuid.UUID(category_id),
                        "owner_user_id": uuid.UUID(user_id),
                        "name": "Notes",
                        "content_language": language,
                        "created_utc": now,
                        "updated_utc": now,
                    }
                )
        db.session.execute(insert(Category), categories)
        table = Note.__table__
        batch: list[dict[str, Any]] = []
        for row in note_rows(rng, notes, user_ids, category_ids):
            batch.append(typed(row, table))
            if len(batch) >= 50_000:
                db.session.execute(insert(table), batch)
                batch = []
        if batch:
            db.session.execute(insert(table), batch)
        db.session.commit()
        db.session.execute(db.text("ANALYZE"))
        db.session.commit()
        print(f"seed: {notes:,} notes in {time.perf_counter() - started:.0f} s")


def areas() -> dict[str, list[Any]]:
    from app.services.shared.areas import Bounds, Circle

    places = cities(30)
    return {
        "city": [
            Bounds(lat - CITY, lon - CITY * 1.6, lat + CITY, lon + CITY * 1.6)
            for lat, lon, _ in places
        ],
        "region": [
            Bounds(
                max(-90.0, lat - REGION),
                max(-180.0, lon - REGION * 1.6),
                min(90.0, lat + REGION),
                min(180.0, lon + REGION * 1.6),
            )
            for lat, lon, _ in places
        ],
        "world": [Bounds(-90.0, -180.0, 90.0, 180.0)],
        "nearby": [Circle(lat, lon, 5.0) for lat, lon, _ in places],
    }


def timed(app: Any, area_list: list[Any], language: str | None, count: int) -> tuple:
    from app.services.notes import discovery

    times, ids = [], []
    with app.app_context():
        for number in range(count + 3):
            area = area_list[number % len(area_list)]
            started = time.perf_counter()
            found = discovery.public_notes(area, content_language=language, cap=500)
            elapsed = time.perf_counter() - started
            if number >= 3:
                times.append(elapsed * 1000)
                ids.append([row[0] for row in found.rows])
    return times, ids


def main() -> None:
    args = parse_args()
    from flask_migrate import upgrade

    from app import create_app
    from app.services.notes import discovery

    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{args.path}"})
    with app.app_context():
        upgrade(directory=str(ROOT / "migrations"))
    seed(app, args.notes, args.users)
    pin = discovery._sqlite_index

    def unpinned(size: str, with_language: bool) -> None:
        return None

    print(f"\nSQLite, {args.notes:,} notes, {args.requests} reads each, in-process (ms)")
    print(f"{'scenario':<12} {'pinned p50':>10} {'p95':>8} {'planner p50':>11} {'p95':>8}  same")
    for name, area_list in areas().items():
        for language in (None, "ja"):
            pinned, pinned_ids = timed(app, area_list, language, args.requests)
            discovery._sqlite_index = unpinned  # type: ignore[assignment]
            discovery._public_statement.cache_clear()
            try:
                free, free_ids = timed(app, area_list, language, args.requests)
            finally:
                discovery._sqlite_index = pin
                discovery._public_statement.cache_clear()
            label = name + ("+lang" if language else "")
            print(
                f"{label:<12} {statistics.median(pinned):10.2f} {percentile(pinned, 0.95):8.2f}"
                f" {statistics.median(free):11.2f} {percentile(free, 0.95):8.2f}"
                f"  {'yes' if pinned_ids == free_ids else 'NO'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
