#!/usr/bin/env python3
"""Benchmark: public discovery against its floor, and the trivial routes against hello.

    .venv/bin/python bench/discovery_floor.py [--requests 200] [--seconds 10]

1. Creates, migrates and seeds `bench_notes` as bench/notes_discovery.py does (1,000,000
   notes; reused when already there).
2. Serves three apps with gunicorn, 4 sync workers each, access log off: the API
   (gunicorn.conf.py), the discovery floor (bench/floor_app.py: plain psycopg2, the best
   statement per window size, orjson, no project code) and the hello floor
   (bench/hello_app.py: hello-world Flask).
3. Checks that the API and the floor return the same records in the same order (and the
   same truncation) for about 200 windows: city (0.05 degrees around each of the 40 largest
   cities), region (2 degrees), world and nearby (5 km), each with and without a language.
4. Times each scenario request by request, API and floor in turn (each going first half
   of the time), over a fresh connection each (sync workers close them), and prints p50,
   p95 and api/floor.
5. Throughput with wrk (Debian `wrk`) at 8 and 32 connections: the discovery mix (every
   scenario's windows in turn) against the floor, and `GET /healthz` and an authenticated
   `GET /api/auth/manage/info` against hello.

A measuring tool, not a test: it asserts nothing but the equality of the result sets, and
bounds every loop. The targets are printed next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from notes_discovery import cities, ensure_database, percentile, seed  # noqa: E402

API_PORT, FLOOR_PORT, HELLO_PORT = 8765, 8766, 8767
CITY = 0.05  # half-size in degrees (longitude x 1.6: about square at 50 degrees north)
REGION = 2.0
LANGUAGES = ("en", "de", "ja")
WORLD = {"minLatitude": -90.0, "minLongitude": -180.0, "maxLatitude": 90.0, "maxLongitude": 180.0}
TARGET_P50, TARGET_P95, TARGET_THROUGHPUT, TARGET_TRIVIAL = 1.3, 2.0, 0.8, 0.5


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_notes")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=200, help="timed per scenario")
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--no-wrk", action="store_true")
    return parser.parse_args()


# --- servers -----------------------------------------------------------------------------


def start(name: str, port: int, command: list[str], env: dict[str, str]) -> subprocess.Popen:
    server = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **env, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(150):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except urllib.error.HTTPError:  # it answers (the floor has no /healthz)
            return server
        except OSError:
            time.sleep(0.2)
    stop([server])
    raise SystemExit(f"{name} did not start")


def stop(servers: list[subprocess.Popen]) -> None:
    for server in servers:
        server.send_signal(signal.SIGTERM)
    for server in servers:
        server.wait(timeout=30)


def gunicorn(workers: int, app: str, *options: str) -> list[str]:
    """The floors' gunicorn: what gunicorn.conf.py sets for the API (sync workers, their
    timeouts, no access log), without the API's own worker and logger classes."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        # Not ./gunicorn.conf.py, which gunicorn reads from the working directory unless
        # told otherwise: the floors run with gunicorn's own defaults plus what is below.
        "--config",
        "/dev/null",
        "--bind",
        "127.0.0.1:" + "{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "sync",
        "--timeout",
        "30",
        "--graceful-timeout",
        "20",
        *options,
        app,
    ]


def start_api(url: str, workers: int, port: int = API_PORT) -> subprocess.Popen:
    """The API as production runs it (gunicorn.conf.py), access log off, on `port`."""
    api_env = {
        "DATABASE_URL": url,
        "WEB_CONCURRENCY": str(workers),
        "ACCESS_LOG": "off",
        "LOG_LEVEL": "WARNING",
    }
    api = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
    return start("the API", port, api, api_env)


def start_floor(name: str, port: int, workers: int, app: str, url: str) -> subprocess.Popen:
    """A floor app (`bench.<module>:app`) under plain gunicorn (`gunicorn`) on `port`."""
    command = [part.replace("{port}", str(port)) for part in gunicorn(workers, app)]
    return start(name, port, command, {"DATABASE_URL": url})


def start_all(url: str, workers: int) -> list[subprocess.Popen]:
    servers = [start_api(url, workers)]
    try:
        for name, port, app in (
            ("the floor", FLOOR_PORT, "bench.floor_app:app"),
            ("hello", HELLO_PORT, "bench.hello_app:app"),
        ):
            servers.append(start_floor(name, port, workers, app, url))
    except BaseException:
        stop(servers)
        raise
    return servers


