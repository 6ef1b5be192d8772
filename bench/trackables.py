#!/usr/bin/env python3
"""Benchmark: trackable code lookup (hit and miss) and group creation of 100 items, on
100,000 trackables in PostgreSQL.

    .venv/bin/python bench/trackables.py [--requests 500] [--group-requests 50] [--reseed]

1. Creates the database (default `bench_trackables` on 127.0.0.1:5432) and migrates it.
2. Seeds 1,000 users and 100,000 trackables once with COPY (a fifth of them in groups of
   ten, 70 % activated), each with its three code rows keyed by the app's own
   `code_hash`, and keeps the plain secrets of a random 20,000 in a bench-only table
   (`bench_secret_sample`) so hits can be looked up; a later run reuses them (`--reseed`
   starts again).
3. Serves the app with gunicorn (one sync worker, access log off) on a free port, with
   TRUSTED_PROXIES=127.0.0.1 so each lookup can come from an address of its own
   (X-Forwarded-For, from the 198.18.0.0/15 benchmarking range), and SECRET_GUESS_LIMIT
   and SECRET_GUESS_NETWORK_LIMIT raised as a safeguard: a client over the guess budget
   would measure the 429 path (the addresses share a few /24s);
   TRACKABLES_PER_USER_PER_HOUR raised: every group is created by one account; and
   SECRET_GUESS_ALARM_MISSES=0, the miss alarm off in both processes: its count runs
   only until a process has raised the alarm, so the server (which raises it at once,
   with the capture's misses in the window) would skip a statement the captured misses
   sent, and the replay would do more than the API.
4. Times, request by request in turn with its floors (each side going first in turn):
   - `hit`: POST /api/trackables/lookup with a real secret code, anonymous, from a fresh
     client each time (no cookie: every hit opens a new access session and sets the
     cookie, as a finder's first scan does), a different trackable each time;
   - `miss`: the same with an unknown, well-formed secret code (counted as a miss);
   - `group`: POST /api/trackables/groups with trackableCount=100 and a bearer token.
   The floors: `bare`, the exact statements the API sent for an equal request (captured
   in-process at the driver, the rows it wrote deleted again) replayed with psycopg2 in
   one transaction, rows turned into dicts and encoded by orjson (for `group`, ten
   captured creations replayed in turn, each deleted again, untimed, after its replay);
   `http` (lookups), GET /healthz, a request that does nothing; `plain` (group), the same
   rows written the plain way: codes drawn and hashed as the app does, one single-row
   INSERT per row (the group, 100 trackables, 300 codes), one transaction, the response
   encoded by orjson.
5. Prints p50 and p95 of each, the API / floor ratios (for lookups also against the
   replay plus the trivial request, summed round by round: the statements as a service
   would serve them) and, from the capture (in-process, not interleaved), the
   statements per request and its p50 in all and waiting on the driver; then deletes
   what the run created (groups, trackables, access sessions, counted misses).

It is a measuring tool, not a test: it asserts nothing and bounds every loop.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from notes_discovery import (
    copy_rows,
    ensure_database,
    percentile,
    plain_driver,
    receive,
    seed_users,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WARMUP = 10
SAMPLE_SECRETS = 20_000
GROUP_SIZE = 10  # seeded groups; created groups have --group-size items
BENCH_RANGE = ipaddress.ip_network("198.18.0.0/15")  # RFC 2544: for benchmarks
GUESS_LIMIT = 1_000_000
CREATION_LIMIT = 1_000_000  # trackables per account per hour: the groups are one account's
CAPTURED_GROUPS = 10  # group creations captured in-process, replayed in turn
TARGETS = {"hit": 2.0, "miss": 2.0, "group": 2.0}  # API p50 / bare p50 (group: / plain)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_trackables")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--trackables", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=500, help="per lookup scenario")
    parser.add_argument("--group-requests", type=int, default=50)
    parser.add_argument("--group-size", type=int, default=100)
    parser.add_argument("--reseed", action="store_true")
    parser.add_argument("--port", type=int, default=0, help="the server's port (0: a free one)")
    parser.add_argument(
        "--scenarios", default="hit,miss,group", help="comma-separated: hit, miss, group"
    )
    return parser.parse_args()


# --- the app's own settings --------------------------------------------------------------


def app_config(url: str, **overrides: Any) -> Any:
    """A Flask app on the bench database, with the settings the server also gets."""
    from app import create_app

    return create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "RATELIMIT_ENABLED": False,
            "SECRET_GUESS_LIMIT": GUESS_LIMIT,
            "SECRET_GUESS_NETWORK_LIMIT": GUESS_LIMIT,
            "TRACKABLES_PER_USER_PER_HOUR": CREATION_LIMIT,
            "SECRET_GUESS_ALARM_MISSES": 0,
            "TRUSTED_PROXIES": ["127.0.0.1"],
            **overrides,
        }
    )


def code_settings(app: Any) -> Any:
    from app.services.trackables.codes.formats import CodeSettings

    return CodeSettings.from_config(app.config)


# --- seeding -----------------------------------------------------------------------------


def seed(url: str, settings: Any, *, trackables: int, users: int) -> None:
    import psycopg2

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM trackables")
        existing = cursor.fetchone()[0]
        cursor.execute("SELECT to_regclass('bench_secret_sample') IS NOT NULL")
        sampled = cursor.fetchone()[0]
    if existing >= trackables and sampled:
        print(f"seed: {existing:,} trackables already there")
        connection.close()
        return
    if existing:
        raise SystemExit(f"{existing:,} trackables but no complete seed: run with --reseed")
    started = time.perf_counter()
    rng = random.Random(20261123)
    user_ids = seed_users(connection, users, rng, prefix="trackbench")
    group_ids = seed_groups(connection, trackables // 5 // GROUP_SIZE, user_ids, rng)
    items, code_rows, plain = trackable_rows(rng, settings, trackables, user_ids, group_ids)
    copy_rows(connection, "trackables", iter(items))
    copy_rows(connection, "trackable_codes", iter(code_rows))
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE bench_secret_sample (trackable_id uuid PRIMARY KEY, secret text)"
        )
        sample = rng.sample(plain, min(SAMPLE_SECRETS, len(plain)))
        cursor.executemany("INSERT INTO bench_secret_sample VALUES (%s, %s)", sample)
    connection.commit()
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")  # as autovacuum would on a live table
    connection.close()
    print(f"seed: {trackables:,} trackables in {time.perf_counter() - started:.0f} s")


def seed_groups(connection: Any, count: int, user_ids: list[str], rng: random.Random) -> list[str]:
    now = datetime.now(UTC)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]

    def rows() -> Iterator[dict[str, object]]:
        for number, group_id in enumerate(ids):
            yield {
                "id": group_id,
                "name": f"Seeded hunt {number}",
                "slug": f"seeded_hunt_{number}",
                "description": "Ten travellers released together.",
                "default_trackable_title": "",
                "default_trackable_description": "",
                "default_external_link_url": None,
                "default_external_link_description": "",
                "default_external_link_append_public_code": False,
                "default_status_message": "",
                "visibility": "AlwaysVisibleToEveryone",
                "owner_user_id": rng.choice(user_ids),
                "team_id": None,
                "created_utc": now,
                "updated_utc": now,
                "last_activity_utc": now,
            }

    if ids:
        copy_rows(connection, "trackable_groups", rows())
    return ids


def trackable_rows(
    rng: random.Random, settings: Any, count: int, user_ids: list[str], group_ids: list[str]
) -> tuple[list[dict[str, object]], list[dict[str, object]], list[tuple[str, str]]]:
    """Trackables, their code rows (hashed with the app's code_hash) and (id, secret)."""
    from app.services.trackables.codes.formats import ALPHABET, QR_ALPHABET, code_hash

    now = datetime.now(UTC)
    items: list[dict[str, object]] = []
    code_rows: list[dict[str, object]] = []
    plain: list[tuple[str, str]] = []
    taken: set[str] = set()
    number = 0
    while len(items) < count and number < 2 * count:  # a rare collision draws again
        number += 1
        public = f"{settings.public_prefix}-{''.join(rng.choices(ALPHABET, k=6))}"
        secret = f"{settings.secret_prefix}{''.join(rng.choices(ALPHABET, k=8))}"
        token = "".join(rng.choices(QR_ALPHABET, k=settings.qr_length))
        if taken & {public, secret, token}:
            continue
        taken.update((public, secret, token))
        trackable_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        index = len(items)
        group = group_ids[index // GROUP_SIZE] if index // GROUP_SIZE < len(group_ids) else None
        creator = rng.choice(user_ids)
        activated = rng.random() < 0.7
        created = now - timedelta(seconds=rng.randrange(3 * 365 * 86400))
        items.append(
            {
                "id": trackable_id,
                "owner_user_id": creator if activated else None,
                "team_id": None,
                "public_code": public,
                "name": f"Travel bug {index}" if activated else "",
                "created_utc": created,
                "last_activity_utc": created,
                "description": "Going north, one cache at a time." if activated else "",
                "status_message": "",
                "visibility": "AlwaysVisibleToEveryone"
                if rng.random() < 0.85
                else "VisibleOnceAccessed",
                "external_link_url": None,
                "external_link_description": "",
                "external_link_append_public_code": False,
                "created_by_user_id": creator,
                "group_id": group,
                "has_custom_secret": False,
                "activated_utc": created if activated else None,
                "updated_utc": created,
            }
        )
        for kind, code in (("public", public), ("secret", secret), ("qr", token)):
            code_rows.append(
                {
                    "code_hash": code_hash(settings, code),
                    "trackable_id": trackable_id,
                    "kind": kind,
                    "created_utc": created,
                }
            )
        plain.append((trackable_id, secret))
    return items, code_rows, plain


# --- HTTP --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(url: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "LOG_LEVEL": "WARNING",
        "RATELIMIT_ENABLED": "false",
        "SECRET_GUESS_LIMIT": str(GUESS_LIMIT),
        "SECRET_GUESS_NETWORK_LIMIT": str(GUESS_LIMIT),
        "TRACKABLES_PER_USER_PER_HOUR": str(CREATION_LIMIT),
        "SECRET_GUESS_ALARM_MISSES": "0",
        "TRUSTED_PROXIES": "127.0.0.1",
        # Off, not /dev/null: a log file still has every line formatted and redacted.
        "ACCESS_LOG": "off",
    }
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
    server = subprocess.Popen(
        [*command, "wsgi:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not start")


def http_request(
    port: int, method: str, path: str, body: bytes = b"", headers: tuple[str, ...] = ()
) -> bytes:
    """The bytes of one HTTP/1.1 request, built before it is timed."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join([*lines, *headers]) + "\r\n\r\n").encode() + body


def send(port: int, request: bytes, expect: int) -> tuple[float, bytes]:
    """Wall time of one request, connect to last byte and close, and its body: a plain
    socket, reading the status line, the headers and exactly Content-Length bytes
    (bench/README.md: a client library's own work is not API time)."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        received = bytearray()
        while (end := received.find(b"\r\n\r\n")) < 0:
            received += receive(sock, "request")
        head = received[:end].decode("latin-1").split("\r\n")
        lengths = [
            line.split(":", 1)[1] for line in head if line.lower().startswith("content-length:")
        ]
        length = int(lengths[0]) if lengths else 0
        while len(received) - end - 4 < length:
            received += receive(sock, "request")
    elapsed = time.perf_counter() - started
    status = int(head[0].split()[1])
    if status != expect or not lengths:
        body = bytes(received[end + 4 :])[:300]
        raise SystemExit(f"{request.splitlines()[0]!r}: HTTP {status} {body!r}")
    return elapsed, bytes(received[end + 4 :])


# --- capture and replay ------------------------------------------------------------------


class Capture:
    """The app in-process, recording at the driver every statement and its parameters,
    and how long each request took in all and waiting on the driver (`timings`)."""

    def __init__(self, url: str) -> None:
        import psycopg2.extensions

        self.current: list[tuple[str, object]] = []
        self.driver = [0.0]
        self.timings: list[tuple[float, float]] = []
        current, driver = self.current, self.driver

        class RecordingCursor(psycopg2.extensions.cursor):
            def execute(self, query, parameters=None):  # type: ignore[no-untyped-def]
                current.append((query, parameters))
                started = time.perf_counter()
                try:
                    return super().execute(query, parameters)
                finally:
                    driver[0] += time.perf_counter() - started

        self.app = app_config(
            url, SQLALCHEMY_ENGINE_OPTIONS={"connect_args": {"cursor_factory": RecordingCursor}}
        )
        self.context = self.app.app_context()
        self.context.push()
        self.client = self.app.test_client(use_cookies=False)

    def post(
        self, path: str, body: dict[str, object], headers: dict[str, str], expect: int
    ) -> tuple[list[tuple[str, object]], Any]:
        self.current.clear()
        self.driver[0] = 0.0
        started = time.perf_counter()
        response = self.client.post(path, json=body, headers=headers)
        self.timings.append((time.perf_counter() - started, self.driver[0]))
        if response.status_code != expect:
            raise SystemExit(f"{path}: {response.status_code} {response.get_data(as_text=True)}")
        return list(self.current), response.get_json()

    def close(self) -> None:
        from app.extensions import db

        db.engine.dispose()
        self.context.pop()


def replay(connection: Any, statements: list[tuple[str, object]]) -> float:
    """Wall time of a request's captured SQL replayed with psycopg2 in one transaction,
    rows turned into dicts and encoded by orjson. A statement that failed in the app fails
    again here (a drawn code that collided); the app's next statement is its ROLLBACK TO
    SAVEPOINT, so the replay goes on as the app did."""
    import orjson
    import psycopg2

    started = time.perf_counter()
    with connection.cursor() as cursor:
        for statement, parameters in statements:
            try:
                cursor.execute(statement, parameters)
            except psycopg2.IntegrityError:
                continue
            if cursor.description is None:
                continue
            names = [column.name for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            orjson.dumps(rows, default=str)
    connection.commit()
    return time.perf_counter() - started


PLAIN_TRACKABLE = (
    "INSERT INTO trackables (id, public_code, name, description, status_message, visibility, "
    "external_link_url, external_link_description, external_link_append_public_code, "
    "created_by_user_id, owner_user_id, team_id, group_id, has_custom_secret, activated_utc, "
    "created_utc, updated_utc, last_activity_utc) VALUES (%s, %s, '', '', '', %s, NULL, '', "
    "false, %s, NULL, NULL, %s, false, NULL, %s, %s, %s) ON CONFLICT (public_code) DO NOTHING"
)
PLAIN_CODE = (
    "INSERT INTO trackable_codes (code_hash, trackable_id, kind, created_utc) "
    "VALUES (%s, %s, %s, %s) ON CONFLICT (code_hash) DO NOTHING"
)
PLAIN_GROUP = (
    "INSERT INTO trackable_groups (id, name, slug, description, default_trackable_title, "
    "default_trackable_description, default_external_link_url, "
    "default_external_link_description, default_external_link_append_public_code, "
    "default_status_message, visibility, owner_user_id, team_id, created_utc, updated_utc, "
    "last_activity_utc) VALUES (%s, %s, %s, '', '', '', NULL, '', false, '', %s, %s, NULL, "
    "%s, %s, %s)"
)


def plain_group(
    connection: Any, settings: Any, base_url: str, user_id: str, name: str, size: int
) -> float:
    """Wall time of writing a group of `size` new trackables the plain way: the user and
    the slug read, codes drawn and hashed as the app does, one single-row INSERT per row,
    one transaction, the response encoded by orjson. A drawn code that collides is drawn
    again, told by the INSERT's ON CONFLICT DO NOTHING (no savepoints)."""
    import orjson

    from app.services.trackables.codes.formats import (
        code_hash,
        new_public_code,
        new_qr_token,
        new_secret_code,
    )

    visibility = "AlwaysVisibleToEveryone"
    started = time.perf_counter()
    now = datetime.now(UTC)
    slug = "_".join(name.lower().split())
    group_id = uuid.uuid4()
    items = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM users WHERE id = %s", (user_id,))
        cursor.fetchall()
        cursor.execute("SELECT count(*) FROM trackable_groups WHERE slug = %s", (slug,))
        cursor.fetchall()
        cursor.execute(PLAIN_GROUP, (str(group_id), name, slug, visibility, user_id, now, now, now))
        for _ in range(size):
            trackable_id = str(uuid.uuid4())
            drawn = {}
            for kind, draw in (
                ("public", new_public_code),
                ("secret", new_secret_code),
                ("qr", new_qr_token),
            ):
                for _attempt in range(8):
                    code = draw(settings)
                    if kind == "public":
                        row = (trackable_id, code, visibility, user_id, str(group_id), now)
                        cursor.execute(PLAIN_TRACKABLE, (*row, now, now))
                        if cursor.rowcount == 0:
                            continue
                    cursor.execute(PLAIN_CODE, (code_hash(settings, code), trackable_id, kind, now))
                    if cursor.rowcount == 1:
                        drawn[kind] = code
                        break
            public, secret, token = drawn["public"], drawn["secret"], drawn["qr"]
            items.append(
                {
                    "trackableId": trackable_id,
                    "name": name,
                    "publicCode": public,
                    "secretCode": secret,
                    "scanUrl": f"{base_url}/trackable/{token}",
                    "qrPayload": f"{base_url}/trackable/{token}",
                }
            )
    connection.commit()
    orjson.dumps(
        {
            "trackableGroupId": group_id,
            "name": name,
            "slug": slug,
            "visibility": visibility,
            "trackableCount": size,
            "createdUtc": now,
            "items": items,
        }
    )
    return time.perf_counter() - started


# --- scenarios ---------------------------------------------------------------------------


def interleaved(sides: dict[str, Callable[[int], float]], count: int) -> dict[str, list[float]]:
    """Each side once per round, the order rotating (each goes first in turn, so all see
    the same state of the machine); the first WARMUP rounds are not counted."""
    names = list(sides)
    results: dict[str, list[float]] = {name: [] for name in names}
    for number in range(count + WARMUP):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            elapsed = sides[name](number)
            if number >= WARMUP:
                results[name].append(elapsed)
    return results


class Addresses:
    """A fresh client address per request, from the benchmarking range, starting at a
    random place so runs within the guess window do not share clients."""

    def __init__(self) -> None:
        self.next = secrets.randbelow(BENCH_RANGE.num_addresses)

    def take(self) -> str:
        self.next = (self.next + 1) % BENCH_RANGE.num_addresses
        return str(BENCH_RANGE.network_address + self.next)


def lookup_scenario(
    url: str, port: int, codes: list[str], *, found: bool, count: int, addresses: Addresses
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Lookups of `codes` (the first half through HTTP, the second captured and replayed),
    each from a fresh client, against the replay and GET /healthz."""
    import orjson
    import psycopg2

    rounds = count + WARMUP
    api_codes, bare_codes = codes[:rounds], codes[rounds : 2 * rounds]
    capture = Capture(url)
    capture.post("/api/trackables/lookup", {"code": "LN-WARMUP"}, {}, 200)  # dialect set-up
    capture_started = datetime.now(UTC)
    statements = []
    for code in bare_codes:
        headers = {"X-Forwarded-For": addresses.take()}
        captured, answer = capture.post("/api/trackables/lookup", {"code": code}, headers, 200)
        if answer["found"] is not found:
            raise SystemExit(f"capture: lookup found={answer['found']}, expected {found}")
        statements.append(captured)
    capture.close()
    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:  # the replay writes these rows again
        cursor.execute(
            "DELETE FROM trackable_access_sessions WHERE created_utc >= %s", (capture_started,)
        )
    connection.commit()

    requests = [
        http_request(
            port,
            "POST",
            "/api/trackables/lookup",
            orjson.dumps({"code": code}),
            (f"X-Forwarded-For: {addresses.take()}",),
        )
        for code in api_codes
    ]
    health = http_request(port, "GET", "/healthz")
    bodies: list[bytes] = []

    def api(number: int) -> float:
        elapsed, body = send(port, requests[number], 200)
        bodies.append(body)
        return elapsed

    sides = {
        "api": api,
        "bare": lambda number: replay(connection, statements[number]),
        "http": lambda number: send(port, health, 200)[0],
    }
    with plain_driver():  # the floors are plain psycopg2, as a plain client runs it
        results = interleaved(sides, count)
    connection.close()
    wrong = [body for body in bodies if orjson.loads(body)["found"] is not found]
    if wrong:
        raise SystemExit(f"{len(wrong)} API lookups answered found={not found}: {wrong[0]!r}")
    return results, meta(statements, capture.timings[1:])


def meta(
    statements: list[list[tuple[str, object]]], timings: list[tuple[float, float]]
) -> dict[str, float]:
    """Statements per captured request, and the in-process p50s (ms): the request and its
    time waiting on the driver."""
    return {
        "statements": statistics.median(len(captured) for captured in statements),
        "in_process": statistics.median(total for total, _ in timings) * 1000,
        "driver": statistics.median(driver for _, driver in timings) * 1000,
    }


def group_scenario(
    url: str, port: int, *, count: int, size: int, tag: str
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Group creations through HTTP against the captured statements of CAPTURED_GROUPS
    equal creations replayed in turn (each group deleted again, untimed, after its
    replay) and the plain single-row writes."""
    import orjson
    import psycopg2

    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User

    rounds = count + WARMUP
    capture = Capture(url)
    user = db.session.scalars(db.select(User).order_by(User.user_name)).first()
    if user is None:
        raise SystemExit("no seeded user")
    user_id, token = str(user.id), issue_access_token(user)
    settings = code_settings(capture.app)
    base_url = capture.app.config["PUBLIC_BASE_URL"].rstrip("/")
    bearer = {"Authorization": f"Bearer {token}"}
    statements, group_ids = [], []
    for number in range(min(rounds, CAPTURED_GROUPS) + 1):  # the first: dialect set-up
        body = {"name": f"Bench {tag} replay {number}", "trackableCount": size}
        captured, answer = capture.post("/api/trackables/groups", body, bearer, 201)
        group_ids.append(answer["trackableGroupId"])
        if number:
            statements.append(captured)
    capture.close()
    connection = psycopg2.connect(url)
    delete_groups(connection, group_ids)  # the replay writes these rows again

    def bare(number: int) -> float:
        elapsed = replay(connection, statements[number % len(statements)])
        delete_groups(connection, [group_ids[1 + number % len(statements)]])
        return elapsed

    requests = [
        http_request(
            port,
            "POST",
            "/api/trackables/groups",
            orjson.dumps({"name": f"Bench {tag} api {number}", "trackableCount": size}),
            (f"Authorization: Bearer {token}",),
        )
        for number in range(rounds)
    ]
    sides = {
        "api": lambda number: send(port, requests[number], 201)[0],
        "bare": bare,
        "plain": lambda number: plain_group(
            connection, settings, base_url, user_id, f"Bench {tag} plain {number}", size
        ),
    }
    with plain_driver():  # the floors are plain psycopg2, as a plain client runs it
        results = interleaved(sides, count)
    connection.close()
    return results, meta(statements, capture.timings[1:])


def delete_groups(connection: Any, group_ids: list[str]) -> None:
    """Delete groups and their trackables (their codes go with them)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM trackables WHERE group_id = ANY(%s::uuid[])", (group_ids,))
        cursor.execute("DELETE FROM trackable_groups WHERE id = ANY(%s::uuid[])", (group_ids,))
    connection.commit()


def clean_up(url: str, tag: str, started: datetime) -> None:
    """Delete what this run created, so every run starts from the seeded state."""
    import psycopg2

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM trackable_groups WHERE slug LIKE %s", (f"bench_{tag}_%",))
        groups = [str(row[0]) for row in cursor.fetchall()]
    delete_groups(connection, groups)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM trackable_access_sessions WHERE created_utc >= %s", (started,))
        cursor.execute("DELETE FROM budget_spends WHERE spent_utc >= %s", (started,))
    connection.commit()
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(
            "VACUUM (ANALYZE) trackables, trackable_codes, trackable_groups, "
            "trackable_access_sessions, budget_spends"
        )
    connection.close()


def lookup_codes(url: str, settings: Any, rounds: int) -> tuple[list[str], list[str]]:
    """Real secrets (random order) and unknown well-formed ones, two rounds' worth each."""
    import psycopg2

    from app.services.trackables.codes.formats import code_hash, new_secret_code

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM bench_secret_sample")
        known = [row[0] for row in cursor.fetchall()]
        random.shuffle(known)
        hits = [known[number % len(known)] for number in range(2 * rounds)]
        misses: list[str] = []
        for _ in range(10):  # an unknown code is all but certain on the first draw
            drawn = [new_secret_code(settings) for _ in range(2 * rounds - len(misses))]
            hashes = {code_hash(settings, code): code for code in drawn}
            cursor.execute(
                "SELECT code_hash FROM trackable_codes WHERE code_hash = ANY(%s)", (list(hashes),)
            )
            taken = {row[0] for row in cursor.fetchall()}
            misses += [code for key, code in hashes.items() if key not in taken]
            if len(misses) >= 2 * rounds:
                break
    connection.close()
    return hits, misses


def summary(values: list[float]) -> tuple[float, float]:
    return statistics.median(values) * 1000, percentile(values, 0.95) * 1000


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    settings = code_settings(app_config(url))
    with plain_driver():  # COPY needs the app's wait callback off
        seed(url, settings, trackables=args.trackables, users=args.users)
    hits, misses = lookup_codes(url, settings, args.requests + WARMUP)
    tag = secrets.token_hex(4)
    started = datetime.now(UTC)
    port = args.port or free_port()
    server = start_server(url, port)
    addresses = Addresses()
    results: dict[str, tuple[dict[str, list[float]], dict[str, float]]] = {}
    try:
        scenarios = args.scenarios.split(",")
        if "hit" in scenarios:
            results["hit"] = lookup_scenario(
                url, port, hits, found=True, count=args.requests, addresses=addresses
            )
        if "miss" in scenarios:
            results["miss"] = lookup_scenario(
                url, port, misses, found=False, count=args.requests, addresses=addresses
            )
        if "group" in scenarios:
            results["group"] = group_scenario(
                url, port, count=args.group_requests, size=args.group_size, tag=tag
            )
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        clean_up(url, tag, started)
    print(
        f"\n{args.trackables:,} trackables; {args.requests} lookups per scenario, "
        f"{args.group_requests} groups of {args.group_size} (ms)"
    )
    print(f"{'scenario':<8} {'side':<6} {'p50':>8} {'p95':>8} {'ratio':>6}")
    for name, (sides, about) in results.items():
        floor = "plain" if name == "group" else "bare"
        api_p50 = summary(sides["api"])[0]
        for side, values in sides.items():
            p50, p95 = summary(values)
            print(f"{name:<8} {side:<6} {p50:8.2f} {p95:8.2f} {api_p50 / p50:6.2f}")
        ratio = api_p50 / summary(sides[floor])[0]
        verdict = "ok" if ratio <= TARGETS[name] else "MISSED"
        print(f"{name:<8} api / {floor} p50 = {ratio:.2f} (target <= {TARGETS[name]}) {verdict}")
        if "http" in sides:  # the replay as a service would answer it: SQL plus a request
            served = [b + h for b, h in zip(sides["bare"], sides["http"], strict=True)]
            print(f"{name:<8} api / (bare + http) p50 = {api_p50 / summary(served)[0]:.2f}")
        print(
            f"{name:<8} captured in-process: {about['statements']:.0f} statements, request "
            f"p50 {about['in_process']:.2f}, of it waiting on the driver {about['driver']:.2f}"
        )


if __name__ == "__main__":
    main()
