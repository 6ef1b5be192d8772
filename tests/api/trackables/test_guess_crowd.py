"""A guess budget that does not punish a crowd behind one address.

Contract: docs/contract/trackables.md, Guess budget; decisions: Trackable codes.
System codes are normalised before they are matched or counted. A signed-in account with a
confirmed e-mail address spends budgets of its own, not its address's. Over any budget a
hit is refused too (no oracle), and the 429 says which budget is spent and how long to wait.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from app.models.budget import BudgetSpend
from tests.conftest import assert_problem
from tests.factories import count_guess_misses, count_rows, make_trackable, make_user
from tests.pages import post_code

LOOKUP = "/api/trackables/lookup"
PUBLIC = "LN-ABC123"
SECRET = "LN12345678"
OWN_SECRET = "Gr33n-Fox_42"  # a bring-your-own secret with `-` and `_`
QR_TOKEN = ("Ab-_9z" * 17)[:100]
HOME = "192.0.2.10"  # the event Wi-Fi: everyone behind one address
LIMIT = 10


@pytest.fixture
def trackable(app):
    return make_trackable(make_user("olga"), public_code=PUBLIC, secret_code=SECRET)


@pytest.fixture
def confirmed(app):
    return make_user("cora", is_email_confirmed=True)


def lookup(api, code: str, *, ip: str = HOME, user=None):
    return api.as_user(user).post(LOOKUP, json={"code": code}, environ_base={"REMOTE_ADDR": ip})


def miss(api, number: int, *, ip: str = HOME, user=None):
    return lookup(api, f"LN-Z{number:05d}", ip=ip, user=user)


def use_address_budget(api, *, ip: str = HOME, times: int = LIMIT, start: int = 0) -> None:
    for number in range(start, start + times):
        response = miss(api, number, ip=ip)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.get_json()["found"] is False


def assert_locked_out(response) -> dict:
    body = assert_problem(response, 429, code="secret_guess_limit_reached")
    assert int(response.headers["Retry-After"]) >= 1
    assert "Set-Cookie" not in response.headers
    return body


# --- normalisation before matching and counting -------------------------------------------


# After the literal prefix of a system code, spaces and hyphens are ignored and the decisions'
# character mapping applies, in the API lookup, the website entry and writes carrying
# `accessCode`. Bring-your-own secrets and QR tokens match as typed (trimmed;
# bring-your-own ignoring case).
@pytest.mark.parametrize(
    "typed", ["LN-ABC 123", "ln abc123", "LN ABC-123", "ln-abc-l23", " LN - ABC 1 2 3 "]
)
def test_spaced_and_hyphenated_forms_of_a_public_code_are_found_without_a_miss(
    api, trackable, typed
):
    response = lookup(api, typed)
    body = response.get_json()
    assert body["found"] is True, body
    assert body["isPublicCodeMatch"] is True
    assert count_guess_misses() == 0


@pytest.mark.parametrize("typed", ["LN-1234 5678", "ln 1234-5678", "LN1234 5678", "ln-i234-s678"])
def test_spaced_and_hyphenated_forms_of_a_system_secret_are_found_without_a_miss(
    api, trackable, typed
):
    body = lookup(api, typed).get_json()
    assert body["found"] is True, body
    assert body["usesSecretAccess"] is True
    assert count_guess_misses() == 0


def test_a_spaced_system_code_with_a_wrong_character_still_misses_and_counts(api, trackable):
    # I->1 and S->5 are mapped, but B is no 8: normalisation forgives typing, not guessing.
    assert lookup(api, "ln-i234-s67b").get_json()["found"] is False
    assert count_guess_misses() == 1


@pytest.mark.parametrize(
    ("typed", "where"),
    [("LN ABC-123", "/en/trackables/LN-ABC123"), ("ln-1234 5678", "/en/trackables/active/")],
)
def test_the_website_entry_finds_normalised_forms(api, trackable, typed, where):
    visit = api.get(f"/trackable/{quote(typed)}", environ_base={"REMOTE_ADDR": HOME})
    assert visit.status_code == 302, visit.get_data(as_text=True)
    assert visit.headers["Location"].startswith(where)
    form = post_code(api, typed, environ_base={"REMOTE_ADDR": HOME})
    assert form.status_code == 303
    assert form.headers["Location"].startswith(where)
    assert count_guess_misses() == 0


def test_a_write_carrying_a_spaced_access_code_is_accepted_without_a_miss(api, trackable):
    response = api.post(
        f"/api/trackables/{trackable.id}/comments",
        json={"body": "Found it by the bridge.", "accessCode": "ln-1234 5678"},
        environ_base={"REMOTE_ADDR": HOME},
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    assert count_guess_misses() == 0


@pytest.mark.parametrize("typed", [OWN_SECRET, "gr33n-fox_42", f"  {OWN_SECRET}\t"])
def test_an_own_secret_with_hyphen_and_underscore_matches_as_typed(api, typed):
    make_trackable(make_user(), secret_code=OWN_SECRET)
    assert lookup(api, typed).get_json()["found"] is True


@pytest.mark.parametrize("typed", ["Gr33nFox42", "Gr33n Fox_42", "Gr33n_Fox-42", "Gr33n-Fox 42"])
def test_a_mangled_own_secret_misses_and_counts(api, typed):
    make_trackable(make_user(), secret_code=OWN_SECRET)
    assert lookup(api, typed).get_json()["found"] is False
    assert count_guess_misses() == 1


def test_a_qr_token_matches_as_typed_only(api):
    make_trackable(make_user(), qr_token=QR_TOKEN)
    assert lookup(api, f" {QR_TOKEN} ").get_json()["found"] is True
    for mangled in (QR_TOKEN.replace("-", ""), QR_TOKEN.replace("_", " "), QR_TOKEN.upper()):
        assert lookup(api, mangled).get_json()["found"] is False
    assert count_guess_misses() == 3


# --- a crowd behind one address -----------------------------------------------------------


# A confirmed account spends a budget of its own and a larger one of its network, not its
# address's: misses of anonymous neighbours behind the same address do not lock it out.
# Anonymous and unconfirmed callers keep the per-address and per-network budgets.
def test_anonymous_misses_behind_one_address_lock_out_anonymous_finders(api, trackable):
    use_address_budget(api)
    assert_locked_out(lookup(api, SECRET))


def test_a_confirmed_account_behind_a_locked_out_address_still_looks_up(api, trackable, confirmed):
    use_address_budget(api)
    assert_locked_out(miss(api, 99))
    body = lookup(api, SECRET, user=confirmed).get_json()
    assert body["found"] is True, body
    assert miss(api, 100, user=confirmed).status_code == 200  # its misses are its own
    visit = api.as_user(confirmed).get(f"/trackable/{PUBLIC}", environ_base={"REMOTE_ADDR": HOME})
    assert visit.status_code == 302


def test_a_confirmed_account_is_not_locked_out_by_its_networks_anonymous_allowance(
    api, trackable, confirmed
):
    for host in range(3):  # 3 x 10 anonymous misses spend the /24's allowance of 30
        use_address_budget(api, ip=f"192.0.2.{20 + host}", start=host * LIMIT)
    assert_locked_out(miss(api, 99, ip="192.0.2.30"))
    assert lookup(api, SECRET, ip="192.0.2.30", user=confirmed).get_json()["found"] is True


def test_an_unconfirmed_account_gets_no_budget_of_its_own(api, trackable):
    unconfirmed = make_user("una", is_email_confirmed=False)
    use_address_budget(api)
    assert_locked_out(lookup(api, SECRET, user=unconfirmed))


def test_a_confirmed_accounts_own_budget_follows_it_to_any_address(api, trackable, confirmed):
    for number in range(LIMIT):
        assert miss(api, number, ip=f"203.0.113.{number + 1}", user=confirmed).status_code == 200
    assert_locked_out(miss(api, 99, ip="198.51.100.7", user=confirmed))
    # The anonymous budgets were not spent by the account's misses.
    assert count_rows(BudgetSpend, BudgetSpend.budget == "secret-guess") == 0
    assert miss(api, 100, ip="198.51.100.7").status_code == 200


def test_confirmed_accounts_of_one_network_share_a_larger_allowance(app, api, trackable):
    app.config.update(SECRET_GUESS_ACCOUNT_LIMIT=2, SECRET_GUESS_ACCOUNT_NETWORK_LIMIT=5)
    accounts = [make_user(f"crowd{n}", is_email_confirmed=True) for n in range(4)]
    statuses = [
        miss(api, n * 10 + k, ip=f"192.0.2.{n + 1}", user=account).status_code
        for n, account in enumerate(accounts)
        for k in range(2)
    ]
    assert statuses == [200] * 5 + [429] * 3
    # Another network's accounts are unaffected.
    assert (
        miss(api, 99, ip="198.51.100.7", user=make_user(is_email_confirmed=True)).status_code == 200
    )


def test_a_hit_over_the_accounts_budget_stays_refused(api, trackable, confirmed):
    # Spent from other networks: only the account's own budget is over, not HOME's.
    for number in range(LIMIT):
        miss(api, number, ip=f"203.0.{number}.7", user=confirmed)
    assert_locked_out(lookup(api, SECRET, user=confirmed))
    visit = api.as_user(confirmed).get(f"/trackable/{SECRET}", environ_base={"REMOTE_ADDR": HOME})
    assert visit.status_code == 429
    assert "Set-Cookie" not in visit.headers
    write = api.as_user(confirmed).post(
        f"/api/trackables/{trackable.id}/comments",
        json={"body": "Found it.", "accessCode": SECRET},
        environ_base={"REMOTE_ADDR": HOME},
    )
    assert_locked_out(write)


def test_a_hit_over_the_address_budget_stays_refused_on_every_route(api, trackable):
    use_address_budget(api)
    assert_locked_out(lookup(api, "ln-1234 5678"))
    visit = api.get(f"/trackable/{SECRET}", environ_base={"REMOTE_ADDR": HOME})
    assert visit.status_code == 429
    assert "Set-Cookie" not in visit.headers
    write = api.post(
        f"/api/trackables/{trackable.id}/comments",
        json={"body": "Found it.", "accessCode": SECRET},
        environ_base={"REMOTE_ADDR": HOME},
    )
    assert_locked_out(write)


# --- the budget's state in words ------------------------------------------------------------


def test_the_api_429_says_which_budget_is_spent_and_how_long_to_wait(api, trackable, confirmed):
    use_address_budget(api)
    detail = assert_locked_out(miss(api, 99))["detail"]
    assert "10 codes that match nothing were tried from your address" in detail
    assert "in the last 10 minutes" in detail
    assert "Try again in about 10 minutes" in detail
    assert "confirmed e-mail address" in detail  # the way out for a finder in a crowd
    for number in range(LIMIT):
        miss(api, 200 + number, user=confirmed)
    detail = assert_locked_out(miss(api, 299, user=confirmed))["detail"]
    assert "10 codes that match nothing were tried by your account" in detail
    assert "Try again in about 10 minutes" in detail


def test_the_api_429_names_the_network_when_the_network_is_spent(api, trackable):
    for host in range(3):
        use_address_budget(api, ip=f"192.0.2.{20 + host}", start=host * LIMIT)
    detail = assert_locked_out(miss(api, 99, ip="192.0.2.30"))["detail"]
    assert "30 codes that match nothing were tried from your network" in detail


def test_the_entry_page_429_says_how_long_to_wait_in_words(api, trackable):
    use_address_budget(api)
    page = api.get("/trackable/LN-Z00099", environ_base={"REMOTE_ADDR": HOME})
    assert page.status_code == 429
    text = page.get_data(as_text=True)
    assert "from your address" in text
    assert "about 10 minutes" in text
    assert "confirmed e-mail address" in text


# --- published ----------------------------------------------------------------------------


def test_the_account_budgets_are_published_next_to_the_address_budget(api):
    published = api.get("/api/system/status").get_json()["limits"]["secretCodeGuesses"]
    assert published["accountAttempts"] == 10
    assert published["accountNetworkAttempts"] == 100
