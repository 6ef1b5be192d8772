#!/usr/bin/env python3
"""Benchmark: a day of the product in minutes, a mixed load at 32 and 64 connections
against 4 sync workers on PostgreSQL, with the discovery floor beside it.

    .venv/bin/python bench/mixed_load.py                          # 60 s per level
    .venv/bin/python bench/mixed_load.py --seconds 120 --connections 64
    .venv/bin/python bench/mixed_load.py --py-spy /path/to/py-spy # and a profiled run

1. Creates and migrates its own database (`mixed_load`), seeds it once with COPY: users,
   their categories and 1,000,000 notes as bench/notes_discovery.py does, and 100,000
   trackables with their code rows as bench/trackables.py does, every plain secret kept
   in a bench-only table (`bench_trackable_secrets`) so that lookups type real codes.
2. Serves the API with gunicorn and the project's gunicorn.conf.py (4 sync workers,
   ACCESS_LOG=off, everything else at its default but the settings printed at the start),
   and the discovery floor (bench/floor_app.py under plain gunicorn, `-c /dev/null`, 4
   sync workers).
3. At each connection count: the mix (MIX below) against the API for --seconds; then the
   discovery requests of the same mix alone (each connection the same sequence as in the
   mix), against the floor and against the API, --discovery-seconds each, the order
   alternating between levels. Every simulated connection opens a new TCP connection per
   request (sync workers close each one) and sends an X-Forwarded-For of its own client.
4. Prints, per run: requests per second, p50/p95/p99 per route template and the mean time
   the app itself spent on it (its own metrics, /metrics), every error (an unexpected
   status, a refused or reset connection, a timeout), and the CPU time of each side: the
   gunicorn processes, the PostgreSQL backends of the bench database, this load generator,
   and the machine as a whole. Then checks that every acknowledged write is in the database
   as acknowledged, and compares discovery with the floor.
5. Before the servers start: each kind of request a few times in-process (Flask's test
   client), with the statements and transactions it sends counted at the driver.
6. With --py-spy, one more mixed run with py-spy recording every API worker (samples
   holding the GIL); prints where their time went per kind of request and, outside the
   view functions, per part of a request (the profile stays in a temporary directory).

It asserts nothing and bounds every loop; the run deletes what it wrote before it ends.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import ipaddress
import os
import random
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
from discovery_floor import gunicorn
from events_fanout import plain_driver
from notes_discovery import LANGUAGES, cities, copy_rows, ensure_database, percentile, seed
from trackables import free_port, seed_groups, trackable_rows

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# --- the day: shares of the requests, per 1,000 --------------------------------------------

MIX: dict[str, int] = {
    # the map, anonymous
    "bounds": 240,  # GET /api/notes/public/bounds: city 65 %, region 25 %, world 10 %
    "nearby": 130,  # GET /api/notes/public/nearby
    # public pages and trackables, anonymous
    "note_page": 60,  # GET /api/public/notes/{note_id}
    "note_comments": 20,  # GET /api/public/notes/{note_id}/comments
    "trackable_page": 40,  # GET /{lang}/trackables/{public_code}: the website's page
    "trackable": 20,  # GET /api/trackables/{trackable_id}
    "journey": 20,  # GET /api/trackables/{trackable_id}/journey
    "lookup": 50,  # POST /api/trackables/lookup: a real secret code, from a new client
    "lookup_miss": 5,  # the same with a mistyped code: counted apart
    # signed-in reads
    "my_notes": 80,  # GET /api/notes/mine?limit=50
    "account": 40,  # GET /api/auth/manage/info
    "unread": 50,  # GET /api/notifications/unread-count
    "my_categories": 20,  # GET /api/categories/mine
    "my_trackables": 15,  # GET /api/trackables/mine?limit=50
    # note writes, signed in
    "note_create": 50,  # POST /api/notes/mine
    "note_update": 30,  # POST /api/notes/mine/{note_id}/move (a new title)
    "note_delete": 15,  # DELETE /api/notes/mine/{note_id}
    # a finder's activity: half signed in, half anonymous with the secret code
    "comment": 25,  # POST /api/trackables/{trackable_id}/comments
    "stop": 20,  # POST /api/trackables/{trackable_id}/journey-stops
    # the phone app's sync
    "pull": 50,  # POST /api/sync/pull from the device's last serverSyncUtc (first: all)
    "push": 15,  # POST /api/sync/push: 1-20 notes (1 push in 20: 100), new, edited, deleted
    # photos
    "upload": 5,  # POST /api/images/notes/{note_id}: a JPEG, 1 in 10 of 12 megapixels
}
DISCOVERY = ("bounds", "nearby")
ROUTES: dict[str, str] = {
    "bounds": "GET /api/notes/public/bounds",
    "nearby": "GET /api/notes/public/nearby",
    "note_page": "GET /api/public/notes/{note_id}",
    "note_comments": "GET /api/public/notes/{note_id}/comments",
    "trackable_page": "GET /{lang}/trackables/{public_code}",
    "trackable": "GET /api/trackables/{trackable_id}",
    "journey": "GET /api/trackables/{trackable_id}/journey",
    "lookup": "POST /api/trackables/lookup",
    "lookup_miss": "POST /api/trackables/lookup (deliberate miss)",
    "my_notes": "GET /api/notes/mine",
    "account": "GET /api/auth/manage/info",
    "unread": "GET /api/notifications/unread-count",
    "my_categories": "GET /api/categories/mine",
    "my_trackables": "GET /api/trackables/mine",
    "note_create": "POST /api/notes/mine",
    "note_update": "POST /api/notes/mine/{note_id}/move",
    "note_delete": "DELETE /api/notes/mine/{note_id}",
    "comment": "POST /api/trackables/{trackable_id}/comments",
    "stop": "POST /api/trackables/{trackable_id}/journey-stops",
    "pull": "POST /api/sync/pull",
    "push": "POST /api/sync/push",
    "upload": "POST /api/images/notes/{note_id}",
}
# The view functions, for the profile's summary (py-spy sees functions, not paths).
VIEWS: dict[str, str] = {
    "list_public_notes_in_bounds": "bounds",
    "list_public_notes_nearby": "nearby",
    "get_public_note": "note_page",
    "list_note_comments": "note_comments",
    "public_page": "trackable_page",
    "get_trackable": "trackable",
    "get_trackable_journey": "journey",
    "lookup_trackable": "lookup",
    "list_my_notes": "my_notes",
    "get_account_info": "account",
    "count_unread_notifications": "unread",
    "list_categories": "my_categories",
    "list_my_trackables": "my_trackables",
    "create_my_note": "note_create",
    "move_my_note": "note_update",
    "delete_my_note": "note_delete",
    "create_trackable_comment": "comment",
    "create_journey_stop": "stop",
    "pull_changes": "pull",
    "push_changes": "push",
    "upload_note_image": "upload",
}

# Photos uploaded: phone-sized ones (what a phone app sends after scaling down) and, one
# upload in ten, a camera's full 12 megapixels.
PHONE_PHOTOS = ((1600, 1200), (1920, 1080), (1080, 1920), (2048, 1536), (1440, 1080))
FULL_PHOTOS = ((4000, 3000), (3000, 4000))
FULL_SHARE = 0.1

# The settings the bench gives the API. No rate limit or budget is raised: every client
# has an address of its own (X-Forwarded-For from the benchmarking range, 198.18.0.0/15,
# which the app believes only from TRUSTED_PROXIES), as many people would.
BENCH_CODE_KEY = "mixed-load-bench-only-code-key-not-a-secret"  # a seed any checkout can serve
API_SETTINGS = {
    "WEB_CONCURRENCY": "4",
    "ACCESS_LOG": "off",
    "TRUSTED_PROXIES": "127.0.0.1",
    "TRACKABLE_CODE_KEY": BENCH_CODE_KEY,
}
USERS_RANGE = ipaddress.ip_network("198.18.0.0/16")  # one address per signed-in user
VISITORS_RANGE = ipaddress.ip_network("198.19.0.0/16")  # anonymous visitors, drawn anew
TIMEOUT_SECONDS = 60.0  # a request not answered by then is an error (gunicorn kills at 30)
MAX_REQUESTS_PER_SECOND = 2000  # per connection: the bound of every request loop
SECRETS_TABLE = "bench_trackable_secrets"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="mixed_load")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--trackables", type=int, default=100_000)
    parser.add_argument("--signed-in", type=int, default=1024, help="accounts that sign in")
    parser.add_argument("--connections", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--seconds", type=float, default=60, help="the mix, per level")
    parser.add_argument(
        "--discovery-seconds", type=float, default=20, help="discovery alone, per side"
    )
    parser.add_argument(
        "--warmup", type=int, default=600, help="answers of the mix before measuring"
    )
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--py-spy", help="py-spy to profile the API workers with (as root)")
    parser.add_argument("--profile-seconds", type=float, default=30)
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


# --- seeding -------------------------------------------------------------------------------


def bench_app(url: str, **overrides: Any) -> Any:
    """The app in-process, configured as the server is (for seeding and tokens)."""
    from app import create_app

    return create_app(
        {
            "SQLALCHEMY_DATABASE_URI": url,
            "TRACKABLE_CODE_KEY": BENCH_CODE_KEY,
            "RATELIMIT_ENABLED": False,
            **overrides,
        }
    )


def seed_trackables(url: str, count: int) -> None:
    """`count` trackables of the seeded users (trackables.py's rows: a fifth in groups of
    ten, 70 % activated, 15 % visible once accessed) and every plain secret, once."""
    import psycopg2

    from app.services.trackables.codes.formats import CodeSettings

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM trackables")
        existing = cursor.fetchone()[0]
        cursor.execute(f"SELECT to_regclass('{SECRETS_TABLE}') IS NOT NULL")
        kept = cursor.fetchone()[0]
    if existing >= count and kept:
        print(f"seed: {existing:,} trackables already there")
        connection.close()
        return
    if existing:
        raise SystemExit(f"{existing:,} trackables but no complete seed: run with --reseed")
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT CAST(id AS TEXT) FROM users ORDER BY user_name")
        user_ids = [row[0] for row in cursor.fetchall()]
    rng = random.Random(20261126)
    settings = CodeSettings.from_config(bench_app(url).config)
    with plain_driver():  # COPY
        group_ids = seed_groups(connection, count // 5 // 10, user_ids, rng)
        items, code_rows, plain = trackable_rows(rng, settings, count, user_ids, group_ids)
        copy_rows(connection, "trackables", iter(items))
        copy_rows(connection, "trackable_codes", iter(code_rows))
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE TABLE {SECRETS_TABLE} (trackable_id uuid PRIMARY KEY, secret text)"
            )
        copy_rows_plain(connection, SECRETS_TABLE, plain)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
    connection.close()
    print(f"seed: {count:,} trackables in {time.perf_counter() - started:.0f} s")


def copy_rows_plain(connection: Any, table: str, rows: list[tuple[str, str]]) -> None:
    text = "".join(f"{first}\t{second}\n" for first, second in rows)
    with connection.cursor() as cursor:
        cursor.copy_expert(f"COPY {table} FROM STDIN", io.StringIO(text))
    connection.commit()


# --- what the simulated people use ---------------------------------------------------------


@dataclass
class TrackableRef:
    trackable_id: str
    public_code: str
    secret: str
    activated: bool
    visible: bool  # AlwaysVisibleToEveryone


@dataclass
class User:
    """A signed-in account and its phone: the notes it wrote in this run (id -> the
    updatedUtc it last saw, None when a push changed it since), its last pull's stamp."""

    user_id: str
    token: str
    address: str
    category_id: str  # its "Notes" category in English, for pushed notes
    device_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    notes: dict[str, str | None] = field(default_factory=dict)
    last_sync: str | None = None


