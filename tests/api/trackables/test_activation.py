"""POST /api/trackables/{trackableId}/activate (contract: Trackable activation; Trackables:
reads, creation, groups, the activation paragraph; Errors: trackable codes)."""

from __future__ import annotations

import threading
import uuid

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.trackable import JourneyStop, Trackable, TrackableVisibility
from app.policies import trackables as trackable_policy
from app.services.trackables.items import activation as activation_service
from app.services.trackables.journey import recording as journey
from tests.conftest import assert_problem
from tests.factories import (
    count_rows,
    make_group,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)

UNKNOWN = "00000000-0000-4000-8000-000000000001"


@pytest.fixture
def alice(app):
    return make_user("alice", display_name="Alice A.")


@pytest.fixture
def fresh(alice):
    """An unactivated trackable alice created (she holds its secret)."""
    return make_trackable(
        None, created_by_user_id=alice.id, name="Blue bottle", description="From the shop"
    )


def url(trackable_id) -> str:
    return f"/api/trackables/{trackable_id}/activate"


def activate(api, user, trackable, **body):
    return api.as_user(user).post(url(trackable.id), json=body)


def reloaded(trackable) -> Trackable:
    db.session.expire_all()
    return db.session.get(Trackable, trackable.id)


# --- row 1: unactivated, caller signed in, no teamId -> personally owned -----------------


def test_the_creator_activates_a_personal_trackable(api, alice, fresh):
    response = activate(api, alice, fresh, name="Red bottle")
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["trackableId"] == str(fresh.id)
    assert body["publicCode"] == fresh.public_code
    assert body["name"] == "Red bottle"
    assert body["isActivated"] is True
    assert body["teamId"] is None
    assert body["ownerUserId"] == str(alice.id)
    assert body["activatedUtc"].endswith("Z")
    assert body["initialJourneyStopId"] is None
    stored = reloaded(fresh)
    assert stored.owner_user_id == alice.id
    assert stored.team_id is None
    assert stored.activated_utc is not None
    assert stored.last_activity_utc >= stored.activated_utc


def test_the_response_carries_no_secret(api, alice, fresh):
    body = activate(api, alice, fresh, name="Red bottle").get_json()
    assert not {"secretCode", "scanUrl", "qrPayload"} & set(body)


def test_whoever_unlocked_it_may_activate_it_and_becomes_its_owner(api, alice, fresh):
    finder = make_user()
    unlock_trackable(finder, fresh)
    response = activate(api, finder, fresh, name="Found bottle")
    assert response.status_code == 200
    assert reloaded(fresh).owner_user_id == finder.id


def test_left_out_fields_keep_what_the_creator_gave(api, alice, fresh):
    body = activate(api, alice, fresh).get_json()
    assert body["name"] == "Blue bottle"
    assert body["description"] == "From the shop"


def test_sent_values_are_stored_trimmed(api, alice, fresh):
    body = activate(
        api, alice, fresh, name="  Red  ", description=" Lake ", statusMessage=" North "
    ).get_json()
    assert (body["name"], body["description"], body["statusMessage"]) == ("Red", "Lake", "North")


@pytest.mark.parametrize("who", ["stranger", "anyone_for_public_visibility"])
def test_a_caller_who_cannot_see_it_gets_not_found(api, alice, who):
    visibility = (
        TrackableVisibility.ALWAYS_VISIBLE
        if who == "anyone_for_public_visibility"
        else TrackableVisibility.ONCE_ACCESSED
    )
    # Unactivated trackables are hidden from everyone but their creator and unlockers,
    # whatever their visibility.
    trackable = make_trackable(None, created_by_user_id=alice.id, visibility=visibility)
    response = activate(api, make_user(), trackable, name="Mine now")
    assert_problem(response, 404, code="trackable_not_found")
    assert reloaded(trackable).owner_user_id is None


