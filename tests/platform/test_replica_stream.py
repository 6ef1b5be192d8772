"""Anonymous public reads from a real streaming replica, through HTTP: a primary and its
standby made here (initdb, `pg_basebackup -R -X stream`) on free ports. Healthy, the replica
serves; cut from the stream, paused or stopped, it is not read once the lag bound has
passed, however sure of itself it is; a writer reads their own write from the primary until
the replica has replayed the position their cookie names. Which server answered is told by
the statements the replica's engine ran. PostgreSQL only; starts two servers (`processes`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2
import pytest
from flask import Flask
from sqlalchemy import create_engine, event

from app.extensions import db
from app.models.base import Base
from app.models.enums import NoteVisibility
from app.platform import metrics
from app.platform.database.replica import BIND, WROTE_COOKIE, parse_lsn
from tests.conftest import ApiClient, make_test_app
from tests.factories import make_note, make_user
from tests.serving import free_port

pytestmark = pytest.mark.processes

PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1:]  # Debian's server binaries
MAX_LAG = 1.0  # DATABASE_REPLICA_MAX_LAG_SECONDS of the apps below, small so tests are short
CHECK = 0.1  # DATABASE_REPLICA_LAG_CHECK_SECONDS
WAIT = 30.0  # how long a condition may take to come true before the test fails


def as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL will not run as root: its programs run as the `postgres` user then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def run(command: list[str]) -> None:
    subprocess.run(as_postgres(command), check=True, capture_output=True)  # noqa: S603 - ours


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {WAIT} s"
        time.sleep(0.02)


@dataclass
class Clusters:
    work: Path
    primary_port: int
    replica_port: int
    conninfo: str = ""  # the standby's primary_conninfo, as pg_basebackup -R wrote it

    def url(self, port: int, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/{database}"

    def primary(self, database: str = "postgres") -> str:
        return self.url(self.primary_port, database)

    def replica(self, database: str = "postgres") -> str:
        return self.url(self.replica_port, database)

    def start(self, name: str, port: int) -> None:
        options = f"-p {port} -k {self.work} -c listen_addresses=127.0.0.1"
        run([str(PG_BIN[0] / "pg_ctl"), "-D", str(self.work / name), "-l",
             str(self.work / f"{name}.log"), "-o", options, "-w", "-t", "60", "start"])  # fmt: skip

    def stop(self, name: str) -> None:
        run([str(PG_BIN[0] / "pg_ctl"), "-D", str(self.work / name), "-m", "immediate", "-w",
             "stop"])  # fmt: skip

    def running(self, name: str) -> bool:
        return (self.work / name / "postmaster.pid").exists()


def one(url: str, statement: str, *parameters: Any) -> Any:
    """The first column of the first row, in a connection of its own (autocommit)."""
    connection = psycopg2.connect(url, connect_timeout=5)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(statement, parameters or None)
            return cursor.fetchone()[0] if cursor.description else None
    finally:
        connection.close()


@pytest.fixture(scope="module")
def clusters(database_url: str) -> Iterator[Clusters]:
    """A primary and a streaming standby of it, stopped (immediately) at the end."""
    if not database_url.startswith("postgresql"):
        pytest.skip("the read replica is a PostgreSQL feature (TEST_DATABASE_URL)")
    if not PG_BIN:
        pytest.skip("the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are missing")
    # Not under pytest's tmp directory: as root that is closed to the `postgres` user.
    work = Path(tempfile.mkdtemp(prefix="replica-stream-"))
    if os.geteuid() == 0:
        shutil.chown(work, "postgres")
    found = Clusters(work, free_port(), free_port())
    try:
        run([str(PG_BIN[0] / "initdb"), "-D", str(work / "primary"), "-U", "postgres",
             "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])  # fmt: skip
        with (work / "primary" / "postgresql.conf").open("a") as conf:
            # Thrown away at the end: no flush to disk. The standby, a copy, inherits these;
            # it retries a lost stream after 0.1 s (not 5 s) once primary_conninfo is back.
            conf.write("fsync = off\nfull_page_writes = off\nwal_retrieve_retry_interval = 100ms\n")
        found.start("primary", found.primary_port)
        run([str(PG_BIN[0] / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(found.primary_port),
             "-U", "postgres", "-D", str(work / "replica"), "-R", "-X", "stream",
             "--checkpoint=fast", "--no-sync"])  # fmt: skip
        found.start("replica", found.replica_port)
        found.conninfo = one(found.replica(), "SHOW primary_conninfo")
        yield found
    finally:
        for name in ("replica", "primary"):
            if found.running(name):
                with suppress(subprocess.CalledProcessError):
                    found.stop(name)
        left = [name for name in ("replica", "primary") if found.running(name)]
        for name in left:  # pg_ctl failed: end the server by its own process id
            with suppress(OSError, ValueError):
                pid = int((work / name / "postmaster.pid").read_text().split()[0])
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)
        assert left == [], f"pg_ctl did not stop {left}"


def replayed(clusters: Clusters, position: int) -> bool:
    replay = one(clusters.replica(), "SELECT pg_last_wal_replay_lsn()::text")
    return (parse_lsn(replay) or 0) >= position


def primary_lsn(clusters: Clusters) -> int:
    return parse_lsn(one(clusters.primary(), "SELECT pg_current_wal_lsn()::text")) or 0


def caught_up(clusters: Clusters) -> None:
    target = primary_lsn(clusters)
    wait_until(lambda: replayed(clusters, target), "the replica replays the primary's WAL")


@pytest.fixture
def streaming(clusters: Clusters) -> Clusters:
    """The standby running, streaming and replaying (whatever the test before did to it),
    and caught up with the primary."""
    if not clusters.running("replica"):
        clusters.start("replica", clusters.replica_port)
    url = clusters.replica()
    if one(url, "SHOW primary_conninfo") != clusters.conninfo:
        one(url, "ALTER SYSTEM SET primary_conninfo = %s", clusters.conninfo)
        one(url, "SELECT pg_reload_conf()")
    one(url, "SELECT pg_wal_replay_resume()")
    wait_until(
        lambda: one(url, "SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'"),
        "the replica streams",
    )
    caught_up(clusters)
    return clusters


@dataclass
class Rig:
    app: Flask
    clusters: Clusters
    note_id: uuid.UUID
    owner: ApiClient  # signed in as the note's owner
    replica_reads: list[str]  # statements on notes the replica's engine ran

    def visitor(self) -> ApiClient:
        """A new anonymous client, with no cookie."""
        return ApiClient(self.app.test_client())

    def read(self, client: ApiClient) -> tuple[int, str | None, bool]:
        """An anonymous read of the note (the client's cookies sent, no token): the status,
        the title it showed, and whether the replica served it."""
        before = len(self.replica_reads)
        response = client.with_token(None).get(f"/api/public/notes/{self.note_id}")
        title = response.get_json()["title"] if response.status_code == 200 else None
        return response.status_code, title, len(self.replica_reads) > before

    def readiness(self) -> dict[str, Any]:
        ready = self.visitor().get("/readyz")
        assert ready.status_code == 200, ready.get_json()
        replica: dict[str, Any] = ready.get_json()["replica"]
        return replica


@pytest.fixture
def rig_for(streaming: Clusters, tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    """An app on a database of its own on the primary (its standby copies it), reading the
    standby, which it counts in; a public note, replayed on the standby, and a client signed
    in as its owner."""
    name = f"stream_{uuid.uuid4().hex[:12]}"
    one(streaming.primary(), f'CREATE DATABASE "{name}"')
    made: list[Flask] = []

    def make(**settings: Any) -> Rig:
        engine = create_engine(streaming.primary(name))
        Base.metadata.create_all(engine)
        engine.dispose()
        settings = {
            "DATABASE_REPLICA_URL": streaming.replica(name),
            "DATABASE_REPLICA_MAX_LAG_SECONDS": MAX_LAG,
            "DATABASE_REPLICA_LAG_CHECK_SECONDS": CHECK,
            "DATABASE_REPLICA_STICKY_SECONDS": 60,
            **settings,
        }
        app = make_test_app(streaming.primary(name), tmp_path, **settings)
        made.append(app)
        reads: list[str] = []
        with app.app_context():
            owner = make_user()
            note = make_note(
                owner, title="before", latitude=52.5, longitude=13.4,
                visibility=NoteVisibility.PUBLIC,
            )  # fmt: skip
            db.session.commit()

            @event.listens_for(db.engines[BIND], "before_cursor_execute")
            def replica_read(*args: Any) -> None:
                if "notes" in args[2]:
                    reads.append(args[2])

            client = ApiClient(app.test_client())
            rig = Rig(app, streaming, note.id, client.as_user(owner), reads)
            db.session.remove()
        caught_up(streaming)
        # A process counts a replica in once it has reached a primary position sampled
        # before: on its first reading only if the primary wrote nothing in between.
        wait_until(lambda: rig.readiness()["inUse"], "the replica in use")
        return rig

    yield make
    for app in made:
        with app.app_context():
            db.session.remove()
            for engine in db.engines.values():
                engine.dispose()
    one(streaming.primary(), f'DROP DATABASE "{name}" WITH (FORCE)')


def delete_note(rig: Rig) -> float:
    """Delete the note on the primary; when the deletion had surely committed."""
    deleted = rig.owner.open("DELETE", f"/api/notes/mine/{rig.note_id}")
    assert deleted.status_code == 204, deleted.get_json()
    return time.monotonic()


def deleted_note_is_gone_once_the_bound_passed(rig: Rig, deleted_at: float) -> None:
    """Anonymous reads of the deleted note, for as long as the bound allows the replica's
    copy, then after it: once it has passed, 404, from the primary."""
    visitor = rig.visitor()
    while time.monotonic() < deleted_at + MAX_LAG:
        status, _, _ = rig.read(visitor)  # may still be the replica's copy (200): allowed
        assert status in {200, 404}
    for _ in range(5):
        assert rig.read(visitor) == (404, None, False)
        assert rig.read(rig.visitor()) == (404, None, False)


def test_a_healthy_replica_serves_anonymous_public_reads(rig_for):
    rig = rig_for()
    visitor = rig.visitor()
    assert rig.read(visitor) == (200, "before", True)
    ready = rig.readiness()
    assert ready["inUse"] is True
    assert ready["receiving"] is True
    assert ready["lagSeconds"] <= MAX_LAG
    assert parse_lsn(ready["replayLsn"]) is not None
    assert metrics.value("location_notes_replica_lag_seconds") == pytest.approx(
        ready["lagSeconds"], abs=0.001
    )


def test_a_replica_cut_from_the_stream_is_not_read_once_the_bound_passed(rig_for):
    rig = rig_for()
    assert rig.read(rig.visitor()) == (200, "before", True)
    replica = rig.clusters.replica()
    one(replica, "ALTER SYSTEM SET primary_conninfo = ''")
    one(replica, "SELECT pg_reload_conf()")
    wait_until(lambda: not one(replica, "SELECT count(*) FROM pg_stat_wal_receiver"), "cut")
    deleted_note_is_gone_once_the_bound_passed(rig, delete_note(rig))
    ready = rig.readiness()
    # It replayed all it received, and says so; the primary has moved on since.
    assert ready["inUse"] is False
    assert ready["receiving"] is False
    assert ready["lagSeconds"] > MAX_LAG


def test_a_paused_replica_is_not_read_once_the_bound_passed(rig_for):
    rig = rig_for()
    assert rig.read(rig.visitor()) == (200, "before", True)
    replica = rig.clusters.replica()
    one(replica, "SELECT pg_wal_replay_pause()")
    wait_until(lambda: one(replica, "SELECT pg_get_wal_replay_pause_state()") == "paused", "pause")
    deleted_note_is_gone_once_the_bound_passed(rig, delete_note(rig))
    ready = rig.readiness()
    assert ready["inUse"] is False
    assert ready["receiving"] is True  # it still receives: only its replay stands still
    assert ready["lagSeconds"] > MAX_LAG


def test_a_stopped_replica_leaves_the_primary_serving(rig_for):
    rig = rig_for()
    assert rig.read(rig.visitor()) == (200, "before", True)
    rig.clusters.stop("replica")
    wait_until(lambda: rig.readiness()["inUse"] is False, "the replica counted out")
    assert rig.read(rig.visitor()) == (200, "before", False)
    ready = rig.readiness()
    assert ready["lagSeconds"] is None
    assert ready["replayLsn"] is None


def test_a_writer_reads_their_write_until_the_replica_has_replayed_it(rig_for):
    # A wide bound: the paused replica stays in use for readers without the cookie.
    rig = rig_for(DATABASE_REPLICA_MAX_LAG_SECONDS=30)
    assert rig.read(rig.visitor()) == (200, "before", True)
    replica = rig.clusters.replica()
    one(replica, "SELECT pg_wal_replay_pause()")
    wait_until(lambda: one(replica, "SELECT pg_get_wal_replay_pause_state()") == "paused", "pause")
    moved = rig.owner.post(f"/api/notes/mine/{rig.note_id}/move", json={"title": "after"})
    assert moved.status_code == 200, moved.get_json()
    cookie = rig.owner.client.get_cookie(WROTE_COOKIE)
    assert cookie is not None
    written = parse_lsn(cookie.value)
    assert written is not None
    assert rig.read(rig.visitor()) == (200, "before", True)  # someone else: the replica's copy
    assert rig.read(rig.owner) == (200, "after", False)  # the writer, signed out: the primary
    one(replica, "SELECT pg_wal_replay_resume()")
    wait_until(lambda: replayed(rig.clusters, written), "the replica replays the write")
    assert rig.read(rig.owner) == (200, "after", True)  # past the cookie's: the replica again
    assert rig.owner.client.get_cookie(WROTE_COOKIE) is not None