@dataclass
class Photo:
    width: int
    height: int
    body: bytes  # the multipart body: one part `file`
    full: bool


@dataclass
class Ledger:
    """Every acknowledged write, as acknowledged: note id -> (title, deleted); comment id
    -> (trackable id, body); stop id -> (trackable id, latitude, longitude); image id ->
    (note id, width, height). A write whose outcome is unknown (an error) makes its note
    `uncertain`, left out of the check."""

    notes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    comments: dict[str, tuple[str, str]] = field(default_factory=dict)
    stops: dict[str, tuple[str, float, float]] = field(default_factory=dict)
    images: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)
    acknowledged: Counter[str] = field(default_factory=Counter)
    touched_trackables: set[str] = field(default_factory=set)


@dataclass
class World:
    places: list[tuple[float, float]]
    weights: list[float]  # cumulative, as random.choices takes them
    public_notes: list[str]
    trackables: list[TrackableRef]
    activated: list[TrackableRef]
    visible: list[TrackableRef]
    users: list[User]
    photos: list[Photo]
    ledger: Ledger = field(default_factory=Ledger)
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    counter: Iterator[int] = field(default_factory=lambda: iter(range(10**9)))


def load_world(url: str, signed_in: int) -> World:
    import psycopg2

    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User as Account

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT CAST(id AS TEXT) FROM notes TABLESAMPLE SYSTEM (1) REPEATABLE (7) "
            "WHERE is_publicly_discoverable LIMIT 5000"
        )
        public_notes = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT CAST(t.id AS TEXT), t.public_code, s.secret, t.activated_utc IS NOT NULL,"  # noqa: S608
            f" t.visibility = 'AlwaysVisibleToEveryone' FROM {SECRETS_TABLE} s"
            " JOIN trackables t ON t.id = s.trackable_id ORDER BY t.id LIMIT 50000"
        )
        found = [TrackableRef(*row) for row in cursor.fetchall()]
        cursor.execute(
            "SELECT CAST(u.id AS TEXT), CAST(c.id AS TEXT) FROM users u JOIN categories c"
            " ON c.owner_user_id = u.id AND c.content_language = 'en'"
            " AND c.parent_category_id IS NULL AND NOT c.is_deleted"
            " ORDER BY u.user_name LIMIT %s",
            (signed_in,),
        )
        accounts = cursor.fetchall()
    connection.close()
    app = bench_app(url)
    users = []
    with app.app_context():
        for number, (user_id, category_id) in enumerate(accounts):
            account = db.session.get(Account, uuid.UUID(user_id))
            address = str(USERS_RANGE.network_address + 1 + number)
            users.append(User(user_id, issue_access_token(account), address, category_id))
        db.engine.dispose()
    places = [(lat, lon) for lat, lon, _ in cities()]
    weights = list(accumulate(population**0.5 for _, _, population in cities()))
    activated = [t for t in found if t.activated]
    return World(
        places=places,
        weights=weights,
        public_notes=public_notes,
        trackables=found,
        activated=activated,
        visible=[t for t in activated if t.visible],
        users=users,
        photos=make_photos(),
    )


BOUNDARY = "mixedloadboundary7c1f"


def make_photos() -> list[Photo]:
    from images_pipeline import photo_like

    photos = []
    for sizes, full in ((PHONE_PHOTOS, False), (FULL_PHOTOS, True)):
        for width, height in sizes:
            buffer = io.BytesIO()
            photo_like(width, height).save(buffer, "JPEG", quality=88 if full else 82)
            head = (
                f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="photo.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'
            ).encode()
            body = head + buffer.getvalue() + f"\r\n--{BOUNDARY}--\r\n".encode()
            photos.append(Photo(width, height, body, full))
    return photos


# --- the client ----------------------------------------------------------------------------


