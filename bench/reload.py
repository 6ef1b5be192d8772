"""Reloads and restarts under load: does any request fail, and how long does the service go
with no answer at all? Two paths, each under 8 and 32 connections (docs/operations.md):

- `hup`: one instance started with the web unit's ExecStart line, sent what its ExecReload
  sends (HUP) twice: new workers fork from the master's app (the same code and settings);
- `rolling`: two instances behind nginx (deploy/nginx/app.conf), restarted one at a time by
  `deploy/rolling-restart`, as for a new release. Its RESTART command is answered here as
  systemd would: TERM, wait for the exit, start with the ExecStart line, return once the new
  master reports READY=1 on NOTIFY_SOCKET (the unit's Type=notify).

The load is anonymous reads (discovery by bounds, the status) on PostgreSQL at 127.0.0.1:5432
with APP_ENV=production; a GET that meets a keep-alive connection nginx closed is sent again
once, as browsers do. Per run: requests, errors, the longest time with no answer, p50
and p99. Exits 1 on any error or a gap over 1 s. Not part of `.ci/run` (it takes minutes).

  .venv/bin/python bench/reload.py [--connections 8 32] [--runs 2] [--seconds 12]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

sys.path.insert(0, str(Path(__file__).resolve().parent))
from topology import Rig, free_port, production_settings, rolling_restart, start_nginx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
UNIT = ROOT / "deploy" / "systemd" / "location-notes-web@.service"


def exec_start(port: int) -> list[str]:
    """The unit's ExecStart line for instance `port`, with this checkout for /srv/location-notes."""
    line = next(
        line.partition("=")[2]
        for line in UNIT.read_text().splitlines()
        if line.startswith("ExecStart=")
    )
    line = line.replace("%i", str(port)).replace("/srv/location-notes/.venv/bin/", f"{BIN}/")
    return shlex.split(line)


class Instance:
    """One gunicorn as its unit runs it; `start` returns once READY=1 arrived."""

    def __init__(self, rig: Rig, port: int) -> None:
        self.rig, self.port = rig, port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        notify = self.rig.work / f"notify-{self.port}"
        notify.unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(str(notify))
        listener.settimeout(120)
        started = time.monotonic()
        log = (self.rig.work / f"app-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            exec_start(self.port),
            cwd=ROOT,
            env={**os.environ, **self.rig.settings, "NOTIFY_SOCKET": str(notify)},
            stdout=log,
            stderr=log,
        )
        try:
            while b"READY=1" not in listener.recv(4096):
                pass
        finally:
            listener.close()
        return time.monotonic() - started

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)

    def reload(self) -> None:
        if self.process is None:
            raise RuntimeError("not started")
        self.process.send_signal(signal.SIGHUP)  # ExecReload: kill -s HUP $MAINPID


@dataclass
class Load:
    base: str
    stop: threading.Event = field(default_factory=threading.Event)
    answered: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def run(self, seed: int) -> None:
        session = requests.Session()
        # A GET that meets a keep-alive connection nginx closed (a reload retires its old
        # workers) is sent again once, as browsers do (bench/topology.py's load does too).
        retry = Retry(total=1, connect=1, read=1, status=0, allowed_methods={"GET"})
        session.mount("http://", HTTPAdapter(max_retries=retry))
        generator = random.Random(seed)
        while not self.stop.is_set():
            if generator.random() < 0.7:
                lat, lon = generator.uniform(47, 54), generator.uniform(6, 14)
                url = (
                    f"{self.base}/api/notes/public/bounds?minLatitude={lat}&minLongitude={lon}"
                    f"&maxLatitude={lat + 0.5}&maxLongitude={lon + 0.5}"
                )
            else:
                url = f"{self.base}/api/system/status"
            sent = time.monotonic()
            try:
                response = session.get(url, timeout=30)
                if response.status_code != 200:
                    self.errors.append(f"{response.status_code} {response.text[:120]}")
            except requests.RequestException as error:
                self.errors.append(type(error).__name__)
            now = time.monotonic()
            self.answered.append(now)
            self.latencies.append(now - sent)


def under_load(base: str, connections: int, seconds: float, act) -> dict[str, object]:
    """`act()` a third of the way into `seconds` of load from `connections` threads."""
    load = Load(base)
    threads = [threading.Thread(target=load.run, args=(n,)) for n in range(connections)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds / 3)
    act()
    time.sleep(max(0.0, seconds - (time.monotonic() - began)))
    load.stop.set()
    for thread in threads:
        thread.join()
    times = sorted([began, *load.answered])
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    latencies = sorted(load.latencies)
    return {
        "requests": len(load.answered),
        "errors": len(load.errors),
        "first errors": load.errors[:3],
        "longest gap s": round(max(gaps), 3),
        "p50 ms": round(statistics.median(latencies) * 1000, 1),
        "p99 ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 1),
    }


def settings(database: str, workers: int) -> dict[str, str]:
    return {
        **production_settings(),
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:5432/{database}",
        "RATELIMIT_STORAGE_URI": "redis://127.0.0.1:6379/8",
        "TRUSTED_PROXIES": "127.0.0.1",
        "WEB_CONCURRENCY": str(workers),
        "ACCESS_LOG": "off",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "WARNING",
    }


def hup_path(rig: Rig, connections: int, seconds: float) -> dict[str, object]:
    instance = Instance(rig, free_port())
    instance.start()
    try:

        def twice() -> None:
            instance.reload()
            time.sleep(seconds / 6)
            instance.reload()

        return under_load(f"http://127.0.0.1:{instance.port}", connections, seconds, twice)
    finally:
        instance.stop()


def rolling_path(rig: Rig, connections: int, seconds: float) -> dict[str, object]:
    """deploy/rolling-restart over two instances behind nginx (topology.rolling_restart),
    each restart played as systemd plays it for the unit."""
    rig.app_ports = [free_port(), free_port()]
    rig.uploads_port = free_port()  # no uploads instance: upload POSTs would use the app's
    instances = {f"location-notes-web@{port}": Instance(rig, port) for port in rig.app_ports}
    for instance in instances.values():
        instance.start()
    start_nginx(rig)
    ready_seconds: list[float] = []

    def restart(unit: str) -> None:
        instances[unit].stop()
        ready_seconds.append(instances[unit].start())

    def roll() -> None:
        rolling_restart(rig, rig.app_ports, restart)

    try:
        result = under_load(rig.proxy, connections, seconds, roll)
        result["ready after start s"] = [round(value, 2) for value in ready_seconds]
        return result
    finally:
        for instance in instances.values():
            instance.stop()
        rig.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--paths", nargs="+", default=["hup", "rolling"])
    args = parser.parse_args()
    database = f"reload_{int(time.time())}"
    admin = psycopg2.connect(ADMIN)
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{database}"')
    base = settings(database, args.workers)
    subprocess.run(
        [str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT,
        env={**os.environ, **base},
        check=True,
        capture_output=True,
    )
    failed = False
    try:
        for run in range(1, args.runs + 1):
            for connections in args.connections:
                for path in args.paths:
                    work = Path(tempfile.mkdtemp(prefix="reload-"))
                    work.chmod(0o755)
                    rig = Rig(work=work, database=database, settings=base)
                    measure = hup_path if path == "hup" else rolling_path
                    result = measure(rig, connections, args.seconds)
                    failed |= bool(result["errors"]) or float(result["longest gap s"]) > 1.0
                    print(
                        json.dumps(
                            {"run": run, "path": path, "connections": connections, **result}
                        ),
                        flush=True,
                    )
    finally:
        admin.cursor().execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        admin.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
