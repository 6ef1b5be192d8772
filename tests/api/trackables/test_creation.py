"""POST /api/trackables (contract: Trackable, code formats; Trackables: reads, creation,
groups; Trackable activation, create with activateImmediately; decisions: Trackable codes),
and the 401 of the routes of creation, reads and rotation."""

from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import CodeKind, Trackable, TrackableCode, TrackableVisibility
from app.services.trackables.codes import formats as codes
from tests.conftest import assert_problem
from tests.factories import count_rows as count
from tests.factories import make_trackable, make_user

CREATE = "/api/trackables"
BODY_CHARS = re.escape(codes.ALPHABET)
PUBLIC_SHAPE = re.compile(rf"^LN-[{BODY_CHARS}]{{6}}$")
SECRET_SHAPE = re.compile(rf"^LN[{BODY_CHARS}]{{8}}$")
QR_SHAPE = re.compile(r"^[A-Za-z0-9_-]{100}$")


@pytest.fixture
def alice(app):
    return make_user("alice")


def create(api, user, **body):
    body.setdefault("name", "Blue travel bug")
    return api.as_user(user).post(CREATE, json=body)


def settings(app):
    return codes.CodeSettings.from_config(app.config)


def stored_code(app, code):
    """The TrackableCode row a typed or scanned code finds, or None."""
    hashes = codes.typed_hashes(settings(app), code)
    return db.session.scalar(select(TrackableCode).where(TrackableCode.code_hash.in_(hashes)))


def only_item(response):
    assert response.status_code == 201, response.get_data(as_text=True)
    (item,) = response.get_json()["items"]
    return item


# --- every route of this part needs a bearer token where the contract says so -----------

SOME = "00000000-0000-4000-8000-000000000001"


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("POST", CREATE),
        ("POST", "/api/trackables/groups"),
        ("GET", "/api/trackables/mine"),
        ("POST", f"/api/trackables/{SOME}/secret/rotate"),
    ],
)
def test_route_needs_a_bearer_token(api, method, url):
    response = api.open(method, url, json={})
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


# --- the response and what is stored ----------------------------------------------------


def test_create_is_201_with_heading_description_and_one_item(api, alice):
    response = create(api, alice, name="Blue travel bug", description="Goes north.")
    assert response.status_code == 201
    body = response.get_json()
    assert body["heading"] == "Blue travel bug"
    assert body["description"] == "Goes north."
    (item,) = body["items"]
    assert set(item) == {"trackableId", "name", "publicCode", "secretCode", "scanUrl", "qrPayload"}
    assert item["trackableId"] == body["trackableId"]
    assert item["name"] == "Blue travel bug"


def test_codes_have_the_decided_shapes(api, alice):
    item = only_item(create(api, alice))
    assert PUBLIC_SHAPE.fullmatch(item["publicCode"])
    assert SECRET_SHAPE.fullmatch(item["secretCode"])
    token = item["scanUrl"].rsplit("/", 1)[1]
    assert QR_SHAPE.fullmatch(token)


def test_scan_url_and_qr_payload_are_the_public_base_url_with_the_token(app, api, alice):
    item = only_item(create(api, alice))
    base = app.config["PUBLIC_BASE_URL"].rstrip("/")
    assert item["scanUrl"].startswith(f"{base}/trackable/")
    assert item["qrPayload"] == item["scanUrl"]


def test_each_code_is_stored_only_as_a_keyed_hash_of_its_kind(app, api, alice):
    item = only_item(create(api, alice))
    token = item["scanUrl"].rsplit("/", 1)[1]
    trackable_id = uuid.UUID(item["trackableId"])
    found = {
        kind: stored_code(app, code)
        for kind, code in (
            (CodeKind.PUBLIC, item["publicCode"]),
            (CodeKind.SECRET, item["secretCode"]),
            (CodeKind.QR, token),
        )
    }
    for kind, row in found.items():
        assert (row.trackable_id, row.kind) == (trackable_id, kind)
        assert len(row.code_hash) == 64
    assert count(TrackableCode, TrackableCode.trackable_id == trackable_id) == 3
    trackable = db.session.get(Trackable, trackable_id)
    assert trackable.public_code == item["publicCode"]
    assert not trackable.has_custom_secret


