"""Bring-your-own secrets cannot be tested for free (decisions: Trackable codes; issue:
Hardening): a secret of 6-64 characters, not one of the commonest words, names or
sequences; a "taken" refusal at creation or rotation costs the caller a guess as a lookup
miss does (over the budget: 429, whether the code is taken or free); and creation and
rotation have per-user limits of their own, kept in the database."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models.budget import BudgetSpend
from app.models.trackable import Trackable
from tests.conftest import assert_problem, make_test_app
from tests.factories import count_rows as count
from tests.factories import make_trackable, make_user

CREATE = "/api/trackables"
LOOKUP = "/api/trackables/lookup"
HOME = {"REMOTE_ADDR": "192.0.2.10"}
ELSEWHERE = {"REMOTE_ADDR": "198.51.100.20"}
LIMIT = 10
TAKEN = "Taken-Code"


@pytest.fixture
def owner(app):
    return make_user("olga")


@pytest.fixture
def trackable(owner):
    return make_trackable(owner)


@pytest.fixture
def taken(app):
    return make_trackable(make_user("sam"), secret_code=TAKEN)


def create(api, user, environ=HOME, **body):
    return api.as_user(user).post(CREATE, json={"name": "Bug", **body}, environ_base=environ)


def rotate(api, user, trackable, environ=HOME, **body):
    url = f"/api/trackables/{trackable.id}/secret/rotate"
    return api.as_user(user).post(url, json=body, environ_base=environ)


def refused_as_taken(response) -> None:
    problem = assert_problem(response, 400)
    assert "secretCode" in problem["errors"]
    assert "in use" in str(problem["errors"]["secretCode"])


def assert_429(response) -> None:
    assert_problem(response, 429)
    assert response.headers["Retry-After"].isdigit()


# --- the shape of a bring-your-own secret ------------------------------------------------


@pytest.mark.parametrize("secret", ["abcde", "Kite5", "x" * 65])
def test_a_secret_shorter_than_6_or_longer_than_64_is_400(api, owner, secret):
    problem = assert_problem(create(api, owner, secretCode=secret), 400)
    assert "6 to 64" in str(problem["errors"]["secretCode"])
    assert count(Trackable) == 0


@pytest.mark.parametrize(
    "secret",
    [
        "password",
        "Password1",
        "qwerty123",
        "123456",
        "1234567890",
        "abcdef",
        "iloveyou",
        "SUNSHINE",
        "football",
        "michael",
        "jennifer",
        "qwertz",
        "q1w2e3r4",
        "000000",
        "asdfghjkl",
        "pass_word",
        "qwerty-123",
    ],
)
def test_a_common_word_name_or_sequence_is_400(api, owner, secret):
    problem = assert_problem(create(api, owner, secretCode=secret), 400)
    assert "common" in str(problem["errors"]["secretCode"])
    assert count(Trackable) == 0


@pytest.mark.parametrize("secret", ["qwerty123", "password", "abcdef"])
def test_rotation_to_a_common_secret_is_400(api, owner, trackable, secret):
    problem = assert_problem(rotate(api, owner, trackable, secretCode=secret), 400)
    assert "common" in str(problem["errors"]["secretCode"])


def test_a_shape_refusal_costs_no_guess(api, owner):
    for _ in range(LIMIT + 2):
        assert_problem(create(api, owner, secretCode="password"), 400)
    response = api.post(LOOKUP, json={"code": "LN-Z00000"}, environ_base=HOME)
    assert response.status_code == 200
    assert response.get_json()["found"] is False


@pytest.mark.parametrize("secret", ["Kite-Runner_4", "k7" * 3, "Blue-Bug_42"])
def test_an_uncommon_secret_of_6_or_more_characters_is_accepted(api, owner, secret):
    response = create(api, owner, secretCode=secret)
    assert response.status_code == 201, response.get_data(as_text=True)


# --- a "taken" refusal costs a guess -----------------------------------------------------


def test_a_taken_refusal_at_creation_counts_as_a_miss(api, owner, taken):
    for _ in range(LIMIT):
        refused_as_taken(create(api, owner, secretCode=TAKEN))
    assert_429(create(api, owner, secretCode=TAKEN))
    # It is the address's one budget: lookups from it are refused too.
    assert_429(api.post(LOOKUP, json={"code": "LN-Z00000"}, environ_base=HOME))
    assert count(Trackable) == 1


def test_a_taken_refusal_at_rotation_counts_as_a_miss(app, api, owner, trackable, taken):
    app.config["SECRET_ROTATE_LIMIT"] = 1000
    for _ in range(LIMIT):
        refused_as_taken(rotate(api, owner, trackable, secretCode=TAKEN))
    assert_429(rotate(api, owner, trackable, secretCode=TAKEN))
    assert_429(api.post(LOOKUP, json={"code": "LN-Z00000"}, environ_base=HOME))


def test_lookup_misses_and_taken_refusals_share_one_budget(api, owner, taken):
    for number in range(LIMIT - 1):
        response = api.post(LOOKUP, json={"code": f"LN-Z{number:05d}"}, environ_base=HOME)
        assert response.get_json()["found"] is False
    refused_as_taken(create(api, owner, secretCode=TAKEN))
    assert_429(create(api, owner, secretCode=TAKEN))


def test_over_the_budget_a_free_secret_is_429_too(app, api, owner, trackable, taken):
    # Else 429 would mean "taken" and 201 "free": the refusal itself would answer.
    app.config["SECRET_ROTATE_LIMIT"] = 1000
    for _ in range(LIMIT):
        refused_as_taken(create(api, owner, secretCode=TAKEN))
    assert_429(create(api, owner, secretCode="Free-Code_77"))
    assert_429(rotate(api, owner, trackable, secretCode="Free-Code_77"))
    assert count(Trackable) == 2


def test_over_the_budget_a_generated_secret_is_still_issued(app, api, owner, trackable, taken):
    app.config["SECRET_ROTATE_LIMIT"] = 1000
    for _ in range(LIMIT):
        refused_as_taken(create(api, owner, secretCode=TAKEN))
    assert create(api, owner).status_code == 201
    assert rotate(api, owner, trackable).status_code == 200


def test_another_address_keeps_its_budget(api, owner, taken):
    for _ in range(LIMIT):
        refused_as_taken(create(api, owner, secretCode=TAKEN))
    refused_as_taken(create(api, owner, ELSEWHERE, secretCode=TAKEN))


def test_a_free_secret_costs_no_guess(app, api, owner, trackable):
    app.config["SECRET_ROTATE_LIMIT"] = 1000
    for number in range(LIMIT + 2):
        response = rotate(api, owner, trackable, secretCode=f"Own-Code_{number:03d}")
        assert response.status_code == 200, response.get_data(as_text=True)


# --- creation and rotation limits --------------------------------------------------------


def test_the_creation_limit_is_429_with_retry_after(app, api, owner):
    app.config.update(TRACKABLES_PER_USER_PER_HOUR=3)
    for _ in range(3):
        assert create(api, owner).status_code == 201
    response = create(api, owner, ELSEWHERE)  # per account, whatever its address
    assert_problem(response, 429, code="trackable_hourly_limit_reached")
    assert_429(response)
    assert 1 <= int(response.headers["Retry-After"]) <= 3600
    assert count(Trackable) == 3
    assert create(api, make_user("tara")).status_code == 201  # another account


def test_the_rotation_limit_is_429_with_retry_after(app, api, owner, trackable):
    app.config.update(SECRET_ROTATE_LIMIT=2, SECRET_ROTATE_WINDOW_MINUTES=60)
    assert rotate(api, owner, trackable).status_code == 200
    assert rotate(api, owner, trackable).status_code == 200
    assert_429(rotate(api, owner, trackable, ELSEWHERE))


def test_a_taken_refusal_counts_against_the_creation_limit(app, api, owner, taken):
    app.config.update(TRACKABLES_PER_USER_PER_HOUR=3)
    for _ in range(3):
        refused_as_taken(create(api, owner, ELSEWHERE, secretCode=TAKEN))
    assert_429(create(api, owner))


def test_a_malformed_request_does_not_count_against_the_creation_limit(app, api, owner):
    app.config.update(TRACKABLES_PER_USER_PER_HOUR=2)
    for _ in range(5):
        assert_problem(create(api, owner, secretCode="abc"), 400)
    assert create(api, owner).status_code == 201


def test_the_creation_limit_is_kept_in_the_database(app, api, owner, database_url, tmp_path):
    # A second app on the same database (another worker process, say) sees the same count.
    app.config.update(TRACKABLES_PER_USER_PER_HOUR=2)
    assert create(api, owner).status_code == 201
    assert count(BudgetSpend) >= 1
    db.session.commit()
    other = make_test_app(database_url, tmp_path / "other", TRACKABLES_PER_USER_PER_HOUR=2)
    with other.app_context():
        from app.auth import issue_access_token

        headers = {"Authorization": f"Bearer {issue_access_token(owner)}"}
        client = other.test_client()
        first = client.post(CREATE, json={"name": "Bug"}, headers=headers, environ_base=HOME)
        second = client.post(CREATE, json={"name": "Bug"}, headers=headers, environ_base=HOME)
        db.session.remove()
    assert first.status_code == 201
    assert second.status_code == 429


def test_the_limits_are_published_in_the_system_status(app, api):
    app.config.update(
        TRACKABLES_PER_USER_PER_HOUR=7,
        SECRET_ROTATE_LIMIT=4,
        SECRET_ROTATE_WINDOW_MINUTES=90,
    )
    limits = api.get("/api/system/status").get_json()["limits"]
    assert limits["trackableCreations"] == {"attempts": 7, "windowMinutes": 60}
    assert limits["secretRotations"] == {"attempts": 4, "windowMinutes": 90}