class Exchange(asyncio.Protocol):
    """One HTTP/1.1 request on a new connection: writes it, reads the status line, the
    headers and exactly Content-Length bytes of body (or to the end without one)."""

    def __init__(self, chunks: list[bytes], done: asyncio.Future[tuple[int, bytes]]) -> None:
        self.chunks, self.done = chunks, done
        self.buffer = bytearray()
        self.head_end = -1
        self.length: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        transport.writelines(self.chunks)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.head_end < 0:
            self.head_end = self.buffer.find(b"\r\n\r\n")
            if self.head_end < 0:
                return
            head = bytes(self.buffer[: self.head_end]).lower()
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                end = head.find(b"\r\n", at + 2)
                self.length = int(head[at + 17 : end if end >= 0 else None])
        if self.length is not None and len(self.buffer) - self.head_end - 4 >= self.length:
            self.finish()

    def finish(self) -> None:
        if self.done.done():
            return
        start = self.head_end + 4
        end = None if self.length is None else start + self.length
        try:
            status = int(self.buffer[9:12])
        except ValueError:
            self.done.set_exception(ConnectionError("no HTTP status line"))
            return
        self.done.set_result((status, bytes(self.buffer[start:end])))
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.done.done():
            return
        if self.head_end >= 0 and self.length is None:
            self.finish()  # no Content-Length: the body ends with the connection
        else:
            self.done.set_exception(exc or ConnectionError("closed before the whole answer"))


async def exchange(port: int, chunks: list[bytes]) -> tuple[int, bytes]:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[tuple[int, bytes]] = loop.create_future()
    transport = None
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            transport, _ = await loop.create_connection(
                lambda: Exchange(chunks, done), "127.0.0.1", port
            )
            return await done
    finally:
        if transport is not None:
            transport.close()


Check = Callable[[int, bytes], str | None]


@dataclass
class Job:
    kind: str
    chunks: list[bytes]
    check: Check  # the answer's problem (None: as expected); keeps what a write acknowledged
    lost: Callable[[], None] = lambda: None  # no answer: the write's outcome is unknown


def request(
    method: str,
    path: str,
    address: str,
    *,
    token: str | None = None,
    body: bytes = b"",
    content_type: str = "application/json",
) -> list[bytes]:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"X-Forwarded-For: {address}"]
    if token:
        lines.append(f"Authorization: Bearer {token}")
    if body or method in ("POST", "PUT"):
        lines += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    lines.append("Connection: close")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode()
    return [head, body] if body else [head]


def expect(status: int) -> Check:
    def check(got: int, body: bytes) -> str | None:
        return None if got == status else problem(got, body)

    return check


def problem(status: int, body: bytes) -> str:
    """An unexpected answer, short: the status and the problem's `code` if any."""
    try:
        code = orjson.loads(body).get("code")
    except (orjson.JSONDecodeError, AttributeError):
        code = None
    return f"HTTP {status}" + (f" {code}" if code else "")


