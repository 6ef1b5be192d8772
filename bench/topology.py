"""The production topology on one machine (`make topology`): two app instances (gunicorn,
APP_ENV=production), the image uploads' own instance (the same app at a lower CPU
priority, which nginx sends the upload POSTs to) and a worker behind nginx
(deploy/nginx/app.conf), a PostgreSQL primary
of its own through PgBouncer in transaction mode and a streaming replica of it, Redis for
the rate limits, moto's S3 server for the images, an SMTP sink for the mail. Every server
is a real one started here, from Debian's packages (nginx, pgbouncer, the PostgreSQL
server binaries; Redis as the machine runs it) and the development set.

Then it checks what several machines must share, and prints each finding:
- the login rate limit and the secret-guess budget hold across both instances;
- with a streaming replica applying changes seconds late (DATABASE_REPLICA_URL), a finder
  who just wrote never reads a page without their write, while others read the replica;
- an image uploaded through one instance is served through the other;
- a rolling restart of each instance in turn, under a 32-connection mixed load through
  nginx, drops no request (0 errors) and loses no acknowledged write (image uploads
  included, each one served by the uploads' instance);
- the instances' /metrics count the requests sent through nginx.

It exits 1 when a check fails. The production start's refusals are met, except for the
documented test-rig override PUBLIC_BASE_URL_ALLOW_LOCAL (an http base URL on this machine).
Not part of `.ci/run`: it takes a few minutes and needs the machine's ports.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import requests
from cryptography.fernet import Fernet
from PIL import Image
from requests.adapters import HTTPAdapter
from sqlalchemy import make_url
from urllib3.util.retry import Retry

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PG_BIN = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1:]  # Debian's server binaries
REPLICA_DELAY_SECONDS = 2  # the replica applies what it receives this late, on purpose
UPLOADS_NICE = 10  # the uploads' instance yields the CPU (location-notes-uploads.service)
REDIS = "redis://127.0.0.1:6379/7"
S3_KEY = "topology"  # moto accepts any credentials
METRICS_TOKEN = secrets.token_urlsafe(32)
PASSWORD = secrets.token_urlsafe(16)  # the rig's accounts only


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"topology run: {what}")


def wait_for(check: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not come up")
        time.sleep(0.2)


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def healthy(port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except requests.RequestException:
        return False


@dataclass
class Rig:
    """The servers and their settings; stop() ends them all."""

    work: Path
    database: str
    primary: str = ""  # postgresql://... of the rig's own primary server (no database)
    replica: str = ""  # ... and of its streaming replica
    settings: dict[str, str] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    app_ports: list[int] = field(default_factory=list)
    uploads_port: int = 0
    nginx_port: int = 0
    mail_count: list[int] = field(default_factory=lambda: [0])

    def spawn(self, name: str, command: list[str], **env: str) -> subprocess.Popen[bytes]:
        log = (self.work / f"{name}.log").open("ab")
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **self.settings, **env}, stdout=log, stderr=log
        )
        self.processes[name] = process
        return process

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            if process.poll() is None:
                process.terminate()
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    @property
    def proxy(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}"

    def instance(self, index: int) -> str:
        return f"http://127.0.0.1:{self.app_ports[index]}"


def as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL will not run as root: its programs run as the `postgres` user then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def start_postgres(rig: Rig, name: str, directory: Path, port: int) -> None:
    binary = str(PG_BIN[0] / "postgres")
    rig.spawn(
        name, as_postgres([binary, "-D", str(directory), "-p", str(port), "-k", str(rig.work)])
    )
    wait_for(lambda: listening(port), name)


def start_clusters(rig: Rig) -> None:
    """A primary of the rig's own and a streaming replica of it that applies each change
    REPLICA_DELAY_SECONDS late (`recovery_min_apply_delay`): a replica lagging by seconds."""
    if not PG_BIN:
        raise SystemExit("the PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are missing")
    if os.geteuid() == 0:
        shutil.chown(rig.work, "postgres")
    primary_dir, replica_dir = rig.work / "primary", rig.work / "replica"
    primary_port, replica_port = free_port(), free_port()
    subprocess.run(
        as_postgres([str(PG_BIN[0] / "initdb"), "-D", str(primary_dir), "-U", "postgres",
                     "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"]),
        check=True, capture_output=True,
    )  # fmt: skip
    with (primary_dir / "postgresql.conf").open("a") as conf:
        conf.write("listen_addresses = '127.0.0.1'\nmax_connections = 200\n")
    start_postgres(rig, "postgres-primary", primary_dir, primary_port)
    subprocess.run(
        as_postgres([str(PG_BIN[0] / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary_port),
                     "-U", "postgres", "-D", str(replica_dir), "-R", "-X", "stream"]),
        check=True, capture_output=True,
    )  # fmt: skip
    with (replica_dir / "postgresql.auto.conf").open("a") as conf:
        conf.write(f"recovery_min_apply_delay = '{REPLICA_DELAY_SECONDS}s'\n")
    start_postgres(rig, "postgres-replica", replica_dir, replica_port)
    rig.primary = f"postgresql://postgres@127.0.0.1:{primary_port}"
    rig.replica = f"postgresql://postgres@127.0.0.1:{replica_port}"


def create_database(rig: Rig) -> None:
    connection = psycopg2.connect(f"{rig.primary}/postgres")
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{rig.database}"')
        # Behind the pooler the statement timeout is the role's (README: DATABASE_POOLER).
        cursor.execute(f"ALTER DATABASE \"{rig.database}\" SET statement_timeout = '7s'")
    connection.close()
    replica = f"{rig.replica}/{rig.database}"
    wait_for(lambda: reachable(replica), "the database on the replica", seconds=60)


def reachable(url: str) -> bool:
    try:
        psycopg2.connect(url, connect_timeout=2).close()
        return True
    except psycopg2.Error:
        return False


def start_pgbouncer(rig: Rig) -> int:
    port = free_port()
    directory = rig.work / "pgbouncer"
    directory.mkdir(mode=0o755)
    config = directory / "pgbouncer.ini"
    config.write_text(
        f"""[databases]
{rig.database} = host=127.0.0.1 port={make_url(rig.primary).port} user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
logfile = {directory}/pgbouncer.log
pidfile = {directory}/pgbouncer.pid
"""
    )
    config.chmod(0o644)
    user: list[str] = []
    if os.geteuid() == 0:  # PgBouncer will not run as root
        shutil.chown(rig.work, "postgres")
        shutil.chown(directory, "postgres")
        user = ["-u", "postgres"]
    rig.spawn("pgbouncer", [shutil.which("pgbouncer") or "/usr/sbin/pgbouncer", *user, str(config)])
    wait_for(lambda: listening(port), "pgbouncer")
    return port


def start_mail_sink(rig: Rig) -> int:
    from aiosmtpd.controller import Controller

    class Sink:
        async def handle_DATA(self, server, session, envelope):
            rig.mail_count[0] += 1
            return "250 OK"

    port = free_port()
    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    return port


def start_s3(rig: Rig) -> int:
    port = free_port()
    rig.spawn("s3", [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)])
    wait_for(lambda: listening(port), "moto's S3 server")
    import boto3

    boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id=S3_KEY,
        aws_secret_access_key=S3_KEY,
    ).create_bucket(Bucket="location-notes-images")
    return port


def start_instance(rig: Rig, index: int) -> None:
    port = rig.app_ports[index]
    rig.spawn(
        f"app{index + 1}",
        [str(BIN / "gunicorn"), "-c", "gunicorn.conf.py", "wsgi:app"],
        PORT=str(port),
    )
    wait_for(lambda: healthy(port), f"app instance {index + 1}")


def start_uploads_instance(rig: Rig, workers: int) -> None:
    """The image uploads' own gunicorn, at a lower CPU priority, as its systemd unit runs it."""
    port = rig.uploads_port
    command = [str(BIN / "gunicorn"), "-c", "gunicorn.conf.py", "wsgi:app"]
    rig.spawn(
        "uploads",
        ["nice", "-n", str(UPLOADS_NICE), *command],
        PORT=str(port),
        WEB_CONCURRENCY=str(workers),
    )
    wait_for(lambda: healthy(port), "the uploads' instance")


