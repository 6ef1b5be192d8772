"""A smoke client: the contract's main flows against a running service, over HTTP.

Register and sign in, a note created, read, edited, listed and deleted, a comment, a
trackable with a journey stop, an image upload, a sync push and pull. Only documented
routes and fields, so it can drive an earlier release too (tools/upgrade_check.py); a 5xx
or an answer other than the documented one is a failure, named by method, path and status.

  .venv/bin/python tools/smoke.py http://127.0.0.1:8000 [--tag T]
"""

from __future__ import annotations

import argparse
import io
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests
from PIL import Image

PASSWORD = "smoke-" + uuid.uuid4().hex  # a throwaway account's
PLACE = {"latitude": 52.52, "longitude": 13.405}
WINDOW = {"minLatitude": 52, "minLongitude": 13, "maxLatitude": 53, "maxLongitude": 14}
MISSING = object()  # a call that failed, told apart from an answer without a body


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no answer at all (refused, reset, timed out)
    body: Any
    failure: str | None


class Smoke:
    """One client: its session (the bearer token once signed in) and the failures so far."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.failures: list[str] = []

    def call(self, method: str, path: str, expected: int, **kwargs: Any) -> Any:
        """The answer's JSON (None for another body) when its status is `expected`; else a
        failure recorded and MISSING."""
        answer = self.attempt(method, path, expected, **kwargs)
        if answer.failure is not None:
            self.failures.append(answer.failure)
            return MISSING
        return answer.body

    def attempt(self, method: str, path: str, expected: int, **kwargs: Any) -> Answer:
        """One request; its failure names method, path, status and the body's start."""
        try:
            response = self.session.request(method, self.base + path, timeout=30, **kwargs)
        except requests.RequestException as error:
            return Answer(None, None, f"{method} {path}: {type(error).__name__}: {error}")
        if response.status_code != expected:
            failure = (
                f"{method} {path}: {response.status_code} (expected {expected}) "
                f"{response.text[:200]}"
            )
            return Answer(response.status_code, None, failure)
        if not response.content or "json" not in response.headers.get("Content-Type", ""):
            return Answer(response.status_code, None, None)
        try:
            return Answer(response.status_code, response.json(), None)
        except ValueError:
            failure = f"{method} {path}: {response.status_code} with a body that is not JSON"
            return Answer(response.status_code, None, failure)

    def check(self, holds: bool, failure: str) -> None:
        if not holds:
            self.failures.append(failure)

    def step(self, name: str, run: Callable[..., Any], *args: Any) -> Any:
        """`run(*args)`'s result; an answer of an unexpected shape fails this step (None),
        not the whole run."""
        try:
            return run(*args)
        except (KeyError, TypeError, AttributeError, IndexError) as error:
            self.failures.append(f"{name}: an unexpected answer ({type(error).__name__} {error})")
            return None

    def run(self, tag: str) -> list[str]:
        if self.sign_in(tag):
            note = self.step("notes", self.notes)
            if note is not None:
                self.step("comments", self.comments, note)
                self.step("images", self.images, note)
            self.step("trackable", self.trackable)
            self.step("sync", self.sync)
        return self.failures

    def sign_in(self, tag: str) -> bool:
        """Register a new account (its user name from `tag`, 3-32 of a-z, 0-9, _) and use
        its bearer token from now on."""
        name = f"smoke_{re.sub(r'[^a-z0-9_]', '_', tag.lower())[:16]}_{uuid.uuid4().hex[:8]}"
        email = f"{name}@example.org"
        account = {"email": email, "userName": name, "password": PASSWORD}
        self.call("POST", "/api/auth/register", 200, json=account)
        signed_in = self.call(
            "POST",
            "/api/auth/login?useCookies=false&useSessionCookies=false",
            200,
            json={"email": email, "password": PASSWORD},
        )
        token = signed_in.get("accessToken") if isinstance(signed_in, dict) else None
        if signed_in is not MISSING and not token:
            self.failures.append("POST /api/auth/login: no accessToken in the answer")
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        return bool(token)

    def notes(self) -> str | None:
        """Two notes created, one read, edited, listed and deleted: the other's id, if made."""
        gone = self.call("POST", "/api/notes/mine", 201, json={"title": "Gone soon", **PLACE})
        kept = self.call(
            "POST",
            "/api/notes/mine",
            201,
            json={
                "title": "A fountain",
                "body": "Cold water.",
                "contentLanguage": "en-US",
                "visibility": "Public",
                "commentPolicy": "LoggedInUsers",
                **PLACE,
            },
        )
        if kept is MISSING:
            return None
        note = str(kept["noteId"])
        read = self.call("GET", f"/api/public/notes/{note}", 200)
        if read is not MISSING:
            self.check(read["title"] == "A fountain", f"GET /api/public/notes/{note}: other title")
        path = f"/api/notes/mine/{note}/move"
        edited = self.call("POST", path, 200, json={"body": "Cold water all year."})
        if edited is not MISSING:
            self.check(edited["body"] == "Cold water all year.", f"POST {path}: body not kept")
            self.check(edited["title"] == "A fountain", f"POST {path}: title not kept")
        made = [note] if gone is MISSING else [note, str(gone["noteId"])]
        mine = self.call("GET", "/api/notes/mine", 200)
        if mine is not MISSING:
            listed = {each["noteId"] for each in mine}
            self.check(set(made) <= listed, "GET /api/notes/mine: a note just made is missing")
        if gone is not MISSING:
            self.call("DELETE", f"/api/notes/mine/{gone['noteId']}", 204)
        return note

    def comments(self, note: str) -> None:
        path = f"/api/public/notes/{note}/comments"
        self.call("POST", path, 201, json={"body": "Still there."})
        self.call("GET", path, 200)

    def images(self, note: str) -> None:
        picture = io.BytesIO()
        Image.new("RGB", (40, 30), (200, 60, 30)).save(picture, format="JPEG")
        file = {"file": ("fountain.jpg", picture.getvalue(), "image/jpeg")}
        uploaded = self.call("POST", f"/api/images/notes/{note}", 201, files=file)
        listed = self.call("GET", f"/api/images/notes/{note}", 200)
        if uploaded is MISSING or listed is MISSING:
            return
        image = uploaded["image"]["contentImageId"]
        ids = {each["contentImageId"] for each in listed}
        self.check(image in ids, f"GET /api/images/notes/{note}: the image just sent is missing")
        self.call("GET", f"/api/images/{image}/thumbnail", 200)

    def trackable(self) -> None:
        created = self.call(
            "POST",
            "/api/trackables",
            201,
            json={
                "name": "Blue travel bug",
                "visibility": "AlwaysVisibleToEveryone",
                "activateImmediately": True,
                "secretCode": "",
            },
        )
        if created is MISSING:
            return
        trackable = created["trackableId"]
        stop = {"latitude": 46.948, "longitude": 7.4474}
        self.call("POST", f"/api/trackables/{trackable}/journey-stops", 201, json=stop)
        journey = self.call("GET", f"/api/trackables/{trackable}/journey", 200)
        if journey is not MISSING:
            self.check(len(journey) == 1, f"GET /api/trackables/{trackable}/journey: no stop")
        self.call("GET", f"/api/trackables/{trackable}", 200)

    def sync(self) -> None:
        note = str(uuid.uuid4())
        pushed = self.call(
            "POST",
            "/api/sync/push",
            200,
            json={
                "deviceId": str(uuid.uuid4()),
                "notes": [
                    {
                        "noteId": note,
                        "title": "Written offline",
                        "clientMutationId": uuid.uuid4().hex,
                        "latitude": 48.1,
                        "longitude": 11.6,
                    }
                ],
                "categories": [],
            },
        )
        if pushed is not MISSING:
            applied = note in pushed["appliedNoteIds"] and not pushed["conflicts"]
            self.check(applied, f"POST /api/sync/push: not applied: {str(pushed)[:200]}")
        pulled = self.call("POST", "/api/sync/pull", 200, json={"publicArea": WINDOW})
        if pulled is not MISSING and pushed is not MISSING:
            notes = {each["noteId"] for each in pulled["userNotes"]}
            self.check(note in notes, "POST /api/sync/pull: the note just pushed is missing")


