"""The stall scenario, with real `flask worker` processes: one account's 20 webhooks each
have 50 deliveries due to a black hole (accepts, never answers; 5 s a try), and while the
workers grind through them everyone else's work must go on. Shared by the test
(test_stall.py) and the benchmark that reports its figures (bench/background_lanes.py).

`run` measures, one after another: 20 registrations and the time until each one's
confirmation mail is written; another account's webhook to a prompt receiver; a
watcher's inbox row; an export made ready; the stalling owner switching off and deleting
the webhooks whose tries hang at that moment. Then it reads what the workers left: the
tries' records, the circuits, the jobs' runs and the workers' logs.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email import message_from_bytes
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from app.auth import build_viewer
from app.extensions import db
from app.models.event import Notification
from app.models.job import Job, JobState
from app.models.privacy import AccountExport, ExportState
from app.models.trackable import TrackableWatch
from app.models.webhook import WebhookAttempt, WebhookDelivery, WebhookSubscription
from app.services import webhooks
from app.services.webhooks.delivery import CIRCUIT_TIMEOUTS, DRAIN
from tests.factories import make_trackable, make_user
from tests.hanging_peers import BlackHole
from tests.receivers import Receiver
from tests.serving import ROOT

HOOKS, DUE_EACH, REGISTRATIONS = 20, 50, 20
TIMEOUT_SECONDS = 5.0
WORKER_APP = "tests.api.webhooks.stall_worker_app"


# --- the workers ---------------------------------------------------------------------------


class Workers:
    """`count` worker processes with the app's default lanes, their logs in `root`."""

    def __init__(self, database_url: str, root: Path, ports: list[int], count: int) -> None:
        self.root = root
        self.outbox = root / "outbox"
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "STALL_DATABASE_URL": database_url,
            "STALL_OUTBOX": str(self.outbox),
            "STALL_EXPORTS": str(root / "exports"),
            "STALL_PORTS": ",".join(map(str, ports)),
            "STALL_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
        }
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []

    def logs(self) -> list[Path]:
        return [self.root / f"worker-{index}.log" for index in range(self.count)]

    def start(self) -> None:
        command = [sys.executable, "-m", "flask", "--app", WORKER_APP, "worker"]
        for log in self.logs():
            with log.open("w") as out:
                self.processes.append(
                    subprocess.Popen(  # noqa: S603 - our own app
                        [*command, "--poll-seconds", "0.1"],
                        cwd=ROOT,
                        env=self.env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        for process, log in zip(self.processes, self.logs(), strict=True):
            wait_for(lambda log=log: " started (kinds:" in log.read_text(), 60, process, log)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)

    def log_text(self) -> str:
        return "\n".join(log.read_text() for log in self.logs())


def wait_for(
    condition: Callable[[], Any],
    seconds: float,
    process: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
) -> float:
    """Poll `condition` until it holds; the seconds it took. AssertionError past `seconds`
    or when `process` exits."""
    started = time.monotonic()
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(log.read_text() if log else "the process ended")
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not within {seconds} s")
        time.sleep(0.02)
    return time.monotonic() - started


# --- the scenario --------------------------------------------------------------------------


@dataclass
class Figures:
    """Seconds, as measured."""

    mail: list[float] = field(default_factory=list)  # registration answered -> mail written
    register: list[float] = field(default_factory=list)  # the registration's answer
    prompt_webhook: float = 0.0
    inbox: float = 0.0
    export: float = 0.0
    switch_off: float = 0.0
    delete: float = 0.0

    def summary(self) -> dict[str, float]:
        ordered = sorted(self.mail)
        return {
            "mail_p50": statistics.median(ordered),
            "mail_p99": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))],
            "mail_max": ordered[-1],
            "register_max": max(self.register),
            "prompt_webhook": self.prompt_webhook,
            "inbox": self.inbox,
            "export": self.export,
            "switch_off": self.switch_off,
            "delete": self.delete,
        }


def stall(app: Any, hole: BlackHole) -> Any:
    """The stalling account: HOOKS webhooks to the black hole, DUE_EACH deliveries due on
    each (test messages, its limits raised for the setup)."""
    limits = ("WEBHOOK_MANUAL_SENDS_PER_HOUR", "WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR")
    before = {name: app.config[name] for name in limits}
    app.config.update(dict.fromkeys(limits, HOOKS * DUE_EACH))
    app.config["WEBHOOKS_PER_OWNER"] = max(HOOKS, int(app.config["WEBHOOKS_PER_OWNER"]))
    owner = make_user("staller")
    viewer = build_viewer(owner)
    for index in range(HOOKS):
        hook = webhooks.create_webhook(viewer, app.config, url=hole.url(f"/{index}"))
        for _ in range(DUE_EACH):
            webhooks.send_test(viewer, hook.webhook_id, app.config)
        db.session.commit()
    app.config.update(before)
    return owner


def mail_written(outbox: Path, address: str) -> float | None:
    """When the mail to `address` was written (the file's time), or None yet."""
    if not outbox.is_dir():
        return None
    for path in outbox.glob("*.eml"):
        if message_from_bytes(path.read_bytes())["To"] == address:
            return path.stat().st_mtime
    return None