def write_upstream(rig: Rig, down: int | None = None) -> None:
    """deploy/nginx/upstream.conf for the rig: the app's instances (one maybe `down`), the
    uploads' instance with the app's as its backup."""
    servers = "\n".join(
        f"    server 127.0.0.1:{port}{' down' if index == down else ''};"
        for index, port in enumerate(rig.app_ports)
    )
    backups = "\n".join(f"    server 127.0.0.1:{port} backup;" for port in rig.app_ports)
    (rig.work / "nginx" / "upstream.conf").write_text(
        f"upstream location_notes_app {{\n{servers}\n    keepalive 16;\n}}\n"
        f"upstream location_notes_uploads {{\n    server 127.0.0.1:{rig.uploads_port};\n"
        f"{backups}\n    keepalive 4;\n}}\n"
    )


def start_nginx(rig: Rig) -> None:
    directory = rig.work / "nginx"
    directory.mkdir()
    for name in ("logs", "body", "proxy", "cache"):
        (directory / name).mkdir()
    write_upstream(rig)
    # The shipped site, its logs in the rig's directory instead of /var/log/nginx.
    site = (ROOT / "deploy" / "nginx" / "app.conf").read_text()
    (directory / "app.conf").write_text(site.replace("/var/log/nginx/", f"{directory}/logs/"))
    rig.nginx_port = free_port()
    user = "user root root;" if os.geteuid() == 0 else ""
    (directory / "nginx.conf").write_text(
        f"""{user}
daemon off;
worker_processes 2;
pid {directory}/nginx.pid;
error_log {directory}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {directory}/body;
    proxy_temp_path {directory}/proxy;
    proxy_cache_path {directory}/cache keys_zone=location_notes_static:1m;
    include {ROOT / "deploy" / "nginx" / "logging.conf"};
    include {directory}/upstream.conf;
    server {{
        listen 127.0.0.1:{rig.nginx_port};
        include {directory}/app.conf;
    }}
}}
"""
    )
    rig.spawn(
        "nginx",
        [
            shutil.which("nginx") or "/usr/sbin/nginx",
            "-p",
            str(directory),
            "-c",
            str(directory / "nginx.conf"),
        ],
    )
    wait_for(lambda: listening(rig.nginx_port), "nginx")


