#!/usr/bin/env python3
"""Benchmark: discovery's p99 while 12-megapixel photos are uploaded.

    PYTHONPATH=. .venv/bin/python bench/uploads_under_load.py [--rounds 3] [--seconds 20]

1. Creates, migrates and seeds `uploads_bench` on the local PostgreSQL as
   bench/notes_discovery.py does, with 200,000 notes (reused when already there).
2. Serves the app with gunicorn.conf.py twice: the app's pool (4 sync workers) and the
   image uploads' pool (1 sync worker, as deploy/ ships it, under `nice -n 10` as
   location-notes-uploads.service runs it), and puts two Debian nginx in front, both
   with deploy/nginx/app.conf: "one pool", whose `location_notes_uploads` is the app's
   pool itself (every request on the same 4 workers, as before the pools were split), and "split",
   with deploy/nginx/upstream.conf as shipped (the uploads to their own pool, the app's
   as its backup).
3. Makes a 12-megapixel (4000x3000) photo-like JPEG with Pillow (bench/images_pipeline.py's
   picture: gradients, shapes, sensor grain; quality 90), signs in a seeded account and
   makes a note for each uploading client.
4. Rounds of three phases, interleaved (a, b, c, a, b, c, ...), each `--seconds` long:
   (a) discovery alone; (b) discovery while `--uploaders` clients keep uploading the photo
   (`POST /api/images/notes/{id}`, one after another, each client) through the one-pool
   nginx; (c) the same through the split nginx. Discovery runs open-loop at `--rate`
   requests a second (alternating bounds of a city window and nearby, around the 30
   largest cities), each timed from its scheduled start to its last byte, so a request
   that waited for a client thread counts its wait (no coordinated omission).
5. Prints each phase's discovery p50 / p95 / p99 / max, the ratio of the loaded p99 to the
   unloaded one (per round against the same round's (a), and over all rounds pooled), the
   uploads' latency and throughput, and the CPU seconds of each pool, nginx and the whole
   machine during the phase.

A measuring tool, not a test: it asserts nothing and bounds every loop. Target:
(c)'s p99 at most 2 x (a)'s.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import multiprocessing
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from images_pipeline import photo_like  # noqa: E402
from notes_discovery import ensure_database, percentile, scenarios, seed  # noqa: E402

SITE = ROOT / "deploy" / "nginx"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
UPLOADS_NICE = 10  # as location-notes-uploads.service (Nice=10)
# Each server runs in a scheduling group of its own (a session: the kernel's autogroup), as
# each systemd unit has its cgroup; the uploads' group weighs about a fifth of the others
# (nice 7: 223 against 1024), as CPUWeight=20 against the default 100.
UPLOADS_GROUP_NICE = 7
PASSWORD = "bench-password-not-for-use"  # noqa: S105 - notes_discovery.seed_users's accounts
BOUNDARY = "uploads-under-load-boundary"
CLOCK = os.sysconf("SC_CLK_TCK")
TARGET = 2.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="uploads_bench")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--notes", type=int, default=200_000)
    parser.add_argument("--users", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured, each phase")
    parser.add_argument("--rate", type=float, default=40.0, help="discovery requests a second")
    parser.add_argument("--uploaders", type=int, default=4, help="clients uploading at once")
    parser.add_argument("--workers", type=int, default=4, help="the app's pool")
    parser.add_argument("--upload-workers", type=int, default=1, help="the uploads' pool")
    parser.add_argument(
        "--one-group",
        action="store_true",
        help="every server in this script's scheduling group, the uploads' pool only niced "
        "(no group weight: how it runs without a cgroup or session of its own)",
    )
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def wait_for(port: int, what: str, process: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if process.poll() is not None:
            raise SystemExit(f"{what} exited")
        if listening(port):
            return
        time.sleep(0.2)
    raise SystemExit(f"{what} did not start")


# --- servers -----------------------------------------------------------------------------


@dataclass
class Rig:
    work: Path
    one_group: bool = False
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)

    def spawn(
        self, name: str, command: list[str], env: dict[str, str] | None = None, group_nice: int = 0
    ) -> None:
        """Start a server in a session, hence a scheduling group, of its own (unless
        `one_group`)."""
        log = (self.work / f"{name}.log").open("ab")
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=not self.one_group
        )
        self.processes[name] = process
        if group_nice and not self.one_group:
            # Before the workers fork: they are in the same session, hence group.
            Path(f"/proc/{process.pid}/autogroup").write_text(str(group_nice))

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def start_pool(
    rig: Rig, name: str, url: str, workers: int, nice: int = 0, group_nice: int = 0
) -> None:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": url,
        "PORT": str(port),
        "WEB_CONCURRENCY": str(workers),
        "ACCESS_LOG": "off",
        "LOG_LEVEL": "WARNING",
        "GUNICORN_MAX_REQUESTS": "0",  # a worker's CPU time is read until the end
        "TRUSTED_PROXIES": "127.0.0.1",
        "IMAGE_STORAGE": "local",
        "IMAGE_ROOT": str(rig.work / "images"),
        "IMAGES_PER_USER_PER_DAY": "1000000",
        "IMAGES_PER_PARENT_MAX": "1000000",
    }
    command = [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]
    if nice:
        command = ["nice", "-n", str(nice), *command]
    rig.spawn(name, command, env, group_nice)
    rig.ports[name] = port
    wait_for(port, name, rig.processes[name])


def start_nginx(rig: Rig, name: str, uploads_port: int) -> None:
    """nginx with the site's app.conf; its uploads' upstream at `uploads_port` (the
    shipped upstream.conf, the addresses moved) or, at the app's own port, the app alone."""
    directory = rig.work / name
    directory.mkdir()
    for sub in ("logs", "body", "proxy", "cache"):
        (directory / sub).mkdir()
    app_port = rig.ports["app"]
    if uploads_port == app_port:
        upstreams = (
            f"upstream location_notes_app {{ server 127.0.0.1:{app_port}; keepalive 16; }}\n"
            f"upstream location_notes_uploads {{ server 127.0.0.1:{app_port}; keepalive 4; }}\n"
        )
    else:
        upstreams = (SITE / "upstream.conf").read_text()
        upstreams = upstreams.replace("127.0.0.1:8000", f"127.0.0.1:{app_port}")
        upstreams = upstreams.replace("127.0.0.1:8001", f"127.0.0.1:{uploads_port}")
    (directory / "upstream.conf").write_text(upstreams)
    port = free_port()
    user = "user root root;" if os.geteuid() == 0 else ""
    (directory / "nginx.conf").write_text(
        f"""{user}
daemon off;
worker_processes auto;
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    proxy_cache_path {directory}/cache keys_zone=location_notes_static:1m;
    include {directory}/upstream.conf;
    server {{
        listen 127.0.0.1:{port};
        include {SITE / "app.conf"};
    }}
}}
"""
    )
    rig.spawn(name, [NGINX, "-p", str(directory), "-c", str(directory / "nginx.conf")])
    rig.ports[name] = port
    wait_for(port, name, rig.processes[name])


