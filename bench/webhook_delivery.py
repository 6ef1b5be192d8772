"""Webhook delivery throughput: one worker against a bare loop of signed `requests` posts.

Both send to the same local receiver (a threaded http.server on 127.0.0.1 answering 204).
The worker side makes N test deliveries of one subscription, then times one in-process
Worker sending them all (the subscription's drain job: per delivery its claim and the
checks in a short transaction, signing, the SSRF-safe POST over a kept-alive connection
with no transaction open, the attempt's record in another) and checks that every one
succeeded. The bare side signs the same
bodies with hmac and POSTs them with `requests.post` in a loop (the issue's floor: no
record, no commit; a new connection each). Rounds alternate which side goes first.
Target: worker throughput at least 0.7x the bare loop's.

    .venv/bin/python bench/webhook_delivery.py [--deliveries 300] [--rounds 5] [--sqlite]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import statistics
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_webhooks"


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps a connection open for whoever reuses it

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    return parser.parse_args()


def make_app(url: str, port: int):
    from app import create_app
    from app.extensions import db

    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": url,
            "MAIL_BACKEND": "memory",
            "RATELIMIT_STORAGE_URI": "memory://",
            "LOG_LEVEL": "WARNING",
            "WEBHOOKS_ALLOW_LOOPBACK": True,
            "WEBHOOK_ALLOWED_PORTS": [80, 443, port],
            # The rounds send thousands of test messages: past the hourly limits.
            "WEBHOOK_MANUAL_SENDS_PER_HOUR": 10**9,
            "WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR": 10**9,
        }
    )
    with app.app_context():
        db.drop_all()
        db.create_all()
    return app


def worker_round(app, hook_id: uuid.UUID, owner_id: uuid.UUID, count: int) -> float:
    from app.auth import build_viewer
    from app.extensions import db
    from app.models.user import User
    from app.platform.jobs import Worker
    from app.services import webhooks

    with app.test_request_context():
        viewer = build_viewer(db.session.get(User, owner_id))
        for _ in range(count):
            webhooks.send_test(viewer, hook_id, app.config)
        db.session.commit()
        db.session.remove()
    started = time.perf_counter()
    Worker(app, name="bench").run_due()
    elapsed = time.perf_counter() - started
    with app.app_context():
        from sqlalchemy import func, select

        from app.models.webhook import DeliveryState, WebhookDelivery

        pending = db.session.scalar(
            select(func.count()).where(WebhookDelivery.state != DeliveryState.SUCCEEDED)
        )
        db.session.remove()
    assert pending == 0, pending  # noqa: S101 - a bench sanity check: every one was sent
    return count / elapsed


def bare_round(url: str, secret: str, count: int, *, keep_alive: bool = False) -> float:
    """The floor: sign and POST in a loop, nothing recorded. `keep_alive`: through one
    `requests.Session` (one connection reused), the stricter floor beside the issue's."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    session = requests.Session() if keep_alive else None
    send = session.post if session is not None else requests.post
    started = time.perf_counter()
    for _ in range(count):
        message_id = str(uuid.uuid4())
        body = json.dumps(
            {"type": "webhook.test", "timestamp": "2026-11-29T10:00:00.000Z",
             "data": {"webhookId": message_id}},
            separators=(",", ":"),
        ).encode()  # fmt: skip
        stamp = str(int(time.time()))
        signed = f"{message_id}.{stamp}.".encode() + body
        signature = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        answer = send(
            url,
            data=body,
            headers={
                "webhook-id": message_id,
                "webhook-timestamp": stamp,
                "webhook-signature": f"v1,{signature}",
                "Content-Type": "application/json",
            },
            timeout=5,
        )
        assert answer.status_code == 204  # noqa: S101 - a bench sanity check
    elapsed = time.perf_counter() - started
    if session is not None:
        session.close()
    return count / elapsed


def main() -> None:
    args = parse_args()
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    receiver.daemon_threads = True
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    port = receiver.server_port
    url = f"http://127.0.0.1:{port}/hook"
    if args.sqlite:
        database = f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    else:
        from notes_discovery import ensure_database

        database = ensure_database(SERVER, DATABASE, reseed=False)
    app = make_app(database, port)

    from app.auth import build_viewer
    from app.extensions import db
    from app.services import webhooks
    from tests.factories import make_user

    with app.test_request_context():
        owner = make_user("bench_owner")
        created = webhooks.create_webhook(build_viewer(owner), app.config, url=url)
        db.session.commit()
        hook_id, owner_id, secret = created.webhook_id, owner.id, created.secret
        db.session.remove()
    assert secret is not None  # noqa: S101 - a bench sanity check

    rates: dict[str, list[float]] = {"worker": [], "bare": [], "bare, kept alive": []}
    worker_round(app, hook_id, owner_id, 20)  # warm-up
    bare_round(url, secret, 20)
    bare_round(url, secret, 20, keep_alive=True)
    for number in range(args.rounds):
        sides = list(rates)
        sides = sides[number % 3 :] + sides[: number % 3]  # each side goes first in turn
        for side in sides:
            if side == "worker":
                rates[side].append(worker_round(app, hook_id, owner_id, args.deliveries))
            else:
                rate = bare_round(url, secret, args.deliveries, keep_alive=side != "bare")
                rates[side].append(rate)
    worker_rates, bare_rates = rates["worker"], rates["bare"]
    worker, bare = statistics.median(worker_rates), statistics.median(bare_rates)
    kept = statistics.median(rates["bare, kept alive"])
    print(f"database: {'sqlite' if args.sqlite else 'postgresql'}; "
          f"{args.rounds} rounds of {args.deliveries}")  # fmt: skip
    print("worker deliveries/s per round:", " ".join(f"{rate:.0f}" for rate in worker_rates))
    print("bare posts/s per round:       ", " ".join(f"{rate:.0f}" for rate in bare_rates))
    print(
        "bare kept-alive posts/s per round:",
        " ".join(f"{r:.0f}" for r in rates["bare, kept alive"]),
    )
    print(f"median worker {worker:.0f}/s, bare {bare:.0f}/s, ratio {worker / bare:.2f} "
          f"(target 0.70)")  # fmt: skip
    print(f"against the kept-alive loop ({kept:.0f}/s): {worker / kept:.2f}")
    receiver.shutdown()


if __name__ == "__main__":
    main()