def test_an_unknown_trackable_is_not_found(api, alice):
    response = api.as_user(alice).post(url(UNKNOWN), json={"name": "x"})
    assert_problem(response, 404, code="trackable_not_found")


def test_activation_needs_a_bearer_token(api, fresh):
    response = api.post(url(fresh.id), json={"name": "x"})
    assert_problem(response, 401)
    assert reloaded(fresh).owner_user_id is None


# --- row: activated -> trackable_already_activated, state unchanged ----------------------


@pytest.mark.parametrize("who", ["owner", "other"])
def test_activating_an_activated_trackable_is_rejected_and_changes_nothing(api, alice, who):
    trackable = make_trackable(alice, name="Kept")
    caller = alice if who == "owner" else make_user()
    unlock_trackable(caller, trackable)
    response = activate(api, caller, trackable, name="Changed", teamId=None)
    assert_problem(response, 400, code="trackable_already_activated")
    stored = reloaded(trackable)
    assert (stored.owner_user_id, stored.name) == (alice.id, "Kept")


# --- row 2: teamId given -> team-owned ---------------------------------------------------


def test_a_team_member_activates_a_team_owned_trackable(api, alice, fresh):
    admin = make_user()
    team = make_team(admin, members=(alice,))
    response = activate(api, alice, fresh, name="Team bottle", teamId=str(team.id))
    assert response.status_code == 200
    assert response.get_json()["teamId"] == str(team.id)
    stored = reloaded(fresh)
    assert (stored.owner_user_id, stored.team_id) == (alice.id, team.id)


def test_the_team_admins_then_manage_it_and_the_activator_keeps_control(api, alice, fresh):
    from app.auth import build_viewer

    admin = make_user()
    team = make_team(admin, members=(alice,))
    activate(api, alice, fresh, name="Team bottle", teamId=str(team.id))
    stored = reloaded(fresh)
    assert trackable_policy.can_manage(build_viewer(admin), stored)
    assert trackable_policy.can_manage(build_viewer(alice), stored)


def test_a_public_team_the_caller_is_not_a_member_of_is_forbidden(api, alice, fresh):
    team_id = str(make_team(make_user()).id)  # a public page: the team is seen
    response = activate(api, alice, fresh, name="x", teamId=team_id)
    body = assert_problem(response, 403, code="trackable_request_rejected")
    assert body["detail"] == "Only the team's active members may act for it."
    assert reloaded(fresh).owner_user_id is None


def test_an_unknown_team_is_not_found(api, alice, fresh):
    response = activate(api, alice, fresh, name="x", teamId=UNKNOWN)
    body = assert_problem(response, 404, code="trackable_request_rejected")
    assert body["detail"] == "Team not found."
    assert reloaded(fresh).owner_user_id is None


def test_a_team_id_that_is_not_a_guid_is_a_validation_error(api, alice, fresh):
    body = assert_problem(activate(api, alice, fresh, teamId="team-7"), 400)
    assert "teamId" in body["errors"]


# --- row 3: both initial coordinates -> first journey stop in the same request ----------


def test_initial_coordinates_record_the_first_journey_stop(api, alice, fresh):
    response = activate(
        api,
        alice,
        fresh,
        name="Berlin bottle",
        initialJourneyStopLatitude=52.520049,
        initialJourneyStopLongitude=13.40496,
    )
    assert response.status_code == 200
    stop = db.session.scalars(select(JourneyStop).where(JourneyStop.trackable_id == fresh.id)).one()
    assert response.get_json()["initialJourneyStopId"] == str(stop.id)
    assert (stop.latitude, stop.longitude) == (52.52, 13.405)
    assert stop.location_label == "Berlin, Germany"
    assert stop.created_by_user_id == alice.id
    assert stop.creator_display_name == "Alice A."
    assert stop.is_location_only is True
    assert stop.is_anonymous is False


