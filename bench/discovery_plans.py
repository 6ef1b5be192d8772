#!/usr/bin/env python3
"""EXPLAIN (ANALYZE, BUFFERS) of the API's own anonymous discovery statements on the
benchmark database, for the world window and a city, with and without a language.

    .venv/bin/python bench/discovery_plans.py [--database bench_notes] [--language ja ...]

Each statement is run once to warm the cache, then explained; the plans go to stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import create_app  # noqa: E402
from app.extensions import db  # noqa: E402
from app.services.notes import discovery  # noqa: E402
from app.services.shared.areas import Bounds  # noqa: E402

WINDOWS = {
    "world": Bounds(-90.0, -180.0, 90.0, 180.0),
    "region": Bounds(50.5, 8.3, 54.5, 14.7),
    "city": Bounds(52.47, 13.32, 52.57, 13.48),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_notes")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--window", action="append", choices=sorted(WINDOWS))
    parser.add_argument("--language", action="append")
    args = parser.parse_args()
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"{args.server}/{args.database}"})
    languages = [None, *(args.language or ["en", "ja", "ko"])]
    with app.app_context(), db.engine.connect() as connection:
        cursor = connection.connection.driver_connection.cursor()
        for name in args.window or ["world"]:
            area = WINDOWS[name]
            for language in languages:
                statement = discovery._public_statement(
                    area.shape, language is not None, discovery.window_size(area)
                )
                compiled = statement.compile(dialect=db.engine.dialect)
                params = {**area.params(), discovery.CAP_PLUS_ONE.key: 501}
                if language:
                    params[discovery.LANGUAGE.key] = language
                bound = compiled.construct_params(params)
                cursor.execute(compiled.string, bound)
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + compiled.string, bound)
                print(f"-- {name}, language {language or '(none)'}")
                print("\n".join(row[0] for row in cursor.fetchall()) + "\n")


if __name__ == "__main__":
    main()