def production_settings() -> dict[str, str]:
    """APP_ENV=production on this machine: keys of their own, the documented test-rig
    override for a local http base URL, SMTP to a local sink (the database is the rig's)."""
    return {
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "JWT_SECRET_KEY": secrets.token_urlsafe(48),
        "TRACKABLE_CODE_KEY": secrets.token_urlsafe(48),
        "WEBHOOK_SECRETS_KEY": Fernet.generate_key().decode(),
        "PUBLIC_BASE_URL": "http://127.0.0.1",
        "PUBLIC_BASE_URL_ALLOW_LOCAL": "true",  # the documented test-rig override
        "TRACKABLE_ACCESS_COOKIE_SECURE": "false",  # ... and its cookies over plain http
        "MAIL_BACKEND": "smtp",
        "MAIL_SMTP_HOST": "127.0.0.1",
    }


def start(args: argparse.Namespace) -> Rig:
    work = Path(tempfile.mkdtemp(prefix="topology-"))
    work.chmod(0o755)
    rig = Rig(work=work, database=f"topology_{int(time.time())}")
    start_clusters(rig)
    create_database(rig)
    direct = f"{rig.primary}/{rig.database}"
    smtp_port = start_mail_sink(rig)
    s3_port = start_s3(rig)
    rig.settings = {
        **production_settings(),
        "DATABASE_URL": direct,
        "MAIL_SMTP_PORT": str(smtp_port),
        "RATELIMIT_STORAGE_URI": REDIS,
        "IMAGE_STORAGE": "s3",
        "IMAGE_S3_BUCKET": "location-notes-images",
        "IMAGE_S3_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
        "AWS_ACCESS_KEY_ID": S3_KEY,
        "AWS_SECRET_ACCESS_KEY": S3_KEY,
        "TRUSTED_PROXIES": "127.0.0.1",
        "FORWARDED_ALLOW_IPS": "127.0.0.1",
        "WEB_CONCURRENCY": str(args.workers),
        "ACCESS_LOG": "off",
        "LOG_FORMAT": "json",
        "RATE_LIMIT_REGISTER": "1000 per hour",
        "METRICS_TOKEN": METRICS_TOKEN,
        "DATABASE_REPLICA_URL": f"{rig.replica}/{rig.database}",
        "DATABASE_REPLICA_MAX_LAG_SECONDS": "5",
        "DATABASE_REPLICA_STICKY_SECONDS": "15",
    }
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    subprocess.run(
        [str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT,
        env={**os.environ, **rig.settings},
        check=True,
        capture_output=True,
    )
    bouncer = start_pgbouncer(rig)
    rig.settings["DATABASE_URL"] = f"postgresql://postgres@127.0.0.1:{bouncer}/{rig.database}"
    rig.settings["DATABASE_POOLER"] = "pgbouncer"
    rig.app_ports = [free_port(), free_port()]
    for index in range(2):
        start_instance(rig, index)
    rig.uploads_port = free_port()
    start_uploads_instance(rig, args.upload_workers)
    rig.spawn("worker", [str(BIN / "flask"), "--app", "wsgi", "worker"])
    start_nginx(rig)
    return rig


# --- the checks ----------------------------------------------------------------------


def account(base: str, name: str) -> str:
    """A new account's bearer token (registered and signed in through `base`)."""
    email = f"{name}@example.org"
    registered = requests.post(
        f"{base}/api/auth/register",
        json={"email": email, "userName": name, "password": PASSWORD},
        timeout=10,
    )
    expect(registered.status_code in {200, 201, 204}, registered.text)
    login = requests.post(
        f"{base}/api/auth/login?useCookies=false&useSessionCookies=false",
        json={"email": email, "password": PASSWORD},
        timeout=10,
    )
    expect(login.status_code == 200, login.text)
    return str(login.json()["accessToken"])


def check_login_limit(rig: Rig) -> bool:
    """RATE_LIMIT_LOGIN (20 per minute per client) counted once for both instances."""
    client = {"X-Forwarded-For": "203.0.113.7"}  # one client, as the proxy names it
    statuses = []
    for attempt in range(24):
        response = requests.post(
            f"{rig.instance(attempt % 2)}/api/auth/login?useCookies=false&useSessionCookies=false",
            json={"email": f"nobody{attempt}@example.org", "password": "wrong-password"},
            headers=client,
            timeout=10,
        )
        statuses.append(response.status_code)
    refused = statuses.index(429) if 429 in statuses else None
    print(f"login limit: first 429 at attempt {refused} of 24, alternating instances")
    return refused == 20


def check_guess_budget(rig: Rig) -> bool:
    """SECRET_GUESS_LIMIT (10 misses per client) counted once for both instances."""
    client = {"X-Forwarded-For": "198.51.100.9"}
    statuses = []
    for attempt in range(14):
        response = requests.post(
            f"{rig.instance(attempt % 2)}/api/trackables/lookup",
            json={"code": f"LN{random.randrange(10**7, 10**8)}"},
            headers=client,
            timeout=10,
        )
        statuses.append(response.status_code)
    refused = statuses.index(429) if 429 in statuses else None
    print(f"guess budget: first 429 at miss {refused} of 14, alternating instances")
    return refused == 10


def jpeg() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1200, 900), (40, 120, 200)).save(buffer, "JPEG")
    return buffer.getvalue()


