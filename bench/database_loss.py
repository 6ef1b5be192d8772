"""A lost database, measured: gunicorn (default settings, one sync worker) serves the app
through a TCP proxy in front of the local PostgreSQL; the proxy then black-holes the path
(connections open, nothing answered) or resets it (a stopped server), and this times the
first request after the loss, the ones after it, /readyz, and the recovery once the path
is back. A measuring tool, not a test: run by hand.

    .venv/bin/python bench/database_loss.py               # database bench_database_loss
    .venv/bin/python bench/database_loss.py --following 20
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.db_proxy import CuttableProxy  # noqa: E402 - the repository on the path first

SERVER = "postgresql://postgres@127.0.0.1:5432"
ROUTE = "/api/notes/public/nearby?latitude=1&longitude=1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(name: str) -> str:
    import psycopg2

    connection = psycopg2.connect(f"{SERVER}/postgres")
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    url = f"{SERVER}/{name}"
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "WARNING"}
    flask = [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"]
    subprocess.run(flask, cwd=ROOT, env=env, check=True, capture_output=True)
    return url


def start_server(url: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "LOG_LEVEL": "ERROR",
        "RATELIMIT_ENABLED": "false",
        "ACCESS_LOG": "off",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(150):
        if request(port, "/healthz")[0] == 200:
            return server
        time.sleep(0.2)
    server.kill()
    raise SystemExit("gunicorn did not start")


def request(port: int, path: str) -> tuple[int | None, float]:
    """Status (None: no answer) and wall time of one GET."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as response:
            status: int | None = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:
        status = None
    return status, time.monotonic() - started


def measure(proxy: CuttableProxy, port: int, mode: str, following: int) -> dict[str, object]:
    proxy.restore()
    deadline = time.monotonic() + 30
    while request(port, ROUTE)[0] != 200 or request(port, "/readyz")[0] != 200:
        if time.monotonic() > deadline:
            raise SystemExit("the app did not recover before the run")
        time.sleep(0.5)
    getattr(proxy, mode)()
    first = request(port, ROUTE)
    then = [request(port, ROUTE) for _ in range(following)]
    ready = [request(port, "/readyz") for _ in range(5)]
    spaced = []  # one request every 0.25 s for 3 s: probes (one a second) included
    for _ in range(12):
        spaced.append(request(port, ROUTE))
        time.sleep(0.25)
    proxy.restore()
    recover(port)
    getattr(proxy, mode)()
    ready_first = request(port, "/readyz")  # the readiness check meets the loss first
    proxy.restore()
    back = time.monotonic()
    recover(port)
    recovered = time.monotonic() - back
    times = [seconds for _, seconds in then]
    return {
        "mode": mode,
        "first": first,
        "following statuses": sorted({status for status, _ in then}, key=str),
        "following p50": statistics.median(times),
        "following max": max(times),
        "readyz": [(status, round(seconds, 3)) for status, seconds in ready],
        "spaced max": max(seconds for _, seconds in spaced),
        "spaced statuses": sorted({status for status, _ in spaced}, key=str),
        "readyz first": ready_first,
        "recovered after": recovered,
    }


def recover(port: int) -> None:
    while request(port, ROUTE)[0] != 200:
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="bench_database_loss")
    parser.add_argument("--following", type=int, default=20)
    args = parser.parse_args()
    url = prepare(args.database)
    proxy = CuttableProxy(("127.0.0.1", 5432))
    port = free_port()
    server = start_server(url.replace(":5432/", f":{proxy.port}/"), port)
    try:
        for mode in ("black_hole", "cut"):
            result = measure(proxy, port, mode, args.following)
            status, seconds = result["first"]  # type: ignore[misc]
            print(f"{mode}: first request {status} in {seconds:.3f} s")
            print(
                f"  next {args.following}: {result['following statuses']}, "
                f"p50 {result['following p50']:.4f} s, max {result['following max']:.4f} s"
            )
            print(f"  /readyz: {result['readyz']}")
            print(
                f"  every 0.25 s for 3 s: {result['spaced statuses']}, "
                f"max {result['spaced max']:.3f} s"
            )
            ready_status, ready_seconds = result["readyz first"]  # type: ignore[misc]
            print(f"  /readyz as the first request: {ready_status} in {ready_seconds:.3f} s")
            print(f"  recovered {result['recovered after']:.2f} s after the path was back")
    finally:
        server.terminate()
        server.wait(timeout=30)
        proxy.close()


if __name__ == "__main__":
    main()