class Client:
    """One simulated connection: a request at a time, drawn from the mix (or, `discovery`,
    from its discovery requests alone: the same sequence the mix would send)."""

    def __init__(self, world: World, users: list[User], seed: str, discovery: bool) -> None:
        self.world, self.users, self.only_discovery = world, users, discovery
        self.rng = random.Random(seed)
        self.maps = random.Random(seed + "/discovery")  # discovery's own sequence
        kinds = [kind for kind in MIX if kind not in DISCOVERY] + ["discovery"]
        self.kinds = kinds
        shares = [MIX[kind] for kind in kinds[:-1]] + [sum(MIX[kind] for kind in DISCOVERY)]
        self.weights = list(accumulate(shares))

    def next(self) -> Job:
        if self.only_discovery:
            return self.discovery()
        kind = self.rng.choices(self.kinds, cum_weights=self.weights)[0]
        return getattr(self, kind)()  # type: ignore[no-any-return]

    # helpers

    def visitor(self, rng: random.Random | None = None) -> str:
        rng = rng or self.rng
        return str(VISITORS_RANGE.network_address + rng.randrange(1, VISITORS_RANGE.num_addresses))

    def place(self, rng: random.Random, spread: float = 0.05) -> tuple[float, float]:
        latitude, longitude = rng.choices(self.world.places, cum_weights=self.world.weights)[0]
        latitude = max(-89.9, min(89.9, rng.gauss(latitude, spread)))
        longitude = (rng.gauss(longitude, spread * 1.6) + 180.0) % 360.0 - 180.0
        return round(latitude, 5), round(longitude, 5)

    def user(self) -> User:
        return self.rng.choice(self.users)

    def get(self, kind: str, path: str, user: User | None = None) -> Job:
        address = user.address if user else self.visitor()
        token = user.token if user else None
        return Job(kind, request("GET", path, address, token=token), expect(200))

    # the map

    def discovery(self) -> Job:
        rng = self.maps
        language = rng.choice(LANGUAGES) if rng.random() < 0.3 else None
        latitude, longitude = self.place(rng)
        if rng.random() < MIX["bounds"] / (MIX["bounds"] + MIX["nearby"]):
            kind, size = "bounds", rng.random()
            if size < 0.1:
                window = (-90.0, -180.0, 90.0, 180.0)
            else:
                half = rng.uniform(0.02, 0.1) if size < 0.75 else rng.uniform(0.5, 3.0)
                window = (
                    max(-90.0, latitude - half),
                    max(-180.0, longitude - half * 1.6),
                    min(90.0, latitude + half),
                    min(180.0, longitude + half * 1.6),
                )
            names = ("minLatitude", "minLongitude", "maxLatitude", "maxLongitude")
            query: dict[str, Any] = {n: f"{v:.5f}" for n, v in zip(names, window, strict=True)}
            path = "/api/notes/public/bounds?"
        else:
            kind = "nearby"
            query = {"latitude": latitude, "longitude": longitude}
            if rng.random() < 0.3:
                query["radiusKm"] = rng.choice((1, 2, 10, 25))
            path = "/api/notes/public/nearby?"
        if language:
            query["contentLanguage"] = language
        chunks = request("GET", path + urlencode(query), self.visitor(rng))
        return Job(kind, chunks, expect(200))

    # public pages and trackables

    def note_page(self) -> Job:
        note_id = self.rng.choice(self.world.public_notes)
        return self.get("note_page", f"/api/public/notes/{note_id}")

    def note_comments(self) -> Job:
        note_id = self.rng.choice(self.world.public_notes)
        return self.get("note_comments", f"/api/public/notes/{note_id}/comments")

    def trackable_page(self) -> Job:
        found = self.rng.choice(self.world.visible)
        language = self.rng.choice(("en", "de"))
        return self.get("trackable_page", f"/{language}/trackables/{found.public_code}")

    def trackable(self) -> Job:
        found = self.rng.choice(self.world.visible)
        return self.get("trackable", f"/api/trackables/{found.trackable_id}")

    def journey(self) -> Job:
        found = self.rng.choice(self.world.visible)
        return self.get("journey", f"/api/trackables/{found.trackable_id}/journey?limit=50")

    def lookup(self) -> Job:
        found = self.rng.choice(self.world.trackables)
        code = found.secret.lower() if self.rng.random() < 0.2 else found.secret  # typed
        body = orjson.dumps({"code": code})
        chunks = request("POST", "/api/trackables/lookup", self.visitor(), body=body)

        def check(status: int, answer: bytes) -> str | None:
            if status != 200:
                return problem(status, answer)
            result = orjson.loads(answer)
            if not result["found"] or result["trackableId"] != found.trackable_id:
                return f"a real code answered found={result['found']}"
            return None

        return Job("lookup", chunks, check)

    def lookup_miss(self) -> Job:
        from app.services.trackables.codes.formats import ALPHABET

        code = "LN" + "".join(self.rng.choices(ALPHABET, k=8))
        body = orjson.dumps({"code": code})
        chunks = request("POST", "/api/trackables/lookup", self.visitor(), body=body)

        def check(status: int, answer: bytes) -> str | None:
            if status != 200:
                return problem(status, answer)
            return "an unknown code was found" if orjson.loads(answer)["found"] else None

        return Job("lookup_miss", chunks, check)

    # signed-in reads

    def my_notes(self) -> Job:
        return self.get("my_notes", "/api/notes/mine?limit=50", self.user())

    def account(self) -> Job:
        return self.get("account", "/api/auth/manage/info", self.user())

    def unread(self) -> Job:
        return self.get("unread", "/api/notifications/unread-count", self.user())

    def my_categories(self) -> Job:
        return self.get("my_categories", "/api/categories/mine", self.user())

    def my_trackables(self) -> Job:
        return self.get("my_trackables", "/api/trackables/mine?limit=50", self.user())

    # note writes

    def title(self, what: str) -> str:
        return f"{what} {self.world.tag} {next(self.world.counter)}"

    def note_create(self, user: User | None = None) -> Job:
        user = user or self.user()
        ledger = self.world.ledger
        title = self.title("Mixed note")
        latitude, longitude = self.place(self.rng)
        note = {
            "title": title,
            "body": "Benches by the river, a kiosk and shade in the afternoon.",
            "latitude": latitude,
            "longitude": longitude,
            "visibility": self.rng.choice(("Public", "Private")),
            "contentLanguage": self.rng.choice(LANGUAGES),
        }
        body = orjson.dumps(note)
        chunks = request("POST", "/api/notes/mine", user.address, token=user.token, body=body)

        def check(status: int, answer: bytes) -> str | None:
            if status != 201:
                return problem(status, answer)
            made = orjson.loads(answer)
            user.notes[made["noteId"]] = made["updatedUtc"]
            ledger.notes[made["noteId"]] = (title, False)
            ledger.acknowledged["note_create"] += 1
            return None

        return Job("note_create", chunks, check)

    def own_note(self, user: User) -> str | None:
        return self.rng.choice(list(user.notes)) if user.notes else None

    def uncertain(self, user: User, *note_ids: str) -> Callable[[], None]:
        def forget() -> None:
            for note_id in note_ids:
                user.notes.pop(note_id, None)
                self.world.ledger.uncertain.add(note_id)

        return forget

    def note_update(self) -> Job:
        user = self.user()
        note_id = self.own_note(user)
        if note_id is None:
            return self.note_create(user)
        title = self.title("Mixed edit")
        body = orjson.dumps({"title": title})
        path = f"/api/notes/mine/{note_id}/move"
        chunks = request("POST", path, user.address, token=user.token, body=body)
        forget = self.uncertain(user, note_id)

        def check(status: int, answer: bytes) -> str | None:
            if status != 200:
                forget()
                return problem(status, answer)
            user.notes[note_id] = orjson.loads(answer)["updatedUtc"]
            self.world.ledger.notes[note_id] = (title, False)
            self.world.ledger.acknowledged["note_update"] += 1
            return None

        return Job("note_update", chunks, check, forget)

    def note_delete(self) -> Job:
        user = self.user()
        note_id = self.own_note(user)
        if note_id is None:
            return self.note_create(user)
        chunks = request("DELETE", f"/api/notes/mine/{note_id}", user.address, token=user.token)
        forget = self.uncertain(user, note_id)

        def check(status: int, answer: bytes) -> str | None:
            if status != 204:
                forget()
                return problem(status, answer)
            user.notes.pop(note_id, None)
            title = self.world.ledger.notes.get(note_id, ("", False))[0]
            self.world.ledger.notes[note_id] = (title, True)
            self.world.ledger.acknowledged["note_delete"] += 1
            return None

        return Job("note_delete", chunks, check, forget)

    # a finder's activity

    def finder(self) -> tuple[TrackableRef, User | None, dict[str, Any]]:
        """Half signed in (a trackable anyone may see), half anonymous with the code."""
        if self.rng.random() < 0.5:
            return self.rng.choice(self.world.visible), self.user(), {}
        found = self.rng.choice(self.world.activated)
        return found, None, {"accessCode": found.secret, "displayName": "Finder"}

    def comment(self) -> Job:
        found, user, extra = self.finder()
        text = f"Found it by the bridge ({self.world.tag} {next(self.world.counter)})."
        body = orjson.dumps({"body": text, "clientMutationId": str(uuid.uuid4()), **extra})
        path = f"/api/trackables/{found.trackable_id}/comments"
        address = user.address if user else self.visitor()
        chunks = request("POST", path, address, token=user.token if user else None, body=body)
        ledger = self.world.ledger

        def check(status: int, answer: bytes) -> str | None:
            if status != 201:
                return problem(status, answer)
            made = orjson.loads(answer)
            ledger.comments[made["trackableCommentId"]] = (found.trackable_id, text)
            ledger.acknowledged["comment"] += 1
            return None

        return Job("comment", chunks, check)

    def stop(self) -> Job:
        found, user, extra = self.finder()
        latitude, longitude = self.place(self.rng)
        precision = self.rng.choice(("exact", "exact", "about1km", "about10km"))
        stop = {"latitude": latitude, "longitude": longitude, "precision": precision}
        body = orjson.dumps({**stop, "clientMutationId": str(uuid.uuid4()), **extra})
        path = f"/api/trackables/{found.trackable_id}/journey-stops"
        address = user.address if user else self.visitor()
        chunks = request("POST", path, address, token=user.token if user else None, body=body)
        ledger = self.world.ledger
        ledger.touched_trackables.add(found.trackable_id)

        def check(status: int, answer: bytes) -> str | None:
            if status != 201:
                return problem(status, answer)
            made = orjson.loads(answer)
            point = (found.trackable_id, made["latitude"], made["longitude"])
            ledger.stops[made["journeyStopId"]] = point
            ledger.acknowledged["stop"] += 1
            return None

        return Job("stop", chunks, check)

    # sync

    def pull(self) -> Job:
        user = self.user()
        body = orjson.dumps({"lastSyncUtc": user.last_sync})
        chunks = request("POST", "/api/sync/pull", user.address, token=user.token, body=body)

        def check(status: int, answer: bytes) -> str | None:
            if status != 200:
                return problem(status, answer)
            pulled = orjson.loads(answer)
            user.last_sync = pulled["serverSyncUtc"]
            for record in pulled["userNotes"]:
                if record["noteId"] in user.notes and not record.get("isDeleted"):
                    user.notes[record["noteId"]] = record["updatedUtc"]  # a new base
            return None

        return Job("pull", chunks, check)

    def push(self) -> Job:
        user = self.user()
        count = 100 if self.rng.random() < 0.05 else self.rng.randint(1, 20)
        known = [note_id for note_id, base in user.notes.items() if base is not None]
        self.rng.shuffle(known)
        records: list[dict[str, Any]] = []
        effects: dict[str, tuple[str, bool]] = {}
        for _ in range(count):
            roll, tag = self.rng.random(), str(uuid.uuid4())
            if roll < 0.3 and known:
                note_id = known.pop()
                base = user.notes[note_id]
                if roll < 0.1:
                    records.append(
                        {
                            "noteId": note_id,
                            "isDeleted": True,
                            "updatedUtc": base,
                            "clientMutationId": tag,
                        }
                    )
                    effects[note_id] = (self.world.ledger.notes.get(note_id, ("", False))[0], True)
                    continue
                title = self.title("Pushed edit")
                records.append(
                    {"noteId": note_id, "title": title, "updatedUtc": base, "clientMutationId": tag}
                )
                effects[note_id] = (title, False)
                continue
            note_id, title = str(uuid.uuid4()), self.title("Pushed note")
            latitude, longitude = self.place(self.rng)
            records.append(
                {
                    "noteId": note_id,
                    "categoryId": user.category_id,
                    "title": title,
                    "body": "Written offline on the trail.",
                    "latitude": latitude,
                    "longitude": longitude,
                    "visibility": "Private",
                    "clientMutationId": tag,
                    "updatedUtc": None,
                }
            )
            effects[note_id] = (title, False)
        body = orjson.dumps({"deviceId": user.device_id, "notes": records})
        chunks = request("POST", "/api/sync/push", user.address, token=user.token, body=body)
        forget = self.uncertain(user, *effects)
        ledger = self.world.ledger

        def check(status: int, answer: bytes) -> str | None:
            if status != 200:
                forget()
                return problem(status, answer)
            result = orjson.loads(answer)
            applied = set(result["appliedNoteIds"])
            for note_id, (title, deleted) in effects.items():
                if note_id not in applied:
                    self.uncertain(user, note_id)()
                    continue
                ledger.notes[note_id] = (title, deleted)
                ledger.acknowledged["push record"] += 1
                if deleted:
                    user.notes.pop(note_id, None)
                else:
                    user.notes[note_id] = None  # its new updatedUtc comes with a pull
            if result["conflicts"]:
                first = result["conflicts"][0]
                return f"{len(result['conflicts'])} conflicts, first {first['reason']}"
            return None

        return Job("push", chunks, check, forget)

    # photos

    def upload(self) -> Job:
        user = self.user()
        note_id = self.own_note(user)
        if note_id is None:
            return self.note_create(user)
        full = self.rng.random() < FULL_SHARE
        photo = self.rng.choice([p for p in self.world.photos if p.full is full])
        chunks = request(
            "POST",
            f"/api/images/notes/{note_id}",
            user.address,
            token=user.token,
            body=photo.body,  # made once: sent as it is, not copied
            content_type=f"multipart/form-data; boundary={BOUNDARY}",
        )
        ledger = self.world.ledger

        def check(status: int, answer: bytes) -> str | None:
            if status != 201:
                return problem(status, answer)
            image = orjson.loads(answer)["image"]
            ledger.images[image["contentImageId"]] = (note_id, photo.width, photo.height)
            ledger.acknowledged["upload"] += 1
            return None

        return Job("upload", chunks, check)


