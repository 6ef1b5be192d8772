#!/usr/bin/env python3
"""Benchmark: the fixed cost of a request, by plain wrk and by the server's CPU time.

    .venv/bin/python bench/request_cost.py [--rounds 4] [--seconds 10] [--connections 8]

The API (gunicorn.conf.py, 4 sync workers, access log off) and three floors, each under
plain gunicorn with as many sync workers: hello (bench/hello_app.py: the same bodies,
nothing read), hello+read (bench/hello_read_app.py: hello plus the least an
authenticated read must do, the token verified with PyJWT and its account read with
psycopg2) and stack (bench/stack_app.py: the design card's libraries used as their
documentation shows, none of the service's code). The API and hello serve `GET
/healthz` and an authenticated `GET /api/auth/manage/info` (a bearer token of a seeded
account); the two other floors the authenticated read. Each round runs plain wrk (one
URL, no Lua script: the client stays far from saturating two cores) against each server
and path in turn, the order reversed every other round. For each run it reads the CPU
time the server's processes spent (master and workers, from /proc, workers reaped by
the master included) and PostgreSQL's, and divides by the requests wrk counted.

Printed per round and as medians: requests per second, server CPU ms per request,
database CPU ms per request, each server's figures as ratios of hello's, and the API's
authenticated read against the two other floors. The targets: the
authenticated read at least 0.5 x hello's rate, and at most 2 x hello's server CPU per
request. A measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from discovery_floor import (  # noqa: E402
    API_PORT,
    HELLO_PORT,
    load,
    sign_in,
    start_api,
    start_floor,
    stop,
)
from notes_discovery import ensure_database, seed  # noqa: E402

PATHS = {"healthz": "/healthz", "auth read": "/api/auth/manage/info"}
# The floors beside hello (each under plain gunicorn, the API's worker count): hello plus
# the least an authenticated read must do, and the design card's stack used as its
# libraries document it (bench/hello_read_app.py, bench/stack_app.py).
FLOORS = (
    ("hello", HELLO_PORT, "bench.hello_app:app"),
    ("hello+read", HELLO_PORT + 1, "bench.hello_read_app:app"),
    ("stack", HELLO_PORT + 2, "bench.stack_app:app"),
)
# Which servers each path is measured on (the floors only where they differ from hello).
RUNS = {"healthz": ("api", "hello"), "auth read": ("api", "hello", "hello+read", "stack")}
BENCH_JWT_KEY = "bench-only-signing-key-not-for-use-anywhere-0123456789"
TARGET_RATE, TARGET_CPU = 0.5, 2.0
TICKS = os.sysconf("SC_CLK_TCK")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_request_cost")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4)
    return parser.parse_args()


def cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and of its children: the live ones, and (through the parent's
    cutime and cstime) those it has reaped, such as workers gunicorn replaced."""
    total = 0.0
    for process in [pid, *children(pid)]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rpartition(")")[2].split()
        except FileNotFoundError:  # gone between the listing and the read
            continue
        own = int(fields[11]) + int(fields[12])  # utime, stime
        reaped = int(fields[13]) + int(fields[14]) if process == pid else 0
        total += (own + reaped) / TICKS
    return total


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(child) for child in text)
    return found


def postmaster() -> int:
    out = subprocess.run(["pgrep", "-o", "-x", "postgres"], capture_output=True, text=True)
    if not out.stdout.strip():
        raise SystemExit("no PostgreSQL server process found")
    return int(out.stdout.split()[0])


def wrk(port: int, path: str, connections: int, seconds: int, token: str) -> tuple[float, int]:
    """Plain wrk on one URL: (requests per second, requests completed)."""
    command = ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s"]
    if token:
        command += ["-H", f"Authorization: Bearer {token}"]
    result = subprocess.run(
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    )
    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
    errors = re.search(r"Socket errors: .*", result.stdout)
    if failed or errors:
        raise SystemExit(f"wrk on {port}{path}: {result.stdout}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
    count = re.search(r"(\d+) requests in", result.stdout)
    if not rate or not count:
        raise SystemExit(f"wrk printed no rate: {result.stdout} {result.stderr}")
    return float(rate.group(1)), int(count.group(1))


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=False)
    seed(url, notes=1000, users=10)  # the accounts sign in as bench0; notes are not read
    # One signing key for the API and the floors that verify its tokens.
    os.environ["JWT_SECRET_KEY"] = BENCH_JWT_KEY
    print(f"load average before: {load()}")
    servers = {"api": (start_api(url, args.workers), API_PORT)}
    try:
        for name, port, app in FLOORS:
            servers[name] = (start_floor(name, port, args.workers, app, url), port)
    except BaseException:
        stop([server for server, _ in servers.values()])
        raise
    database = postmaster()
    token = sign_in()
    runs = [(name, label) for label, names in RUNS.items() for name in names]
    figures: dict[tuple[str, str], list[tuple[float, float, float]]] = {run: [] for run in runs}
    try:
        for name, label in runs:  # warm every worker
            wrk(servers[name][1], PATHS[label], args.connections, 2, token)
        for number in range(args.rounds):
            order = runs if number % 2 == 0 else runs[::-1]
            for name, label in order:
                server, port = servers[name]
                before = cpu_seconds(server.pid), cpu_seconds(database)
                rate, count = wrk(port, PATHS[label], args.connections, args.seconds, token)
                spent = cpu_seconds(server.pid) - before[0], cpu_seconds(database) - before[1]
                per_request = (spent[0] / count * 1000, spent[1] / count * 1000)
                figures[(name, label)].append((rate, *per_request))
                print(
                    f"round {number + 1} {name:10} {label:9}: {rate:8.1f} req/s, "
                    f"server {per_request[0]:.3f} ms/req, database {per_request[1]:.3f} ms/req",
                    flush=True,
                )
    finally:
        stop([server for server, _ in servers.values()])
    print(f"load average after: {load()}")
    print(f"\nmedians of {args.rounds} rounds, {args.connections} connections, plain wrk:")
    print("| path | server | req/s | rate x hello | CPU ms | CPU x hello | db CPU ms |")
    print("|---|---|---|---|---|---|---|")
    for label, names in RUNS.items():
        hello = medians(figures[("hello", label)])
        for name in names:
            own = medians(figures[(name, label)])
            print(
                f"| {label} | {name} | {own[0]:.1f} | {own[0] / hello[0]:.2f} | {own[1]:.3f} "
                f"| {own[1] / hello[1]:.2f} | {own[2]:.3f} |"
            )
    api, hello = medians(figures[("api", "auth read")]), medians(figures[("hello", "auth read")])
    rate_ratio, cpu_ratio = api[0] / hello[0], api[1] / hello[1]
    rate_ok = "ok" if rate_ratio >= TARGET_RATE else "MISSED"
    cpu_ok = "ok" if cpu_ratio <= TARGET_CPU else "MISSED"
    print(
        f"auth read: rate {rate_ratio:.2f} x hello (target >= {TARGET_RATE}: {rate_ok}), "
        f"CPU {cpu_ratio:.2f} x hello (target <= {TARGET_CPU}: {cpu_ok})"
    )
    for name in ("hello+read", "stack"):
        floor = medians(figures[(name, "auth read")])
        print(
            f"auth read against {name}: rate {api[0] / floor[0]:.2f} x, "
            f"CPU {api[1] / floor[1]:.2f} x"
        )


def medians(runs: list[tuple[float, float, float]]) -> list[float]:
    """Per column (rate, server CPU, database CPU), the median over the rounds."""
    return [statistics.median(run[column] for run in runs) for column in range(3)]


if __name__ == "__main__":
    main()
