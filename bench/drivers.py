"""psycopg 3 against psycopg2 on the reads that the hand-made prepared statements serve.

The question: does psycopg 3, through SQLAlchemy's `postgresql+psycopg` dialect
and its automatic server-side prepare, read as fast as psycopg2 with our own
`PreparedStatement` (app.platform.database.driver), so that code could go? In one process,
on the 1,000,000-note `bench_notes` database (bench/notes_discovery.py seeds it), one app
per configuration serves the same requests through WSGI (the Flask test client: no
socket, no load generator). Rounds of every path of a scenario are interleaved across the
configurations, each going first in turn, so the machine's drift falls on all alike. The
figures are wall time per request (the database's planning is server time, which a
process clock would miss): p50 and p95 over every request, each configuration against
today's.

Configurations:
- `psycopg2 + PREPARE` (today): small windows and the token's account read run as
  statements prepared once per connection, with generic plans.
- `psycopg2 plain`: the same, `DATABASE_PREPARED_STATEMENTS=false` (what our own prepare is
  worth).
- `psycopg 3 auto`: `postgresql+psycopg`, our prepare off; psycopg prepares any statement
  a connection has run 5 times (its `prepare_threshold`), and PostgreSQL picks a custom
  or generic plan per execution (`plan_cache_mode=auto`).
- `psycopg 3 generic`: the same with `plan_cache_mode=force_generic_plan` on every
  connection: an upper bound only, since psycopg prepares every repeated statement, and a
  region window's plan depends on its numbers (bench/README.md, "Discovery at the floor").

The psycopg 3 apps run without the client-side deadline of app.platform.database.guard,
which is written for psycopg2's wait callback (psycopg 3 has none); this flatters psycopg 3
slightly.

    .venv/bin/python bench/drivers.py [--rounds 12]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from discovery_floor import scenarios  # noqa: E402
from notes_discovery import ensure_database, seed  # noqa: E402

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_notes"
SCENARIOS = ("city+lang", "nearby+lang", "city", "nearby", "region", "world")
TODAY = "psycopg2 + PREPARE"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12, help="passes over each scenario")
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    return parser.parse_args()


def psycopg3_options(url: str, config: Any, generic: bool) -> dict[str, Any]:
    """The engine options the app gives psycopg2 (app.platform.database.engine), less the
    psycopg2 connection factory that carries the client-side deadline."""
    from app.platform.database import engine_options

    options = engine_options(url, config)
    connect_args = dict(options["connect_args"])
    connect_args.pop("connection_factory")
    if generic:
        connect_args["options"] += " -c plan_cache_mode=force_generic_plan"
    return {**options, "connect_args": connect_args}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def main() -> None:
    args = parse_args()
    url = ensure_database(SERVER, DATABASE, reseed=False)
    seed(url, notes=args.notes, users=args.users)
    psycopg3_url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    from app import create_app
    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User
    from app.platform import fast

    common = {
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "WARNING",
        "ACCESS_LOG": "off",
    }
    today = create_app({**common, "SQLALCHEMY_DATABASE_URI": url})
    configs: dict[str, dict[str, Any]] = {
        TODAY: {},
        "psycopg2 plain": {"SQLALCHEMY_DATABASE_URI": url, "DATABASE_PREPARED_STATEMENTS": False},
        "psycopg 3 auto": {
            "SQLALCHEMY_DATABASE_URI": psycopg3_url,
            "DATABASE_PREPARED_STATEMENTS": False,
            "SQLALCHEMY_ENGINE_OPTIONS": psycopg3_options(url, today.config, generic=False),
        },
        "psycopg 3 generic": {
            "SQLALCHEMY_DATABASE_URI": psycopg3_url,
            "DATABASE_PREPARED_STATEMENTS": False,
            "SQLALCHEMY_ENGINE_OPTIONS": psycopg3_options(url, today.config, generic=True),
        },
    }
    apps = {
        label: today if label == TODAY else create_app({**common, **config})
        for label, config in configs.items()
    }
    with apps[TODAY].app_context():
        user = db.session.scalars(db.select(User).order_by(User.user_name)).first()
        if user is None:
            raise SystemExit("no seeded user")
        token = issue_access_token(user)
    headers = {"Authorization": f"Bearer {token}"}
    paths = {name: scenarios()[name] for name in SCENARIOS}
    paths["manage/info"] = ["/api/auth/manage/info"] * 40
    clients = {label: app.test_client() for label, app in apps.items()}
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for name, scenario in paths.items():
        samples: dict[str, list[float]] = {label: [] for label in configs}
        for round_number in range(args.rounds + 1):  # the first: warm-up, prepares
            labels = list(configs)
            shift = round_number % len(labels)
            for label in labels[shift:] + labels[:shift]:
                fast.configure(apps[label].config)
                client = clients[label]
                for path in scenario:
                    started = time.perf_counter()
                    response = client.get(path, headers=headers)
                    spent = (time.perf_counter() - started) * 1000
                    if response.status_code != 200:
                        raise SystemExit(f"{label} {path}: HTTP {response.status_code}")
                    if round_number:
                        samples[label].append(spent)
        base50 = statistics.median(samples[TODAY])
        base95 = percentile(samples[TODAY], 0.95)
        print(f"\n{name}: ms per request over {len(samples[TODAY])} requests each")
        for label, values in samples.items():
            p50, p95 = statistics.median(values), percentile(values, 0.95)
            print(
                f"  {label:20} p50 {p50:6.2f} ({p50 / base50:4.2f} x)"
                f"  p95 {p95:6.2f} ({p95 / base95:4.2f} x)"
            )
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