# --- measuring -----------------------------------------------------------------------------


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, str, float, float]]:
    """pid -> (parent pid, name, own CPU seconds, waited-for children's CPU seconds)."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read().decode()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        own = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        children = (int(fields[13]) + int(fields[14])) / CLOCK_TICKS
        found[int(entry.name)] = (int(fields[1]), name, own, children)
    return found


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine since boot, all cores."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / CLOCK_TICKS, sum(values) / CLOCK_TICKS


class CpuMeter:
    """CPU seconds over a run of each side: a gunicorn server (master, its live workers,
    and the workers it reaped meanwhile, which its children's time holds), the PostgreSQL
    backends serving the bench database (sampled each second: a backend that came and went
    between two samples is missed), this process, and the whole machine."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.backends: dict[int, tuple[float, float]] = {}  # pid -> (first, last) seen
        self.masters: dict[str, int] = {}
        self.workers: dict[str, set[int]] = {}  # every worker seen during the run

    def server(self, master: int, table: dict[int, tuple[int, str, float, float]]) -> float:
        _, _, own, reaped = table.get(master, (0, "", 0.0, 0.0))
        return own + reaped + sum(row[2] for row in table.values() if row[0] == master)

    def sample(self, first: bool = False) -> dict[int, tuple[int, str, float, float]]:
        table = processes()
        for name, master in self.masters.items():
            self.workers.setdefault(name, set()).update(
                pid for pid, row in table.items() if row[0] == master
            )
        for pid, (_, name, own, _) in table.items():
            if name != "postgres":
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f" {self.database} " not in command:
                continue
            start = self.backends.get(pid, (own if first else 0.0, own))[0]
            self.backends[pid] = (start, own)
        return table

    def start(self, masters: dict[str, int]) -> None:
        self.backends.clear()
        self.masters, self.workers = masters, {}
        table = self.sample(first=True)
        self.first_workers = {name: set(pids) for name, pids in self.workers.items()}
        self.servers = {name: self.server(pid, table) for name, pid in masters.items()}
        self.machine = machine_cpu()
        times = os.times()
        self.own = times.user + times.system

    def stop(self) -> dict[str, float]:
        table = self.sample()
        busy, total = machine_cpu()
        times = os.times()
        used = {
            f"server {name}": self.server(pid, table) - self.servers[name]
            for name, pid in self.masters.items()
        }
        used["postgres"] = sum(last - first for first, last in self.backends.values())
        used["generator"] = times.user + times.system - self.own
        used["machine busy"] = busy - self.machine[0]
        used["machine total"] = total - self.machine[1]
        for name, pids in self.workers.items():  # gunicorn's max_requests recycling
            used[f"workers replaced {name}"] = len(pids - self.first_workers.get(name, set()))
        return used


def scrape(port: int) -> dict[tuple[str, ...], float]:
    """The API's own metrics (METRICS_BIND): per (name, route, method) sums and counts."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    found: dict[tuple[str, ...], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name.endswith("_bucket"):
                continue
            labels = sample.labels
            key = (sample.name, labels.get("route", ""), labels.get("method", ""))
            found[key] = found.get(key, 0.0) + sample.value
    return found


def route_label(method: str, route: str) -> str:
    """`/api/public/notes/<uuid:note_id>` -> `GET /api/public/notes/{note_id}`."""
    return f"{method} " + re.sub(r"<[^>]*?(\w+)>", r"{\1}", route)


@dataclass
class Run:
    name: str
    connections: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    cpu: dict[str, float] = field(default_factory=dict)
    in_app: dict[str, tuple[float, float]] = field(default_factory=dict)  # label: (n, sum)
    pool_wait: tuple[float, float] = (0.0, 0.0)  # checkouts, seconds
    server_errors: float = 0.0  # 500s the app counted
    limited: float = 0.0  # 429s the app counted

    @property
    def requests(self) -> int:
        return sum(len(values) for values in self.latencies.values())

    def discovery(self) -> list[float]:
        return [t for kind in DISCOVERY for t in self.latencies.get(kind, [])]


async def drive(
    client: Client, port: int, deadline: float, run: Run, bound: int, answers: int | None
) -> None:
    loop = asyncio.get_running_loop()
    for _ in range(bound):
        if loop.time() >= deadline or (answers is not None and run.requests >= answers):
            return
        job = client.next()
        started = time.perf_counter()
        try:
            status, answer = await exchange(port, job.chunks)
        except (OSError, TimeoutError, ConnectionError) as error:
            job.lost()
            run.errors[(job.kind, type(error).__name__ + (f" {error}" if str(error) else ""))] += 1
            continue
        run.latencies[job.kind].append(time.perf_counter() - started)
        found = job.check(status, answer)
        if found is not None:
            run.errors[(job.kind, found)] += 1


async def sample_each_second(meter: CpuMeter, stop: asyncio.Event) -> None:
    for _ in range(100_000):
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
            return
        except TimeoutError:
            meter.sample()


def play(
    name: str,
    port: int,
    clients: list[Client],
    seconds: float,
    meter: CpuMeter,
    masters: dict[str, int],
    metrics_port: int | None,
    answers: int | None = None,
) -> Run:
    """The clients against `port` for `seconds` (or until `answers` answers)."""
    run = Run(name, len(clients))
    before = scrape(metrics_port) if metrics_port else {}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample_each_second(meter, stop))
        deadline = loop.time() + seconds
        bound = int(seconds * MAX_REQUESTS_PER_SECOND) + 1
        await asyncio.gather(
            *(drive(client, port, deadline, run, bound, answers) for client in clients)
        )
        stop.set()
        await sampler

    meter.start(masters)
    started = time.perf_counter()
    asyncio.run(main())
    run.seconds = time.perf_counter() - started
    run.cpu = meter.stop()
    if metrics_port:
        after = scrape(metrics_port)
        for (metric, route, method), total in after.items():
            if metric == "http_request_duration_seconds_sum":
                count_key = ("http_request_duration_seconds_count", route, method)
                count = after[count_key] - before.get(count_key, 0.0)
                if count:
                    spent = total - before.get((metric, route, method), 0.0)
                    run.in_app[route_label(method, route)] = (count, spent)
        waits = [
            after.get(key, 0.0) - before.get(key, 0.0)
            for key in (
                ("db_pool_checkout_wait_seconds_count", "", ""),
                ("db_pool_checkout_wait_seconds_sum", "", ""),
            )
        ]
        run.pool_wait = (waits[0], waits[1])
        for metric, attribute in (
            ("http_unexpected_errors_total", "server_errors"),
            ("rate_limit_refusals_total", "limited"),
        ):
            total = sum(v for k, v in after.items() if k[0] == metric) - sum(
                v for k, v in before.items() if k[0] == metric
            )
            setattr(run, attribute, total)
    return run


def clients_for(world: World, connections: int, level: str, discovery: bool) -> list[Client]:
    """Each connection its own accounts (so that one account's writes never race), and
    a sequence of its own, the same for the mix and for discovery alone."""
    return [
        Client(world, world.users[index::connections], f"{level}/{index}", discovery)
        for index in range(connections)
    ]


def statements_per_kind(url: str, world: World, rounds: int) -> dict[str, tuple[float, ...]]:
    """kind -> medians of (statements, transactions, in-process ms) over `rounds` requests
    of that kind, sent to the app in-process (Flask's test client, no gunicorn) and
    counted at the driver; a transaction costs two round trips more (BEGIN, and COMMIT
    or ROLLBACK). The writes go to the ledger like the others."""
    import psycopg2.extensions
    from sqlalchemy import event

    from app.extensions import db

    statements = [0]

    class Counting(psycopg2.extensions.cursor):
        def execute(self, query: Any, parameters: Any = None) -> Any:
            statements[0] += 1
            return super().execute(query, parameters)

    images = tempfile.mkdtemp(prefix="mixed-load-images-")
    app = bench_app(
        url,
        RATELIMIT_ENABLED=True,
        TRUSTED_PROXIES=["127.0.0.1"],
        IMAGE_ROOT=images,
        SQLALCHEMY_ENGINE_OPTIONS={"connect_args": {"cursor_factory": Counting}},
    )
    client = app.test_client(use_cookies=False)
    simulated = Client(world, world.users[-4:], "statements", False)
    found: dict[str, tuple[float, ...]] = {}
    with app.app_context():
        transactions = [0]

        def began(connection: Any) -> None:
            # A connection in psycopg2's autocommit sends no BEGIN (an anonymous public
            # read: app.platform.database.replica.read_without_transactions).
            if not connection.connection.dbapi_connection.autocommit:
                transactions[0] += 1

        event.listen(db.engine, "begin", began)

        def send(job: Job) -> float:
            head, _, body = b"".join(job.chunks).partition(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            method, path, _ = lines[0].split(" ")
            headers = dict(line.split(": ", 1) for line in lines[1:])
            headers.pop("Content-Length", None)
            started = time.perf_counter()
            answer = client.open(path, method=method, headers=headers, data=body)
            elapsed = time.perf_counter() - started
            found_problem = job.check(answer.status_code, answer.get_data())
            if found_problem:
                print(f"  in-process {ROUTES[job.kind]}: {found_problem}")
            return elapsed

        for kind in MIX:
            counted: list[tuple[float, ...]] = []
            for number in range(rounds + 1):  # the first: the kind's first-use work
                draw = simulated.discovery if kind in DISCOVERY else getattr(simulated, kind)
                job = draw()
                for _ in range(100):  # another kind drawn (an edit without a note: a create)
                    if job.kind == kind:
                        break
                    send(job)
                    job = draw()
                statements[0] = transactions[0] = 0
                elapsed = send(job)
                if number:
                    counted.append((statements[0], transactions[0], elapsed * 1000))
            found[kind] = tuple(statistics.median(column) for column in zip(*counted, strict=True))
        db.engine.dispose()
    shutil.rmtree(images, ignore_errors=True)
    return found


# --- checking ------------------------------------------------------------------------------


def verify(url: str, ledger: Ledger) -> dict[str, tuple[int, list[str]]]:
    """kind -> (records checked, what is wrong): every acknowledged write is in the
    database as acknowledged (a deleted note is a tombstone, `is_deleted`, and its images
    are gone)."""
    import psycopg2

    found: dict[str, tuple[int, list[str]]] = {}
    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        notes = {k: v for k, v in ledger.notes.items() if k not in ledger.uncertain}
        cursor.execute(
            "SELECT CAST(id AS TEXT), title, is_deleted FROM notes WHERE id = ANY(%s::uuid[])",
            (list(notes),),
        )
        stored = {row[0]: (row[1], row[2]) for row in cursor.fetchall()}
        wrong = []
        for note_id, (title, deleted) in notes.items():
            row = stored.get(note_id)
            if row is None:
                wrong.append(f"note {note_id}: missing")
            elif row[1] != deleted or (not deleted and row[0] != title):
                wrong.append(f"note {note_id}: {row} stored, ({title!r}, {deleted}) acknowledged")
        found["notes"] = (len(notes), wrong)
        for kind, query, records in (
            (
                "comments",
                "SELECT CAST(id AS TEXT), CAST(trackable_id AS TEXT), body"
                " FROM trackable_comments WHERE id = ANY(%s::uuid[])",
                ledger.comments,
            ),
            (
                "stops",
                "SELECT CAST(id AS TEXT), CAST(trackable_id AS TEXT), latitude, longitude"
                " FROM journey_stops WHERE id = ANY(%s::uuid[])",
                ledger.stops,
            ),
            (
                "images",
                "SELECT CAST(id AS TEXT), CAST(parent_id AS TEXT), original_width,"
                " original_height FROM content_images WHERE id = ANY(%s::uuid[])",
                {  # a deleted note's images go with it (a tombstone keeps none)
                    image_id: None if ledger.notes.get(note_id, ("", False))[1] else image
                    for image_id, image in ledger.images.items()
                    if (note_id := image[0]) not in ledger.uncertain
                },
            ),
        ):
            cursor.execute(query, (list(records),))
            rows = {row[0]: tuple(row[1:]) for row in cursor.fetchall()}
            wrong = [
                f"{kind} {key}: {rows.get(key)} stored, {value} acknowledged"
                for key, value in records.items()
                if rows.get(key) != value
            ]
            found[kind] = (len(records), wrong)
    connection.close()
    return found


def clean_up(url: str, ledger: Ledger, started: datetime) -> None:
    """Delete what the run wrote (notes, their images, comments, stops and the journey
    statistics they changed, access sessions, counted misses, events and their jobs),
    then vacuum."""
    import psycopg2

    from app.extensions import db
    from app.services.trackables.journey import statistics as journey

    connection = psycopg2.connect(url)
    with connection.cursor() as cursor:
        for table, ids in (
            ("content_images", list(ledger.images)),
            ("trackable_comments", list(ledger.comments)),
            ("journey_stops", list(ledger.stops)),
        ):
            cursor.execute(f"DELETE FROM {table} WHERE id = ANY(%s::uuid[])", (ids,))  # noqa: S608
        written = list(ledger.notes.keys() | ledger.uncertain)
        cursor.execute("DELETE FROM notes WHERE id = ANY(%s::uuid[])", (written,))
        cursor.execute("DELETE FROM trackable_access_sessions WHERE created_utc >= %s", (started,))
        cursor.execute("DELETE FROM budget_spends WHERE spent_utc >= %s", (started,))
        # the activity's events and their fan-out jobs (no worker runs during the bench)
        cursor.execute("DELETE FROM events WHERE created_utc >= %s", (started,))
        cursor.execute("DELETE FROM jobs WHERE created_utc >= %s", (started,))
    connection.commit()
    app = bench_app(url)
    with app.app_context():
        journey.refresh_many(uuid.UUID(t) for t in ledger.touched_trackables)
        db.session.commit()
        db.engine.dispose()
    vacuum(connection)
    connection.close()


def vacuum(connection: Any) -> None:
    """What autovacuum would do for the written tables (the servers here run without)."""
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(
            "VACUUM (ANALYZE) notes, categories, sync_clock, sync_note_mutations, trackables,"
            " trackable_comments, journey_stops, trackable_access_sessions, budget_spends,"
            " content_images, events, jobs"
        )
    connection.autocommit = False


# --- servers -------------------------------------------------------------------------------


def start_server(
    name: str, command: list[str], env: dict[str, str], port: int, log: Path
) -> subprocess.Popen[bytes]:
    with log.open("ab") as output:
        server = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **env}, stdout=output, stderr=output
        )
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return server
        except urllib.error.HTTPError:  # it answers (the floor has no /healthz)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit(f"{name} did not start; see {log}")


def stop_servers(servers: list[subprocess.Popen[bytes]]) -> None:
    for server in servers:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
    for server in servers:
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def log_problems(log: Path, offset: int) -> tuple[int, list[str]]:
    """New server log lines since `offset` that tell of a failure (tracebacks, errors)."""
    text = log.read_bytes()[offset:].decode(errors="replace")
    lines = [
        line
        for line in text.splitlines()
        if "Traceback" in line or "ERROR" in line or "CRITICAL" in line or "WORKER TIMEOUT" in line
    ]
    return len(text.encode()), lines


# --- the profile ---------------------------------------------------------------------------


DRIVER_CALLS = ("do_execute", "do_executemany", "do_commit", "do_rollback", "do_ping")
DRIVER_SITES = ("PreparedStatement.run", "_run_alone", "wait_with_deadline")
FLASK_AND_CO = {
    "flask",
    "werkzeug",
    "flask_smorest",
    "webargs",
    "marshmallow",
    "flask_sqlalchemy",
    "flask_jwt_extended",
    "jwt",
    "flask_limiter",
    "limits",
    "itsdangerous",
}
# Where a sample outside any view function is, by the first of these on its stack.
AROUND = (
    ("do_teardown_request", "teardown: the session's ROLLBACK"),
    ("verify_jwt_in_request", "sign-in check: token, account read"),
    ("Parser.parse", "argument parsing"),
    ("ResponseMixin.response", "response serialisation"),
    ("Flask.finalize_request", "after-request hooks"),
    ("Flask.preprocess_request", "before-request hooks"),
    ("Flask.wsgi_app", "Flask, other"),
    ("SyncWorker.handle", "gunicorn: accept, parse, write"),
)


def layer_of(frame: str) -> str:
    """The innermost frame `function (path:line)` -> the layer its time is spent in:
    `driver` is psycopg2's C code (sending, the system calls that wake PostgreSQL,
    receiving and converting) called from SQLAlchemy or the app's own raw reads."""
    name = frame.split(" (", 1)[0].strip()
    path = frame[frame.rfind("(") + 1 : frame.rfind(":")]
    if name.split(".")[-1] in DRIVER_CALLS or name in DRIVER_SITES:
        return "driver"
    if "site-packages/" in path:
        package = path.split("site-packages/")[1].split("/")[0].split(".")[0]
        if package in FLASK_AND_CO:
            return "Flask & co"
        if package in ("jinja2", "markupsafe", "babel"):
            return "templates"
        return {"sqlalchemy": "SQLAlchemy", "PIL": "Pillow"}.get(package, package)
    if "/app/" in path:
        return "app"
    return "Python"


def summarize_profile(path: Path) -> None:
    """py-spy's raw (collapsed) stacks of the API workers, samples holding the GIL (CPU,
    and a worker descheduled while holding it): per kind of request (its view function on
    the stack) its share and the layers its innermost frames are in; samples outside any
    view by the part of the request they are in (sign-in check, argument parsing,
    teardown, gunicorn...)."""
    per_kind: Counter[str] = Counter()
    layers: dict[str, Counter[str]] = defaultdict(Counter)
    functions: dict[str, Counter[str]] = defaultdict(Counter)
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        names = [frame.split(" (", 1)[0].strip() for frame in frames]
        kind = next((VIEWS[name] for name in names if name in VIEWS), "")
        if not kind:
            part = next(
                (label for marker, label in AROUND if any(n.endswith(marker) for n in names)), ""
            )
            kind = "around: " + part if part else "outside requests"
        leaf = frames[-1].strip()
        total += count
        per_kind[kind] += count
        layers[kind][layer_of(leaf)] += count
        functions[kind][leaf.split(" (", 1)[0]] += count
    if not total:
        print("profile: no samples")
        return
    print(f"\nprofile of the API workers: {total:,} samples holding the GIL (py-spy --gil)")
    for kind, count in per_kind.most_common():
        shares = ", ".join(
            f"{name} {share * 100 / count:.0f} %" for name, share in layers[kind].most_common(4)
        )
        top = ", ".join(
            f"{name} {share * 100 / count:.0f} %" for name, share in functions[kind].most_common(3)
        )
        print(f"  {kind:<42} {count * 100 / total:5.1f} %  {shares}")
        print(f"  {'':<42} {'':>7}  innermost: {top}")


# --- report --------------------------------------------------------------------------------


def ms(values: list[float], share: float) -> float:
    return percentile(values, share) * 1000 if values else float("nan")


def report_run(run: Run) -> None:
    rate = run.requests / run.seconds if run.seconds else 0.0
    errors = sum(run.errors.values())
    print(
        f"\n{run.name}, {run.connections} connections, {run.seconds:.1f} s: "
        f"{run.requests:,} answers ({rate:.1f}/s), {errors} errors"
    )
    cpu = run.cpu
    servers = {k: v for k, v in cpu.items() if k.startswith("server")}
    replaced = {k.split()[-1]: v for k, v in cpu.items() if k.startswith("workers replaced")}
    accounted = sum(servers.values()) + cpu["postgres"] + cpu["generator"]
    print(
        "  CPU seconds: "
        + ", ".join(f"{name} {value:.1f}" for name, value in servers.items())
        + f", postgres (bench database) {cpu['postgres']:.1f}, generator {cpu['generator']:.1f}"
        + f"; machine busy {cpu['machine busy']:.1f} of {cpu['machine total']:.1f}"
        + f" (other work {cpu['machine busy'] - accounted:.1f})"
        + "; workers replaced: "
        + ", ".join(f"{name} {count:.0f}" for name, count in replaced.items())
    )
    if run.requests:
        server = sum(servers.values())
        print(
            f"  per answer: server {server * 1000 / run.requests:.2f} ms,"
            f" postgres {cpu['postgres'] * 1000 / run.requests:.2f} ms,"
            f" generator {cpu['generator'] * 1000 / run.requests:.2f} ms CPU"
        )
    if run.pool_wait[0]:
        print(
            f"  pool checkouts {run.pool_wait[0]:,.0f}, waiting {run.pool_wait[1]:.2f} s in all;"
            f" the app counted {run.server_errors:.0f} 500s and {run.limited:.0f} 429s"
        )
    header = f"  {'route':<48} {'n':>6} {'share':>6} {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8}"
    print(header + f" {'in app':>8}")
    for kind in MIX:
        values = run.latencies.get(kind, [])
        if not values:
            continue
        label = ROUTES[kind]
        n, spent = run.in_app.get(label.split(" (")[0], (0.0, 0.0))
        in_app = f"{spent * 1000 / n:8.2f}" if n and kind != "lookup_miss" else f"{'':>8}"
        print(
            f"  {label:<48} {len(values):>6} {len(values) * 100 / run.requests:5.1f}%"
            f" {ms(values, 0.5):8.2f} {ms(values, 0.95):8.2f} {ms(values, 0.99):8.2f}"
            f" {max(values) * 1000:8.2f} {in_app}"
        )
    every = [value for values in run.latencies.values() for value in values]
    if every:
        print(
            f"  {'all':<48} {len(every):>6} {100.0:5.1f}% {ms(every, 0.5):8.2f}"
            f" {ms(every, 0.95):8.2f} {ms(every, 0.99):8.2f} {max(every) * 1000:8.2f}"
        )
    for (kind, what), count in sorted(run.errors.items()):
        print(f"  ERROR {ROUTES.get(kind, kind)}: {what} x {count}")


def report_discovery(connections: int, runs: dict[str, Run]) -> None:
    print(
        f"\ndiscovery at {connections} connections (the mix's discovery requests; "
        "floor: bench/floor_app.py, 4 workers)"
    )
    print(
        f"  {'side':<22} {'answers':>8} {'per s':>8} {'p50':>8} {'p95':>8} {'p99':>8}"
        f" {'server CPU/answer':>18}"
    )
    rows = {}
    for name, run in runs.items():
        values = run.discovery()
        servers = [v for k, v in run.cpu.items() if k.startswith("server")]
        per = sum(servers) * 1000 / run.requests if run.requests else float("nan")
        rows[name] = (
            len(values) / run.seconds,
            ms(values, 0.5),
            ms(values, 0.95),
            ms(values, 0.99),
        )
        print(
            f"  {name:<22} {len(values):>8} {rows[name][0]:8.1f} {rows[name][1]:8.2f}"
            f" {rows[name][2]:8.2f} {rows[name][3]:8.2f} {per:15.2f} ms"
        )
    floor = rows.get("floor, discovery alone")
    for name in ("API, discovery alone", "API, in the mix"):
        if floor and name in rows:
            ratios = [rows[name][i] / floor[i] for i in range(4)]
            rate = f"rate {ratios[0]:.2f}, " if name.endswith("alone") else ""  # a share only
            print(
                f"  {name + ' / floor':<31} {rate}p50 {ratios[1]:.2f},"
                f" p95 {ratios[2]:.2f}, p99 {ratios[3]:.2f}"
            )


def report_statements(found: dict[str, tuple[float, ...]]) -> None:
    print("\nper request, in-process (no gunicorn), median of 5: statements sent, transactions")
    print("(each one round trip more for BEGIN and one for COMMIT or ROLLBACK), time")
    for kind, (statements, transactions, elapsed) in found.items():
        trips = statements + 2 * transactions
        print(
            f"  {ROUTES[kind]:<48} {statements:4.0f} statements {transactions:3.0f} transactions"
            f" = {trips:4.0f} round trips {elapsed:8.2f} ms"
        )


def report_check(found: dict[str, tuple[int, list[str]]], ledger: Ledger) -> int:
    lost = sum(len(wrong) for _, wrong in found.values())
    acknowledged = ", ".join(
        f"{kind} {count}" for kind, count in sorted(ledger.acknowledged.items())
    )
    print(f"\nacknowledged writes so far: {acknowledged}")
    print(
        "  checked in the database: "
        + ", ".join(f"{kind} {count}" for kind, (count, _) in found.items())
        + f"; lost or different: {lost}; outcome unknown (after an error): {len(ledger.uncertain)}"
    )
    for kind, (_, wrong) in found.items():
        for line in wrong[:10]:
            print(f"  LOST {kind}: {line}")
    return lost


# --- main ----------------------------------------------------------------------------------


def main() -> None:
    args = parse_args()
    os.environ["TRACKABLE_CODE_KEY"] = BENCH_CODE_KEY  # `flask db upgrade` checks it too
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    seed(url, notes=args.notes, users=args.users, stamps=True)
    seed_trackables(url, args.trackables)
    started_utc = datetime.now(UTC)
    print("making the photos and signing in...")
    world = load_world(url, args.signed_in)
    if len(world.users) < max(args.connections):
        raise SystemExit("every connection needs accounts of its own: raise --signed-in")
    full = [f"{p.width}x{p.height} {len(p.body) // 1024} KiB" for p in world.photos]
    print(f"photos: {', '.join(full)}")
    report_statements(statements_per_kind(url, world, rounds=5))
    work = Path(tempfile.mkdtemp(prefix="mixed-load-"))
    api_port, floor_port, metrics_port = free_port(), free_port(), free_port()
    api_env = {
        **API_SETTINGS,
        "WEB_CONCURRENCY": str(args.workers),
        "DATABASE_URL": url,
        "PORT": str(api_port),
        "METRICS_BIND": f"127.0.0.1:{metrics_port}",
        "IMAGE_ROOT": str(work / "images"),
    }
    print(
        "API settings the bench sets (all else at its default): "
        + ", ".join(f"{k}={v}" for k, v in sorted(api_env.items()) if k != "DATABASE_URL")
    )
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    api_log, floor_log = work / "api.log", work / "floor.log"
    servers: list[subprocess.Popen[bytes]] = []
    meter = CpuMeter(args.database)
    lost_total = 0
    errors_total = 0
    try:
        command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
        servers.append(start_server("the API", command, api_env, api_port, api_log))
        floor_command = [
            part.replace("{port}", str(floor_port))
            for part in gunicorn(args.workers, "bench.floor_app:app", "-c", "/dev/null")
        ]
        servers.append(
            start_server("the floor", floor_command, {"DATABASE_URL": url}, floor_port, floor_log)
        )
        api_only = {"api": servers[0].pid}
        offset = 0
        if args.warmup > 0:  # every worker's first requests of a kind load and compile
            warm = play(
                "warm-up (not counted)",
                api_port,
                clients_for(world, 16, "warm", False),
                120,
                meter,
                api_only,
                metrics_port,
                answers=args.warmup,
            )
            warm_errors = sum(warm.errors.values())
            print(f"warm-up: {warm.requests} answers, {warm_errors} errors")
            errors_total += warm_errors
            for (kind, what), count in warm.errors.items():
                print(f"  ERROR {ROUTES.get(kind, kind)}: {what} x {count}")
            floor_warm = play(
                "floor warm-up",
                floor_port,
                clients_for(world, 16, "warm", True),
                60,
                meter,
                {"floor": servers[1].pid},
                None,
                answers=args.warmup // 2,
            )
            errors_total += sum(floor_warm.errors.values())
        connection = __import__("psycopg2").connect(url)
        for number, connections in enumerate(args.connections):
            vacuum(connection)
            level = f"level{connections}"
            mix = play(
                "the mix",
                api_port,
                clients_for(world, connections, level, False),
                args.seconds,
                meter,
                api_only,
                metrics_port,
            )
            report_run(mix)
            errors_total += sum(mix.errors.values())
            offset, problems = log_problems(api_log, offset)
            if problems:
                print(f"  server log: {len(problems)} lines of failures, first: {problems[:5]}")
            found = verify(url, world.ledger)
            lost_total = report_check(found, world.ledger)
            vacuum(connection)
            alone: dict[str, Run] = {}
            sides = [("floor, discovery alone", floor_port, {"floor": servers[1].pid}, None)]
            sides.append(("API, discovery alone", api_port, api_only, metrics_port))
            if number % 2:
                sides.reverse()
            for name, port, measured, scraped in sides:
                alone[name] = play(
                    name,
                    port,
                    clients_for(world, connections, level, True),
                    args.discovery_seconds,
                    meter,
                    measured,
                    scraped,
                )
                errors_total += sum(alone[name].errors.values())
            for run in alone.values():
                report_run(run)
            report_discovery(connections, {**alone, "API, in the mix": mix})
        if args.py_spy:
            vacuum(connection)
            profile = work / "profile.txt"
            spy = subprocess.Popen(
                [
                    args.py_spy,
                    "record",
                    "--pid",
                    str(servers[0].pid),
                    "--subprocesses",
                    "--nonblocking",
                    "--full-filenames",
                    "--gil",  # CPU: not a worker waiting for the database or for a core
                    "--rate",
                    "100",
                    "--format",
                    "raw",
                    "--duration",
                    str(int(args.profile_seconds)),
                    "-o",
                    str(profile),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1)  # py-spy attaches
            profiled = play(
                "the mix under py-spy (figures not comparable)",
                api_port,
                clients_for(world, max(args.connections), "profile", False),
                args.profile_seconds - 2,
                meter,
                api_only,
                metrics_port,
            )
            spy.wait(timeout=120)
            report_run(profiled)
            errors_total += sum(profiled.errors.values())
            lost_total = report_check(verify(url, world.ledger), world.ledger)
            if profile.exists():
                summarize_profile(profile)
                print(f"  the profile (collapsed stacks): {profile}")
        connection.close()
    finally:
        stop_servers(servers)
        _, problems = log_problems(api_log, 0) if api_log.exists() else (0, [])
        if problems:
            print(f"\nAPI log: {len(problems)} failure lines, e.g. {problems[:5]}; see {api_log}")
        clean_up(url, world.ledger, started_utc)
        shutil.rmtree(work / "images", ignore_errors=True)
        if not args.py_spy:  # else the profile and the servers' logs stay
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nload average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"errors in all: {errors_total}; acknowledged writes lost: {lost_total}")


if __name__ == "__main__":
    main()
