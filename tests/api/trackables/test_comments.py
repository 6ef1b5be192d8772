"""Trackable comments (contract: Trackables: comments and journey, rules 1-3; Trackable
activation; error codes): who may write, edit and delete, the anonymous display name,
the guess budget for codes sent with a write, and the list."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from sqlalchemy import delete, select

from app.extensions import db
from app.models.base import utcnow
from app.models.team import TeamMembership
from app.models.trackable import TrackableComment, TrackableVisibility
from tests.api.trackables.conftest import open_session
from tests.conftest import assert_problem
from tests.factories import codes_of, count_guess_misses, count_rows, make_trackable, make_user


def comments_url(trackable) -> str:
    return f"/api/trackables/{trackable.id}/comments"


def post_comment(api, trackable, user=None, **body):
    body.setdefault("body", "Found it by the bridge.")
    return api.as_user(user).post(comments_url(trackable), json=body)


def written_by(api, cast, who: str) -> dict:
    """A comment on the cast's trackable, written by the cast member `who`."""
    response = post_comment(api, cast.trackable, getattr(cast, who))
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()


# --- rule 1: who may write --------------------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "status", "code"),
    [
        ("anonymous with a session", 201, None),
        ("anonymous with the secret code", 201, None),
        ("anonymous with the secret code in lower case", 201, None),
        ("anonymous with the QR token", 201, None),
        ("anonymous without a code", 403, "trackable_access_code_required"),
        ("anonymous with a wrong code", 403, "trackable_access_code_invalid"),
        ("anonymous with the public code", 403, "trackable_access_code_invalid"),
        ("anonymous with another trackable's secret", 403, "trackable_access_code_invalid"),
        ("signed-in stranger", 201, None),
        ("owner", 201, None),
    ],
)
def test_who_may_comment(api, cast, caller, status, code):
    body: dict = {}
    user = None
    if caller == "anonymous with a session":
        open_session(api, cast.qr_token)
    elif caller == "anonymous with the secret code":
        body["accessCode"] = cast.secret
    elif caller == "anonymous with the secret code in lower case":
        body["accessCode"] = cast.secret.lower()
    elif caller == "anonymous with the QR token":
        body["accessCode"] = cast.qr_token
    elif caller == "anonymous with a wrong code":
        body["accessCode"] = "LNZZZZZZZZ"
    elif caller == "anonymous with the public code":
        body["accessCode"] = cast.trackable.public_code
    elif caller == "anonymous with another trackable's secret":
        body["accessCode"] = codes_of(make_trackable(make_user()))[0]
    elif caller == "signed-in stranger":
        user = cast.stranger
    elif caller == "owner":
        user = cast.owner
    response = post_comment(api, cast.trackable, user, **body)
    if code is None:
        assert response.status_code == status, response.get_data(as_text=True)
        assert count_rows(TrackableComment) == 1
    else:
        assert_problem(response, status, code=code)
        assert count_rows(TrackableComment) == 0


def test_a_session_for_another_trackable_does_not_open_this_one(api, cast):
    other = make_trackable(make_user())
    open_session(api, codes_of(other)[0])
    assert_problem(post_comment(api, cast.trackable), 403, code="trackable_access_code_required")


