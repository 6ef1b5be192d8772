"""Shared fixtures: the app on SQLite (default) or PostgreSQL (TEST_DATABASE_URL), a clean
database for every test, and an HTTP client that can act as any user."""

from __future__ import annotations

import functools
import gc
import itertools
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import argon2.profiles
import pytest
from argon2 import PasswordHasher
from flask import Config, Flask
from flask.testing import FlaskClient
from sqlalchemy import (
    Table,
    create_engine,
    event,
    exists,
    literal,
    make_url,
    select,
    text,
    union_all,
)
from sqlalchemy.engine import Dialect, Engine

from app import create_app
from app.extensions import db
from app.models import Base
from app.models.user import User
from app.platform import fast
from app.platform.application import ServiceApp
from app.services.identity import passwords
from config import normalize_database_url
from tests.heartbeat import Heartbeat

# Argon2id with argon2-cffi's cheapest parameters in this process: the production ones
# (RFC 9106) take about 90 ms per hash or check by design, some twenty seconds of a run.
# Every path still hashes and checks the same way (a miss as long as a hit); the servers
# and workers the tests start keep the production parameters.
passwords._hasher = PasswordHasher.from_parameters(argon2.profiles.CHEAPEST)
passwords._DUMMY_HASH = passwords._hasher.hash(passwords.TIMING_EQUALISER)
# The collector's full passes walk every object a worker keeps (its apps, their OpenAPI
# documents, the models' metadata): a tenth of a run's CPU at the default thresholds. The
# tests make little cyclic garbage, so the young generation may grow larger before a pass,
# and each app, once made, is frozen out of the passes (`_shared_app`).
gc.set_threshold(100_000, 50, 1000)

FIRST = ("tests/web/test_browser", "tests/authz/", "tests/hostile/")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that start real processes (gunicorn, nginx, a second instance, a worker killed,
    a database cut, one account stalling the workers) wait on them for seconds each: they
    run where PROCESS_TESTS=1, as CI's PostgreSQL leg sets, and a plain `make test` skips
    them. The browser tests beyond `make test`'s time (`browser_ci`) run in both CI legs."""
    items[:] = _longest_first(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    skips = {
        "processes": ("PROCESS_TESTS", "starts real processes; CI runs it (PROCESS_TESTS=1)"),
        "browser_ci": ("BROWSER_CI_TESTS", "a browser test CI runs (BROWSER_CI_TESTS=1)"),
    }
    for marker, (variable, reason) in skips.items():
        if os.environ.get(variable) == "1":
            continue
        skip = pytest.mark.skip(reason=reason)
        for item in items:
            if item.get_closest_marker(marker):
                item.add_marker(skip)


def _longest_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The order that keeps the end of a run short: pytest-xdist's worksteal hands each
    worker one contiguous share of the list (the first third to the first of three, and
    so on) and later moves tests from the end of a long queue to an idle worker. The long
    tests (the browser's, the authorization matrix, the hostile corpus, `slow` and
    `migrations`) are dealt in turn to the shares and open each, so no worker is left
    running them alone at the end."""

    def long(item: pytest.Item) -> bool:
        return item.nodeid.startswith(FIRST) or any(
            item.get_closest_marker(name) for name in ("slow", "migrations")
        )

    longs = [item for item in items if long(item)]
    rest = [item for item in items if not long(item)]
    ordered: list[pytest.Item] = []
    remaining = len(items)
    for share in range(workers):
        size = remaining // (workers - share)  # as worksteal divides the list
        head = longs[share::workers]
        take = max(0, size - len(head))
        ordered += head + rest[:take]
        del rest[:take]
        remaining -= size
    return ordered + rest


# Fixtures shared by several areas, defined once: the browser (one Chromium per test
# process), the race barrier, the inbox world, the webhook receivers.
pytest_plugins = ["tests.web.browser", "tests.racing", "tests.inboxes", "tests.receivers"]


def needs_fast_path(name: str) -> pytest.MarkDecorator:
    """For a test of a shortcut's own mechanism: skipped when a run turns it off
    (`FAST_PATHS=off`, as CI's second run of the shortcuts' routes does)."""
    enabled = fast.parse(os.environ.get("FAST_PATHS"))
    return pytest.mark.skipif(name not in enabled, reason=f"FAST_PATHS leaves {name} off")


@contextmanager
def fresh_postgresql_database(url: str, name: str) -> Iterator[str]:
    """A new empty PostgreSQL database `name` on the server of `url`, dropped afterwards."""
    admin = create_engine(make_url(url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """SQLite in a temporary file (one per xdist worker), or TEST_DATABASE_URL (a database
    per worker beside it); tables are created once per worker."""
    configured = os.environ.get("TEST_DATABASE_URL")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    with ExitStack() as stack:
        if configured and worker:
            # Under pytest-xdist each worker has its own database beside the configured one.
            url = normalize_database_url(configured)
            url = stack.enter_context(
                fresh_postgresql_database(url, f"{make_url(url).database}_{worker}")
            )
        else:
            url = normalize_database_url(
                configured or f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
            )
        engine = create_engine(url)
        Base.metadata.drop_all(engine)
        Base.metadata.create_all(engine)
        engine.dispose()
        yield url
        engine = create_engine(url)
        Base.metadata.drop_all(engine)
        engine.dispose()


@event.listens_for(Engine, "connect")
def _sqlite_without_fsync(dbapi_connection: Any, _record: Any) -> None:
    """Test databases are thrown away, so SQLite need not wait for the disk on each commit,
    nor make and delete its rollback journal each time (PERSIST keeps the file). Locking
    and transactions behave as in production; only durability is given up."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA synchronous = OFF")
        cursor.execute("PRAGMA journal_mode = PERSIST")
        cursor.close()