def smoke(base: str, *, tag: str) -> list[str]:
    """The failures of one run of the flows against `base` (none: every answer as documented).
    `tag` goes into the new account's name, so that runs on one database stay apart."""
    return Smoke(base).run(tag)


def keep_reading(base: str, stop: threading.Event, failures: list[str]) -> None:
    """Anonymous public reads until `stop`, a few a second. A 5xx or no answer is a failure,
    added to `failures` when first seen (repeats are counted, and added when `stop` is set);
    another status (a 429, say) is not the reader's concern."""
    reader = Smoke(base)
    window = "&".join(f"{name}={value}" for name, value in WINDOW.items())
    paths = ["/api/system/status", f"/api/notes/public/bounds?{window}"]
    seen: Counter[str] = Counter()
    while not stop.is_set():
        for path in paths:
            answer = reader.attempt("GET", path, 200)
            if answer.failure is None or (answer.status is not None and answer.status < 500):
                continue
            key = f"GET {path}: {answer.status or answer.failure.split()[2]}"
            if not seen[key]:
                failures.append(answer.failure)
            seen[key] += 1
        stop.wait(0.05)
    failures.extend(f"{key}: {count - 1} more times" for key, count in seen.items() if count > 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the service's address, e.g. http://127.0.0.1:8000")
    parser.add_argument("--tag", default="cli", help="goes into the new account's name")
    args = parser.parse_args()
    failures = smoke(args.base, tag=args.tag)
    for failure in failures:
        print(failure)
    print(f"{len(failures)} failures" if failures else "every step answered as documented")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
