"""Behind PgBouncer in transaction mode (Debian's 1.18): with DATABASE_POOLER=pgbouncer the
app sends no startup `options` and prepares no statement, so the paths that prepare
(discovery of a small window, the token's account read) and writes work through it; without
the setting PgBouncer refuses the connection. The statement timeout then comes from the
database role (`ALTER ROLE ... SET statement_timeout`), which PgBouncer's server
connections take on.

PostgreSQL only. Without /usr/sbin/pgbouncer these tests skip, saying why; with
REQUIRE_DEPLOY_TESTS=1 (CI installs it) they fail instead."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url, text

from app.extensions import db
from app.models.enums import NoteVisibility
from tests.conftest import ApiClient, make_test_app
from tests.factories import make_note, make_user
from tests.serving import free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


@pytest.fixture(scope="module")
def postgres_url(database_url: str) -> str:
    if not database_url.startswith("postgresql"):
        pytest.skip("PgBouncer sits in front of PostgreSQL (TEST_DATABASE_URL)")
    if not Path(PGBOUNCER).exists():
        message = "Debian's pgbouncer is not installed (apt-get install pgbouncer)"
        if os.environ.get("REQUIRE_DEPLOY_TESTS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return database_url


@pytest.fixture(scope="module")
def bouncer_url(postgres_url: str) -> Iterator[str]:
    """PgBouncer in transaction mode on a free port, in front of the test database."""
    target = make_url(postgres_url)
    # PgBouncer will not run as root: it drops to `postgres`, who must read its files.
    directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    directory.chmod(0o755)
    port = free_port()
    config = directory / "pgbouncer.ini"
    server = f"host={target.host or '127.0.0.1'} port={target.port or 5432}"
    config.write_text(
        f"""[databases]
{target.database} = {server} user={target.username or "postgres"}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 50
default_pool_size = 5
logfile = {directory}/pgbouncer.log
pidfile = {directory}/pgbouncer.pid
"""
    )
    config.chmod(0o644)
    user = ["-u", "postgres"] if os.geteuid() == 0 else []
    if user:
        shutil.chown(directory, "postgres")  # its log and pid file
    process = subprocess.Popen([PGBOUNCER, *user, str(config)])  # noqa: S603 - our own config
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("pgbouncer did not start") from None
                time.sleep(0.1)
        yield target.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


def test_the_app_serves_through_pgbouncer_in_transaction_mode(bouncer_url, tmp_path):
    app = make_test_app(bouncer_url, tmp_path, DATABASE_POOLER="pgbouncer")
    with app.app_context():
        user = make_user()
        make_note(
            user,
            latitude=52.52,
            longitude=13.405,
            title="Through the pooler",
            visibility=NoteVisibility.PUBLIC,
        )
        db.session.commit()
        api = ApiClient(app.test_client())
        for _ in range(3):  # again and again: each may land on another server connection
            found = api.get(
                "/api/notes/public/bounds?minLatitude=52&minLongitude=13"
                "&maxLatitude=53&maxLongitude=14"
            )
            assert found.status_code == 200, found.get_json()
            assert "Through the pooler" in found.get_data(as_text=True)
            mine = api.as_user(user).get("/api/notes/mine")
            assert mine.status_code == 200, mine.get_json()
        created = api.as_user(user).post(
            "/api/notes/mine",
            json={"title": "Written through the pooler", "latitude": 48.1, "longitude": 11.6},
        )
        assert created.status_code in {200, 201}, created.get_json()
        db.session.remove()
        db.engine.dispose()


def test_without_the_setting_pgbouncer_refuses_the_startup_options(bouncer_url, tmp_path):
    app = make_test_app(bouncer_url, tmp_path)
    with app.app_context():
        with pytest.raises(Exception, match="options"), db.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        db.engine.dispose()


def test_an_unknown_pooler_is_refused(tmp_path, postgres_url):
    with pytest.raises(ValueError, match="DATABASE_POOLER"):
        make_test_app(postgres_url, tmp_path, DATABASE_POOLER="pgpool")