def _empty_all_tables() -> None:
    """Empty the tables a test wrote to, child tables first. One query finds them (any
    writer counts: the test, its threads, the processes it started); DELETE then empties
    each: on tables this small much faster than TRUNCATE, which rewrites every table's files
    on PostgreSQL, and than a DELETE of every table."""
    written = tables_with_rows()
    if written:
        without_key_checks()
    for index, table in enumerate(_child_tables_first()):
        if index in written:
            db.session.execute(table.delete())
    db.session.commit()


def without_key_checks() -> None:
    """On PostgreSQL, as a superuser (the tests' own server): this transaction runs no
    foreign key checks, which emptying every written table, or writing back rows that
    held together when taken (tests/snapshots.py), need not run; they were half of the
    time. They are triggers, which the `replica` role skips; no table has others."""
    connection = db.session.connection()
    if connection.dialect.name != "postgresql":
        return
    if "superuser" not in connection.info:
        shown = connection.exec_driver_sql("SHOW is_superuser").scalar()
        connection.info["superuser"] = shown == "on"
    if connection.info["superuser"]:
        connection.exec_driver_sql("SET LOCAL session_replication_role = replica")


def tables_with_rows() -> set[int]:
    """The positions in `_child_tables_first()` of the tables holding a row. On PostgreSQL
    the query is prepared once per connection: planning its forty-odd subqueries took
    several times as long as running them, at every test (psycopg2 prepares nothing)."""
    connection = db.session.connection()
    query = _with_rows(connection.dialect)
    if connection.dialect.name == "postgresql":
        if not connection.info.get("tables_with_rows"):
            connection.exec_driver_sql(f"PREPARE tables_with_rows AS {query}")
            connection.info["tables_with_rows"] = True  # a session's statement outlives a rollback
        query = "EXECUTE tables_with_rows"
    return {index for (index,) in connection.exec_driver_sql(query)}


@functools.cache
def _child_tables_first() -> tuple[Table, ...]:
    return tuple(reversed(Base.metadata.sorted_tables))  # a sort each time it is read


@functools.cache
def _with_rows(dialect: Dialect) -> str:
    """The positions in `_child_tables_first()` of the tables holding a row, in one query,
    compiled once: its cache key alone, walked at each run, cost more than the query."""
    query = union_all(
        *(
            select(literal(index)).where(exists(select(literal(1)).select_from(table)))
            for index, table in enumerate(_child_tables_first())
        )
    )
    return str(query.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))


def make_test_app(database_url: str, tmp_path: Path, **overrides: Any) -> Flask:
    config = {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database_url,
        "IMAGE_ROOT": tmp_path / "images",
        "EXPORT_ROOT": tmp_path / "exports",
        "MAP_TILE_ROOT": tmp_path / "tiles",
        # Shared by a worker's tests: the base map's thinned land mask is built once.
        "MAP_TILE_CACHE": tmp_path / "tile-cache",
        "MAIL_BACKEND": "memory",
        "RATELIMIT_STORAGE_URI": "memory://",
        "LOG_LEVEL": "WARNING",
    }
    config.update(overrides)
    return create_app(config)