def check_image_across_instances(rig: Rig) -> bool:
    token = account(rig.instance(0), "imageowner")
    headers = {"Authorization": f"Bearer {token}"}
    note = requests.post(
        f"{rig.instance(0)}/api/notes/mine",
        json={"title": "Pictured", "latitude": 52.5, "longitude": 13.4, "visibility": "Public"},
        headers=headers,
        timeout=10,
    )
    expect(note.status_code in {200, 201}, note.text)
    note_id = note.json()["noteId"]
    uploaded = requests.post(
        f"{rig.instance(0)}/api/images/notes/{note_id}",
        files={"file": ("photo.jpg", jpeg(), "image/jpeg")},
        headers=headers,
        timeout=30,
    )
    expect(uploaded.status_code in {200, 201}, uploaded.text)
    image = uploaded.json()["image"]
    ok = True
    for path in (f"/api/images/{image['contentImageId']}/small", image["smallUrl"]):
        served = requests.get(f"{rig.instance(1)}{path}", timeout=10)
        is_jpeg = served.status_code == 200 and served.content[:3] == b"\xff\xd8\xff"
        hops = " -> ".join(str(hop.status_code) for hop in served.history) or "direct"
        print(
            f"image: uploaded through instance 1, {path.split('/')[1]} read through instance 2: "
            f"{served.status_code} ({hops}), {len(served.content)} bytes of JPEG"
        )
        ok = ok and is_jpeg
    return ok


