"""Offline-safe activity writes (beyond the contract; docs/contract/trackables.md, Trackable
activity): a comment or journey stop sent again with the same `clientMutationId` returns
the first result instead of a duplicate, also when the two copies race each other."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from app.auth import issue_access_token
from app.extensions import db
from app.models.trackable import JourneyStop, TrackableComment
from app.services.trackables.journey import retries
from tests.conftest import assert_problem
from tests.factories import count_rows, make_trackable

THREADS = 4
WRITES = {
    "comment": ("comments", {"body": "Found it"}, TrackableComment),
    "stop": ("journey-stops", {"latitude": 47.3769, "longitude": 8.5417}, JourneyStop),
}


def url(cast, kind: str) -> str:
    return f"/api/trackables/{cast.trackable.id}/{WRITES[kind][0]}"


def body(kind: str, **extra: Any) -> dict:
    return {**WRITES[kind][1], **extra}


@pytest.fixture(params=sorted(WRITES))
def kind(request):
    return request.param


def test_a_retry_returns_the_first_result(api, cast, kind):
    first = api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    again = api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert count_rows(WRITES[kind][2]) == 1


def test_an_anonymous_retry_with_the_code_returns_the_first_result(api, cast, kind):
    sent = body(kind, clientMutationId="m-1", accessCode=cast.secret)
    first, again = api.post(url(cast, kind), json=sent), api.post(url(cast, kind), json=sent)
    assert again.get_json() == first.get_json()
    assert count_rows(WRITES[kind][2]) == 1


def test_different_tags_write_twice(api, cast, kind):
    for tag in ("m-1", "m-2"):
        api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId=tag))
    assert count_rows(WRITES[kind][2]) == 2


def test_the_same_tag_on_another_trackable_is_another_write(api, cast, kind):
    api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    other = make_trackable(cast.owner)
    other_url = url(cast, kind).replace(str(cast.trackable.id), str(other.id))
    response = api.as_user(cast.author).post(other_url, json=body(kind, clientMutationId="m-1"))
    assert response.status_code == 201
    assert count_rows(WRITES[kind][2]) == 2


def test_another_writers_tag_is_refused_not_replayed(api, cast, kind):
    api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    response = api.as_user(cast.stranger).post(
        url(cast, kind), json=body(kind, clientMutationId="m-1")
    )
    assert_problem(response, 400, code="trackable_request_rejected")
    assert count_rows(WRITES[kind][2]) == 1


def test_a_retry_still_needs_access(api, cast, kind):
    api.post(url(cast, kind), json=body(kind, clientMutationId="m-1", accessCode=cast.secret))
    response = api.post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    assert_problem(response, 403, code="trackable_access_code_required")


@pytest.mark.parametrize("tag", ["", "x" * 101, "has space"])
def test_a_malformed_tag_is_rejected(api, cast, kind, tag):
    response = api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId=tag))
    assert "clientMutationId" in assert_problem(response, 400)["errors"]


def test_concurrent_retries_write_once(app, cast, kind, monkeypatch):
    """Every copy passes the "seen this tag?" read before any of them writes (a barrier
    releases them together), so the unique key alone keeps the second write out."""
    barrier = threading.Barrier(THREADS, timeout=30)
    real_check = retries.check_observed

    def check_then_wait(*args: Any, **kwargs: Any) -> None:
        real_check(*args, **kwargs)
        barrier.wait()

    monkeypatch.setattr(f"app.services.trackables.{module(kind)}.check_observed", check_then_wait)
    token = issue_access_token(cast.author)
    target, sent = url(cast, kind), body(kind, clientMutationId="race-1")
    db.session.commit()  # the test's own session holds nothing while the threads run
    results: list[Any] = [None] * THREADS

    def run(index: int) -> None:
        response = app.test_client().post(
            target, json=sent, headers={"Authorization": f"Bearer {token}"}
        )
        results[index] = (response.status_code, response.get_json(force=True))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert [status for status, _ in results] == [201] * THREADS, results
    assert len({str(sorted(result.items())) for _, result in results}) == 1
    db.session.expire_all()
    assert count_rows(WRITES[kind][2]) == 1


def module(kind: str) -> str:
    return {"comment": "journey.comments", "stop": "journey.stops"}[kind]


# --- a tag sent again with another payload ----------------------

OTHER_PAYLOAD = {"comment": {"body": "Something else"}, "stop": {"latitude": 48.1}}


def test_a_tag_sent_again_with_another_payload_is_409_naming_the_first_record(api, cast, kind):
    first = api.as_user(cast.author).post(url(cast, kind), json=body(kind, clientMutationId="m-1"))
    changed = {**body(kind, clientMutationId="m-1"), **OTHER_PAYLOAD[kind]}
    response = api.as_user(cast.author).post(url(cast, kind), json=changed)
    problem = assert_problem(response, 409, code="client_mutation_id_reused")
    first_id = first.get_json()["trackableCommentId" if kind == "comment" else "journeyStopId"]
    assert problem["originalId"] == first_id
    assert count_rows(WRITES[kind][2]) == 1


def test_a_retry_after_its_comment_was_edited_still_returns_it(api, cast):
    sent = body("comment", clientMutationId="m-1")
    first = api.as_user(cast.author).post(url(cast, "comment"), json=sent).get_json()
    edit = f"{url(cast, 'comment')}/{first['trackableCommentId']}"
    assert api.as_user(cast.author).put(edit, json={"body": "Edited"}).status_code == 200
    again = api.as_user(cast.author).post(url(cast, "comment"), json=sent)
    assert again.status_code == 201
    assert again.get_json()["body"] == "Edited"  # the record as it is now


def test_the_409_of_a_reused_tag_is_documented(api, kind):
    document = api.get("/api/openapi.json").get_json()
    path = "/api/trackables/{trackableId}/" + WRITES[kind][0]
    assert "409" in document["paths"][path]["post"]["responses"]
