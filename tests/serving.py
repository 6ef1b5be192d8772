"""The service under gunicorn, as production runs it, for the tests that need a real
server: a free port, gunicorn.conf.py, and a wait until `/healthz` answers."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def development_settings(database_url: str, root: Path, **settings: str) -> dict[str, str]:
    """gunicorn's environment for a development server on the test database (one key for
    all four, as development allows), its files under `root`, no access log; `settings`
    on top."""
    key = "k" * 48
    return {
        "DATABASE_URL": database_url,
        "APP_ENV": "development",
        "SECRET_KEY": key,
        "JWT_SECRET_KEY": key,
        "TRACKABLE_CODE_KEY": key,
        "WEBHOOK_SECRETS_KEY": key,
        "ACCESS_LOG": "off",
        "IMAGE_ROOT": str(root / "images"),
        "MAP_TILE_ROOT": str(root / "tiles"),
        **settings,
    }


def answer(port: int, path: str, body: bytes | None = None) -> tuple[int, dict, Any]:
    """A served app's answer to a GET (or a JSON POST of `body`): status, headers and
    the JSON body, whatever the status."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=body,
        headers={"Content-Type": "application/json"} if body is not None else {},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:  # noqa: S310
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except OSError:
        return False


@contextmanager
def gunicorn_serving(
    settings: dict[str, str], *, output: Any = None, start_within: float = 90
) -> Iterator[int]:
    """gunicorn with the environment plus `settings` (one worker unless they say), its
    stdout and stderr to `output` (a file) or nowhere; yields its port, stops it after."""
    with gunicorn_master(settings, output=output, start_within=start_within) as (port, _):
        yield port


PORT_ATTEMPTS = 3  # free ports tried, each taken by another server


@contextmanager
def gunicorn_master(
    settings: dict[str, str], *, output: Any = None, start_within: float = 90
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`gunicorn_serving`, yielding its master process too (for the signals a unit sends).
    A free port can be taken again before gunicorn binds it (another test's server, in
    another worker): `/healthz` then answers from that server, so the port counts as
    served only once the master holds its listener, and a taken port means a new one."""
    deadline = time.monotonic() + start_within
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        env = {**os.environ, "WEB_CONCURRENCY": "1", "LOG_LEVEL": "WARNING", **settings}
        env["PORT"] = str(port)
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
            cwd=ROOT,
            env=env,
            stdout=output if output is not None else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if output is not None else subprocess.DEVNULL,
        )
        try:
            while not healthy(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("gunicorn did not start")
                time.sleep(0.2)
            if holds_listener(process.pid, port):
                yield port, process
                return
        finally:
            process.terminate()
            process.wait(timeout=30)
    raise AssertionError(f"another server answered on each of {PORT_ATTEMPTS} free ports")


def holds_listener(pid: int, port: int) -> bool:
    """Whether process `pid` holds a socket listening on `port` (this host's /proc)."""
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state, inode = (line.split()[i] for i in (1, 3, 9))
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                listening.add(f"socket:[{inode}]")
    try:
        return any(os.readlink(fd) in listening for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # the process has gone
        return False