# --- CPU time ----------------------------------------------------------------------------


def process_seconds(pid: int, *, reaped: bool) -> float:
    """utime + stime of `pid` (and of its children it has reaped, when `reaped`)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    if reaped:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / CLOCK


def tree_seconds(root: int) -> float:
    """CPU seconds of a server: its master (with the workers it has reaped) and its live
    workers (every process whose parent is the master)."""
    total = process_seconds(root, reaped=True)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == root:
            total += process_seconds(int(entry.name), reaped=True)
    return total


def machine_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, all cores."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    total = sum(values[:8])  # without guest time, counted in user already
    return (total - idle) / CLOCK, total / CLOCK


def cpu_snapshot(rig: Rig) -> dict[str, float]:
    snapshot = {
        "app": tree_seconds(rig.processes["app"].pid),
        "uploads": tree_seconds(rig.processes["uploads"].pid),
        "nginx": sum(tree_seconds(rig.processes[name].pid) for name in ("one-pool", "split")),
    }
    snapshot["machine"], snapshot["machine total"] = machine_seconds()
    return snapshot


# --- clients -----------------------------------------------------------------------------


def get(port: int, path: str) -> int:
    """One GET over a fresh connection (HTTP/1.1, Connection: close); its status, after
    the last byte of the body (exactly Content-Length bytes)."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                raise OSError("connection closed in the headers")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise OSError("connection closed in the body")
            body += chunk
        return int(lines[0].split()[1])


def discovery(port: int, paths: list[str], rate: float, seconds: float) -> list[float]:
    """Open loop at `rate` a second for `seconds`: the latency (ms) of each request from
    its scheduled start; a failed request counts as infinitely slow."""
    start = time.perf_counter() + 0.05
    count = int(rate * seconds)
    schedule = itertools.count()
    lock = threading.Lock()
    latencies: list[float] = []

    def client() -> None:
        while True:
            with lock:
                number = next(schedule)
            if number >= count:
                return
            due = start + number / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            try:
                ok = get(port, paths[number % len(paths)]) == 200
            except OSError:
                ok = False
            elapsed = (time.perf_counter() - due) * 1000 if ok else float("inf")
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies


def multipart(photo: bytes) -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="photo.jpg"'
        f"\r\nContent-Type: image/jpeg\r\n\r\n".encode()
        + photo
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )


