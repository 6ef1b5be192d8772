"""Active secret sessions: GET /api/trackables/active, GET/DELETE
/api/trackables/active/{trackableId} and POST .../message (contract: Active secret session;
Trackables: lookup and active sessions; decisions: Access sessions for secret codes)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.team import MembershipStatus
from app.models.trackable import (
    STATUS_MESSAGE_MAX_LENGTH,
    TrackableAccessSession,
    TrackableVisibility,
)
from tests.conftest import ApiClient, assert_problem
from tests.factories import (
    codes_of,
    count_rows,
    make_group,
    make_membership,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)

ACTIVE = "/api/trackables/active"
LOOKUP = "/api/trackables/lookup"
UNKNOWN = "00000000-0000-4000-8000-000000000001"


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner, name="Blue bottle", description="Floats well")


@pytest.fixture
def other_client(app) -> ApiClient:
    """A second browser: its own cookie jar."""
    return ApiClient(app.test_client())


def unlock(api: ApiClient, trackable, *, qr: bool = False) -> None:
    secret, token = codes_of(trackable)
    response = api.post(LOOKUP, json={"code": token if qr else secret})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["usesSecretAccess"] is True


def landing(api: ApiClient, trackable) -> dict:
    response = api.get(f"{ACTIVE}/{trackable.id}")
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def active_ids(api: ApiClient) -> list[str]:
    response = api.get(ACTIVE)
    assert response.status_code == 200, response.get_data(as_text=True)
    return [item["trackableId"] for item in response.get_json()]


def set_message(api: ApiClient, trackable, body) -> object:
    return api.post(f"{ACTIVE}/{trackable.id}/message", json=body)


# --- GET /api/trackables/active ----------------------------------------------------------


def test_a_client_without_a_cookie_has_no_active_sessions(api, trackable):
    assert active_ids(api) == []


def test_a_secret_lookup_makes_the_trackable_an_active_session_of_this_client(api, trackable):
    unlock(api, trackable)
    (item,) = api.get(ACTIVE).get_json()
    assert item["trackableId"] == str(trackable.id)
    assert item["publicCode"] == trackable.public_code
    assert item["name"] == "Blue bottle"
    assert item["isActivated"] is True
    assert item["statusMessage"] == ""
    assert item["unlockedUtc"].endswith("Z")


def test_a_qr_lookup_also_opens_an_active_session(api, trackable):
    unlock(api, trackable, qr=True)
    assert active_ids(api) == [str(trackable.id)]


def test_each_unlocked_trackable_is_listed_once(api, owner, trackable):
    second = make_trackable(owner)
    unlock(api, trackable)
    unlock(api, second)
    unlock(api, trackable, qr=True)
    assert sorted(active_ids(api)) == sorted([str(trackable.id), str(second.id)])


def test_the_latest_unlocked_session_is_listed_first(api, owner, trackable):
    second = make_trackable(owner)
    unlock(api, trackable)
    earlier = db.session.scalars(select(TrackableAccessSession)).one()
    earlier.created_utc -= timedelta(minutes=5)
    db.session.commit()
    unlock(api, second)
    assert active_ids(api) == [str(second.id), str(trackable.id)]


def test_a_public_code_lookup_opens_no_active_session(api, trackable):
    api.post(LOOKUP, json={"code": trackable.public_code})
    assert active_ids(api) == []


def test_another_clients_sessions_are_not_listed(api, other_client, trackable):
    unlock(other_client, trackable)
    assert active_ids(api) == []


def test_a_signed_in_callers_account_unlock_is_not_this_clients_session(api, trackable):
    finder = make_user("finn")
    unlock_trackable(finder, trackable)
    assert active_ids(api.as_user(finder)) == []


def test_the_list_answer_is_json_even_for_anonymous_callers(api, trackable):
    response = api.get(ACTIVE)
    assert response.status_code == 200
    assert response.mimetype == "application/json"


# --- GET /api/trackables/active/{id}: who may open it ------------------------------------


def test_the_landing_is_404_without_a_session_for_that_trackable(api, trackable):
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_landing_is_404_even_for_a_public_trackable_without_a_session(api, trackable):
    assert trackable.visibility == TrackableVisibility.ALWAYS_VISIBLE
    api.post(LOOKUP, json={"code": trackable.public_code})  # seeing it is no session
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_landing_is_404_for_a_session_of_another_trackable(api, owner, trackable):
    unlock(api, make_trackable(owner))
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_landing_is_404_for_a_session_held_by_another_client(api, other_client, trackable):
    unlock(other_client, trackable)
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_landing_of_an_unknown_trackable_is_404(api, trackable):
    unlock(api, trackable)
    assert_problem(api.get(f"{ACTIVE}/{UNKNOWN}"), 404, code="trackable_not_found")


def test_a_signed_in_stranger_without_a_session_gets_404(api, trackable):
    stranger = api.as_user(make_user("sam"))
    assert_problem(stranger.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_trackables_manager_opens_the_landing_without_a_session(api, owner, trackable):
    body = landing(api.as_user(owner), trackable)
    assert body["trackableId"] == str(trackable.id)
    assert body["statusMessage"] == ""


def test_the_landing_opens_for_an_anonymous_client_holding_the_session(api, trackable):
    body = landing(api, _unlocked(api, trackable))
    assert body["trackableId"] == str(trackable.id)
    assert body["publicCode"] == trackable.public_code
    assert body["name"] == "Blue bottle"
    assert body["description"] == "Floats well"


def test_the_landing_never_carries_a_secret(api, trackable):
    secret, token = codes_of(_unlocked(api, trackable))
    text = api.get(f"{ACTIVE}/{trackable.id}").get_data(as_text=True)
    assert secret not in text
    assert token not in text


def _unlocked(api: ApiClient, trackable):
    unlock(api, trackable)
    return trackable


# --- landing payload: activation and groups ----------------------------------------------


def test_an_activated_trackable_needs_no_activation_and_offers_no_contexts(api, trackable):
    unlock(api, trackable)
    body = landing(api.as_user(make_user("finn")), trackable)
    assert body["isActivated"] is True
    assert body["activationRequired"] is False
    assert body["activationContexts"] == []


def test_an_unactivated_trackable_requires_activation(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    unlock(api, fresh)
    body = landing(api, fresh)
    assert body["isActivated"] is False
    assert body["activationRequired"] is True


def test_anonymous_callers_get_no_activation_contexts(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    unlock(api, fresh)
    assert landing(api, fresh)["activationContexts"] == []


def test_a_signed_in_caller_may_activate_personally(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    finder = make_user("finn")
    unlock(api.as_user(finder), fresh)
    assert landing(api.as_user(finder), fresh)["activationContexts"] == [{"kind": "Personal"}]


def test_a_signed_in_caller_may_activate_for_each_team_they_are_an_active_member_of(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    finder = make_user("finn")
    led = make_team(finder, name="Alpha hikers")
    joined = make_team(name="Beta walkers", members=(finder,))
    requested = make_team(name="Gamma requests")
    make_membership(requested, finder, status=MembershipStatus.REQUESTING)
    invited = make_team(name="Delta invites")
    make_membership(invited, finder, status=MembershipStatus.INVITED)
    make_team(name="Epsilon strangers")
    unlock(api.as_user(finder), fresh)

    contexts = landing(api.as_user(finder), fresh)["activationContexts"]

    assert contexts[0] == {"kind": "Personal"}
    teams = {(c["kind"], c["teamId"], c["teamName"]) for c in contexts[1:]}
    assert teams == {
        ("Team", str(led.id), "Alpha hikers"),
        ("Team", str(joined.id), "Beta walkers"),
    }


def test_an_ungrouped_trackable_says_so(api, trackable):
    body = landing(api, _unlocked(api, trackable))
    assert body["isGrouped"] is False
    assert body["group"] is None
    assert body["groupItems"] == []


def test_a_grouped_trackable_names_its_group(api, owner):
    group = make_group(owner, name="Summer hunt")
    item = make_trackable(owner, group_id=group.id)
    body = landing(api, _unlocked(api, item))
    assert body["isGrouped"] is True
    assert body["group"]["trackableGroupId"] == str(group.id)
    assert body["group"]["name"] == "Summer hunt"
    assert body["group"]["slug"] == "summer_hunt"


def test_an_unactivated_group_item_shows_the_groups_default_title(api, owner):
    group = make_group(
        owner, default_trackable_title="Hunt item", default_trackable_description="Find me"
    )
    item = make_trackable(None, created_by_user_id=owner.id, group_id=group.id, name="")
    body = landing(api, _unlocked(api, item))
    assert body["name"] == "Hunt item"
    assert body["description"] == "Find me"


def test_the_landing_lists_the_groups_other_items_the_caller_may_see(api, owner):
    group = make_group(owner)
    item = make_trackable(owner, group_id=group.id, public_code="LN-AAAAA1")
    public = make_trackable(owner, group_id=group.id, public_code="LN-AAAAA2", name="Seen")
    hidden = make_trackable(
        owner,
        group_id=group.id,
        public_code="LN-AAAAA3",
        visibility=TrackableVisibility.ONCE_ACCESSED,
    )
    unactivated = make_trackable(
        None, created_by_user_id=owner.id, group_id=group.id, public_code="LN-AAAAA4"
    )
    make_trackable(owner, public_code="LN-AAAAA5")  # in no group

    items = landing(api, _unlocked(api, item))["groupItems"]

    assert items == [
        {
            "trackableId": str(public.id),
            "publicCode": "LN-AAAAA2",
            "name": "Seen",
            "isActivated": True,
        }
    ]
    shown = {entry["trackableId"] for entry in items}
    assert str(item.id) not in shown  # not itself
    assert str(hidden.id) not in shown
    assert str(unactivated.id) not in shown


def test_a_hidden_group_item_is_listed_once_this_client_unlocked_it_too(api, owner):
    group = make_group(owner)
    item = make_trackable(owner, group_id=group.id)
    hidden = make_trackable(owner, group_id=group.id, visibility=TrackableVisibility.ONCE_ACCESSED)
    unlock(api, item)
    assert landing(api, item)["groupItems"] == []
    unlock(api, hidden)
    assert [entry["trackableId"] for entry in landing(api, item)["groupItems"]] == [str(hidden.id)]


def test_the_groups_manager_sees_every_other_item(api, owner):
    group = make_group(owner)
    item = make_trackable(owner, group_id=group.id)
    hidden = make_trackable(owner, group_id=group.id, visibility=TrackableVisibility.ONCE_ACCESSED)
    unlock(api.as_user(owner), item)
    shown = [entry["trackableId"] for entry in landing(api.as_user(owner), item)["groupItems"]]
    assert shown == [str(hidden.id)]


# --- POST .../message --------------------------------------------------------------------


def test_the_status_text_is_remembered_and_shown_in_the_landing(api, trackable):
    unlock(api, trackable)
    response = set_message(api, trackable, {"statusMessage": "Found it at the trailhead"})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["trackableId"] == str(trackable.id)
    assert response.get_json()["statusMessage"] == "Found it at the trailhead"
    assert landing(api, trackable)["statusMessage"] == "Found it at the trailhead"
    assert api.get(ACTIVE).get_json()[0]["statusMessage"] == "Found it at the trailhead"


def test_the_status_text_is_trimmed(api, trackable):
    unlock(api, trackable)
    set_message(api, trackable, {"statusMessage": "  Heading north \n"})
    assert landing(api, trackable)["statusMessage"] == "Heading north"


def test_an_empty_status_text_clears_it(api, trackable):
    unlock(api, trackable)
    set_message(api, trackable, {"statusMessage": "Heading north"})
    response = set_message(api, trackable, {"statusMessage": ""})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert landing(api, trackable)["statusMessage"] == ""


def test_a_status_text_at_the_limit_is_kept_whole(api, trackable):
    unlock(api, trackable)
    text = "x" * STATUS_MESSAGE_MAX_LENGTH
    assert set_message(api, trackable, {"statusMessage": text}).status_code == 200
    assert landing(api, trackable)["statusMessage"] == text


def test_a_status_text_over_the_limit_is_400_naming_the_field(api, trackable):
    assert STATUS_MESSAGE_MAX_LENGTH == 500  # the documented limit (OpenAPI description)
    unlock(api, trackable)
    set_message(api, trackable, {"statusMessage": "kept"})
    body = assert_problem(set_message(api, trackable, {"statusMessage": "x" * 501}), 400)
    assert "statusMessage" in body["errors"]
    assert landing(api, trackable)["statusMessage"] == "kept"


def test_surrounding_space_does_not_count_toward_the_limit(api, trackable):
    unlock(api, trackable)
    text = "y" * STATUS_MESSAGE_MAX_LENGTH
    response = set_message(api, trackable, {"statusMessage": f"  {text}  "})
    assert response.status_code == 200, response.get_data(as_text=True)
    assert landing(api, trackable)["statusMessage"] == text


@pytest.mark.parametrize("body", [{}, {"statusMessage": None}, {"statusMessage": 7}])
def test_a_missing_or_non_text_status_is_400_naming_the_field(api, trackable, body):
    unlock(api, trackable)
    assert "statusMessage" in assert_problem(set_message(api, trackable, body), 400)["errors"]


def test_the_status_text_needs_this_clients_session(api, other_client, trackable):
    unlock(other_client, trackable)
    response = set_message(api, trackable, {"statusMessage": "Not mine"})
    assert_problem(response, 404, code="trackable_not_found")
    assert landing(other_client, trackable)["statusMessage"] == ""


def test_the_status_text_belongs_to_the_client_not_the_trackable(api, other_client, trackable):
    unlock(api, trackable)
    unlock(other_client, trackable)
    set_message(api, trackable, {"statusMessage": "Mine"})
    assert landing(other_client, trackable)["statusMessage"] == ""


# --- DELETE /api/trackables/active/{id} --------------------------------------------------


def test_ending_a_session_removes_it_from_this_client(api, trackable):
    unlock(api, trackable)
    response = api.delete(f"{ACTIVE}/{trackable.id}")
    assert response.status_code == 204
    assert response.get_data() == b""
    assert active_ids(api) == []
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")
    assert_problem(
        set_message(api, trackable, {"statusMessage": "gone"}), 404, code="trackable_not_found"
    )


def test_ending_a_session_leaves_another_clients_session_for_the_same_trackable(
    api, other_client, trackable
):
    unlock(api, trackable)
    unlock(other_client, trackable)
    set_message(other_client, trackable, {"statusMessage": "Still here"})

    assert api.delete(f"{ACTIVE}/{trackable.id}").status_code == 204

    assert active_ids(other_client) == [str(trackable.id)]
    assert landing(other_client, trackable)["statusMessage"] == "Still here"
    assert count_rows(TrackableAccessSession) == 1


def test_ending_one_session_leaves_this_clients_other_sessions(api, owner, trackable):
    second = make_trackable(owner)
    unlock(api, trackable)
    unlock(api, second)
    api.delete(f"{ACTIVE}/{trackable.id}")
    assert active_ids(api) == [str(second.id)]


def test_ending_a_session_this_client_does_not_hold_is_204_and_changes_nothing(
    api, other_client, trackable
):
    unlock(other_client, trackable)
    assert api.delete(f"{ACTIVE}/{trackable.id}").status_code == 204
    assert api.delete(f"{ACTIVE}/{uuid.uuid4()}").status_code == 204
    assert active_ids(other_client) == [str(trackable.id)]


def test_a_signed_in_caller_ends_the_session_but_keeps_the_account_unlock(api, trackable):
    finder = make_user("finn")
    unlock(api.as_user(finder), trackable)
    api.as_user(finder).delete(f"{ACTIVE}/{trackable.id}")
    assert active_ids(api.as_user(finder)) == []
    # The account still unlocked it: a later device of the account reopens the landing.
    assert landing(api.as_user(finder), trackable)["trackableId"] == str(trackable.id)
    assert_problem(api.get(f"{ACTIVE}/{trackable.id}"), 404, code="trackable_not_found")


def test_the_session_can_be_opened_again_after_ending_it(api, trackable):
    unlock(api, trackable)
    api.delete(f"{ACTIVE}/{trackable.id}")
    unlock(api, trackable)
    assert active_ids(api) == [str(trackable.id)]
    assert landing(api, trackable)["statusMessage"] == ""