@pytest.fixture
def app_overrides() -> dict[str, Any]:
    """Override in a test module to change settings for its app."""
    return {}


# One app per worker and settings: building an app registers every route in the OpenAPI
# document, which costs far more than a test. What a test can change is put back after it.
# Settings the factory never reads are not built in: a module that changes only those
# shares the worker's plain app, and they are applied to it for each of its tests.
_apps: dict[str, Flask] = {}
_pristine: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
_in_use: list[Flask] = []  # the app of the test now running, or of the last one
_read_at_build: set[str] = set()  # the settings the factory read making the plain app


def _recording_reads() -> type[Config]:
    """A Flask `Config` that notes each setting read into `_read_at_build`."""

    class Recording(Config):
        def __getitem__(self, key: str) -> Any:
            _read_at_build.add(key)
            return super().__getitem__(key)

        def __contains__(self, key: object) -> bool:
            _read_at_build.add(str(key))
            return super().__contains__(key)

        def get(self, key: str, default: Any = None) -> Any:
            _read_at_build.add(key)
            return super().get(key, default)

        def setdefault(self, key: str, default: Any = None) -> Any:
            _read_at_build.add(key)
            return super().setdefault(key, default)

    return Recording


def _shared_app(
    database_url: str,
    root: Path,
    overrides: dict[str, Any],
    extend: Callable[[Flask], None] | None = None,
) -> tuple[Flask, dict[str, Any]]:
    """The worker's app for these settings, and the settings to apply for each test."""
    if not _read_at_build:  # the plain app first, noting what its making reads
        plain_config = ServiceApp.config_class
        ServiceApp.config_class = _recording_reads()
        try:
            _build_shared_app(_app_key({}, None), database_url, root, {}, None)
        finally:
            ServiceApp.config_class = plain_config
        _apps[_app_key({}, None)].config.__class__ = plain_config  # the tests' reads go unnoted
    # A setting the factory reads only when another has some value is read behind that
    # other one, which the plain app's making reads: a set that changes it is still built.
    built, per_test = overrides, {}
    if not overrides.keys() & _read_at_build:
        built, per_test = {}, overrides
    key = _app_key(built, extend)
    if key not in _apps:
        _build_shared_app(key, database_url, root, built, extend)
    return _apps[key], per_test


def _app_key(overrides: dict[str, Any], extend: Callable[[Flask], None] | None) -> str:
    return repr((sorted(overrides.items()), extend and extend.__qualname__))


def _build_shared_app(
    key: str,
    database_url: str,
    root: Path,
    overrides: dict[str, Any],
    extend: Callable[[Flask], None] | None,
) -> None:
    app = make_test_app(database_url, root, **overrides)
    if extend is not None:
        extend(app)  # a module's own routes, registered once
    _apps[key] = app
    _pristine[id(app)] = (dict(app.config), dict(app.extensions))
    gc.freeze()  # an app lives as long as the worker: no collector pass need walk it


def _reset_app(app: Flask, root: Path) -> None:
    from app.extensions import limiter

    config, extensions = _pristine[id(app)]
    app.config.clear()
    app.config.update(config)
    app.config.update(
        IMAGE_ROOT=root / "images",
        EXPORT_ROOT=root / "exports",
        MAP_TILE_ROOT=root / "tiles",
    )
    app.extensions.clear()  # the mail outbox, hooks a test replaced
    app.extensions.update(extensions)
    # The limiter is one per process: its storage is that of the app made last, which
    # may count in a database (database://, the default), read through the current app.
    with app.app_context():
        limiter.reset()


@pytest.fixture
def app(
    database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    app_overrides: dict[str, Any],
) -> Iterator[Flask]:
    yield from serve_test_app(database_url, tmp_path_factory, app_overrides)


_test_numbers = itertools.count()


