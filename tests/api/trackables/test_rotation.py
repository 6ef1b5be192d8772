"""POST /api/trackables/{trackableId}/secret/rotate (beyond the contract; decisions:
Trackable codes, Access sessions for secret codes): who may rotate, the new codes shown
once, the old ones dead at once for lookup and for /trackable/{code}, the end of every
access session and of other people's account unlocks, and a bring-your-own secret under
the rules of creation."""

from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import delete

from app.extensions import db
from app.models.team import TeamMembership
from app.models.trackable import (
    Trackable,
    TrackableAccessSession,
    TrackableCode,
    TrackableUnlock,
    TrackableVisibility,
)
from app.services.trackables.codes import formats as codes
from tests.conftest import ApiClient, assert_problem
from tests.factories import codes_of, make_trackable, make_user
from tests.factories import count_rows as count

LOOKUP = "/api/trackables/lookup"
BODY_CHARS = re.escape(codes.ALPHABET)
SECRET_SHAPE = re.compile(rf"^LN[{BODY_CHARS}]{{8}}$")
QR_SHAPE = re.compile(r"^[A-Za-z0-9_-]{100}$")


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner)


@pytest.fixture
def hidden(owner):
    """A trackable only its managers and its unlockers may see."""
    return make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)


def rotate_url(trackable_id):
    return f"/api/trackables/{trackable_id}/secret/rotate"


def rotate(api, user, trackable, **body):
    return api.as_user(user).post(rotate_url(trackable.id), json=body)


def rotated(response):
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def token_of(codes_shown):
    return codes_shown["scanUrl"].rsplit("/", 1)[1]


def lookup(api, code):
    response = api.post(LOOKUP, json={"code": code})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()


def other_client(api):
    """Another browser: a cookie jar of its own."""
    return ApiClient(api.client.application.test_client())


def landing(api, trackable):
    return api.get(f"/api/trackables/active/{trackable.id}")


# --- who may rotate ----------------------------------------------------------------------


def test_anonymous_rotation_is_401(api, trackable):
    assert_problem(api.post(rotate_url(trackable.id), json={}), 401)
    assert lookup(api, codes_of(trackable)[0])["found"] is True


def test_the_owner_may_rotate(api, owner, trackable):
    rotated(rotate(api, owner, trackable))