def test_an_anonymous_caller_who_may_not_see_the_trackable_gets_404(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert_problem(post_comment(api, hidden), 404, code="trackable_not_found")


def test_its_code_opens_a_trackable_the_caller_could_not_see(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    response = post_comment(api, hidden, accessCode=codes_of(hidden)[0])
    assert response.status_code == 201, response.get_data(as_text=True)


def test_a_signed_in_stranger_who_may_not_see_it_gets_404(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert_problem(post_comment(api, hidden, cast.stranger), 404, code="trackable_not_found")


def test_an_unknown_trackable_is_404(api, cast):
    response = api.as_user(cast.stranger).post(
        f"/api/trackables/{uuid.uuid4()}/comments", json={"body": "Hi"}
    )
    assert_problem(response, 404, code="trackable_not_found")


@pytest.mark.parametrize("signed_in", [False, True])
def test_an_unactivated_trackable_takes_no_comment(api, signed_in):
    creator = make_user()
    unactivated = make_trackable(None, created_by_user_id=creator.id)
    response = post_comment(
        api,
        unactivated,
        creator if signed_in else None,
        accessCode=codes_of(unactivated)[1],
    )
    assert_problem(response, 400, code="trackable_activation_required")
    assert count_rows(TrackableComment) == 0


def test_a_wrong_code_counts_against_the_guess_budget(api, cast):
    assert_problem(
        post_comment(api, cast.trackable, accessCode="LNZZZZZZZZ"),
        403,
        code="trackable_access_code_invalid",
    )
    assert count_guess_misses() == 1


def test_a_right_code_counts_nothing(api, cast):
    assert post_comment(api, cast.trackable, accessCode=cast.secret).status_code == 201
    assert count_guess_misses() == 0


def test_a_client_over_its_guess_budget_is_refused_even_with_the_right_code(app, api, cast):
    for number in range(app.config["SECRET_GUESS_LIMIT"]):
        post_comment(api, cast.trackable, accessCode=f"LNZZZZZ{number:03d}")
    response = post_comment(api, cast.trackable, accessCode=cast.secret)
    assert_problem(response, 429)
    assert response.headers["Retry-After"]
    assert count_rows(TrackableComment) == 0


def test_a_signed_in_callers_good_code_unlocks_the_trackable_on_the_account(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert post_comment(api, hidden, cast.stranger, accessCode=codes_of(hidden)[0]).status_code
    assert api.as_user(cast.stranger).get(f"/api/trackables/{hidden.id}").status_code == 200


# --- what a comment carries --------------------------------------------------------------


def test_an_anonymous_comment_carries_the_chosen_name_and_no_account(api, cast):
    response = post_comment(api, cast.trackable, accessCode=cast.secret, displayName="  Kim  ")
    assert response.status_code == 201
    body = response.get_json()
    assert body["authorDisplayText"] == "Kim"
    assert body["isAnonymous"] is True
    assert body["authorProfileUserName"] is None
    stored = db.session.scalars(select(TrackableComment)).one()
    assert stored.author_user_id is None


def test_an_anonymous_comment_without_a_name_is_signed_anonymous_finder(api, cast):
    body = post_comment(api, cast.trackable, accessCode=cast.secret).get_json()
    assert body["authorDisplayText"] == "Anonymous finder"


@pytest.mark.parametrize(
    "name",
    # A control character is refused where it was sent, also at an end trimming would drop.
    ["", "   ", "x" * 51, "Kim\u202eevil", "Kim\nJoe", "Kim\n", "\x1fKim", "Kim\u200b"],
)
def test_an_invalid_display_name_is_rejected(api, cast, name):
    response = post_comment(api, cast.trackable, accessCode=cast.secret, displayName=name)
    body = assert_problem(response, 400)
    assert "displayName" in body["errors"]


def test_a_signed_in_comment_names_the_account_not_a_chosen_name(api, cast):
    response = post_comment(api, cast.trackable, cast.author, displayName="Someone else")
    body = response.get_json()
    assert body["authorDisplayText"] == "Ann A."
    assert body["authorProfileUserName"] == "ann"
    assert body["isAnonymous"] is False


@pytest.mark.parametrize("text", ["", "   ", "x" * 4001])
def test_an_empty_or_overlong_body_is_rejected(api, cast, text):
    body = assert_problem(post_comment(api, cast.trackable, cast.author, body=text), 400)
    assert "body" in body["errors"]


# Embeddings, overrides and isolates reorder what follows on screen; other controls but
# tab and line breaks are refused too (the display name's rule, for multi-line text).
DIRECTION_AND_CONTROL = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2069"]
DIRECTION_AND_CONTROL += ["\x07", "\x1b", "\x0b", "\x7f", "\x85"]


@pytest.mark.parametrize("character", DIRECTION_AND_CONTROL)
def test_a_body_with_a_direction_or_control_character_is_rejected(api, cast, character):
    text = f"Found it by the {character}bridge."
    body = assert_problem(post_comment(api, cast.trackable, cast.author, body=text), 400)
    assert "body" in body["errors"]
    assert count_rows(TrackableComment) == 0


@pytest.mark.parametrize("character", DIRECTION_AND_CONTROL)
def test_an_edit_with_a_direction_or_control_character_is_rejected(api, cast, character):
    comment = written_by(api, cast, "author")
    response = api.as_user(cast.author).put(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}",
        json={"body": f"Edited {character}here"},
    )
    assert "body" in assert_problem(response, 400)["errors"]


def test_a_body_keeps_line_breaks_tabs_joiners_and_direction_marks(api, cast):
    text = "Found it.\r\n\tBy the bridge \U0001f9d1\u200d\U0001f692 \u05e9\u05dc\u05d5\u05dd\u200f!"
    response = post_comment(api, cast.trackable, cast.author, body=text)
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["body"] == text


def test_the_code_never_comes_back(api, cast):
    response = post_comment(api, cast.trackable, accessCode=cast.qr_token)
    listed = api.get(comments_url(cast.trackable))
    for text in (response.get_data(as_text=True), listed.get_data(as_text=True)):
        assert cast.qr_token not in text
        assert cast.secret not in text


def test_a_comment_is_activity_of_the_trackable(api, cast):
    before = cast.trackable.last_activity_utc
    post_comment(api, cast.trackable, cast.author)
    read = api.get(f"/api/trackables/{cast.trackable.id}").get_json()
    assert read["lastActivityUtc"] > before.isoformat().replace("+00:00", "Z")


# --- observedUtc -------------------------------------------------------------------------


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def test_an_observed_time_in_the_past_is_kept(api, cast):
    seen = (utcnow() - timedelta(days=3)).replace(microsecond=0)
    body = post_comment(api, cast.trackable, cast.author, observedUtc=iso(seen)).get_json()
    assert datetime.fromisoformat(body["observedUtc"]) == seen


@pytest.mark.parametrize(
    "offset", [timedelta(hours=1), -timedelta(days=366)], ids=["future", "too old"]
)
def test_an_implausible_observed_time_is_rejected(api, cast, offset):
    response = post_comment(api, cast.trackable, cast.author, observedUtc=iso(utcnow() + offset))
    body = assert_problem(response, 400)
    assert "observedUtc" in body["errors"]
    assert count_rows(TrackableComment) == 0


# --- rule 2: edit ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("author", 200),
        ("owner", 403),
        ("team_admin", 403),
        ("former_admin", 403),
        ("stranger", 403),
    ],
)
def test_only_the_author_edits_a_comment(api, cast, who, status):
    comment = written_by(api, cast, "author")
    response = api.as_user(getattr(cast, who)).put(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}", json={"body": "Edited"}
    )
    if status == 200:
        assert response.status_code == 200
        assert response.get_json()["body"] == "Edited"
        assert response.get_json()["editedUtc"]
    else:
        assert_problem(response, 403, code="trackable_comment_edit_forbidden")
        assert db.session.scalars(select(TrackableComment)).one().body == "Found it by the bridge."


