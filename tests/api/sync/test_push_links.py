"""Sync push link checks under one time budget: each distinct
link is fetched once, and the links the budget no longer reaches are reported, not
fetched. A local web server stands in for the web (tests/integrations/local_site.py)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.extensions import db
from app.models.note import Note
from tests.api.sync.helpers import note_record, pushed
from tests.factories import make_user
from tests.integrations.local_site import SLOW_SECONDS, Site

TITLE = "Café & Friends — “Notes”"
BUDGET_SECONDS = 1.5


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with Site() as running:
        yield running


@pytest.fixture
def app_overrides(site: Site) -> dict[str, Any]:
    return {
        "OUTBOUND_ALLOW_LOOPBACK": True,
        "OUTBOUND_ALLOWED_PORTS": [80, 443, site.port],
        "OUTBOUND_TIMEOUT_SECONDS": 1.0,
    }


@pytest.fixture
def alice(app):
    app.config["SYNC_PUSH_LINK_BUDGET_SECONDS"] = BUDGET_SECONDS
    return make_user("alice")


def _linked(url: str, **fields: Any) -> dict[str, Any]:
    return note_record(externalLinkUrl=url, applyExternalLinkChanges=True, **fields)


def _requests(site: Site, path: str) -> int:
    return sum(1 for seen, _ in site.seen if seen.split("?", 1)[0] == path)


def test_one_push_spends_at_most_its_link_budget_on_fetches(api, alice, site, heart):
    assert SLOW_SECONDS > BUDGET_SECONDS  # each slow page alone would outlast the budget
    before = _requests(site, "/slow")
    good = _linked(site.url("/title"))
    slow = [_linked(site.url(f"/slow?page={n}")) for n in range(8)]
    started = time.monotonic()
    result = pushed(api, alice, notes=[good, *slow])
    ended = time.monotonic()
    assert heart.working(started, ended) < BUDGET_SECONDS + 1.0, ended - started
    assert result["appliedNoteIds"] == [good["noteId"]]  # checked first, in time
    conflicts = {c["id"]: c for c in result["conflicts"]}
    assert set(conflicts) == {record["noteId"] for record in slow}
    assert {c["reason"] for c in conflicts.values()} == {"validation_failed"}
    assert all("externalLinkUrl" in c["errors"] for c in conflicts.values())
    unchecked = [c for c in conflicts.values() if "not checked" in c["detail"]]
    assert len(unchecked) >= 6  # never fetched: the budget was spent
    assert _requests(site, "/slow") - before <= 2
    assert db.session.get(Note, uuid.UUID(slow[0]["noteId"])) is None


def test_a_link_several_notes_share_is_fetched_once(api, alice, site):
    before = _requests(site, "/title")
    spellings = [
        site.url("/title"),
        "  " + site.url("/title").upper().replace("/TITLE", "/title") + "#top ",
        site.url("/title") + "#again",
    ]
    records = [_linked(url) for url in spellings]
    result = pushed(api, alice, notes=records)
    assert sorted(result["appliedNoteIds"]) == sorted(r["noteId"] for r in records)
    assert _requests(site, "/title") - before == 1
    stored = [db.session.get(Note, uuid.UUID(r["noteId"])) for r in records]
    assert {(n.external_link_url, n.external_link_description) for n in stored} == {
        (site.url("/title"), TITLE)
    }


def test_the_link_budget_is_published_in_the_status(api, app):
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["syncPushLinkBudgetSeconds"] == app.config["SYNC_PUSH_LINK_BUDGET_SECONDS"]
    assert app.config["SYNC_PUSH_LINK_BUDGET_SECONDS"] == 10  # a third of gunicorn's 30 s