def test_the_creator_of_an_unactivated_trackable_may_rotate(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    rotated(rotate(api, owner, fresh))


def test_a_team_admin_may_rotate_a_team_trackable(api, admin, member, team):
    owned = make_trackable(member, team_id=team.id)
    rotated(rotate(api, admin, owned))


def test_the_activator_of_a_team_trackable_may_rotate_while_a_member(api, member, team):
    owned = make_trackable(member, team_id=team.id)
    rotated(rotate(api, member, owned))


def test_a_team_member_who_did_not_activate_it_is_403(api, admin, member, team):
    owned = make_trackable(admin, team_id=team.id)
    assert_problem(rotate(api, member, owned), 403, code="trackable_request_rejected")


def test_the_activator_who_left_the_team_is_403(api, admin, member, team):
    owned = make_trackable(member, team_id=team.id)
    db.session.execute(
        delete(TeamMembership).where(
            TeamMembership.team_id == team.id, TeamMembership.user_id == member.id
        )
    )
    db.session.commit()
    assert_problem(rotate(api, member, owned), 403, code="trackable_request_rejected")


def test_a_stranger_who_can_see_it_is_403_and_nothing_changes(api, trackable):
    secret, token = codes_of(trackable)
    response = rotate(api, make_user("sam"), trackable)
    assert_problem(response, 403, code="trackable_request_rejected")
    assert lookup(api, secret)["found"] is True
    assert lookup(api, token)["found"] is True


def test_an_unlocker_of_a_hidden_trackable_is_403(api, hidden):
    finder = make_user("finn")
    assert lookup(api.as_user(finder), codes_of(hidden)[0])["found"] is True
    assert_problem(rotate(api, finder, hidden), 403, code="trackable_request_rejected")


def test_a_stranger_who_cannot_see_it_is_404(api, hidden):
    assert_problem(rotate(api, make_user("sam"), hidden), 404, code="trackable_not_found")


def test_a_stranger_on_an_unactivated_trackable_is_404(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    assert_problem(rotate(api, make_user("sam"), fresh), 404, code="trackable_not_found")


def test_an_unknown_trackable_is_404(api, owner):
    response = api.as_user(owner).post(rotate_url(uuid.uuid4()), json={})
    assert_problem(response, 404, code="trackable_not_found")


# --- the new codes -----------------------------------------------------------------------


def test_rotation_answers_new_codes_with_the_public_code_unchanged(app, api, owner, trackable):
    secret, token = codes_of(trackable)
    body = rotated(rotate(api, owner, trackable))
    assert set(body) == {"trackableId", "publicCode", "secretCode", "scanUrl", "qrPayload"}
    assert body["trackableId"] == str(trackable.id)
    assert body["publicCode"] == trackable.public_code
    assert SECRET_SHAPE.fullmatch(body["secretCode"])
    assert body["secretCode"] != secret
    base = app.config["PUBLIC_BASE_URL"].rstrip("/")
    assert body["scanUrl"] == f"{base}/trackable/{token_of(body)}"
    assert QR_SHAPE.fullmatch(token_of(body))
    assert token_of(body) != token
    assert body["qrPayload"] == body["scanUrl"]


def test_rotation_answer_is_not_cached(api, owner, trackable):
    response = rotate(api, owner, trackable)
    assert response.headers["Cache-Control"] == "no-store"


def test_the_public_code_still_finds_the_trackable(api, owner, trackable):
    rotated(rotate(api, owner, trackable))
    assert db.session.get(Trackable, trackable.id).public_code == trackable.public_code
    body = lookup(api, trackable.public_code)
    assert (body["found"], body["isPublicCodeMatch"]) == (True, True)


def test_the_trackable_keeps_three_codes(api, owner, trackable):
    rotated(rotate(api, owner, trackable))
    assert count(TrackableCode, TrackableCode.trackable_id == trackable.id) == 3


def test_the_new_codes_are_never_shown_again(api, owner, trackable):
    body = rotated(rotate(api, owner, trackable))
    pages = [
        api.as_user(owner).get(f"/api/trackables/{trackable.id}"),
        api.as_user(owner).get("/api/trackables/mine"),
        api.as_user(owner).post(LOOKUP, json={"code": body["secretCode"]}),
        landing(api.as_user(owner), trackable),
    ]
    for page in pages:
        text = page.get_data(as_text=True)
        assert page.status_code == 200, text
        assert body["secretCode"] not in text
        assert token_of(body) not in text


# --- old codes stop working, new ones work -----------------------------------------------


@pytest.mark.parametrize("which", ["secret", "token"])
def test_an_old_code_misses_lookup_at_once(api, owner, trackable, which):
    old = dict(zip(("secret", "token"), codes_of(trackable), strict=True))[which]
    rotated(rotate(api, owner, trackable))
    body = lookup(other_client(api), old)
    assert body["found"] is False
    assert body["trackableId"] is None
    assert body["error"]


@pytest.mark.parametrize("which", ["secret", "token"])
def test_a_new_code_finds_the_trackable_with_secret_access(api, owner, trackable, which):
    body = rotated(rotate(api, owner, trackable))
    new = {"secret": body["secretCode"], "token": token_of(body)}[which]
    found = lookup(api, new)
    assert (found["found"], found["usesSecretAccess"]) == (True, True)
    assert found["trackableId"] == str(trackable.id)


def test_a_new_secret_is_found_after_normalisation(api, owner, trackable):
    secret = rotated(rotate(api, owner, trackable))["secretCode"]
    typed = " " + secret.lower().replace("0", "o").replace("1", "l") + " "
    assert lookup(api, typed)["found"] is True


@pytest.mark.parametrize("which", ["secret", "token"])
def test_an_old_code_at_the_entry_route_is_the_not_found_page(api, owner, trackable, which):
    old = dict(zip(("secret", "token"), codes_of(trackable), strict=True))[which]
    rotated(rotate(api, owner, trackable))
    response = api.get(f"/trackable/{old}")
    assert response.status_code == 404
    assert response.mimetype == "text/html"
    assert "Location" not in response.headers
    assert old not in response.get_data(as_text=True)


@pytest.mark.parametrize("which", ["secret", "token"])
def test_a_new_code_at_the_entry_route_opens_the_active_landing(api, owner, trackable, which):
    body = rotated(rotate(api, owner, trackable))
    new = {"secret": body["secretCode"], "token": token_of(body)}[which]
    response = api.get(f"/trackable/{new}")
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/en/trackables/active/{trackable.id}")
    assert landing(api, trackable).status_code == 200


def test_a_second_rotation_retires_the_first_ones_codes(api, owner, trackable):
    first = rotated(rotate(api, owner, trackable))
    second = rotated(rotate(api, owner, trackable))
    assert lookup(api, first["secretCode"])["found"] is False
    assert lookup(api, token_of(first))["found"] is False
    assert lookup(api, second["secretCode"])["found"] is True


# --- access sessions and account unlocks -------------------------------------------------


def test_an_anonymous_session_opened_with_the_old_secret_ends(api, owner, trackable):
    assert lookup(api, codes_of(trackable)[0])["usesSecretAccess"] is True
    assert landing(api, trackable).status_code == 200
    rotated(rotate(api, owner, trackable))
    assert_problem(landing(api, trackable), 404, code="trackable_not_found")
    assert api.get("/api/trackables/active").get_json() == []
    assert count(TrackableAccessSession, TrackableAccessSession.trackable_id == trackable.id) == 0


def test_every_client_loses_its_session_but_keeps_others(api, owner, trackable):
    scanner = other_client(api)
    keep = make_trackable(owner)
    lookup(api, codes_of(trackable)[0])
    lookup(scanner, codes_of(trackable)[1])
    lookup(scanner, codes_of(keep)[0])
    rotated(rotate(other_client(api), owner, trackable))
    assert landing(api, trackable).status_code == 404
    assert landing(scanner, trackable).status_code == 404
    assert landing(scanner, keep).status_code == 200
    listed = [item["trackableId"] for item in scanner.get("/api/trackables/active").get_json()]
    assert listed == [str(keep.id)]


def test_a_hidden_trackable_is_hidden_again_from_a_client_that_unlocked_it(api, owner, hidden):
    lookup(api, codes_of(hidden)[0])
    assert api.get(f"/api/trackables/{hidden.id}").status_code == 200
    rotated(rotate(other_client(api), owner, hidden))
    assert_problem(api.get(f"/api/trackables/{hidden.id}"), 404, code="trackable_not_found")


def test_the_status_text_of_an_ended_session_cannot_be_set(api, owner, trackable):
    lookup(api, codes_of(trackable)[0])
    rotated(rotate(other_client(api), owner, trackable))
    response = api.post(
        f"/api/trackables/active/{trackable.id}/message", json={"statusMessage": "Still here"}
    )
    assert_problem(response, 404, code="trackable_not_found")


def test_another_accounts_unlock_ends(api, owner, hidden):
    finder = make_user("finn")
    lookup(api.as_user(finder), codes_of(hidden)[0])
    elsewhere = other_client(api).as_user(finder)  # a later device: the account's unlock only
    assert landing(elsewhere, hidden).status_code == 200
    rotated(rotate(other_client(api), owner, hidden))
    assert_problem(landing(elsewhere, hidden), 404, code="trackable_not_found")
    assert_problem(elsewhere.get(f"/api/trackables/{hidden.id}"), 404)
    mine = [item["trackableId"] for item in elsewhere.get("/api/trackables/mine").get_json()]
    assert str(hidden.id) not in mine
    assert count(TrackableUnlock, TrackableUnlock.user_id == finder.id) == 0


def test_an_unlocker_of_an_unactivated_trackable_can_no_longer_activate_it(api, owner):
    fresh = make_trackable(None, created_by_user_id=owner.id)
    finder = make_user("finn")
    lookup(api.as_user(finder), codes_of(fresh)[0])
    rotated(rotate(other_client(api), owner, fresh))
    response = (
        other_client(api)
        .as_user(finder)
        .post(f"/api/trackables/{fresh.id}/activate", json={"name": "Mine now"})
    )
    assert_problem(response, 404, code="trackable_not_found")
    assert not db.session.get(Trackable, fresh.id).is_activated


def test_a_manager_keeps_access_after_rotation(api, admin, member, team):
    owned = make_trackable(member, team_id=team.id, visibility=TrackableVisibility.ONCE_ACCESSED)
    lookup(api.as_user(admin), codes_of(owned)[0])
    rotated(rotate(other_client(api), member, owned))
    elsewhere = other_client(api).as_user(admin)
    assert elsewhere.get(f"/api/trackables/{owned.id}").status_code == 200
    assert landing(elsewhere, owned).status_code == 200


def test_an_unlocker_opens_it_again_with_the_new_secret(api, owner, hidden):
    finder = make_user("finn")
    lookup(api.as_user(finder), codes_of(hidden)[0])
    body = rotated(rotate(other_client(api), owner, hidden))
    assert lookup(api.as_user(finder), body["secretCode"])["found"] is True
    assert landing(api, hidden).status_code == 200
    assert count(TrackableUnlock, TrackableUnlock.user_id == finder.id) == 1


# --- bring-your-own secret on rotation ---------------------------------------------------


@pytest.mark.parametrize("secret", ["", None, "   "])
def test_an_empty_or_absent_secret_code_is_generated(api, owner, trackable, secret):
    body = {} if secret is None else {"secretCode": secret}
    assert SECRET_SHAPE.fullmatch(rotated(rotate(api, owner, trackable, **body))["secretCode"])


def test_a_rotation_without_a_body_generates_codes(api, owner, trackable):
    response = api.as_user(owner).post(rotate_url(trackable.id))
    assert SECRET_SHAPE.fullmatch(rotated(response)["secretCode"])
    assert lookup(api, codes_of(trackable)[0])["found"] is False


def test_a_bring_your_own_secret_is_answered_as_given_and_found_ignoring_case(
    api, owner, trackable
):
    body = rotated(rotate(api, owner, trackable, secretCode="Night-Owl_9"))
    assert body["secretCode"] == "Night-Owl_9"
    assert body["publicCode"] == trackable.public_code
    assert db.session.get(Trackable, trackable.id).has_custom_secret
    found = lookup(api, "night-OWL_9")
    assert (found["found"], found["trackableId"]) == (True, str(trackable.id))
    assert lookup(api, codes_of(trackable)[0])["found"] is False


def test_rotating_away_from_an_own_secret_generates_one_again(api, owner):
    own = make_trackable(owner, secret_code="Night-Owl_9")
    body = rotated(rotate(api, owner, own))
    assert SECRET_SHAPE.fullmatch(body["secretCode"])
    assert not db.session.get(Trackable, own.id).has_custom_secret
    assert lookup(api, "Night-Owl_9")["found"] is False


def assert_nothing_rotated(api, trackable):
    secret, token = codes_of(trackable)
    assert lookup(api, secret)["found"] is True
    assert lookup(api, token)["found"] is True
    assert count(TrackableCode, TrackableCode.trackable_id == trackable.id) == 3


@pytest.mark.parametrize(
    "secret", ["LN1234", "ln-own-code", "GT12345", "gt-mine", "TB1234", "tbcode"]
)
def test_a_reserved_prefix_is_400_on_secret_code_and_nothing_changes(api, owner, trackable, secret):
    problem = assert_problem(rotate(api, owner, trackable, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert secret not in str(problem)
    assert_nothing_rotated(api, trackable)


@pytest.mark.parametrize("secret", ["abcde", "x" * 65, "with space", "dot.code", "qwerty123"])
def test_a_malformed_own_secret_is_400_and_nothing_changes(api, owner, trackable, secret):
    problem = assert_problem(rotate(api, owner, trackable, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert secret not in str(problem)
    assert_nothing_rotated(api, trackable)


@pytest.mark.parametrize("secret", ["Taken-Code", "TAKEN-code"])
def test_a_secret_of_another_trackable_is_400_and_nothing_changes(api, owner, trackable, secret):
    other = make_trackable(make_user("sam"), secret_code="Taken-Code")
    problem = assert_problem(rotate(api, owner, trackable, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert secret not in str(problem)
    assert_nothing_rotated(api, trackable)
    assert lookup(api, "Taken-Code")["trackableId"] == str(other.id)


@pytest.mark.parametrize("secret", ["Night-Owl_9", "night-owl_9"])
def test_the_trackables_own_current_secret_is_400_and_stays(api, owner, secret):
    own = make_trackable(owner, secret_code="Night-Owl_9")
    problem = assert_problem(rotate(api, owner, own, secretCode=secret), 400)
    assert "secretCode" in problem["errors"]
    assert secret not in str(problem)
    assert_nothing_rotated(api, own)


def test_a_secret_code_that_is_not_a_string_is_400(api, owner, trackable):
    problem = assert_problem(rotate(api, owner, trackable, secretCode=12345678), 400)
    assert "secretCode" in problem["errors"]
    assert_nothing_rotated(api, trackable)