# --- requests ----------------------------------------------------------------------------


def fetch(port: int, path: str, token: str | None = None) -> tuple[float, int, dict, bytes]:
    """One request over a plain socket (HTTP/1.1, Connection: close): wall time, status,
    headers (lower-case names) and body of exactly Content-Length bytes."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request.encode())
        received = bytearray()
        while (end := received.find(b"\r\n\r\n")) < 0:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit(f"{path}: closed early")
            received += chunk
        lines = received[:end].decode("latin-1").split("\r\n")
        headers = {
            name.strip().lower(): value.strip()
            for name, value in (line.split(":", 1) for line in lines[1:])
        }
        length = int(headers.get("content-length", "0"))
        while len(received) - end - 4 < length:
            chunk = sock.recv(1 << 20)
            if not chunk:
                raise SystemExit(f"{path}: closed early")
            received += chunk
    elapsed = time.perf_counter() - started
    return elapsed, int(lines[0].split()[1]), headers, bytes(received[end + 4 :])


def scenarios() -> dict[str, list[str]]:
    """Eight scenarios, each a list of paths; `+lang` ones rotate through LANGUAGES."""
    places = cities(40)
    found: dict[str, list[str]] = {}
    for language in (None, *LANGUAGES):
        suffix = "" if language is None else "+lang"
        extra = {} if language is None else {"contentLanguage": language}
        for name, half in (("city", CITY), ("region", REGION)):
            found.setdefault(name + suffix, []).extend(
                "/api/notes/public/bounds?"
                + urlencode(
                    {
                        "minLatitude": max(-90.0, latitude - half),
                        "minLongitude": max(-180.0, longitude - half * 1.6),
                        "maxLatitude": min(90.0, latitude + half),
                        "maxLongitude": min(180.0, longitude + half * 1.6),
                        **extra,
                    }
                )
                for latitude, longitude, _ in places
            )
        found.setdefault("world" + suffix, []).append(
            "/api/notes/public/bounds?" + urlencode({**WORLD, **extra})
        )
        found.setdefault("nearby" + suffix, []).extend(
            "/api/notes/public/nearby?"
            + urlencode({"latitude": latitude, "longitude": longitude, **extra})
            for latitude, longitude, _ in places
        )
    rng = random.Random(17)
    for paths in found.values():
        rng.shuffle(paths)  # languages and cities mixed
    return {name: found[name] for name in sorted(found, key=lambda n: (n.split("+")[0], n))}


def compare(paths: dict[str, list[str]], per_scenario: int) -> int:
    """The API and the floor give the same records in the same order: returns how many
    windows were compared (distinct paths)."""
    checked = 0
    for name, scenario in paths.items():
        for path in scenario[:per_scenario]:
            _, api_status, api_headers, api_body = fetch(API_PORT, path)
            _, floor_status, floor_headers, floor_body = fetch(FLOOR_PORT, path)
            if api_status != 200 or floor_status != 200:
                raise SystemExit(f"{path}: API {api_status}, floor {floor_status}")
            api_rows, floor_rows = json.loads(api_body), json.loads(floor_body)
            if api_rows != floor_rows:
                api_ids = [row["noteId"] for row in api_rows]
                floor_ids = [row["noteId"] for row in floor_rows]
                raise SystemExit(
                    f"{name} {path}: different results (ids equal: {api_ids == floor_ids}, "
                    f"{len(api_ids)} against {len(floor_ids)})"
                )
            truncated = (
                api_headers.get("x-result-truncated"),
                floor_headers.get("x-result-truncated"),
            )
            if truncated[0] != truncated[1]:
                raise SystemExit(f"{path}: truncation differs {truncated}")
            checked += 1
    return checked


def time_pair(
    first: int, second: int, paths: list[str], count: int, token: str | None = None
) -> tuple[list[float], list[float]]:
    """Request by request in turn, each side first half of the time; ten warm-up each."""
    times: dict[int, list[float]] = {first: [], second: []}
    for number in range(count + 10):
        path = paths[number % len(paths)]
        order = (first, second) if number % 2 else (second, first)
        for port in order:
            elapsed, status, _, _ = fetch(port, path, token)
            if status != 200:
                raise SystemExit(f"{port} {path}: HTTP {status}")
            if number >= 10:
                times[port].append(elapsed * 1000)
    return times[first], times[second]


def wrk(port: int, paths: list[str], connections: int, seconds: int, token: str = "") -> float:
    """Requests per second under wrk, `paths` in turn (bench/wrk_paths.lua)."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(paths) + "\n")
    try:
        result = subprocess.run(
            [
                "wrk",
                "-t",
                "2",
                "-c",
                str(connections),
                "-d",
                f"{seconds}s",
                "-s",
                str(ROOT / "bench" / "wrk_paths.lua"),
                f"http://127.0.0.1:{port}",
            ],
            env={**os.environ, "WRK_PATHS": listing.name, "WRK_BEARER": token},
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(listing.name)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
    if errors:
        raise SystemExit(f"wrk on {port}: {errors.group(1)} failed responses")
    found = re.search(r"Requests/sec:\s+([\d.]+)", result.stdout)
    if not found:
        raise SystemExit(f"wrk printed no rate: {result.stdout} {result.stderr}")
    return float(found.group(1))


def sign_in() -> str:
    """An access token of the first seeded user (bench/notes_discovery.seed_users)."""
    body = json.dumps({"email": "bench0@example.com", "password": "bench-password-not-for-use"})
    request = urllib.request.Request(
        f"http://127.0.0.1:{API_PORT}/api/auth/login?useCookies=false&useSessionCookies=false",
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - http only
        return str(json.load(response)["accessToken"])


# --- report ------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=False)
    seed(url, notes=args.notes, users=args.users)
    paths = scenarios()
    print(f"load average before: {load()}")
    servers = start_all(url, args.workers)
    try:
        compared = compare(paths, per_scenario=35)
        print(f"same records, same order, same truncation: {compared} windows")
        timed: dict[str, tuple[list[float], list[float]]] = {}
        for name, scenario in paths.items():
            timed[name] = time_pair(API_PORT, FLOOR_PORT, scenario, args.requests)
        rates: dict[str, tuple[float, float]] = {}
        token = sign_in()
        if not args.no_wrk:
            mix = [path for scenario in paths.values() for path in scenario]
            random.Random(3).shuffle(mix)
            for connections in (8, 32):
                floor = wrk(FLOOR_PORT, mix, connections, args.seconds)
                api = wrk(API_PORT, mix, connections, args.seconds)
                rates[f"discovery c={connections}"] = (api, floor)
                for route in ("/healthz", "/api/auth/manage/info"):
                    hello = wrk(HELLO_PORT, [route], connections, args.seconds, token)
                    api = wrk(API_PORT, [route], connections, args.seconds, token)
                    rates[f"{route} c={connections}"] = (api, hello)
        trivial = {
            route: time_pair(API_PORT, HELLO_PORT, [route], args.requests, token)
            for route in ("/healthz", "/api/auth/manage/info")
        }
    finally:
        stop(servers)
    print(f"load average after: {load()}")
    print(f"\n{args.notes:,} notes, {args.requests} requests per scenario, times in ms")
    print(
        f"{'scenario':<12} {'api p50':>8} {'api p95':>8} {'floor p50':>9} {'floor p95':>9}"
        f" {'p50 x':>6} {'p95 x':>6}  targets {TARGET_P50} / {TARGET_P95}"
    )
    for name, (api, floor) in timed.items():
        p50 = statistics.median(api) / statistics.median(floor)
        p95 = percentile(api, 0.95) / percentile(floor, 0.95)
        print(
            f"{name:<12} {statistics.median(api):8.2f} {percentile(api, 0.95):8.2f}"
            f" {statistics.median(floor):9.2f} {percentile(floor, 0.95):9.2f}"
            f" {p50:6.2f} {p95:6.2f}  {verdict(p50 <= TARGET_P50)} / {verdict(p95 <= TARGET_P95)}"
        )
    print("\ntrivial routes, one at a time (ms)")
    for route, (api, hello) in trivial.items():
        print(
            f"{route:<24} api p50 {statistics.median(api):.2f} p95 {percentile(api, 0.95):.2f}"
            f"  hello p50 {statistics.median(hello):.2f} p95 {percentile(hello, 0.95):.2f}"
        )
    if rates:
        print(f"\nthroughput under wrk, {args.seconds} s each (requests/s)")
        for name, (api, other) in rates.items():
            target = TARGET_THROUGHPUT if name.startswith("discovery") else TARGET_TRIVIAL
            against = "floor" if name.startswith("discovery") else "hello"
            ratio = api / other
            print(
                f"{name:<34} api {api:8.1f}  {against} {other:8.1f}  {ratio:5.2f}"
                f" >= {target} {verdict(ratio >= target)}"
            )


if __name__ == "__main__":
    main()
