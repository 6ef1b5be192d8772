"""The previous release on this release's schema: CI's proof that an upgrade's migrations
leave the code still serving working (docs/operations.md, "Upgrading").

The previous release is the newest release in CHANGELOG.md that names its commit. Its tree
comes from git, its runtime set from its own lock. It makes its schema and serves on
PostgreSQL with production settings; this release's smoke client (tools/smoke.py) drives
it, then this release's migrations run to head while it serves and a reader keeps asking,
then the smoke client drives it again, and once more after it restarts on the migrated
database. Any 5xx, refused connection or failed step fails the check (exit 1).

  .venv/bin/python tools/upgrade_check.py --database-url postgresql://postgres@127.0.0.1:5432/some_db
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from cryptography.fernet import Fernet

sys.path.insert(0, str(Path(__file__).resolve().parent))
from smoke import keep_reading, smoke

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \S+ \(commit ([0-9a-f]{7,40})\)", re.MULTILINE)


def previous_release() -> tuple[str, str]:
    """(version, commit) of the newest release CHANGELOG.md names a commit for."""
    found = RELEASE.search((ROOT / "CHANGELOG.md").read_text())
    if found is None:
        raise SystemExit("CHANGELOG.md names no release with its commit")
    return found.group(1), found.group(2)


def unpack(commit: str, tree: Path) -> None:
    """The release's files (git archive: no history, nothing of this checkout)."""
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)


def install(tree: Path) -> Path:
    """Its runtime set, from its own lock, into a venv of its own; its python."""
    subprocess.run([sys.executable, "-m", "venv", str(tree / ".venv")], check=True)
    python = tree / ".venv" / "bin" / "python"
    uv = BIN / "uv"
    installer = (
        [str(uv), "pip", "install", "--quiet", "--python", str(python)]
        if uv.exists()
        else [str(python), "-m", "pip", "install", "--quiet"]
    )
    subprocess.run(
        [*installer, "--require-hashes", "-r", str(tree / "requirements" / "runtime.txt")],
        check=True,
    )
    return python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def settings(database_url: str) -> dict[str, str]:
    """Production settings, the same keys for both releases."""
    return {
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "JWT_SECRET_KEY": secrets.token_urlsafe(48),
        "TRACKABLE_CODE_KEY": secrets.token_urlsafe(48),
        "WEBHOOK_SECRETS_KEY": Fernet.generate_key().decode(),
        "PUBLIC_BASE_URL": "http://127.0.0.1",
        "PUBLIC_BASE_URL_ALLOW_LOCAL": "true",  # the documented test-rig override
        "TRACKABLE_ACCESS_COOKIE_SECURE": "false",
        "DATABASE_URL": database_url,
        "MAIL_BACKEND": "smtp",
        "MAIL_SMTP_HOST": "127.0.0.1",
        "RATE_LIMIT_REGISTER": "1000 per hour",
        "TRUSTED_PROXIES": "127.0.0.1",
        "WEB_CONCURRENCY": "2",
        "ACCESS_LOG": "off",
        "LOG_LEVEL": "WARNING",
    }


def flask(tree: Path, python: Path, env: dict[str, str], *command: str) -> None:
    """A `flask` command of the release in `tree`; its output only when it fails."""
    result = subprocess.run(
        [str(python), "-m", "flask", "--app", "wsgi", *command],
        cwd=tree,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        print(result.stdout, result.stderr, sep="\n")
        raise SystemExit(f"`flask {' '.join(command)}` of {tree} failed")


def migrate(tree: Path, python: Path, env: dict[str, str]) -> None:
    """`flask db upgrade` of the release in `tree`."""
    flask(tree, python, env, "db", "upgrade")


def first_start(tree: Path, python: Path, env: dict[str, str]) -> None:
    """The release's app made once, in one process, before its gunicorn starts: that
    records the code key in the new database. 0.1.0's workers each make the app and race
    to record it on an empty database; the loser stops gunicorn (fixed since: the master
    makes the app, and a start that loses that race reads the winner's key)."""
    flask(tree, python, env, "routes")


class Server:
    """The previous release's gunicorn, as its own configuration starts it."""

    def __init__(self, tree: Path, python: Path, env: dict[str, str], log: Path) -> None:
        self.tree, self.python, self.env, self.log = tree, python, env, log
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        output = self.log.open("ab")
        self.process = subprocess.Popen(
            [str(self.python), "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
            cwd=self.tree,
            env={**os.environ, **self.env, "PORT": str(self.port)},
            stdout=output,
            stderr=output,
        )
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{self.base}/healthz", timeout=2).close()  # noqa: S310
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(
                        f"the previous release did not start; see {self.log}"
                    ) from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="an empty PostgreSQL database")
    parser.add_argument("--work", default=str(ROOT / "build" / "upgrade-check"))
    args = parser.parse_args()
    version, commit = previous_release()
    work = Path(args.work)
    tree = (work / f"release-{version}").resolve()
    started = time.monotonic()
    print(f"previous release {version} ({commit}) into {tree}", flush=True)
    unpack(commit, tree)
    python = install(tree)
    env = settings(args.database_url)
    migrate(tree, python, env)
    first_start(tree, python, env)
    print(f"installed and migrated by {version}: {time.monotonic() - started:.0f} s", flush=True)
    server = Server(tree, python, env, work / "previous-release.log")
    failures: list[str] = []
    try:
        server.start()
        before = smoke(server.base, tag="before")
        if before:
            print("the previous release fails on its own schema:", *before, sep="\n  ")
            raise SystemExit(1)
        stop = threading.Event()
        reader = threading.Thread(target=keep_reading, args=(server.base, stop, failures))
        reader.start()
        try:
            migrate(ROOT, BIN / "python", env)  # this release's migrations, to head
        finally:
            stop.set()
            reader.join()
        failures += smoke(server.base, tag="after")
        server.stop()
        server.start()  # the previous release starting on the new schema
        failures += smoke(server.base, tag="restarted")
    finally:
        server.stop()
    print(f"previous release on this schema: {time.monotonic() - started:.0f} s", flush=True)
    if failures:
        print(f"{version} broke on this release's schema:", *failures, sep="\n  ")
        raise SystemExit(1)
    print(f"{version} served every request on this release's schema")


if __name__ == "__main__":
    main()