def test_a_typed_secret_matches_with_character_mapping(app, api, alice):
    secret = only_item(create(api, alice))["secretCode"]
    typed = (" " + secret.lower() + " ").replace("0", "o").replace("1", "l")
    assert stored_code(app, typed) is not None


def test_create_stores_an_unactivated_trackable_of_its_creator(api, alice):
    item = only_item(create(api, alice))
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert trackable.created_by_user_id == alice.id
    assert (trackable.owner_user_id, trackable.activated_utc, trackable.team_id) == (
        None,
        None,
        None,
    )
    assert not trackable.is_activated
    assert trackable.visibility == TrackableVisibility.ALWAYS_VISIBLE
    assert trackable.group_id is None


def test_create_stores_every_field(api, alice, links):
    item = only_item(
        create(
            api,
            alice,
            name="  Red bug  ",
            description="Red and fast.",
            externalLinkUrl="https://Example.com/Story",
            externalLinkDescription="Our story",
            externalLinkAppendPublicTrackableCode=True,
            visibility="VisibleOnceAccessed",
        )
    )
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert trackable.name == "Red bug"
    assert trackable.description == "Red and fast."
    assert trackable.external_link_url == "https://example.com/story"  # as verified
    assert trackable.external_link_description == "Our story"
    assert trackable.external_link_append_public_code is True
    assert trackable.visibility == TrackableVisibility.ONCE_ACCESSED
    assert links == [("https://Example.com/Story", "Our story")]


def test_a_link_without_description_takes_the_page_title(api, alice, links):
    item = only_item(create(api, alice, externalLinkUrl="https://example.com"))
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert trackable.external_link_description == "Page title"


def test_a_link_that_fails_verification_is_400_and_stores_nothing(api, alice, links):
    response = create(api, alice, externalLinkUrl="https://bad.example.com")
    assert_problem(response, 400)
    assert count(Trackable) == 0
    assert count(TrackableCode) == 0


def test_activate_immediately_makes_the_creator_its_owner(api, alice):
    item = only_item(create(api, alice, activateImmediately=True))
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert trackable.owner_user_id == alice.id
    assert trackable.activated_utc is not None
    assert trackable.is_activated


def test_activate_immediately_with_a_team_makes_it_team_owned(api, member, team):
    item = only_item(create(api, member, activateImmediately=True, teamId=str(team.id)))
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert (trackable.owner_user_id, trackable.team_id) == (member.id, team.id)


def test_team_id_without_activation_is_kept_on_the_unactivated_trackable(api, member, team):
    item = only_item(create(api, member, teamId=str(team.id)))
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert (trackable.owner_user_id, trackable.team_id) == (None, team.id)


def test_team_id_of_a_public_team_the_caller_is_not_in_is_403(api, alice, team):
    response = create(api, alice, teamId=str(team.id), activateImmediately=True)
    assert_problem(response, 403, code="trackable_request_rejected")
    assert count(Trackable) == 0


def test_team_id_of_an_unknown_team_is_404(api, alice):
    assert_problem(create(api, alice, teamId=str(uuid.uuid4())), 404)


def test_team_id_null_means_personal(api, alice):
    item = only_item(create(api, alice, teamId=None, activateImmediately=True))
    assert db.session.get(Trackable, uuid.UUID(item["trackableId"])).team_id is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": None}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"description": "x" * 4001}, "description"),
        ({"visibility": "Public"}, "visibility"),
        ({"activateImmediately": "soon"}, "activateImmediately"),
        ({"teamId": "not-a-guid"}, "teamId"),
        (
            {"externalLinkAppendPublicTrackableCode": "yes please"},
            "externalLinkAppendPublicTrackableCode",
        ),
    ],
)
def test_invalid_fields_are_400_with_errors(api, alice, body, field):
    body = {"name": "Blue travel bug", **body}
    problem = assert_problem(api.as_user(alice).post(CREATE, json=body), 400)
    assert field in problem["errors"]
    assert count(Trackable) == 0


