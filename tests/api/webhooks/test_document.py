"""The document's `webhooks` section as client generators read it: each event type's body
is a named schema (`<Type>Payload`) over the shared envelope, its `type` that name alone
and its `data` the shape the service records; each entry is signed, not behind an HTTP
scheme (`security: []`), and named by the operationId rule; its example is valid; and
what the service sends for each event type is valid against it, naming no field the
document lacks."""

from __future__ import annotations

import copy
import re
import uuid
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from sqlalchemy import select

from app.api.webhooks.documentation import payload_name
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.event import Event
from app.models.webhook import WebhookDelivery
from app.services import events
from app.services.events import EventType
from app.services.webhooks import TEST_EVENT
from app.services.webhooks import delivery as delivery_module
from tests.factories import make_note, make_trackable, make_user
from tests.inboxes import World
from tests.receivers import subscribe

EVERY_TYPE = [kind.value for kind in EventType] + [TEST_EVENT]
ENVELOPE = {"$ref": "#/components/schemas/WebhookEnvelope"}


@pytest.fixture
def document(api) -> dict[str, Any]:
    return api.get("/api/openapi.json").get_json()


def body_schema(document: dict[str, Any], event_type: str) -> dict[str, Any]:
    entry = document["webhooks"][event_type]["post"]
    return entry["requestBody"]["content"]["application/json"]


def validator(document: dict[str, Any], event_type: str) -> Draft202012Validator:
    """Validates a body against the event type's schema with every component that lists
    properties closed to them: a body may not carry a field the document does not name."""
    components = copy.deepcopy(document["components"])
    for schema in components["schemas"].values():
        if "properties" in schema:
            schema.setdefault("additionalProperties", False)
    root = {"components": components, **body_schema(document, event_type)["schema"]}
    return Draft202012Validator(root, format_checker=FormatChecker())


def test_each_event_type_has_a_named_body_over_the_envelope(document):
    schemas = document["components"]["schemas"]
    for event_type in EVERY_TYPE:
        name = payload_name(event_type)
        assert body_schema(document, event_type)["schema"] == {
            "$ref": f"#/components/schemas/{name}"
        }
        envelope, own = schemas[name]["allOf"]
        assert envelope == ENVELOPE, event_type
        assert own["properties"]["type"] == {"type": "string", "enum": [event_type]}
        assert set(own["required"]) == {"type", "data"}
        data = own["properties"]["data"]["$ref"].rsplit("/", 1)[-1]
        assert "eventId" in schemas[data]["required"] or event_type == TEST_EVENT, data
    assert set(schemas["WebhookEnvelope"]["required"]) == {"type", "timestamp", "data"}
    assert payload_name("team.member.role_changed") == "TeamMemberRoleChangedPayload"


def test_every_webhook_is_signed_not_authenticated_and_named_by_the_rule(document):
    names = [
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if isinstance(operation, dict) and "operationId" in operation
    ]
    for event_type in EVERY_TYPE:
        entry = document["webhooks"][event_type]["post"]
        assert entry["security"] == [], event_type
        assert re.fullmatch(r"receive[A-Z][A-Za-z0-9]*", entry["operationId"]), event_type
        names.append(entry["operationId"])
    assert len(names) == len(set(names))
    assert document["webhooks"]["webhook.test"]["post"]["operationId"] == "receiveWebhookTest"


def test_every_webhook_example_is_valid_against_its_body(document):
    for event_type in EVERY_TYPE:
        example = body_schema(document, event_type)["example"]
        assert example["type"] == event_type
        validator(document, event_type).validate(example)


def test_a_body_with_another_type_or_an_unknown_field_is_refused(document):
    example = body_schema(document, "trackable.comment.written")["example"]
    check = validator(document, "trackable.comment.written")
    assert check.is_valid(example)
    assert not check.is_valid({**example, "type": "trackable.activated"})
    assert not check.is_valid({**example, "data": {**example["data"], "body": "text"}})
    without_comment = {k: v for k, v in example["data"].items() if k != "commentId"}
    assert not check.is_valid({**example, "data": without_comment})