def _files_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this test's app keeps its files: named, not made, as most tests store none.
    (pytest's `tmp_path` makes a directory each time, numbered by listing the ones before
    it, which grows with every test a worker has run.)"""
    return tmp_path_factory.getbasetemp() / "app-files" / str(next(_test_numbers))


def serve_test_app(
    database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    overrides: dict[str, Any],
    extend: Callable[[Flask], None] | None = None,
) -> Iterator[Flask]:
    """The `app` fixture's body: the worker's app of these settings (made once, with
    `extend` run on it then), reset for this test, in an app context; the tables it wrote
    to emptied after."""
    app, per_test = _shared_app(database_url, tmp_path_factory.getbasetemp(), overrides, extend)
    # Each kept app has its own pool: the previous test's app closes its connections when
    # another app takes over, so a worker stays at a few, well inside the server's
    # max_connections; tests of one app (a module, mostly) keep theirs open.
    previous = _in_use[0] if _in_use else None
    if previous is not None and previous is not app:
        with previous.app_context():
            db.engine.dispose()
    _in_use[:] = [app]
    _reset_app(app, _files_root(tmp_path_factory))
    app.config.update(per_test)
    with app.app_context():
        try:
            yield app
        finally:
            db.session.rollback()
            _empty_all_tables()
            db.session.remove()


class ApiClient:
    """The Flask test client, optionally acting as a user with a real bearer token."""

    def __init__(self, client: FlaskClient, token: str | None = None) -> None:
        self.client = client
        self.token = token

    def as_user(self, user: User | None) -> ApiClient:
        if user is None:
            return ApiClient(self.client)
        from app.auth import issue_access_token

        return ApiClient(self.client, issue_access_token(user))

    def with_token(self, token: str | None) -> ApiClient:
        return ApiClient(self.client, token)

    def open(self, method: str, url: str, **kwargs: Any) -> Any:
        headers = dict(kwargs.pop("headers", {}) or {})
        for name, value in (kwargs.pop("cookies", None) or {}).items():
            self.client.set_cookie(name, value)
        if self.token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.token}"
        response = self.client.open(url, method=method, headers=headers, **kwargs)
        # As a WSGI server does once the answer is sent: work deferred until then runs now.
        response.get_data()
        response.close()
        return response

    def get(self, url: str, **kwargs: Any) -> Any:
        return self.open("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> Any:
        return self.open("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> Any:
        return self.open("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> Any:
        return self.open("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> Any:
        return self.open("DELETE", url, **kwargs)


@pytest.fixture
def heart() -> Iterator[Heartbeat]:
    """A running heartbeat, for a test that checks how long the service took."""
    beating = Heartbeat()
    beating.start()
    yield beating
    beating.end()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def api(client: FlaskClient) -> ApiClient:
    return ApiClient(client)


def unregistered_code(response: Any) -> str | None:
    """Why a problem response's `code` is wrong (missing, not in the registry, or not
    answered with this status), or None when it is right."""
    from app.error_codes import ERROR_CODES

    body = response.get_json(force=True, silent=True)
    code = body.get("code") if isinstance(body, dict) else None
    if code not in ERROR_CODES:
        return f"{response.status_code} with code {code!r}, not in the registry"
    if response.status_code not in ERROR_CODES[code].statuses:
        return f"{response.status_code} with code {code!r}, registered for other statuses"
    return None


def assert_problem(response: Any, status: int, *, code: str | None = None) -> dict[str, Any]:
    """The response is problem details with this status, its phrase as `title`, and a
    machine `code` of the registry answered with this status (and exactly `code` when
    given)."""
    from app.error_codes import ERROR_CODES
    from app.errors import status_title

    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    body = response.get_json(force=True)
    assert body["status"] == status
    assert body["type"] == "about:blank"
    assert body["title"] == status_title(status), body  # RFC 9457: the status's phrase
    assert "detail" in body
    assert body.get("code") in ERROR_CODES, body
    assert status in ERROR_CODES[body["code"]].statuses, body
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture
def links(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """Stand-in link verification for routes that save links: records calls, lower-cases
    the URL, suggests "Page title", and fails (400) on a URL containing 'bad'."""
    from app.errors import ApiError

    calls: list[tuple[Any, Any]] = []

    def revalidate(url: Any, description: Any) -> tuple[Any, Any]:
        calls.append((url, description))
        if url is None or not url.strip():
            return None, ""
        if "bad" in url:
            raise ApiError("The link could not be verified.")
        return url.strip().lower(), description or "Page title"

    monkeypatch.setattr("app.services.shared.links.revalidate_link", revalidate)
    return calls