def test_an_anonymous_comment_can_be_edited_by_nobody(api, cast):
    comment = post_comment(api, cast.trackable, accessCode=cast.secret).get_json()
    response = api.as_user(cast.owner).put(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}", json={"body": "Mine"}
    )
    assert_problem(response, 403, code="trackable_comment_edit_forbidden")


def test_editing_needs_a_sign_in(api, cast):
    comment = written_by(api, cast, "author")
    response = api.put(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}", json={"body": "X"}
    )
    assert_problem(response, 401)


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_a_comment_of_another_trackable_is_not_found(api, cast, method):
    comment = written_by(api, cast, "author")
    other = make_trackable(cast.author)
    response = api.as_user(cast.author).open(
        method, f"{comments_url(other)}/{comment['trackableCommentId']}", json={"body": "X"}
    )
    assert_problem(response, 404, code="trackable_comment_not_found")


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_an_unknown_comment_is_not_found(api, cast, method):
    response = api.as_user(cast.author).open(
        method, f"{comments_url(cast.trackable)}/{uuid.uuid4()}", json={"body": "X"}
    )
    assert_problem(response, 404, code="trackable_comment_not_found")


# --- rule 3: delete ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("author", 204),
        ("owner", 204),
        ("team_admin", 204),
        ("former_admin", 403),
        ("stranger", 403),
    ],
)
def test_who_may_delete_a_comment(api, cast, who, status):
    comment = written_by(api, cast, "author")
    response = api.as_user(getattr(cast, who)).delete(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}"
    )
    if status == 204:
        assert response.status_code == 204
        assert count_rows(TrackableComment) == 0
    else:
        assert_problem(response, 403, code="trackable_comment_delete_forbidden")
        assert count_rows(TrackableComment) == 1


def test_an_owner_who_left_the_team_no_longer_deletes(api, cast):
    comment = written_by(api, cast, "author")
    db.session.execute(delete(TeamMembership).where(TeamMembership.user_id == cast.owner.id))
    db.session.commit()
    response = api.as_user(cast.owner).delete(
        f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}"
    )
    assert_problem(response, 403, code="trackable_comment_delete_forbidden")


def test_deleting_needs_a_sign_in(api, cast):
    comment = written_by(api, cast, "author")
    response = api.delete(f"{comments_url(cast.trackable)}/{comment['trackableCommentId']}")
    assert_problem(response, 401)


# --- the list ----------------------------------------------------------------------------


def test_the_list_is_newest_first_with_each_callers_rights(api, cast):
    first = written_by(api, cast, "author")
    second = written_by(api, cast, "stranger")
    listed = api.as_user(cast.author).get(comments_url(cast.trackable)).get_json()
    assert [c["trackableCommentId"] for c in listed] == [
        second["trackableCommentId"],
        first["trackableCommentId"],
    ]
    assert [(c["canEdit"], c["canDelete"]) for c in listed] == [(False, False), (True, True)]
    as_admin = api.as_user(cast.team_admin).get(comments_url(cast.trackable)).get_json()
    assert [(c["canEdit"], c["canDelete"]) for c in as_admin] == [(False, True), (False, True)]


def test_anyone_who_sees_the_trackable_reads_its_comments(api, cast):
    written_by(api, cast, "author")
    response = api.get(comments_url(cast.trackable))
    assert response.status_code == 200
    assert len(response.get_json()) == 1
    assert response.get_json()[0]["canDelete"] is False


def test_the_comments_of_a_hidden_trackable_are_404(api, cast):
    hidden = make_trackable(cast.owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    assert_problem(api.get(comments_url(hidden)), 404, code="trackable_not_found")


def test_the_list_is_capped(app, api, cast):
    app.config["PUBLIC_LIST_CAP"] = 2
    for _ in range(3):
        written_by(api, cast, "author")
    response = api.get(comments_url(cast.trackable))
    assert len(response.get_json()) == 2
    assert response.headers["X-Result-Truncated"] == "true"