def recorded(world: World) -> dict[EventType, list[Any]]:
    """Events of every type, recorded as the services record them (with the subjects
    each names), for a team trackable in a group and for a trackable in neither."""
    alone = make_trackable(make_user("lone"), name="Lone bug")
    note = make_note(
        world.owner,
        team_id=world.team.id,
        visibility=NoteVisibility.PUBLIC,
        latitude=47.37,
        longitude=8.54,
    )
    ids = {
        EventType.ACTIVATED: {},
        EventType.COMMENT_WRITTEN: {"comment_id": uuid.uuid4()},
        EventType.COMMENT_EDITED: {"comment_id": uuid.uuid4()},
        EventType.COMMENT_DELETED: {"comment_id": uuid.uuid4()},
        EventType.STOP_ADDED: {"stop_id": uuid.uuid4()},
        EventType.STOP_DELETED: {"stop_id": uuid.uuid4()},
        EventType.STATUS_MESSAGE_CHANGED: {},
        EventType.ATTACHED_TO_NOTE: {"note_id": note.id},
        EventType.SECRET_ROTATED: {},
        EventType.GROUP_ITEM_ADDED: {},
        EventType.GROUP_ITEM_REMOVED: {"group_id": world.group.id},
        EventType.TEAM_NOTE_CREATED: {"note_id": note.id},
        EventType.TEAM_NOTE_EDITED: {"note_id": note.id},
        EventType.TEAM_NOTE_DELETED: {"note_id": note.id},
        EventType.TEAM_NOTE_REMOVED: {"note_id": note.id},
        EventType.MEMBERSHIP_REQUESTED: {"membership_id": uuid.uuid4()},
        EventType.MEMBER_JOINED: {"membership_id": uuid.uuid4()},
        EventType.MEMBER_LEFT: {"membership_id": uuid.uuid4()},
        EventType.MEMBER_REMOVED: {"membership_id": uuid.uuid4()},
        EventType.MEMBER_ROLE_CHANGED: {"membership_id": uuid.uuid4()},
        EventType.NOTE_PUBLISHED: {},
    }
    assert set(ids) == set(EventType)
    made: dict[EventType, list[Any]] = {}
    for kind, subjects in ids.items():
        if kind is EventType.NOTE_PUBLISHED:
            events.record_note_published(note, actor_id=None, is_new=True)
            alone_note = make_note(
                world.stranger, visibility=NoteVisibility.PUBLIC, latitude=1.0, longitude=2.0
            )
            events.record_note_published(alone_note, actor_id=None, is_new=True)
            made[kind] = [
                event for event in events_of(kind) if event.note_id in (note.id, alone_note.id)
            ]
        elif kind.is_team_event:
            made[kind] = [events.record_team(kind, world.team, actor_id=None, **subjects)]
        else:
            made[kind] = [
                events.record(kind, trackable, actor_id=None, **subjects)
                for trackable in (world.trackable, alone)
                if kind is not EventType.GROUP_ITEM_ADDED or trackable.group_id is not None
            ]
    return made


def events_of(kind: EventType) -> list[Any]:
    db.session.flush()
    return list(db.session.scalars(select(Event).where(Event.event_type == kind.value)))


def test_what_the_service_sends_for_each_event_type_is_valid_against_its_body(
    app, api, document, world
):
    made = recorded(world)
    checked = 0
    for kind, recorded_events in made.items():
        assert recorded_events, kind
        check = validator(document, kind.value)
        for event in recorded_events:
            body = delivery_module.payload(event)
            errors = [error.message for error in check.iter_errors(body)]
            assert errors == [], f"{kind.value}: {errors} in {body}"
            checked += 1
    # Each trackable type for both trackables (but joining a group: the one in a group),
    # each team type once, a note published by a team and by a person.
    assert checked == 11 * 2 - 1 + 9 + 2


def test_the_test_message_is_valid_against_its_body(app, api, document, receiver):
    user = make_user()
    hook = subscribe(api, user, receiver.url())
    sent = api.as_user(user).post(f"/api/webhooks/{hook['webhookId']}/test")
    assert sent.status_code == 202, sent.get_json()
    body = db.session.scalar(select(WebhookDelivery.payload))
    assert body["data"] == {"webhookId": hook["webhookId"]}
    validator(document, TEST_EVENT).validate(body)
