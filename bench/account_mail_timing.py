"""Does the answer time of forgotPassword / resendConfirmationEmail tell who is registered?

Serves the app with gunicorn (one sync worker, rate limits off) on its own PostgreSQL
database, registers one unconfirmed account, then asks both routes about that address
and about unknown ones, alternating which goes first, and compares the medians. Target:
the medians agree within 1 ms over 200 samples each (bench/README.md).

    .venv/bin/python bench/account_mail_timing.py [--samples 200] [--root CHECKOUT]

`--root` serves another checkout of the app (for a before/after comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notes_discovery import PORT, ensure_database, percentile, receive

ROOT = Path(__file__).resolve().parent.parent
SERVER = "postgresql://postgres@127.0.0.1:5432"
DATABASE = "bench_identity"
ROUTES = ("/api/auth/forgotPassword", "/api/auth/resendConfirmationEmail")
KNOWN = "registered.walker@example.com"
PASSWORD = "a long and quite strong password 42"  # noqa: S105 - a bench account


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    return parser.parse_args()


def start_server(url: str, root: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PORT": str(PORT),
        "WEB_CONCURRENCY": "1",
        "LOG_LEVEL": "WARNING",
        "RATELIMIT_ENABLED": "false",
    }
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"]
    server = subprocess.Popen(
        [*command, "--access-logfile", "/dev/null", "wsgi:app"],
        cwd=root,
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


def post(path: str, body: dict[str, str]) -> tuple[int, float]:
    """Status and wall time, connect to last byte, on a plain socket (as notes_discovery)."""
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{PORT}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", PORT), timeout=30) as sock:
        sock.sendall(head.encode() + data)
        received = bytearray()
        while (end := received.find(b"\r\n\r\n")) < 0:
            received += receive(sock, path)
        lines = received[:end].decode("latin-1").split("\r\n")
        length = next(
            int(line.split(":", 1)[1])
            for line in lines
            if line.lower().startswith("content-length")
        )
        body_read = len(received) - end - 4
        while body_read < length:
            body_read += len(receive(sock, path))
    return int(lines[0].split()[1]), time.perf_counter() - started


def main() -> None:
    args = parse_args()
    url = ensure_database(SERVER, DATABASE, reseed=True)
    server = start_server(url, args.root)
    try:
        status, _ = post(
            "/api/auth/register",
            {"email": KNOWN, "password": PASSWORD, "userName": "registered_walker"},
        )
        if status != 200:
            raise SystemExit(f"register: HTTP {status}")
        print(f"{args.root.name}: {args.samples} samples per side (ms)")
        print(f"{'route':38} {'known p50':>10} {'unknown p50':>12} {'diff':>7} {'known p95':>10}")
        for route in ROUTES:
            known: list[float] = []
            unknown: list[float] = []
            for index in range(args.samples + 10):
                stranger = f"nobody.{index}@example.com"
                pairs = [(known, KNOWN), (unknown, stranger)]
                for times, email in pairs if index % 2 else reversed(pairs):
                    status, elapsed = post(route, {"email": email})
                    if status != 200:
                        raise SystemExit(f"{route}: HTTP {status}")
                    if index >= 10:  # warm-up
                        times.append(elapsed * 1000)
            known_p50, unknown_p50 = statistics.median(known), statistics.median(unknown)
            print(
                f"{route:38} {known_p50:10.2f} {unknown_p50:12.2f} "
                f"{known_p50 - unknown_p50:+7.2f} {percentile(known, 0.95):10.2f}"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