@pytest.mark.parametrize(
    ("sent", "missing"),
    [
        ({"initialJourneyStopLatitude": 52.5}, "initialJourneyStopLongitude"),
        ({"initialJourneyStopLongitude": 13.4}, "initialJourneyStopLatitude"),
    ],
)
def test_one_initial_coordinate_alone_names_the_missing_one(api, alice, fresh, sent, missing):
    body = assert_problem(activate(api, alice, fresh, name="x", **sent), 400)
    assert list(body["errors"]) == [missing]
    assert reloaded(fresh).owner_user_id is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("initialJourneyStopLatitude", 90.5),
        ("initialJourneyStopLatitude", -91),
        ("initialJourneyStopLongitude", 180.5),
        ("initialJourneyStopLongitude", -181),
    ],
)
def test_initial_coordinates_out_of_range_are_rejected(api, alice, fresh, field, value):
    body = {"initialJourneyStopLatitude": 10.0, "initialJourneyStopLongitude": 10.0}
    body[field] = value
    problem = assert_problem(activate(api, alice, fresh, name="x", **body), 400)
    assert field in problem["errors"]
    assert count_rows(JourneyStop) == 0


def test_a_failing_journey_stop_leaves_the_trackable_unactivated(api, alice, fresh, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(journey, "record_stop", broken)
    response = activate(
        api,
        alice,
        fresh,
        name="x",
        initialJourneyStopLatitude=1.0,
        initialJourneyStopLongitude=1.0,
    )
    assert_problem(response, 500)
    assert reloaded(fresh).owner_user_id is None
    assert count_rows(JourneyStop) == 0


# --- the name rule and group defaults ----------------------------------------------------


def test_a_blank_name_without_the_flag_is_rejected(api, alice, fresh):
    body = assert_problem(activate(api, alice, fresh, name="   "), 400)
    assert "name" in body["errors"]
    assert reloaded(fresh).owner_user_id is None


@pytest.fixture
def group(alice):
    return make_group(
        alice,
        default_trackable_title="Old title",
        default_trackable_description="Old description",
        default_status_message="Old status",
        default_external_link_url="https://example.org/old",
        default_external_link_description="Old link",
    )


@pytest.fixture
def item(alice, group):
    """An unactivated item of the group, created while the old defaults applied."""
    return make_trackable(
        None,
        created_by_user_id=alice.id,
        group_id=group.id,
        name="Old title",
        description="Old description",
        status_message="Old status",
    )


def change_defaults(group) -> None:
    group.default_trackable_title = "New title"
    group.default_trackable_description = "New description"
    group.default_status_message = "New status"
    group.default_external_link_url = "https://example.org/new"
    group.default_external_link_description = "New link"
    group.default_external_link_append_public_code = True
    db.session.commit()


FLAGS = [
    ("name", "useGroupDefaultTitle", "New title"),
    ("description", "useGroupDefaultDescription", "New description"),
    ("statusMessage", "useGroupDefaultStatusMessage", "New status"),
]


@pytest.mark.parametrize(("field", "flag", "expected"), FLAGS)
@pytest.mark.parametrize("blank", ["", None, "left out"])
def test_a_blank_value_with_its_flag_copies_the_groups_current_default(
    api, alice, group, item, field, flag, expected, blank
):
    change_defaults(group)
    body = {flag: True, "name": "Own name"} if field != "name" else {flag: True}
    if blank != "left out":
        body[field] = blank
    response = activate(api, alice, item, **body)
    assert response.status_code == 200, response.get_json()
    assert response.get_json()[field] == expected


@pytest.mark.parametrize(("field", "flag", "expected"), FLAGS)
def test_an_explicit_value_wins_over_the_flag(api, alice, group, item, field, flag, expected):
    change_defaults(group)
    body = {flag: True, "name": "Own name", field: "Explicit"}
    assert activate(api, alice, item, **body).get_json()[field] == "Explicit"


@pytest.mark.parametrize(("field", "flag", "expected"), FLAGS[1:])
def test_a_blank_value_without_its_flag_is_stored_blank(
    api, alice, group, item, field, flag, expected
):
    change_defaults(group)
    body = activate(api, alice, item, name="Own name", **{field: ""}).get_json()
    assert body[field] == ""


def test_the_flag_with_a_group_without_default_title_is_rejected_on_name(api, alice, group, item):
    group.default_trackable_title = ""
    db.session.commit()
    body = assert_problem(activate(api, alice, item, name="", useGroupDefaultTitle=True), 400)
    assert "name" in body["errors"]


def test_the_link_flag_copies_the_groups_current_default_link(api, alice, group, item, links):
    change_defaults(group)
    response = activate(api, alice, item, name="x", useGroupDefaultExternalLink=True)
    body = response.get_json()
    assert body["externalLinkUrl"] == "https://example.org/new"
    assert body["externalLinkDescription"] == "New link"
    assert body["externalLinkAppendPublicTrackableCode"] is True
    assert links == []  # the group's link was checked when the group was saved


def test_an_explicit_link_is_revalidated_and_stored_normalised(api, alice, fresh, links):
    response = activate(
        api,
        alice,
        fresh,
        name="x",
        externalLinkUrl="https://Example.com/Page",
        externalLinkDescription="",
    )
    body = response.get_json()
    assert links == [("https://Example.com/Page", None)]
    assert body["externalLinkUrl"] == "https://example.com/page"
    assert body["externalLinkDescription"] == "Page title"


def test_a_rejected_link_leaves_the_trackable_unactivated(api, alice, fresh, links):
    response = activate(api, alice, fresh, name="x", externalLinkUrl="https://bad.example")
    assert_problem(response, 400)
    assert reloaded(fresh).owner_user_id is None


def test_an_explicit_link_wins_over_the_link_flag(api, alice, group, item, links):
    change_defaults(group)
    body = activate(
        api,
        alice,
        item,
        name="x",
        useGroupDefaultExternalLink=True,
        externalLinkUrl="https://mine.example",
    ).get_json()
    assert body["externalLinkUrl"] == "https://mine.example"


# --- race: two activations at once -------------------------------------------------------


def test_concurrent_activations_give_one_success_and_one_already_activated(
    app, monkeypatch, alice, fresh
):
    """Two activations run at once, each on its own thread, app context and database
    connection. Both find the trackable unactivated before either claims it (the barrier),
    so only the claim itself (a conditional UPDATE) can turn the second one away."""
    from app.auth import issue_access_token

    finder = make_user()
    unlock_trackable(finder, fresh)
    tokens = [issue_access_token(alice), issue_access_token(finder)]
    path = url(fresh.id)  # read here: the threads have no app context for lazy loads
    barrier = threading.Barrier(2, timeout=20)
    claim = activation_service.claim_activation

    def claim_once_both_have_looked(trackable, values):
        barrier.wait()
        return claim(trackable, values)

    monkeypatch.setattr(activation_service, "claim_activation", claim_once_both_have_looked)
    results: dict[int, tuple[int, str | None]] = {}

    def run(index: int) -> None:
        client = app.test_client()  # a new thread: its own app context and session
        response = client.post(
            path,
            json={"name": f"Winner {index}"},
            headers={"Authorization": f"Bearer {tokens[index]}"},
        )
        results[index] = (response.status_code, response.get_json().get("code"))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results.values(), key=lambda r: r[0]) == [
        (200, None),
        (400, "trackable_already_activated"),
    ]
    winner = 0 if results[0][0] == 200 else 1
    stored = reloaded(fresh)
    assert stored.owner_user_id == (alice.id, finder.id)[winner]
    assert stored.name == f"Winner {winner}"


def test_activation_ids_are_guids_in_lowercase(api, alice, fresh):
    body = activate(api, alice, fresh, name="x").get_json()
    assert body["trackableId"] == str(uuid.UUID(body["trackableId"]))