def test_a_missing_name_is_400(api, alice):
    problem = assert_problem(api.as_user(alice).post(CREATE, json={}), 400)
    assert "name" in problem["errors"]


# --- generated and bring-your-own secret codes -------------------------------------------


@pytest.mark.parametrize("secret", ["", None, "   "])
def test_an_empty_or_absent_secret_code_is_generated(api, alice, secret):
    body = {} if secret is None else {"secretCode": secret}
    item = only_item(create(api, alice, **body))
    assert SECRET_SHAPE.fullmatch(item["secretCode"])


def test_a_bring_your_own_secret_is_answered_as_given_and_stored(app, api, alice):
    item = only_item(create(api, alice, secretCode="Blue-Bug_42"))
    assert item["secretCode"] == "Blue-Bug_42"
    assert PUBLIC_SHAPE.fullmatch(item["publicCode"])  # the public code is still generated
    trackable = db.session.get(Trackable, uuid.UUID(item["trackableId"]))
    assert trackable.has_custom_secret
    row = stored_code(app, "Blue-Bug_42")
    assert (row.trackable_id, row.kind) == (trackable.id, CodeKind.SECRET)


@pytest.mark.parametrize("typed", ["blue-bug_42", "BLUE-BUG_42", " Blue-Bug_42 "])
def test_a_bring_your_own_secret_matches_ignoring_case(app, api, alice, typed):
    item = only_item(create(api, alice, secretCode="Blue-Bug_42"))
    row = stored_code(app, typed)
    assert row is not None
    assert str(row.trackable_id) == item["trackableId"]


def test_a_bring_your_own_secret_gets_no_character_mapping(app, api, alice):
    only_item(create(api, alice, secretCode="Oslo-1"))
    assert stored_code(app, "0sl0-1") is None


@pytest.mark.parametrize(
    "secret",
    [
        "abcde",  # shorter than 6
        "x" * 65,  # longer than 64
        "with space",
        "bang!code",
        "ümlaut-code",
        "dot.code",
    ],
)
def test_a_malformed_bring_your_own_secret_is_400_on_secret_code(api, alice, secret):
    problem = assert_problem(create(api, alice, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert secret not in str(problem)  # never echoed
    assert count(Trackable) == 0


@pytest.mark.parametrize("secret", ["Kite-7", "k7-" * 21 + "k"])
def test_a_bring_your_own_secret_of_6_to_64_characters_is_accepted(api, alice, secret):
    assert len(secret) in (6, 64)
    item = only_item(create(api, alice, secretCode=secret))
    assert item["secretCode"] == secret


@pytest.mark.parametrize(
    "secret", ["LN1234", "ln-own-code", "Ln_code", "GT12345", "gt-mine", "TB1234", "tbcode"]
)
def test_a_bring_your_own_secret_with_a_reserved_prefix_is_400(api, alice, secret):
    problem = assert_problem(create(api, alice, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert count(Trackable) == 0


@pytest.mark.parametrize("secret", ["Taken-Code", "taken-code", "TAKEN-CODE"])
def test_a_bring_your_own_secret_used_by_another_trackable_is_400(api, alice, secret):
    make_trackable(make_user(), secret_code="Taken-Code")
    problem = assert_problem(create(api, alice, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert count(Trackable) == 1  # the other one only: nothing of this request is left
    assert count(TrackableCode) == 3


@pytest.mark.parametrize("app_overrides", [{"TRACKABLE_SECRET_PREFIX": "GT"}])
def test_a_sister_deployment_generates_gt_secrets(api, alice):
    item = only_item(create(api, alice))
    assert re.fullmatch(rf"GT[{BODY_CHARS}]{{8}}", item["secretCode"])
    assert PUBLIC_SHAPE.fullmatch(item["publicCode"])


@pytest.mark.parametrize("app_overrides", [{"TRACKABLE_SECRET_PREFIX": "GT"}])
@pytest.mark.parametrize("secret", ["LN-code", "GT-code", "TB-code"])
def test_a_sister_deployment_still_reserves_every_prefix(api, alice, secret):
    problem = assert_problem(create(api, alice, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
