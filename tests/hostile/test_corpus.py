"""Every operation of the OpenAPI document against the bad-input corpus (corpus.py):
each case is refused with a documented status as problem+json with a registered `code`,
and none is a 5xx.

One test per area; each operation's cases run in a row on a small world of objects, as
new for each operation (built once, then put back: tests/snapshots.py), so a case aims at
things that exist. A failure lists every case that failed."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.team import MembershipStatus
from app.models.trackable import JourneyStop, TrackableComment
from tests.conftest import unregistered_code
from tests.factories import (
    make_category,
    make_group,
    make_invite_link,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
)
from tests.hostile.conftest import all_operations
from tests.hostile.corpus import Case, Operation, cases_for, url_for_case
from tests.snapshots import kept

OPERATIONS = all_operations()
MIN_CASES = 15


def world() -> tuple[Any, dict[str, str]]:
    """A signed-in user's objects as new, named as the document names its path parameters:
    built the first time in this worker, its rows put back after (tests/snapshots.py)."""
    from app.models.user import User

    owner_id, path_values = kept("hostile corpus", _build)
    return db.session.get(User, owner_id), dict(path_values)


def _build() -> tuple[uuid.UUID, dict[str, str]]:
    owner = make_user()
    other = make_user()
    team = make_team(owner, members=(other,))
    pending = make_membership(team, status=MembershipStatus.REQUESTING)
    category = make_category(owner)
    note = make_note(owner, category=category, visibility=NoteVisibility.PUBLIC)
    link = make_invite_link(team, owner)
    trackable = make_trackable(owner)
    group = make_group(owner)
    # The owner's own comment and stop, so a finder's photo upload reaches its file checks.
    comment = TrackableComment(trackable_id=trackable.id, author_user_id=owner.id, body="Hi")
    stop = JourneyStop(
        trackable_id=trackable.id,
        coordinate_id=uuid.uuid4(),
        latitude=1.0,
        longitude=2.0,
        created_by_user_id=owner.id,
    )
    db.session.add_all([comment, stop])
    db.session.commit()
    return owner.id, {
        "noteId": str(note.id),
        "categoryId": str(category.id),
        "teamId": str(team.id),
        "membershipId": str(pending.id),
        "inviteLinkId": str(link.id),
        "inviteCode": link.code,
        "teamSlug": team.slug,
        "teamName": team.name,
        "userName": owner.user_name,
        "userId": str(owner.id),
        "trackableId": str(trackable.id),
        "trackableGroupId": str(group.id),
        "commentId": str(comment.id),
        "journeyStopId": str(stop.id),
        "contentReportId": str(uuid.uuid4()),
        "contentImageId": str(uuid.uuid4()),
        "areaWatchId": str(uuid.uuid4()),
        "webhookId": str(uuid.uuid4()),
        "deliveryId": str(uuid.uuid4()),
        "exportId": str(uuid.uuid4()),
        "variant": "small",
    }


def send(client: Any, op: Operation, case: Case, token: str, path_values: dict[str, str]):
    headers = dict(case.headers)
    if not case.anonymous and "Authorization" not in headers:
        headers["Authorization"] = f"Bearer {token}"
    kwargs: dict[str, Any] = {"headers": headers, "query_string": case.query}
    if case.body is not None:
        kwargs["data"] = case.body
        if case.content_type:
            kwargs["content_type"] = case.content_type
    response = client.open(url_for_case(op, case, path_values), method=op.method, **kwargs)
    response.get_data()  # as a server sends it: work deferred to the end runs now
    response.close()
    return response


def failure_of(op: Operation, case: Case, response: Any) -> str | None:
    status = response.status_code
    if status >= 500:
        return f"{status}: {response.get_data(as_text=True)[:300]}"
    if status not in op.documented:
        return f"{status} is not documented ({sorted(op.documented)})"
    if case.expect is not None and status not in case.expect:
        return f"{status}, expected {sorted(case.expect)}: {response.get_data(as_text=True)[:200]}"
    if status >= 400:
        if response.mimetype != "application/problem+json":
            return f"{status} as {response.mimetype}"
        body = response.get_json(force=True)
        if body.get("status") != status or not body.get("title"):
            return f"{status} with a malformed problem: {body}"
        wrong_code = unregistered_code(response)
        if wrong_code:
            return wrong_code
    elif case.injected and response.mimetype == "application/json":
        body = response.get_json()
        for item in body if isinstance(body, list) else [body]:
            for key, value in case.injected.items():
                if isinstance(item, dict) and item.get(key) == value:
                    return f"{status}: the client set {key}={value!r}"
    return None


def areas() -> dict[str, list[Operation]]:
    """Operations by area (the document's tag): one test per area, since emptying the
    database after a test costs more than a world."""
    by_area: dict[str, list[Operation]] = {}
    for op in OPERATIONS:
        by_area.setdefault((op.spec.get("tags") or ["untagged"])[0], []).append(op)
    return by_area


@pytest.mark.parametrize("area", list(areas()))
def test_bad_input_is_refused_with_a_documented_problem(app, client, area):
    from flask import current_app

    from app.auth import issue_access_token

    failures = []
    for op in areas()[area]:
        cases = cases_for(op, current_app.config["JWT_SECRET_KEY"])
        assert len(cases) >= MIN_CASES, f"{op.id} has only {len(cases)} cases"
        owner, path_values = world()
        token = issue_access_token(owner)
        for case in cases:
            response = send(client, op, case, token, path_values)
            failure = failure_of(op, case, response)
            if failure:
                failures.append(f"  {op.id}: {case.name}: {failure}")
    assert not failures, "\n".join(failures)


def test_the_corpus_covers_every_operation():
    assert len(OPERATIONS) >= 100
    total = sum(len(cases_for(op, "k" * 32)) for op in OPERATIONS)
    assert total >= MIN_CASES * len(OPERATIONS)
