"""The check of answers against the OpenAPI document (tests.openapi_answers, turned on for
tests/api by VALIDATE_RESPONSES=1) finds what it is for: a field left out, a null the
document does not allow, a field it does not list, a status it does not list; and it
names the operation and the place in the answer."""

from __future__ import annotations

import json

import pytest

from tests.openapi_answers import checking, document_path, mismatch

STATUS = "/api/system/status"


@pytest.fixture
def status(app, client):
    response = client.get(STATUS)
    assert response.status_code == 200
    return response


def changed(response, change):
    body = json.loads(response.get_data())
    change(body)
    response.set_data(json.dumps(body))
    return response


def test_a_real_answer_agrees_with_the_document(app, status):
    assert mismatch(app, status) is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda body: body["limits"].pop("publicListCap"), "at /limits: 'publicListCap' is a"),
        (lambda body: body.update(serviceVersion=None), "at /serviceVersion: None is not"),
        (lambda body: body.update(mood="sunny"), "at /: Additional properties"),
    ],
)
def test_a_field_left_out_null_or_unknown_is_a_mismatch(app, status, change, expected):
    found = mismatch(app, changed(status, change))
    assert found is not None
    assert found.startswith("GET /api/system/status answered 200 unlike the document:")
    assert expected in found


def test_a_status_the_document_does_not_list_is_a_mismatch(app, status):
    status.status_code = 203
    assert mismatch(app, status) == "GET /api/system/status: answered 203, documented: " + (
        ", ".join(sorted(_documented(app)))
    )


def test_answers_outside_the_document_are_not_checked(app, client):
    assert mismatch(app, client.get("/api/openapi.json")) is None
    assert mismatch(app, client.get("/api/no-such-route")) is None  # 404: not a 2xx


def test_while_checking_a_wrong_answer_fails_the_request_that_got_it(app, client, monkeypatch):
    from app.services import system

    real = system.resolve_status

    def without_status(*args, **kwargs):
        return {key: value for key, value in real(*args, **kwargs).items() if key != "status"}

    monkeypatch.setattr(system, "resolve_status", without_status)
    with checking(), pytest.raises(AssertionError, match="at /: 'status' is a required"):
        client.get(STATUS)
    assert client.get(STATUS).status_code == 200  # no longer checked


def test_rules_are_named_as_the_document_names_paths():
    assert document_path("/api/notes/mine/<uuid:note_id>/move") == "/api/notes/mine/{noteId}/move"
    assert document_path("/api/images/<uuid:content_image_id>/<string:variant>") == (
        "/api/images/{contentImageId}/{variant}"
    )


def _documented(app):
    from tests.openapi_answers import document_of

    return document_of(app).paths[STATUS]["get"]["responses"]
