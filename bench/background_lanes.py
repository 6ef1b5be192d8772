"""Background work while one account stalls it: the figures of the stall scenario
(tests/api/webhooks/stall.py), as measured.

One account's 20 webhooks each have 50 deliveries due to a black hole (accepts, never
answers; 5 s a try); real `flask worker` processes with the default lanes run them. Then,
one after another: 20 registrations, each timed until its confirmation mail is written;
another account's webhook to a prompt receiver, a watcher's inbox row and an export; the
stalling owner's switch-off and delete of the webhooks whose tries hang. The floor beside
it is the same registrations with no stall (no webhook due), in the same run.

    .venv/bin/python bench/background_lanes.py [--workers 1] [--runs 2] [--sqlite]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, text  # noqa: E402 - the repository on the path first

from app.extensions import db  # noqa: E402
from app.models import Base  # noqa: E402
from tests.api.webhooks import stall  # noqa: E402
from tests.conftest import ApiClient, make_test_app  # noqa: E402
from tests.hanging_peers import BlackHole  # noqa: E402
from tests.receivers import Receiver, reachable  # noqa: E402

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_lanes"


def fresh_database(sqlite: bool, folder: Path) -> str:
    if sqlite:
        url = f"sqlite:///{folder / 'bench.db'}"
    else:
        admin = create_engine(f"{SERVER}/postgres", isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{DATABASE}"'))
        admin.dispose()
        url = f"{SERVER}/{DATABASE}"
    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    return url


def one_run(sqlite: bool, workers: int, stalled: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        url = fresh_database(sqlite, root)
        app = make_test_app(url, root)
        hole, prompt = BlackHole(), Receiver()
        threading.Thread(target=prompt.serve_forever, args=(0.02,), daemon=True).start()
        running = stall.Workers(url, root, [hole.port, prompt.port], workers)
        try:
            with app.app_context():
                reachable(app, hole.port, stall.TIMEOUT_SECONDS)
                reachable(app, prompt.port, stall.TIMEOUT_SECONDS)
                api = ApiClient(app.test_client())
                figures = stall.run(app, api, hole, prompt, running, stalled=stalled)
                db.session.remove()
                db.engine.dispose()
        finally:
            running.stop()
            hole.close()
            prompt.shutdown()
            prompt.server_close()
    return figures.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    args = parser.parse_args()
    where = "SQLite" if args.sqlite else "PostgreSQL"
    print(f"{where}, {args.workers} worker process(es); seconds")
    names = None
    for number in range(1, args.runs + 1):
        for stalled in (False, True):
            figures = one_run(args.sqlite, args.workers, stalled)
            if names is None:
                names = list(figures)
                print("| run | " + " | ".join(names) + " |")
                print("|---" * (len(names) + 1) + "|")
            label = f"{number} {'stalled' if stalled else 'floor'}"
            print(f"| {label} | " + " | ".join(f"{figures[name]:.3f}" for name in names) + " |")


if __name__ == "__main__":
    main()
