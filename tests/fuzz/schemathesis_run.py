"""Schemathesis against the running app: `python -m tests.fuzz.schemathesis_run`.

Migrates the database of DATABASE_URL, makes a signed-in user, serves the app with
gunicorn (as production does) on a free port, and runs Schemathesis over the OpenAPI
document twice, anonymous and with the user's bearer token, with every check
(`--checks all`). Exits non-zero when a run reports a failure. CI (`FUZZ_MODE=fixed`)
generates the same cases every time; `make fuzz` (`FUZZ_MODE=explore`) explores from a
random seed (both: `Plan`). Checks tuned or left out, each with its reason:
schemathesis.toml and EXCLUDED_CHECKS.
"""

from __future__ import annotations

import os
import secrets
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
            raise SystemExit("the app did not start")
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
) -> int:
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
    print(f"== schemathesis ({label}), {plan.describe()}", flush=True)
    # Fixed: the examples end the run, the ceiling only guards it; explore: --max-time ends
    # it, and the ceiling leaves room for the last cases and the reports.
    ceiling = plan.seconds if plan.fixed else plan.seconds + 300
    try:
        return subprocess.call(command, cwd=ROOT, timeout=ceiling)  # noqa: S603 - our own
    except subprocess.TimeoutExpired:
        print(f"== schemathesis ({label}) did not finish within its ceiling of {ceiling} s")
        return 1


def main() -> int:
    if not os.environ.get("DATABASE_URL"):
        raise SystemExit("set DATABASE_URL (a database this run may write to)")
    plan = Plan.from_environment()
    with tempfile.TemporaryDirectory(prefix="fuzz-") as temp:
        instance = Path(temp)
        env = environment(instance)
        subprocess.check_call(  # noqa: S603
            [str(BIN / "flask"), "--app", "wsgi", "db", "upgrade"], cwd=ROOT, env=env
        )
        token = signed_in_token(env)
        port = free_port()
        log = (instance / "server.log").open("w")
        server = subprocess.Popen(  # noqa: S603
            [str(BIN / "gunicorn"), "-c", "gunicorn.conf.py", "wsgi:app"],
            cwd=ROOT,
            env={**env, "PORT": str(port)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        reports = Path(os.environ.get("FUZZ_REPORTS", ROOT / "schemathesis-report"))
        reports.mkdir(parents=True, exist_ok=True)
        try:
            wait_until_up(f"{url}/healthz", server)
            if not token_accepted(url, token):
                raise SystemExit("the signed-in run's token is refused before the run")
            results = [
                schemathesis(url, plan, "anonymous", [], reports),
                schemathesis(
                    url,
                    plan,
                    "signed-in",
                    [f"Authorization: Bearer {token}"],
                    reports,
                    excluded_paths=SESSION_ENDING_PATHS,
                ),
            ]
            if not token_accepted(url, token):
                print(
                    "== the signed-in run's token was refused after the run: an operation "
                    "ended its session, so the rest of the run was anonymous; add it to "
                    "SESSION_ENDING_PATHS"
                )
                results.append(1)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            log.close()
            server_log = (instance / "server.log").read_text(errors="replace")
            errors = [line for line in server_log.splitlines() if "Traceback" in line]
            if errors:
                print(f"the server logged {len(errors)} tracebacks:\n{server_log[-4000:]}")
        return 0 if not any(results) else 1


if __name__ == "__main__":
    sys.exit(main())
