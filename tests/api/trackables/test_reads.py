"""Trackable reads: GET /api/trackables/public, /mine and /{trackableId} (contract:
Trackable; Trackables: reads, creation, groups; Limits, public data exposure cap;
decisions: Lists, Responses the contract leaves open): who sees what, the order, the cap,
the read model, and no secret code or QR token in any read."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from app.extensions import db
from app.models.trackable import Trackable, TrackableUnlock, TrackableVisibility
from tests.conftest import assert_problem
from tests.factories import (
    codes_of,
    make_group,
    make_membership,
    make_team,
    make_trackable,
    make_user,
)

PUBLIC = "/api/trackables/public"
MINE = "/api/trackables/mine"
LOOKUP = "/api/trackables/lookup"
HIDDEN = TrackableVisibility.ONCE_ACCESSED
DAY = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def one(trackable_id: object) -> str:
    return f"/api/trackables/{trackable_id}"


def at(hours: int) -> datetime:
    return DAY + timedelta(hours=hours)


def read(response, *trackables: Trackable, status: int = 200):
    """The JSON body of a read, after checking that no secret code or QR token of these
    trackables (or anything that looks like a field for one) is anywhere in it."""
    assert response.status_code == status, response.get_data(as_text=True)
    raw = response.get_data(as_text=True)
    for trackable in trackables:
        secret, token = codes_of(trackable)
        assert secret not in raw
        assert secret.upper() not in raw
        assert token not in raw
    for field in ("secretCode", "scanUrl", "qrPayload", "qrToken"):
        assert field not in raw
    return response.get_json()


def ids(body) -> list[str]:
    return [item["trackableId"] for item in body]


@pytest.fixture
def owner(app):
    return make_user("olga")


# --- GET /api/trackables/public ----------------------------------------------------------


def test_public_list_holds_only_activated_always_visible_trackables(api, owner):
    shown = make_trackable(owner)
    hidden = make_trackable(owner, visibility=HIDDEN)
    unactivated = make_trackable(None, created_by_user_id=owner.id)
    body = read(api.get(PUBLIC), shown, hidden, unactivated)
    assert ids(body) == [str(shown.id)]


def test_public_list_is_most_recent_activity_first(api, owner):
    old = make_trackable(owner, last_activity_utc=at(1))
    newest = make_trackable(owner, last_activity_utc=at(3))
    middle = make_trackable(owner, last_activity_utc=at(2))
    body = read(api.get(PUBLIC), old, newest, middle)
    assert ids(body) == [str(newest.id), str(middle.id), str(old.id)]
    assert response_header(api.get(PUBLIC)) is None


def response_header(response) -> str | None:
    return response.headers.get("X-Result-Truncated")


def test_public_list_works_for_a_signed_in_caller_and_does_not_add_their_hidden_items(api, owner):
    public = make_trackable(owner)
    mine_hidden = make_trackable(owner, visibility=HIDDEN)
    body = read(api.as_user(owner).get(PUBLIC), public, mine_hidden)
    assert ids(body) == [str(public.id)]
    assert body[0]["canManage"] is True
    anonymous = read(api.get(PUBLIC), public)
    assert anonymous[0]["canManage"] is False


@pytest.mark.parametrize("app_overrides", [{"PUBLIC_LIST_CAP": 3}])
def test_public_list_over_the_cap_keeps_the_most_recent_and_says_it_was_cut(api, owner):
    made = [make_trackable(owner, last_activity_utc=at(hour)) for hour in range(5)]
    response = api.get(PUBLIC)
    body = read(response, *made)
    assert ids(body) == [str(trackable.id) for trackable in reversed(made[2:])]
    assert response_header(response) == "true"


@pytest.mark.parametrize("app_overrides", [{"PUBLIC_LIST_CAP": 3}])
def test_public_list_exactly_at_the_cap_is_not_marked_as_cut(api, owner):
    made = [make_trackable(owner, last_activity_utc=at(hour)) for hour in range(3)]
    response = api.get(PUBLIC)
    assert len(read(response, *made)) == 3
    assert response_header(response) is None


@pytest.mark.parametrize("app_overrides", [{"PUBLIC_LIST_CAP": 2}])
def test_public_list_cap_counts_only_public_items(api, owner):
    hidden = [make_trackable(owner, visibility=HIDDEN, last_activity_utc=at(9)) for _ in range(3)]
    public = [make_trackable(owner, last_activity_utc=at(hour)) for hour in range(2)]
    response = api.get(PUBLIC)
    assert ids(read(response, *hidden, *public)) == [str(public[1].id), str(public[0].id)]
    assert response_header(response) is None


@pytest.mark.parametrize("language", ["en", "de-CH", "fr"])
def test_public_list_accepts_a_content_language_and_stays_multilingual(api, owner, language):
    trackable = make_trackable(owner)
    body = read(api.get(PUBLIC, query_string={"contentLanguage": language}), trackable)
    assert ids(body) == [str(trackable.id)]


@pytest.mark.parametrize("language", ["english!", "e", "en_US", "12"])
def test_public_list_refuses_an_invalid_content_language(api, owner, language):
    make_trackable(owner)
    body = assert_problem(api.get(PUBLIC, query_string={"contentLanguage": language}), 400)
    assert "contentLanguage" in body["errors"]


# --- GET /api/trackables/mine ------------------------------------------------------------


def relations(response, *trackables: Trackable) -> dict[str, str]:
    return {item["trackableId"]: item["relation"] for item in read(response, *trackables)}


def test_my_list_needs_a_bearer_token(api):
    assert_problem(api.get(MINE), 401)


def test_my_list_holds_every_relation_and_nothing_of_others(api, owner):
    admin, stranger = make_user(), make_user()
    team = make_team(admin, members=(owner,))
    personal = make_trackable(owner)
    team_owned = make_trackable(owner, team_id=team.id)  # activated while a member
    administered = make_trackable(make_user(), team_id=team.id)
    created = make_trackable(None, created_by_user_id=owner.id)
    unlocked = make_trackable(stranger, visibility=HIDDEN)
    db.session.add(TrackableUnlock(user_id=owner.id, trackable_id=unlocked.id))
    db.session.commit()
    others = [
        make_trackable(stranger),
        make_trackable(None, created_by_user_id=stranger.id),
        make_trackable(stranger, visibility=HIDDEN),
    ]
    every = [personal, team_owned, administered, created, unlocked, *others]

    assert relations(api.as_user(owner).get(MINE), *every) == {
        str(personal.id): "Activated",
        str(team_owned.id): "Activated",
        str(created.id): "Created",
        str(unlocked.id): "Unlocked",
    }
    assert relations(api.as_user(admin).get(MINE), *every) == {
        str(team_owned.id): "TeamAdmin",
        str(administered.id): "TeamAdmin",
    }


def test_my_list_is_most_recent_activity_first(api, owner):
    old = make_trackable(owner, last_activity_utc=at(1))
    new = make_trackable(owner, last_activity_utc=at(5))
    middle = make_trackable(None, created_by_user_id=owner.id, last_activity_utc=at(3))
    body = read(api.as_user(owner).get(MINE), old, new, middle)
    assert ids(body) == [str(new.id), str(middle.id), str(old.id)]


def test_my_list_shows_the_strongest_relation_once(api, owner):
    team = make_team(owner)
    trackable = make_trackable(owner, team_id=team.id)
    db.session.add(TrackableUnlock(user_id=owner.id, trackable_id=trackable.id))
    db.session.commit()
    assert relations(api.as_user(owner).get(MINE), trackable) == {str(trackable.id): "Activated"}


def test_my_list_holds_what_a_signed_in_secret_lookup_unlocked_on_any_client(app, api, owner):
    finder = make_user()
    trackable = make_trackable(owner, visibility=HIDDEN)
    secret, _ = codes_of(trackable)
    found = api.as_user(finder).post(LOOKUP, json={"code": secret})
    assert found.get_json()["found"] is True
    other_client = app.test_client()
    response = other_client.get(MINE, headers=bearer(finder))
    assert relations(response, trackable) == {str(trackable.id): "Unlocked"}


def bearer(user) -> dict[str, str]:
    from app.auth import issue_access_token

    return {"Authorization": f"Bearer {issue_access_token(user)}"}


def test_an_activator_who_left_the_team_no_longer_has_its_trackable_in_their_list(api, owner):
    admin = make_user()
    team = make_team(admin)
    membership = make_membership(team, owner)
    trackable = make_trackable(owner, team_id=team.id)
    assert relations(api.as_user(owner).get(MINE), trackable) == {str(trackable.id): "Activated"}

    left = api.as_user(owner).delete(f"/api/teams/{team.id}/memberships/{membership.id}")
    assert left.status_code in {200, 204}, left.get_data(as_text=True)

    assert read(api.as_user(owner).get(MINE), trackable) == []
    record = read(api.as_user(owner).get(one(trackable.id)), trackable)
    assert record["canManage"] is False
    assert relations(api.as_user(admin).get(MINE), trackable) == {str(trackable.id): "TeamAdmin"}


def test_my_list_is_empty_for_a_new_user(api):
    assert read(api.as_user(make_user()).get(MINE)) == []


# --- GET /api/trackables/{trackableId} ---------------------------------------------------


def test_an_activated_always_visible_trackable_is_open_to_anyone(api, owner):
    trackable = make_trackable(owner)
    for caller in (None, make_user(), owner):
        body = read(api.as_user(caller).get(one(trackable.id)), trackable)
        assert body["trackableId"] == str(trackable.id)


@pytest.mark.parametrize("who", ["anonymous", "stranger"])
def test_a_visible_once_accessed_trackable_is_not_found_before_unlocking(api, owner, who):
    trackable = make_trackable(owner, visibility=HIDDEN)
    caller = make_user() if who == "stranger" else None
    body = assert_problem(
        api.as_user(caller).get(one(trackable.id)), 404, code="trackable_not_found"
    )
    assert str(trackable.id) not in str(body)


def test_an_unactivated_trackable_is_not_found_except_for_its_creator(api, owner):
    trackable = make_trackable(None, created_by_user_id=owner.id)
    assert_problem(api.get(one(trackable.id)), 404, code="trackable_not_found")
    assert_problem(api.as_user(make_user()).get(one(trackable.id)), 404, code="trackable_not_found")
    body = read(api.as_user(owner).get(one(trackable.id)), trackable)
    assert body["isActivated"] is False
    assert body["canManage"] is True


def test_a_secret_lookup_opens_a_hidden_trackable_on_that_client_only(app, api, owner):
    trackable = make_trackable(owner, visibility=HIDDEN)
    secret, _ = codes_of(trackable)
    assert api.post(LOOKUP, json={"code": secret}).get_json()["found"] is True
    read(api.get(one(trackable.id)), trackable)
    other_client = app.test_client()
    assert_problem(other_client.get(one(trackable.id)), 404, code="trackable_not_found")


def test_a_qr_visit_opens_a_hidden_trackable_on_that_client(api, owner):
    trackable = make_trackable(owner, visibility=HIDDEN)
    _, token = codes_of(trackable)
    api.get(f"/trackable/{token}")
    read(api.get(one(trackable.id)), trackable)


def test_ending_the_active_session_hides_the_trackable_again(api, owner):
    trackable = make_trackable(owner, visibility=HIDDEN)
    secret, _ = codes_of(trackable)
    api.post(LOOKUP, json={"code": secret})
    api.delete(f"/api/trackables/active/{trackable.id}")
    assert_problem(api.get(one(trackable.id)), 404, code="trackable_not_found")


def test_a_hidden_trackable_is_open_to_its_managers_and_account_unlockers(app, api, owner):
    admin, unlocker = make_user(), make_user()
    team = make_team(admin, members=(owner,))
    trackable = make_trackable(owner, team_id=team.id, visibility=HIDDEN)
    db.session.add(TrackableUnlock(user_id=unlocker.id, trackable_id=trackable.id))
    db.session.commit()
    for caller, manages in ((owner, True), (admin, True), (unlocker, False)):
        response = app.test_client().get(one(trackable.id), headers=bearer(caller))
        assert read(response, trackable)["canManage"] is manages


def test_a_plain_team_member_does_not_see_a_hidden_team_trackable(api, owner):
    member = make_user()
    team = make_team(owner, members=(member,))
    trackable = make_trackable(owner, team_id=team.id, visibility=HIDDEN)
    assert_problem(api.as_user(member).get(one(trackable.id)), 404, code="trackable_not_found")


def test_an_unknown_trackable_is_not_found(api):
    assert_problem(api.get(one(uuid.uuid4())), 404, code="trackable_not_found")


@pytest.mark.parametrize("bad", ["not-a-guid", "12345", "LN-T00001"])
def test_a_malformed_trackable_id_is_not_found(api, owner, bad):
    make_trackable(owner, public_code="LN-T00001")
    assert_problem(api.get(one(bad)), 404)


# --- the read model ----------------------------------------------------------------------


def test_the_read_model_carries_activity_code_group_and_owner(api, owner):
    group = make_group(owner, name="Summer Hike 2026")
    activity = datetime(2026, 4, 2, 8, 30, 15, tzinfo=UTC)
    trackable = make_trackable(
        owner,
        public_code="LN-4K7Q2M",
        name="Blue bug",
        group_id=group.id,
        last_activity_utc=activity,
    )
    body = read(api.get(one(trackable.id)), trackable)
    assert body["trackableId"] == str(trackable.id)
    assert body["publicCode"] == "LN-4K7Q2M"
    assert body["name"] == "Blue bug"
    assert body["lastActivityUtc"].endswith("Z")
    assert datetime.fromisoformat(body["lastActivityUtc"]) == activity
    assert body["group"] == {
        "trackableGroupId": str(group.id),
        "name": "Summer Hike 2026",
        "slug": "summer_hike_2026",
    }
    assert body["ownerUserName"] == "olga"
    assert body["teamName"] is None
    assert body["isActivated"] is True
    assert body["visibility"] == "AlwaysVisibleToEveryone"


def test_the_read_model_of_a_team_trackable_names_its_team(api, owner):
    team = make_team(owner, name="River Rats")
    trackable = make_trackable(owner, team_id=team.id)
    body = read(api.get(one(trackable.id)), trackable)
    assert body["teamName"] == "River Rats"
    assert body["teamId"] == str(team.id)
    assert body["ownerUserName"] == "olga"
    assert body["group"] is None


def test_a_list_read_model_carries_the_same_record(api, owner):
    group = make_group(owner)
    trackable = make_trackable(owner, group_id=group.id)
    single = read(api.get(one(trackable.id)), trackable)
    [listed] = read(api.get(PUBLIC), trackable)
    assert listed == single
    [mine] = read(api.as_user(owner).get(MINE), trackable)
    assert mine["group"] == single["group"]
    assert mine["lastActivityUtc"] == single["lastActivityUtc"]


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("https://example.com/story", "https://example.com/story?trackableCode=LN-4K7Q2M"),
        (
            "https://example.com/story?lang=en&ref=a%20b",
            "https://example.com/story?lang=en&ref=a%20b&trackableCode=LN-4K7Q2M",
        ),
        (
            "https://example.com/story?lang=en#map",
            "https://example.com/story?lang=en&trackableCode=LN-4K7Q2M#map",
        ),
        (
            "https://example.com/story?trackableCode=OLD&x=1",
            "https://example.com/story?x=1&trackableCode=LN-4K7Q2M",
        ),
    ],
)
def test_an_opted_in_link_gets_the_public_code_appended(api, owner, stored, shown):
    trackable = make_trackable(
        owner,
        public_code="LN-4K7Q2M",
        external_link_url=stored,
        external_link_description="Our story",
        external_link_append_public_code=True,
    )
    body = read(api.get(one(trackable.id)), trackable)
    assert body["externalLinkUrl"] == shown
    assert body["externalLinkDescription"] == "Our story"
    assert body["externalLinkAppendPublicTrackableCode"] is True
    [listed] = read(api.get(PUBLIC), trackable)
    assert listed["externalLinkUrl"] == shown


def test_a_link_that_does_not_opt_in_is_shown_unchanged(api, owner):
    stored = "https://example.com/story?lang=en"
    trackable = make_trackable(owner, external_link_url=stored)
    body = read(api.get(one(trackable.id)), trackable)
    assert body["externalLinkUrl"] == stored
    assert body["externalLinkAppendPublicTrackableCode"] is False


def test_an_unactivated_group_item_shows_the_group_defaults_with_the_code_appended(api, owner):
    group = make_group(
        owner,
        default_trackable_title="Paddle",
        default_trackable_description="Pass it on",
        default_external_link_url="https://example.com/paddles?season=1",
        default_external_link_description="Paddles",
        default_external_link_append_public_code=True,
    )
    trackable = make_trackable(
        None, public_code="LN-PADD1E", created_by_user_id=owner.id, group_id=group.id, name=""
    )
    body = read(api.as_user(owner).get(one(trackable.id)), trackable)
    assert body["name"] == "Paddle"
    assert body["description"] == "Pass it on"
    assert body["externalLinkUrl"] == "https://example.com/paddles?season=1&trackableCode=LN-PADD1E"
    assert body["ownerUserName"] is None


def test_no_read_carries_a_secret_after_creation(api, owner):
    created = api.as_user(owner).post(
        "/api/trackables", json={"name": "Bug", "activateImmediately": True}
    )
    assert created.status_code == 201
    item = created.get_json()["items"][0]
    leaked = (item["secretCode"], item["scanUrl"], item["scanUrl"].rsplit("/", 1)[1])
    for url in (PUBLIC, MINE, one(item["trackableId"])):
        raw = api.as_user(owner).get(url).get_data(as_text=True)
        assert item["publicCode"] in raw
        for value in leaked:
            assert value not in raw