@dataclass
class Load:
    """A mixed load through nginx: anonymous discovery and status, signed-in reads, note
    writes and image uploads to the account's note (each acknowledged write's id kept, to
    be found in the database after)."""

    rig: Rig
    tokens: list[str]
    notes: list[str]  # one note of each account in `tokens`, for its uploads
    stop: threading.Event = field(default_factory=threading.Event)
    outcomes: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    uploaded: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, index: int) -> None:
        session = requests.Session()
        # A GET that meets a keep-alive connection nginx closed (a reload retires its old
        # workers) is sent again once, as browsers do; a write is never resent.
        retry = Retry(total=1, connect=1, read=1, status=0, allowed_methods={"GET"})
        session.mount("http://", HTTPAdapter(max_retries=retry))
        token = self.tokens[index % len(self.tokens)]
        note = self.notes[index % len(self.notes)]
        signed_in = {"Authorization": f"Bearer {token}"}
        generator = random.Random(index)
        photo = jpeg()
        while not self.stop.is_set():
            choice = generator.random()
            try:
                if choice < 0.35:
                    kind = "discovery"
                    lat, lon = generator.uniform(47, 54), generator.uniform(6, 14)
                    response = session.get(
                        f"{self.rig.proxy}/api/notes/public/bounds?minLatitude={lat}"
                        f"&minLongitude={lon}&maxLatitude={lat + 0.5}&maxLongitude={lon + 0.5}",
                        timeout=30,
                    )
                elif choice < 0.47:
                    kind = "status"
                    response = session.get(f"{self.rig.proxy}/api/system/status", timeout=30)
                elif choice < 0.5:
                    kind = "upload"
                    response = session.post(
                        f"{self.rig.proxy}/api/images/notes/{note}",
                        files={"file": ("photo.jpg", photo, "image/jpeg")},
                        headers=signed_in,
                        timeout=40,
                    )
                    if response.status_code in {200, 201}:
                        with self.lock:
                            self.uploaded.append(response.json()["image"]["contentImageId"])
                elif choice < 0.75:
                    kind = "mine"
                    response = session.get(
                        f"{self.rig.proxy}/api/notes/mine", headers=signed_in, timeout=30
                    )
                else:
                    kind = "write"
                    title = f"load {uuid.uuid4()}"
                    response = session.post(
                        f"{self.rig.proxy}/api/notes/mine",
                        json={
                            "title": title,
                            "latitude": generator.uniform(47, 54),
                            "longitude": generator.uniform(6, 14),
                            "visibility": "Public",
                        },
                        headers=signed_in,
                        timeout=30,
                    )
                    if response.status_code in {200, 201}:
                        with self.lock:
                            self.written.append(response.json()["noteId"])
                outcome = f"{kind} {response.status_code}"
                if response.status_code >= 400:
                    with self.lock:
                        self.errors.append(f"{outcome}: {response.text[:200]}")
            except requests.RequestException as error:
                outcome = f"{kind} {type(error).__name__}"
                with self.lock:
                    self.errors.append(outcome)
            with self.lock:
                self.outcomes[outcome] += 1


