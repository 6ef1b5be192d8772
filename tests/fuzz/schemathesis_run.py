"""Schemathesis against the running app: `python -m tests.fuzz.schemathesis_run`.

Migrates the database of DATABASE_URL and a copy of it with a signed-in user, serves each
with gunicorn (as production does), and runs Schemathesis over the OpenAPI document twice
side by side, anonymous on the first and with the user's bearer token on the copy, with
every check (`--checks all`). Exits non-zero when a run reports a failure. CI (`FUZZ_MODE=fixed`)
generates the same cases every time; `make fuzz` (`FUZZ_MODE=explore`) explores from a
random seed (both: `Plan`). Checks tuned or left out, each with its reason:
schemathesis.toml and EXCLUDED_CHECKS.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

CONFIG = Path(__file__).with_name("schemathesis.toml")  # tuned checks, each with its reason
# Every check runs except these (reason beside each); none today.
EXCLUDED_CHECKS: dict[str, str] = {}
# Operations the signed-in run leaves out, because they end the run's own session; after
# one, every later request is anonymous, and the "signed-in" run tests almost nothing as a
# user. The anonymous run still fuzzes them; their rules have tests of their own.
SESSION_ENDING_PATHS: dict[str, str] = {
    "/api/auth/manage/2fa": "forgetMachine ends every session (test_two_factor.py)",
    "/api/account": "DELETE, its only method, deletes the account (test_account_deletion.py)",
}

# Rate limits are raised for the run: Schemathesis sends thousands of requests from one
# address, and the limits have tests of their own.
GENEROUS = {
    "RATE_LIMIT_LOGIN": "100000 per minute",
    "RATE_LIMIT_REGISTER": "100000 per minute",
    "RATE_LIMIT_ACCOUNT_MAIL": "100000 per minute",
    "RATE_LIMIT_LINK_VERIFY": "100000 per minute",
    "RATE_LIMIT_COMPLIANCE": "100000 per minute",
    "RATE_LIMIT_TRACKABLE_LABELS": "100000 per minute",
    "EXPORTS_PER_USER_PER_DAY": "100000",
    "WEBHOOK_MANUAL_SENDS_PER_HOUR": "100000",
    "WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR": "100000",
    "FINDER_PHOTOS_PER_SESSION": "100000",
    "FINDER_PHOTOS_PER_NETWORK": "100000",
    "SECRET_GUESS_LIMIT": "100000",
    "SECRET_GUESS_NETWORK_LIMIT": "100000",
    "SECRET_GUESS_ACCOUNT_LIMIT": "100000",
    "SECRET_GUESS_ACCOUNT_NETWORK_LIMIT": "100000",
    "TRACKABLES_PER_USER_PER_HOUR": "100000",
    "SECRET_ROTATE_LIMIT": "100000",
    "ERROR_TICKETS_PER_CLIENT": "100000",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment(instance: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GENEROUS)
    env.update(
        APP_ENV="development",
        SECRET_KEY=secrets.token_urlsafe(48),
        JWT_SECRET_KEY=secrets.token_urlsafe(48),
        TRACKABLE_CODE_KEY=secrets.token_urlsafe(48),
        WEBHOOK_SECRETS_KEY=secrets.token_urlsafe(48),
        MAIL_BACKEND="file",
        LOG_LEVEL="WARNING",
        IMAGE_ROOT=str(instance / "images"),
        MAP_TILE_ROOT=str(instance / "tiles"),
        EXPORT_ROOT=str(instance / "exports"),
        WEB_CONCURRENCY=os.environ.get("WEB_CONCURRENCY", "2"),
    )
    return env


def signed_in_token(env: dict[str, str]) -> str:
    """A confirmed user made in the database, and an access token for them."""
    os.environ.update(env)
    from app import create_app
    from app.auth import issue_access_token
    from app.extensions import db
    from app.models.user import User
    from app.services.identity.passwords import hash_password

    app = create_app()
    with app.app_context():
        name = f"fuzz_{secrets.token_hex(4)}"
        user = User(
            user_name=name,
            email=f"{name}@example.com",
            normalized_email=f"{name}@example.com",
            password_hash=hash_password(secrets.token_urlsafe(16)),
            is_email_confirmed=True,
        )
        db.session.add(user)
        db.session.commit()
        token = issue_access_token(user)
        db.engine.dispose()
    return token


def wait_until_up(url: str, server: subprocess.Popen) -> None:
    for _ in range(450):  # 90 s: a loaded CI machine boots slowly
        if server.poll() is not None:
            raise SystemExit(f"the app did not start (exit status {server.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - our own server
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the app did not answer")


# Two modes. CI (`FUZZ_MODE=fixed`, what `.ci/run` sets) generates the same cases every
# time: the seed `FUZZ_SEED`, `FUZZ_EXAMPLES` cases per operation, one worker, no example
# database carried between runs, and time only as a ceiling (`FUZZ_CEILING_SECONDS` per
# run; a run that reaches it fails). `make fuzz` (`FUZZ_MODE=explore`) explores: a random
# seed, printed so that `FUZZ_SEED=... make fuzz` repeats it, for `FUZZ_SECONDS` per run;
# each finding becomes a fixed test (the bad-input corpus in tests/hostile, or a named test).
@dataclass(frozen=True)
class Plan:
    """How much to generate, and from which seed."""

    fixed: bool
    seed: int
    examples: int  # per operation (fixed mode)
    seconds: int  # time budget per run (explore mode), or the ceiling (fixed mode)
    workers: int

    @classmethod
    def from_environment(cls) -> Plan:
        mode = os.environ.get("FUZZ_MODE", "explore")
        if mode not in {"fixed", "explore"}:
            raise SystemExit(f"FUZZ_MODE must be fixed or explore, not {mode!r}")
        fixed = mode == "fixed"
        seed = os.environ.get("FUZZ_SEED")
        if fixed and not seed:
            raise SystemExit("FUZZ_MODE=fixed needs FUZZ_SEED (CI sets it in .ci/run)")
        return cls(
            fixed=fixed,
            seed=int(seed) if seed else secrets.randbelow(2**31),
            examples=int(os.environ.get("FUZZ_EXAMPLES", "20")),
            seconds=int(os.environ.get("FUZZ_CEILING_SECONDS" if fixed else "FUZZ_SECONDS", "600")),
            workers=1 if fixed else int(os.environ.get("FUZZ_WORKERS", "2")),
        )

    def describe(self) -> str:
        if self.fixed:
            return (
                f"fixed: seed {self.seed}, {self.examples} examples per operation, "
                f"{self.workers} worker, ceiling {self.seconds} s per run"
            )
        repeat = f"FUZZ_SEED={self.seed} repeats it"
        return f"explore: seed {self.seed} ({repeat}), {self.seconds} s per run"

    def options(self) -> list[str]:
        options = ["--seed", str(self.seed), "--workers", str(self.workers)]
        if self.fixed:
            # No example database: a failure remembered from an earlier run would be
            # replayed first, and the cases would depend on the machine's history.
            return [*options, "--max-examples", str(self.examples), "--generation-database", "none"]
        return [*options, "--max-time", str(self.seconds)]


def token_accepted(url: str, token: str) -> bool:
    """Whether the app still serves the account of this bearer token."""
    check = urllib.request.Request(f"{url}/api/auth/manage/info")  # noqa: S310
    check.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(check, timeout=20) as response:  # noqa: S310
            return response.status == 200
    except urllib.error.HTTPError:
        return False


def schemathesis(
    url: str,
    plan: Plan,
    label: str,
    headers: list[str],
    reports: Path,
    excluded_paths: Iterable[str] = (),
) -> list[str]:
    """The command of one run."""
    command = [
        str(BIN / "schemathesis"),
        "--config-file",
        str(CONFIG),
        "run",
        f"{url}/api/openapi.json",
        "--checks",
        "all",
        *plan.options(),
        "--request-timeout",
        "20",
        "--report",
        "junit,har",
        "--report-har-path",
        str(reports / f"{label}.har"),
        "--report-junit-path",
        str(reports / f"{label}.xml"),
        "--no-color",
    ]
    if EXCLUDED_CHECKS:
        command += ["--exclude-checks", ",".join(EXCLUDED_CHECKS)]
    for header in headers:
        command += ["--header", header]
    for path in excluded_paths:
        command += ["--exclude-path", path]
    return command


def copy_database(url: str, suffix: str) -> str:
    """A copy of the migrated database at `url` (PostgreSQL: from it as a template; SQLite:
    the file), for the other run."""
    from sqlalchemy import create_engine, make_url, text

    # Not config's normalize_database_url: config reads the environment once, on import,
    # and signed_in_token sets it first.
    source = make_url(url.replace("postgres://", "postgresql://", 1))
    target = source.set(database=f"{source.database}{suffix}")
    if source.get_backend_name() == "sqlite":
        shutil.copyfile(str(source.database), str(target.database))
    else:
        admin = create_engine(source.set(database="postgres"), isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)'))
            connection.execute(
                text(f'CREATE DATABASE "{target.database}" TEMPLATE "{source.database}"')
            )
        admin.dispose()
    return target.render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    from sqlalchemy import create_engine, make_url, text

    target = make_url(url)
    if target.get_backend_name() == "sqlite":
        Path(str(target.database)).unlink(missing_ok=True)
        return
    admin = create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{target.database}" WITH (FORCE)'))
    admin.dispose()


@dataclass
class Run:
    """One Schemathesis run with its own server and database: the anonymous run and the
    signed-in one go side by side, each alone in its database, so each sees the same server
    state on every CI run (one run's writes never reach the other's answers)."""

    label: str
    env: dict[str, str]
    log: Path
    headers: list[str]
    excluded_paths: Iterable[str] = ()
    token: str | None = None
    server: subprocess.Popen | None = None
    url: str = ""

    def serve(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        with self.log.open("w") as log:
            self.server = subprocess.Popen(  # noqa: S603
                [str(BIN / "gunicorn"), "-c", "gunicorn.conf.py", "wsgi:app"],
                cwd=ROOT,
                env={**self.env, "PORT": str(port)},
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def stop(self) -> list[str]:
        """Stop the server; the tracebacks it logged."""
        if self.server is not None:
            self.server.send_signal(signal.SIGTERM)
            self.server.wait(timeout=30)
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if "Traceback" in line]


def run_side_by_side(runs: list[Run], plan: Plan, reports: Path) -> list[int]:
    """Both runs at once (each is one client and its server: together they fill the two
    cores one run leaves half idle); each one's output printed whole when it ends."""
    ceiling = plan.seconds if plan.fixed else plan.seconds + 300
    deadline = time.monotonic() + ceiling
    started = []
    for run in runs:
        command = schemathesis(run.url, plan, run.label, run.headers, reports, run.excluded_paths)
        output = (reports / f"{run.label}.log").open("w")
        process = subprocess.Popen(  # noqa: S603 - our own command
            command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
        )
        started.append((run, process, output))
    results = []
    for run, process, output in started:
        try:
            code = process.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            code = None
        output.close()
        print(f"== schemathesis ({run.label}), {plan.describe()}", flush=True)
        print((reports / f"{run.label}.log").read_text(errors="replace"), flush=True)
        if code is None:
            print(f"== schemathesis ({run.label}) did not finish within its ceiling of {ceiling} s")
        results.append(1 if code is None else code)
    return results


