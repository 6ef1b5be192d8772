"""What each shortcut on library internals is worth on its route (app.platform.fast).

In one process, on PostgreSQL: one app per configuration (every shortcut on; each one
off alone; all off), each serving the same requests through WSGI (the Flask test
client: the server's own work, no socket, no load generator to saturate). Rounds of N
requests per configuration are interleaved, so the machine's drift falls on all alike;
the figure is the median of the rounds' per-request CPU time (process time: what a
worker spends), and each configuration is compared with all-on. A shortcut is kept only
where turning it off costs its route more than 5 %.

    .venv/bin/python bench/shortcuts.py [--rounds 30] [--requests 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from notes_discovery import ensure_database  # noqa: E402

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_shortcuts"
ROUTES = {
    "GET /api/auth/manage/info": "/api/auth/manage/info",
    "GET /healthz": "/healthz",
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--requests", type=int, default=200)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    url = ensure_database(SERVER, DATABASE, reseed=True)
    from app import create_app
    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User
    from app.platform import fast

    names = sorted(fast.SHORTCUTS)
    configs = {"all on": "all"}
    for name in names:  # each one off alone
        configs[f"{name} off"] = ",".join(other for other in names if other != name) or "off"
    configs["all off"] = "off"
    instance = Path(tempfile.mkdtemp(prefix="bench-shortcuts-"))
    apps = {}
    for label, setting in configs.items():
        apps[label] = create_app(
            {
                "SQLALCHEMY_DATABASE_URI": url,
                "FAST_PATHS": setting,
                "RATELIMIT_STORAGE_URI": "memory://",
                "LOG_LEVEL": "WARNING",
                "ACCESS_LOG": "off",
                "DEV_KEYS_FILE": instance / "keys.json",
            }
        )
    first = next(iter(apps.values()))
    with first.app_context():
        user = User(
            user_name="bench_shortcuts",
            email="bench.shortcuts@example.com",
            normalized_email="bench.shortcuts@example.com",
            password_hash="x",  # noqa: S106 - never signs in; the bench mints a token
            is_email_confirmed=True,
        )
        db.session.add(user)
        db.session.commit()
        token = issue_access_token(user)
    headers = {"Authorization": f"Bearer {token}"}
    clients = {label: app.test_client() for label, app in apps.items()}
    for route_label, path in ROUTES.items():
        samples: dict[str, list[float]] = {label: [] for label in configs}
        for round_number in range(args.rounds + 2):
            order = list(configs) if round_number % 2 else list(reversed(configs))
            for label in order:
                fast.configure(apps[label].config)
                client = clients[label]
                started = time.process_time()
                for _ in range(args.requests):
                    response = client.get(path, headers=headers)
                    if response.status_code != 200:
                        raise SystemExit(f"{label} {path}: HTTP {response.status_code}")
                spent = (time.process_time() - started) / args.requests * 1000
                if round_number >= 2:  # warm-up
                    samples[label].append(spent)
        base = statistics.median(samples["all on"])
        print(f"{route_label}: CPU ms per request, median of {args.rounds} rounds")
        for label in configs:
            value = statistics.median(samples[label])
            print(f"  {label:26} {value:7.3f}  {value / base:5.2f} x all on")


if __name__ == "__main__":
    main()