def rolling_restart(rig: Rig, ports: list[int], restart: Callable[[str], None]) -> None:
    """deploy/rolling-restart over `ports`, as an operator runs it, against the rig's nginx;
    systemctl's part is played here: `restart(unit)` stops the unit's instance and returns
    once the new one is ready, while the script waits on a file (RESTART)."""
    requests_dir = rig.work / "restarts"
    requests_dir.mkdir(exist_ok=True)
    stop = threading.Event()

    def systemctl() -> None:
        while not stop.is_set():
            for request in requests_dir.glob("*.request"):
                restart(request.stem)
                request.unlink()
                (requests_dir / f"{request.stem}.done").touch()
            time.sleep(0.05)

    waiter = threading.Thread(target=systemctl, daemon=True)
    waiter.start()
    ask = (
        f'f() {{ touch "{requests_dir}/$1.request"; until [ -e "{requests_dir}/$1.done" ]; '
        f'do sleep 0.05; done; rm "{requests_dir}/$1.done"; }}; f'
    )
    environment = {
        **os.environ,
        "UPSTREAM": str(rig.work / "nginx" / "upstream.conf"),
        "RESTART": ask,
        "RELOAD_NGINX": f"kill -HUP {rig.processes['nginx'].pid}",
        "UPLOADS_ENV": str(rig.work / "no-uploads.env"),
    }
    try:
        subprocess.run(
            [str(ROOT / "deploy" / "rolling-restart"), *map(str, ports)],
            env=environment,
            check=True,
            cwd=ROOT,
        )
    finally:
        stop.set()
        waiter.join()


def restart_app_instance(rig: Rig, unit: str) -> None:
    """`systemctl restart location-notes-web@PORT` for the rig: TERM (in-flight requests
    finish), then the instance started again."""
    index = rig.app_ports.index(int(unit.rpartition("@")[2]))
    process = rig.processes[f"app{index + 1}"]
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    start_instance(rig, index)