def hanging_hook() -> uuid.UUID:
    """The webhook whose drain holds a lease now (its try is in the black hole)."""
    db.session.expire_all()
    job = db.session.scalars(
        select(Job).where(
            Job.kind == DRAIN, Job.state == JobState.QUEUED, Job.locked_by.is_not(None)
        )
    ).first()
    db.session.rollback()
    assert job is not None, "no drain is running"
    return uuid.UUID(job.payload["webhookId"])


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def run(
    app: Any,
    api: Any,
    hole: BlackHole,
    prompt: Receiver,
    workers: Workers,
    *,
    stalled: bool = True,
) -> Figures:
    """The measurements, in order, once the workers are started on the stall (without
    it, the benchmark's floor: the same work, no webhook due, no switch-off or delete)."""
    owner = stall(app, hole) if stalled else make_user("staller")
    watcher, author = make_user("watcher"), make_user("author")
    trackable = make_trackable(author, name="Stall bug")
    db.session.add(TrackableWatch(user_id=watcher.id, trackable_id=trackable.id))
    db.session.commit()
    figures = Figures()
    app.config["RATE_LIMIT_REGISTER"] = "1000 per hour"  # twenty from one test address
    workers.start()
    if stalled:
        wait_for(lambda: hole.connections > 0, 30)

    for number in range(REGISTRATIONS):
        address = f"newcomer{number}@example.com"
        body = {"email": address, "userName": f"newcomer{number}", "password": "a long phrase"}
        answer, seconds = timed(lambda body=body: api.post("/api/auth/register", json=body))
        assert answer.status_code == 200, answer.get_data(as_text=True)
        answered = time.time()
        figures.register.append(seconds)
        wait_for(lambda address=address: mail_written(workers.outbox, address), 30)
        figures.mail.append(max(0.0, (mail_written(workers.outbox, address) or 0) - answered))

    other = make_user("prompt")
    created = api.as_user(other).post("/api/webhooks", json={"url": prompt.url()})
    assert created.status_code == 201, created.get_json()
    sent = api.as_user(other).post(f"/api/webhooks/{created.get_json()['webhookId']}/test")
    assert sent.status_code == 202
    figures.prompt_webhook = wait_for(lambda: len(prompt.received) >= 1, 30)

    url = f"/api/trackables/{trackable.id}/comments"
    assert api.as_user(author).post(url, json={"body": "Seen"}).status_code == 201
    inbox = select(func.count()).where(Notification.user_id == watcher.id)
    figures.inbox = wait_for(lambda: _read(inbox) >= 1, 30)

    asked = api.as_user(other).post("/api/account/export")
    assert asked.status_code == 202, asked.get_json()
    ready = select(func.count()).where(
        AccountExport.user_id == other.id, AccountExport.state == ExportState.DONE
    )
    figures.export = wait_for(lambda: _read(ready) >= 1, 30)
    if not stalled:
        return figures

    staller = api.as_user(owner)
    answer, figures.switch_off = timed(
        lambda: staller.patch(f"/api/webhooks/{hanging_hook()}", json={"isEnabled": False})
    )
    assert answer.status_code == 200
    wait_for(lambda: hanging_hook() is not None, 30)
    answer, figures.delete = timed(lambda: staller.delete(f"/api/webhooks/{hanging_hook()}"))
    assert answer.status_code == 204

    paused = select(func.count()).where(WebhookSubscription.paused_until_utc.is_not(None))
    wait_for(lambda: _read(paused) >= 1, TIMEOUT_SECONDS * (CIRCUIT_TIMEOUTS + 2))
    return figures


def _read(statement: Any) -> Any:
    db.session.expire_all()
    found = db.session.scalar(statement)
    db.session.rollback()
    return found


@dataclass
class Aftermath:
    """What the workers left: the paused webhooks' tries, and signs of trouble."""

    paused_tries: list[list[WebhookAttempt]]
    drain_reruns: int
    troubles: list[str]


TROUBLES = ("lease ran out", "claiming failed", "Traceback", "could not obtain lock", "deadlock")


def aftermath(workers: Workers) -> Aftermath:
    db.session.expire_all()
    paused = db.session.scalars(
        select(WebhookSubscription.id).where(WebhookSubscription.paused_until_utc.is_not(None))
    ).all()
    tries = [
        list(
            db.session.scalars(
                select(WebhookAttempt)
                .join(WebhookDelivery, WebhookDelivery.id == WebhookAttempt.delivery_id)
                .where(WebhookDelivery.subscription_id == hook)
                .order_by(WebhookAttempt.attempted_utc)
            )
        )
        for hook in paused
    ]
    reruns = db.session.scalar(select(func.count()).where(Job.kind == DRAIN, Job.attempts > 1))
    db.session.rollback()
    text = workers.log_text()
    return Aftermath(tries, int(reruns or 0), [line for line in TROUBLES if line in text])