def main() -> int:
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("set DATABASE_URL (a database this run may write to)")
    plan = Plan.from_environment()
    reports = Path(os.environ.get("FUZZ_REPORTS", ROOT / "schemathesis-report"))
    reports.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fuzz-") as temp:
        instance = Path(temp)
        env = environment(instance)
        subprocess.check_call(  # noqa: S603
            [str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"], cwd=ROOT, env=env
        )
        signed_in_url = copy_database(env["DATABASE_URL"], "_signed_in")
        # The same keys (the copy holds the first's key fingerprints), its own files.
        signed_in_env = {
            **env,
            "DATABASE_URL": signed_in_url,
            "IMAGE_ROOT": str(instance / "signed-in" / "images"),
            "MAP_TILE_ROOT": str(instance / "signed-in" / "tiles"),
            "EXPORT_ROOT": str(instance / "signed-in" / "exports"),
        }
        token = signed_in_token(signed_in_env)
        runs = [
            Run("anonymous", env, instance / "anonymous-server.log", []),
            Run(
                "signed-in",
                signed_in_env,
                instance / "signed-in-server.log",
                [f"Authorization: Bearer {token}"],
                excluded_paths=SESSION_ENDING_PATHS,
                token=token,
            ),
        ]
        results: list[int] = []
        try:
            for run in runs:
                run.serve()
            for run in runs:
                assert run.server is not None
                try:
                    wait_until_up(f"{run.url}/healthz", run.server)
                except SystemExit:
                    print(f"{run.label}:", run.log.read_text(errors="replace")[-4000:])
                    raise
            signed_in = runs[1]
            if not token_accepted(signed_in.url, token):
                raise SystemExit("the signed-in run's token is refused before the run")
            results = run_side_by_side(runs, plan, reports)
            if not token_accepted(signed_in.url, token):
                print(
                    "== the signed-in run's token was refused after the run: an operation "
                    "ended its session, so the rest of the run was anonymous; add it to "
                    "SESSION_ENDING_PATHS"
                )
                results.append(1)
        finally:
            for run in runs:
                errors = run.stop()
                if errors:
                    server_log = run.log.read_text(errors="replace")
                    print(
                        f"the {run.label} run's server logged {len(errors)} tracebacks:\n"
                        f"{server_log[-4000:]}"
                    )
            drop_database(signed_in_url)
        return 0 if results and not any(results) else 1


if __name__ == "__main__":
    sys.exit(main())