def a_note(rig: Rig, token: str) -> str:
    created = requests.post(
        f"{rig.proxy}/api/notes/mine",
        json={"title": "Photos", "latitude": 52.5, "longitude": 13.4, "visibility": "Public"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    expect(created.status_code in {200, 201}, created.text)
    return str(created.json()["noteId"])


def check_rolling_restart(rig: Rig, connections: int, seconds: float) -> bool:
    tokens = [account(rig.proxy, f"loaduser{n}") for n in range(8)]
    load = Load(rig, tokens, [a_note(rig, token) for token in tokens])
    uploads_before = note_uploads_counted(rig.uploads_port)
    threads = [threading.Thread(target=load.run, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    time.sleep(seconds / 3)
    rolling_restart(rig, rig.app_ports, lambda unit: restart_app_instance(rig, unit))
    time.sleep(seconds / 3)
    load.stop.set()
    for thread in threads:
        thread.join()
    connection = psycopg2.connect(f"{rig.primary}/{rig.database}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id::text FROM notes WHERE id = ANY(%s::uuid[])", (load.written,))
        present = {row[0] for row in cursor.fetchall()}
        cursor.execute(
            "SELECT id::text FROM content_images WHERE id = ANY(%s::uuid[])", (load.uploaded,)
        )
        present_images = {row[0] for row in cursor.fetchall()}
    connection.close()
    lost = set(load.written) - present
    lost_images = set(load.uploaded) - present_images
    by_uploads_pool = note_uploads_counted(rig.uploads_port) - uploads_before
    total = sum(load.outcomes.values())
    print(f"rolling restart under {connections} connections: {total} requests")
    for outcome, count in sorted(load.outcomes.items()):
        print(f"  {outcome}: {count}")
    print(
        f"  errors: {len(load.errors)}; acknowledged writes: {len(load.written)}, lost: {len(lost)}"
    )
    print(
        f"  acknowledged uploads: {len(load.uploaded)}, lost: {len(lost_images)}, "
        f"served by the uploads' instance: {by_uploads_pool:.0f}"
    )
    for error in load.errors[:10]:
        print(f"    {error}")
    return (
        not load.errors
        and not lost
        and not lost_images
        and bool(load.written)
        and bool(load.uploaded)
        and by_uploads_pool == len(load.uploaded)
    )


def check_own_writes_on_a_lagging_replica(rig: Rig, rounds: int = 5) -> bool:
    """An anonymous finder comments (resending the secret code) and at once reads the
    trackable's public page, which anonymous visitors read from the replica: the finder
    (holding the `ln_wrote` cookie the write set) always sees the comment; a visitor
    without it is served the replica, which shows it only REPLICA_DELAY_SECONDS later."""
    token = account(rig.proxy, "replicaowner")
    created = requests.post(
        f"{rig.proxy}/api/trackables",
        json={"name": "Replica bug", "visibility": "AlwaysVisibleToEveryone",
              "activateImmediately": True, "secretCode": "", "description": "", "teamId": None},
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )  # fmt: skip
    expect(created.status_code in {200, 201}, created.text)
    item = created.json()["items"][0]
    page = f"{rig.proxy}/en/trackables/{item['publicCode']}"
    own_stale, others_stale = 0, []
    for number in range(rounds):
        body = f"Seen at the lake, round {number} {uuid.uuid4().hex[:8]}"
        finder = requests.Session()
        written = finder.post(
            f"{rig.proxy}/api/trackables/{item['trackableId']}/comments",
            json={"body": body, "accessCode": item["secretCode"]},
            timeout=10,
        )
        expect(written.status_code in {200, 201}, written.text)
        if body not in finder.get(page, timeout=10).text:
            own_stale += 1
        started, stale_for = time.monotonic(), 0.0
        while body not in requests.get(page, timeout=10).text:  # a visitor, no cookie
            stale_for = time.monotonic() - started
            expect(stale_for < 30, "the replica never caught up")
            time.sleep(0.1)
        others_stale.append(stale_for)
    lag = requests.get(f"{rig.instance(0)}/readyz", timeout=10).json().get("replica")
    print(
        f"replica ({REPLICA_DELAY_SECONDS} s apply delay): the writer saw a stale page "
        f"{own_stale} times in {rounds}; a visitor without the cookie saw the comment missing "
        f"for {', '.join(f'{value:.1f}' for value in others_stale)} s; /readyz: {lag}"
    )
    # The replica served at all (someone saw it stale), and never the writer. The lag measure
    # (by WAL positions) overestimates by up to one check interval, so some rounds read the
    # primary: conservative, as meant.
    return own_stale == 0 and any(value > 0 for value in others_stale)


def counted(port: int, series: str) -> float:
    """One instance's count of a `http_requests_total` series, from its /metrics."""
    scraped = requests.get(
        f"http://127.0.0.1:{port}/metrics",
        headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
        timeout=10,
    )
    expect(scraped.status_code == 200, scraped.text[:200])
    total = 0.0
    for line in scraped.text.splitlines():
        if line.startswith(f"http_requests_total{{{series}}}"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def status_requests_counted(rig: Rig) -> float:
    """`GET /api/system/status` answered 2xx, summed over both instances' /metrics."""
    series = 'method="GET",route="/api/system/status",status="2xx"'
    return sum(counted(port, series) for port in rig.app_ports)


def note_uploads_counted(port: int) -> float:
    """Image uploads to a note answered 2xx, by one instance."""
    return counted(port, 'method="POST",route="/api/images/notes/<uuid:note_id>",status="2xx"')


def check_metrics(rig: Rig, requests_sent: int = 300) -> bool:
    """What a load sends through nginx is what the instances' metrics count."""
    before = status_requests_counted(rig)
    with requests.Session() as session:
        for _ in range(requests_sent):
            expect(session.get(f"{rig.proxy}/api/system/status", timeout=10).ok, "status")
    counted = status_requests_counted(rig) - before
    print(f"metrics: {requests_sent} status requests sent through nginx, {counted:.0f} counted")
    return counted == requests_sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=45.0, help="length of the load")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance")
    parser.add_argument(
        "--upload-workers", type=int, default=1, help="gunicorn workers of the uploads' instance"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory and database")
    args = parser.parse_args()
    rig = start(args)
    print(
        f"topology up: nginx {rig.proxy}, instances {rig.app_ports}, uploads' instance "
        f"{rig.uploads_port}, logs in {rig.work}"
    )
    results = {}
    try:
        results["login limit across instances"] = check_login_limit(rig)
        results["guess budget across instances"] = check_guess_budget(rig)
        results["image across instances"] = check_image_across_instances(rig)
        results["own writes on a lagging replica"] = check_own_writes_on_a_lagging_replica(rig)
        results["rolling restart"] = check_rolling_restart(rig, args.connections, args.seconds)
        results["metrics count what was sent"] = check_metrics(rig)
    finally:
        rig.stop()
        if not args.keep:  # the clusters live in the work directory
            shutil.rmtree(rig.work, ignore_errors=True)
    for name, ok in results.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    sys.exit(0 if results and all(results.values()) else 1)


if __name__ == "__main__":
    main()