def upload(port: int, path: str, body: bytes, token: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(
            "POST",
            path,
            body=body,
            headers={
                "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
                "Authorization": f"Bearer {token}",
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def upload_until(
    note: str,
    port: int,
    body: bytes,
    token: str,
    stop: threading.Event,
    done: list[tuple[float, int]],
    lock: threading.Lock,
) -> None:
    """One client: the photo to `note`, again and again until `stop`; (seconds, status)
    of each upload into `done` (status 0: the connection failed)."""
    while not stop.is_set():
        started = time.perf_counter()
        try:
            status = upload(port, f"/api/images/notes/{note}", body, token)
        except OSError:
            status = 0
        with lock:
            done.append((time.perf_counter() - started, status))


def uploader_process(pipe: Connection, photo_path: str, token: str, notes: list[str]) -> None:
    """The uploading clients, in a process of their own (their sending does not slow the
    discovery client's threads): on ("start", port) each client uploads the photo to its
    note, one after another, until "stop"; then it sends back (seconds, status) of each
    upload that finished."""
    body = multipart(Path(photo_path).read_bytes())
    while True:
        message = pipe.recv()
        if message is None:
            return
        _, port = message
        stop = threading.Event()
        done: list[tuple[float, int]] = []
        lock = threading.Lock()
        client_args = (port, body, token, stop, done, lock)
        threads = [
            threading.Thread(target=upload_until, args=(note, *client_args)) for note in notes
        ]
        for thread in threads:
            thread.start()
        pipe.recv()  # "stop"
        stop.set()
        for thread in threads:
            thread.join()  # the uploads in flight finish
        pipe.send(done)


def sign_in(port: int) -> str:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/auth/login?useCookies=false&useSessionCookies=false",
        data=json.dumps({"email": "bench0@example.com", "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - http only
        return str(json.load(response)["accessToken"])


def make_note(port: int, token: str, number: int) -> str:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/notes/mine",
        data=json.dumps(
            {"title": f"Photos {number}", "latitude": 52.5, "longitude": 13.4}
            | {"visibility": "Public"}
        ).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - http only
        return str(json.load(response)["noteId"])


# --- the run -----------------------------------------------------------------------------

PHASES = {
    "a": ("unloaded", None),
    "b": ("uploads on the same pool", "one-pool"),
    "c": ("uploads on their own pool", "split"),
}


@dataclass
class Phase:
    key: str
    latencies: list[float]
    uploads: list[tuple[float, int]]
    seconds: float  # from the uploads' start to their last one's end
    cpu: dict[str, float]


def run_phase(
    key: str, rig: Rig, pipe: Connection, paths: list[str], args: argparse.Namespace
) -> Phase:
    _, through = PHASES[key]
    before = cpu_snapshot(rig)
    started = time.perf_counter()
    if through is not None:
        pipe.send(("start", rig.ports[through]))
        time.sleep(2.0)  # the uploads in full swing before discovery is timed
    latencies = discovery(rig.ports[through or "split"], paths, args.rate, args.seconds)
    uploads: list[tuple[float, int]] = []
    if through is not None:
        pipe.send("stop")
        uploads = pipe.recv()
    seconds = time.perf_counter() - started
    after = cpu_snapshot(rig)
    cpu = {name: after[name] - before[name] for name in before}
    return Phase(key, latencies, uploads, seconds, cpu)


def summary(latencies: list[float]) -> str:
    failed = sum(1 for value in latencies if value == float("inf"))
    ok = sorted(value for value in latencies if value != float("inf"))
    if not ok:
        return "no answer"
    text = (
        f"p50 {percentile(ok, 0.50):7.1f}  p95 {percentile(ok, 0.95):7.1f}  "
        f"p99 {p99(latencies):7.1f}  max {ok[-1]:7.1f} ms  (n {len(latencies)})"
    )
    return text + (f", {failed} failed" if failed else "")


def p99(latencies: list[float]) -> float:
    """The 99th percentile, a failed request (inf) counting as the slowest."""
    return percentile(sorted(latencies), 0.99)


def upload_summary(phases: list[Phase]) -> str:
    uploads = [upload for phase in phases for upload in phase.uploads]
    if not uploads:
        return ""
    ok = sorted(seconds * 1000 for seconds, status in uploads if status in {200, 201})
    failed = len(uploads) - len(ok)
    rate = len(ok) / sum(phase.seconds for phase in phases)
    text = (
        f"uploads {len(ok)} ok, {rate:.2f}/s, latency p50 {percentile(ok, 0.5):.0f}  "
        f"p95 {percentile(ok, 0.95):.0f} ms"
    )
    return text + (f", {failed} failed" if failed else "")


def cpu_summary(phases: list[Phase]) -> str:
    seconds = sum(phase.seconds for phase in phases)
    total = {name: sum(phase.cpu[name] for phase in phases) for name in phases[0].cpu}
    cores = total["machine total"] / seconds
    return (
        f"CPU s per s: app's pool {total['app'] / seconds:.2f}, uploads' pool "
        f"{total['uploads'] / seconds:.2f}, nginx {total['nginx'] / seconds:.2f}, "
        f"machine {total['machine'] / seconds:.2f} of {cores:.0f}"
    )


def warm_up(rig: Rig, pipe: Connection, paths: list[str]) -> None:
    """Every worker's first requests (imports, caches, connections) left out of the figures."""
    for name in ("one-pool", "split"):
        discovery(rig.ports[name], paths, 20.0, 3.0)
        pipe.send(("start", rig.ports[name]))
        time.sleep(4.0)
        pipe.send("stop")
        pipe.recv()


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    seed(url, notes=args.notes, users=args.users)
    work = Path(tempfile.mkdtemp(prefix="uploads-under-load-"))
    work.chmod(0o755)
    rig = Rig(work, one_group=args.one_group)
    pipe: Connection | None = None
    uploader: multiprocessing.process.BaseProcess | None = None
    try:
        start_pool(rig, "app", url, args.workers)
        start_pool(
            rig,
            "uploads",
            url,
            args.upload_workers,
            nice=UPLOADS_NICE,
            group_nice=UPLOADS_GROUP_NICE,
        )
        start_nginx(rig, "one-pool", rig.ports["app"])
        start_nginx(rig, "split", rig.ports["uploads"])
        photo_path = work / "photo-12mp.jpg"
        photo_like(4000, 3000).save(photo_path, "JPEG", quality=90)
        token = sign_in(rig.ports["app"])
        notes = [make_note(rig.ports["app"], token, number) for number in range(args.uploaders)]
        windows = scenarios(random.Random(30))
        paths = windows["city"] + windows["nearby"]
        random.Random(30).shuffle(paths)
        grouping = (
            "every server in one scheduling group"
            if args.one_group
            else f"each server in a scheduling group of its own, the uploads' at nice "
            f"{UPLOADS_GROUP_NICE}"
        )
        print(
            f"{args.notes:,} notes; app's pool {args.workers} workers, uploads' pool "
            f"{args.upload_workers} at nice {UPLOADS_NICE}; {grouping}; discovery "
            f"{args.rate:g}/s open loop over {len(paths)} windows; {args.uploaders} clients "
            f"uploading a {photo_path.stat().st_size / 1e6:.1f} MB 4000x3000 JPEG; "
            f"{args.rounds} rounds of {args.seconds:g} s a phase"
        )
        context = multiprocessing.get_context("spawn")
        pipe, child = context.Pipe()
        uploader = context.Process(
            target=uploader_process, args=(child, str(photo_path), token, notes), daemon=True
        )
        uploader.start()
        warm_up(rig, pipe, paths)
        phases: list[Phase] = []
        for number in range(1, args.rounds + 1):
            for key in PHASES:
                phase = run_phase(key, rig, pipe, paths, args)
                phases.append(phase)
                line = f"round {number} ({key}) {summary(phase.latencies)}"
                if key != "a":
                    unloaded = phases[-1 - list(PHASES).index(key)]
                    line += f"  p99 x{p99(phase.latencies) / p99(unloaded.latencies):.2f}"
                print(line, flush=True)
                if phase.uploads:
                    print(f"    {upload_summary([phase])}")
                print(f"    {cpu_summary([phase])}", flush=True)
        print("\nall rounds pooled:")
        unloaded_p99 = p99([value for p in phases if p.key == "a" for value in p.latencies])
        for key, (name, _) in PHASES.items():
            chosen = [phase for phase in phases if phase.key == key]
            latencies = [value for phase in chosen for value in phase.latencies]
            ratio = p99(latencies) / unloaded_p99
            print(f"({key}) {name}: discovery {summary(latencies)}, p99 / (a) {ratio:.2f}")
            if key != "a":
                print(f"    {upload_summary(chosen)}")
            print(f"    {cpu_summary(chosen)}")
            if key == "c":
                done = sum(1 for p in chosen for _, status in p.uploads if status in {200, 201})
                spent = sum(p.cpu["uploads"] for p in chosen)
                print(
                    f"    the uploads' pool's CPU per upload: {spent / max(done, 1) * 1000:.0f} ms"
                )
        split = [value for p in phases if p.key == "c" for value in p.latencies]
        verdict = "met" if p99(split) <= TARGET * unloaded_p99 else "NOT met"
        print(f"target: (c) p99 at most {TARGET:g} x (a) p99: {verdict}")
    finally:
        if pipe is not None and uploader is not None:
            pipe.send(None)
            uploader.join(timeout=120)
        rig.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    main()
