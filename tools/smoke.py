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
import threading
import uuid
from typing import Any

import requests
from PIL import Image

PASSWORD = "smoke-" + uuid.uuid4().hex  # a throwaway account's


class Smoke:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.failures: list[str] = []

    def call(self, method: str, path: str, expected: int, **kwargs: Any) -> Any:
        """The answer's JSON (or None) when its status is `expected`; a failure otherwise."""
        try:
            response = self.session.request(method, self.base + path, timeout=30, **kwargs)
        except requests.RequestException as error:
            self.failures.append(f"{method} {path}: {type(error).__name__}")
            return None
        if response.status_code != expected:
            self.failures.append(
                f"{method} {path}: {response.status_code} (expected {expected}) "
                f"{response.text[:200]}"
            )
            return None
        return response.json() if response.content else None

    def run(self, tag: str) -> list[str]:
        name = f"smoke{tag}{uuid.uuid4().hex[:8]}"
        email = f"{name}@example.org"
        self.call(
            "POST",
            "/api/auth/register",
            200,
            json={"email": email, "userName": name, "password": PASSWORD},
        )
        signed_in = self.call(
            "POST",
            "/api/auth/login?useCookies=false&useSessionCookies=false",
            200,
            json={"email": email, "password": PASSWORD},
        )
        if signed_in is None:
            return self.failures
        self.session.headers["Authorization"] = f"Bearer {signed_in['accessToken']}"
        self.notes()
        self.trackable()
        self.sync()
        return self.failures

    def notes(self) -> None:
        place = {"latitude": 52.52, "longitude": 13.405}
        gone = self.call("POST", "/api/notes/mine", 201, json={"title": "Gone soon", **place})
        kept = self.call(
            "POST",
            "/api/notes/mine",
            201,
            json={"title": "A fountain", "body": "Cold water.", "visibility": "Public", **place},
        )
        if gone is None or kept is None:
            return
        note = kept["noteId"]
        self.call("GET", f"/api/public/notes/{note}", 200)
        edited = self.call(
            "POST", f"/api/notes/mine/{note}/move", 200, json={"body": "Cold water all year."}
        )
        if edited is not None and edited.get("body") != "Cold water all year.":
            self.failures.append(f"POST /api/notes/mine/{note}/move: the edit was not kept")
        mine = self.call("GET", "/api/notes/mine", 200) or []
        if {gone["noteId"], note} - {each["noteId"] for each in mine}:
            self.failures.append("GET /api/notes/mine: a note just made is missing")
        self.call("DELETE", f"/api/notes/mine/{gone['noteId']}", 204)
        self.call("POST", f"/api/public/notes/{note}/comments", 201, json={"body": "Still there."})
        self.call("GET", f"/api/public/notes/{note}/comments", 200)
        picture = io.BytesIO()
        Image.new("RGB", (40, 30), (200, 60, 30)).save(picture, format="JPEG")
        self.call(
            "POST",
            f"/api/images/notes/{note}",
            201,
            files={"file": ("fountain.jpg", picture.getvalue(), "image/jpeg")},
        )
        self.call("GET", f"/api/images/notes/{note}", 200)

    def trackable(self) -> None:
        created = self.call(
            "POST",
            "/api/trackables",
            201,
            json={"name": "Blue travel bug", "activateImmediately": True},
        )
        if created is None:
            return
        trackable = created["trackableId"]
        self.call(
            "POST",
            f"/api/trackables/{trackable}/journey-stops",
            201,
            json={"latitude": 46.948, "longitude": 7.4474},
        )
        self.call("GET", f"/api/trackables/{trackable}/journey", 200)
        self.call("GET", f"/api/trackables/{trackable}", 200)

    def sync(self) -> None:
        device = str(uuid.uuid4())
        note = str(uuid.uuid4())
        self.call(
            "POST",
            "/api/sync/push",
            200,
            json={
                "deviceId": device,
                "notes": [
                    {
                        "noteId": note,
                        "title": "Written offline",
                        "latitude": 48.1,
                        "longitude": 11.6,
                    }
                ],
            },
        )
        pulled = self.call("POST", "/api/sync/pull", 200, json={}) or {}
        if note not in {each.get("noteId") for each in pulled.get("userNotes", [])}:
            self.failures.append("POST /api/sync/pull: the note just pushed is missing")


def smoke(base: str, *, tag: str) -> list[str]:
    """The failures of one run of the flows against `base` (none: every answer as documented)."""
    return Smoke(base).run(tag)


def keep_reading(base: str, stop: threading.Event, failures: list[str]) -> None:
    """Anonymous reads until `stop`: a 5xx or a refused connection is a failure."""
    reader = Smoke(base)
    while not stop.is_set():
        reader.call("GET", "/api/system/status", 200)
        reader.call(
            "GET",
            "/api/notes/public/bounds?minLatitude=52&minLongitude=13&maxLatitude=53&maxLongitude=14",
            200,
        )
    failures.extend(reader.failures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the service's address, e.g. http://127.0.0.1:8000")
    parser.add_argument("--tag", default="cli")
    args = parser.parse_args()
    failures = smoke(args.base, tag=args.tag)
    for failure in failures:
        print(failure)
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
