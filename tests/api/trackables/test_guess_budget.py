"""The guess budget for secret codes (decisions: Trackable codes; Wire format): lookups
(POST and GET /api/trackables/lookup), /trackable/{code} visits and the website form that
match nothing count per client address; the 11th miss within 10 minutes is 429 with
Retry-After; the budget is kept in the database, so every process shares it, and is
published in GET /api/system/status under `limits`."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import IO

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models.budget import BudgetSpend
from tests.conftest import assert_problem
from tests.factories import codes_of, count_rows, make_trackable, make_user
from tests.pages import post_code

LOOKUP = "/api/trackables/lookup"
PUBLIC = "LN-5V10A0"
SECRET = "LN5V10AB01"
HOME = "192.0.2.10"
NEIGHBOUR = "198.51.100.20"
LIMIT = 10
WINDOW = timedelta(minutes=10)
REPO = Path(__file__).resolve().parents[3]
GUESSES = "secret-guess"  # the budget's name in the spends table


@pytest.fixture
def trackable(app):
    return make_trackable(make_user("olga"), public_code=PUBLIC, secret_code=SECRET)


def miss(api, kind: str = "POST", *, ip: str = HOME, number: int = 0, **kwargs):
    """One request with a code that matches nothing, of the given kind."""
    code = f"LN-Z{number:05d}"
    environ = {"REMOTE_ADDR": ip}
    if kind == "POST":
        return api.post(LOOKUP, json={"code": code}, environ_base=environ, **kwargs)
    if kind == "GET":
        return api.get(LOOKUP, query_string={"code": code}, environ_base=environ, **kwargs)
    if kind == "FORM":  # the website's lookup form (on the miss page)
        return post_code(api, code, environ_base=environ, **kwargs)
    return api.get(f"/trackable/{code}", environ_base=environ, **kwargs)


def assert_counted_miss(response) -> None:
    """A miss the budget still allowed: 200 found false (API) or the 404 page (website)."""
    if response.mimetype == "text/html":
        assert response.status_code == 404, response.get_data(as_text=True)
    else:
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.get_json()["found"] is False


def use_budget(api, *, ip: str = HOME, times: int = LIMIT) -> None:
    kinds = ["POST", "GET", "VISIT", "FORM"]
    for number in range(times):
        assert_counted_miss(miss(api, kinds[number % 4], ip=ip, number=number))


def retry_after(response) -> int:
    value = response.headers["Retry-After"]
    assert value.isdigit(), value  # delta-seconds, not an HTTP date
    return int(value)


def assert_refused(response) -> int:
    """429 with a sensible Retry-After (seconds, within the window); returns it."""
    assert response.status_code == 429, response.get_data(as_text=True)
    seconds = retry_after(response)
    assert 1 <= seconds <= WINDOW.total_seconds()
    if response.mimetype != "text/html":
        assert_problem(response, 429)
    return seconds


def age_misses(by: timedelta) -> None:
    """Move every stored miss `by` into the past (instead of waiting)."""
    for row in db.session.scalars(select(BudgetSpend)):
        row.spent_utc -= by
    db.session.commit()


# --- counting ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["POST", "GET"])
def test_the_eleventh_lookup_miss_is_429_problem_details_with_retry_after(api, trackable, kind):
    use_budget(api)
    response = miss(api, kind, number=99)
    seconds = assert_refused(response)
    assert response.mimetype == "application/problem+json"
    assert seconds > WINDOW.total_seconds() - 60  # every miss is fresh: about the window
    assert "found" not in response.get_json()


@pytest.mark.parametrize("kind", ["VISIT", "FORM"])
def test_the_eleventh_website_miss_is_an_html_429_with_retry_after(api, trackable, kind):
    use_budget(api)
    response = miss(api, kind, number=99)
    assert_refused(response)
    assert response.mimetype == "text/html"
    assert response.headers["Cache-Control"] == "no-store"


def test_ten_misses_are_within_the_budget(api, trackable):
    use_budget(api, times=LIMIT - 1)
    assert_counted_miss(miss(api, number=50))
    assert count_rows(BudgetSpend, BudgetSpend.budget == GUESSES) == LIMIT


def test_misses_of_lookups_and_visits_share_one_budget(api, trackable):
    for number in range(4):
        assert_counted_miss(miss(api, "POST", number=number))
    for number in range(3):
        assert_counted_miss(miss(api, "GET", number=10 + number))
    for number in range(2):
        assert_counted_miss(miss(api, "VISIT", number=20 + number))
    assert_counted_miss(miss(api, "FORM", number=30))
    for kind in ("POST", "GET", "VISIT", "FORM"):
        assert_refused(miss(api, kind, number=99))


def test_hits_do_not_count(api, trackable):
    _, token = codes_of(trackable)
    use_budget(api, times=LIMIT - 1)
    home = {"REMOTE_ADDR": HOME}
    for code in (PUBLIC, SECRET, token, "ln-5v1oao"):
        response = api.post(LOOKUP, json={"code": code}, environ_base=home)
        assert response.get_json()["found"] is True
    assert api.get(f"/trackable/{PUBLIC}", environ_base=home).status_code == 302
    assert api.get(f"/trackable/{token}", environ_base=home).status_code == 302
    assert_counted_miss(miss(api, number=50))  # the tenth miss
    assert_refused(miss(api, number=51))


def test_the_public_code_of_an_unactivated_trackable_counts_as_a_miss(api):
    fresh = make_trackable(None, public_code="LN-N0TACT")
    home = {"REMOTE_ADDR": HOME}
    for number in range(LIMIT):
        if number % 2:
            response = api.post(LOOKUP, json={"code": fresh.public_code}, environ_base=home)
        else:
            response = api.get(f"/trackable/{fresh.public_code}", environ_base=home)
        assert_counted_miss(response)
    assert count_rows(BudgetSpend, BudgetSpend.budget == GUESSES) == LIMIT
    assert_refused(api.post(LOOKUP, json={"code": fresh.public_code}, environ_base=home))


def test_an_over_budget_client_is_refused_even_for_a_hit(api, trackable):
    # The budget is checked before the code: a refused guess reveals nothing.
    use_budget(api)
    response = api.post(LOOKUP, json={"code": SECRET}, environ_base={"REMOTE_ADDR": HOME})
    assert_refused(response)
    assert "Set-Cookie" not in response.headers


def test_refused_requests_do_not_count(api, trackable):
    use_budget(api)
    for number in range(5):
        assert_refused(miss(api, number=100 + number))
    assert count_rows(BudgetSpend, BudgetSpend.budget == GUESSES) == LIMIT


def test_a_validation_failure_is_not_a_miss(api, trackable):
    for _ in range(LIMIT + 2):
        response = api.post(LOOKUP, json={"code": "  "}, environ_base={"REMOTE_ADDR": HOME})
        assert_problem(response, 400)
    assert count_rows(BudgetSpend) == 0


# --- per client --------------------------------------------------------------------------


def test_another_client_address_is_unaffected(api, trackable):
    use_budget(api, ip=HOME)
    assert_refused(miss(api, ip=HOME, number=99))
    assert_counted_miss(miss(api, ip=NEIGHBOUR, number=99))
    response = api.post(LOOKUP, json={"code": SECRET}, environ_base={"REMOTE_ADDR": NEIGHBOUR})
    assert response.get_json()["found"] is True


def test_a_forged_forwarded_for_header_does_not_open_a_new_budget(api, trackable):
    use_budget(api)
    headers = {"X-Forwarded-For": NEIGHBOUR}
    assert_refused(miss(api, number=99, headers=headers))


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget(app, api, trackable):
    app.config["TRUSTED_PROXIES"] = ["10.0.0.0/8"]
    proxy = "10.1.2.3"
    for number in range(LIMIT):
        assert_counted_miss(miss(api, ip=proxy, number=number, headers={"X-Forwarded-For": HOME}))
    assert_refused(miss(api, ip=proxy, number=99, headers={"X-Forwarded-For": HOME}))
    assert_counted_miss(miss(api, ip=proxy, number=99, headers={"X-Forwarded-For": NEIGHBOUR}))


def test_the_budget_keeps_no_raw_address(api, trackable):
    use_budget(api, times=2)
    keys = list(db.session.scalars(select(BudgetSpend.subject)))
    assert len(keys) == 4  # each miss counts for the address and for its network
    assert not any(part in key for key in keys for part in (HOME, "192.0.2"))


# --- networks: IPv6 by /64, a network's larger allowance ---------------------------------

NETWORK_LIMIT = 30


def behind_proxy(app) -> str:
    app.config["TRUSTED_PROXIES"] = ["10.0.0.0/8"]
    return "10.1.2.3"


def forwarded_miss(api, proxy: str, client: str, number: int):
    return miss(api, ip=proxy, number=number, headers={"X-Forwarded-For": client})


def test_every_address_of_one_ipv6_64_shares_one_budget(app, api, trackable):
    proxy = behind_proxy(app)
    statuses = [
        forwarded_miss(api, proxy, f"2001:db8:1:2:{number:x}::1", number).status_code
        for number in range(200)
    ]
    assert statuses[:LIMIT] == [200] * LIMIT
    assert set(statuses[LIMIT:]) == {429}


def test_an_ipv6_address_is_counted_by_its_64_written_any_way(app, api, trackable):
    proxy = behind_proxy(app)
    forms = ["2001:db8:0:1::5", "2001:DB8:0:1:0:0:0:6", "2001:0db8:0000:0001:ffff::7"]
    for number in range(LIMIT):
        assert_counted_miss(forwarded_miss(api, proxy, forms[number % 3], number))
    assert_refused(forwarded_miss(api, proxy, "2001:db8:0:1:abcd::1", 99))
    assert_counted_miss(forwarded_miss(api, proxy, "2001:db8:0:2::1", 100))  # next /64


def test_the_addresses_of_one_ipv4_24_share_the_larger_network_allowance(app, api, trackable):
    proxy = behind_proxy(app)
    statuses = [
        forwarded_miss(api, proxy, f"203.0.113.{number}", number).status_code
        for number in range(200)
    ]
    assert statuses[:NETWORK_LIMIT] == [200] * NETWORK_LIMIT
    assert set(statuses[NETWORK_LIMIT:]) == {429}
    assert_counted_miss(forwarded_miss(api, proxy, "203.0.114.1", 999))  # the next /24


def test_an_ipv4_address_keeps_its_own_budget_within_its_network(app, api, trackable):
    proxy = behind_proxy(app)
    for number in range(LIMIT):
        assert_counted_miss(forwarded_miss(api, proxy, "203.0.113.7", number))
    assert_refused(forwarded_miss(api, proxy, "203.0.113.7", 99))
    assert_counted_miss(forwarded_miss(api, proxy, "203.0.113.8", 100))


def test_the_64s_of_one_ipv6_48_share_the_network_allowance(app, api, trackable):
    proxy = behind_proxy(app)
    statuses = [
        forwarded_miss(api, proxy, f"2001:db8:7:{number:x}::1", number).status_code
        for number in range(200)
    ]
    assert statuses[:NETWORK_LIMIT] == [200] * NETWORK_LIMIT
    assert set(statuses[NETWORK_LIMIT:]) == {429}


def test_an_ipv4_mapped_ipv6_address_counts_as_its_ipv4_address(app, api, trackable):
    proxy = behind_proxy(app)
    for number in range(LIMIT):
        assert_counted_miss(forwarded_miss(api, proxy, "::ffff:198.51.100.9", number))
    assert_refused(forwarded_miss(api, proxy, "198.51.100.9", 99))


def test_a_forwarded_address_that_is_no_address_is_counted_as_written(app, api, trackable):
    proxy = behind_proxy(app)
    for number in range(LIMIT):
        assert_counted_miss(forwarded_miss(api, proxy, "not-an-address", number))
    assert_refused(forwarded_miss(api, proxy, "not-an-address", 99))
    assert_counted_miss(forwarded_miss(api, proxy, "also-not-one", 100))


# --- the alarm ---------------------------------------------------------------------------


@pytest.fixture
def fresh_alarm(monkeypatch):
    """This process has raised no alarm yet (it raises one per window)."""
    from app.services.trackables.codes import guesses

    monkeypatch.setattr(guesses, "_alarm", guesses._Alarm())


def test_misses_far_above_normal_raise_an_alarm_but_lock_nobody_out(
    app, api, trackable, caplog, fresh_alarm
):
    from app.platform import metrics

    app.config["SECRET_GUESS_ALARM_MISSES"] = 25
    before = metrics.value("secret_guess_alarms_total")
    with caplog.at_level(logging.WARNING, logger="app"):
        for number in range(30):
            assert_counted_miss(miss(api, ip=f"198.18.{number}.1", number=number))
    warnings = [r for r in caplog.records if "across all clients" in r.getMessage()]
    assert len(warnings) == 1  # once per window, not once per miss
    assert warnings[0].levelno == logging.WARNING
    assert metrics.value("secret_guess_alarms_total") == before + 1
    # No global lockout: a fresh client still finds what it looks for.
    response = api.post(LOOKUP, json={"code": SECRET}, environ_base={"REMOTE_ADDR": NEIGHBOUR})
    assert response.get_json()["found"] is True


def test_misses_below_the_alarm_threshold_raise_none(app, api, trackable, caplog, fresh_alarm):
    app.config["SECRET_GUESS_ALARM_MISSES"] = 25
    with caplog.at_level(logging.WARNING, logger="app"):
        for number in range(20):
            assert_counted_miss(miss(api, ip=f"198.18.{number}.1", number=number))
    assert not [r for r in caplog.records if "across all clients" in r.getMessage()]


# --- the window --------------------------------------------------------------------------


def test_after_the_window_passes_the_client_may_guess_again(api, trackable):
    use_budget(api)
    assert_refused(miss(api, number=99))
    age_misses(WINDOW + timedelta(seconds=1))
    assert_counted_miss(miss(api, number=100))


def test_retry_after_says_when_the_oldest_miss_leaves_the_window(api, trackable):
    use_budget(api)
    age_misses(timedelta(minutes=9))
    seconds = assert_refused(miss(api, number=99))
    assert 55 <= seconds <= 61
    age_misses(timedelta(seconds=61))
    assert_counted_miss(miss(api, number=100))


def test_misses_that_left_the_window_no_longer_count(api, trackable):
    use_budget(api, times=6)
    age_misses(WINDOW + timedelta(seconds=1))
    use_budget(api, times=LIMIT)
    assert_refused(miss(api, number=99))


# --- published limits --------------------------------------------------------------------


def test_the_budget_is_published_in_the_system_status(api):
    response = api.get("/api/system/status")
    assert response.status_code == 200
    assert response.get_json()["limits"]["secretCodeGuesses"] == {
        "attempts": LIMIT,
        "networkAttempts": NETWORK_LIMIT,
        "accountAttempts": 10,
        "accountNetworkAttempts": 100,
        "windowMinutes": 10,
        "alarmMisses": 500,
    }


def test_the_published_numbers_are_the_ones_enforced(app, api, trackable):
    app.config.update(SECRET_GUESS_LIMIT=3, SECRET_GUESS_WINDOW_MINUTES=2)
    published = api.get("/api/system/status").get_json()["limits"]["secretCodeGuesses"]
    assert published["attempts"] == 3
    assert published["windowMinutes"] == 2
    use_budget(api, times=3)
    seconds = retry_after(miss(api, number=99))
    assert 1 <= seconds <= 120
    age_misses(timedelta(minutes=2, seconds=1))
    assert_counted_miss(miss(api, number=100))


# --- across processes --------------------------------------------------------------------

# Each worker builds its own app on the test database and answers one line per command:
# the statuses of that many lookup misses from one address.
WORKER = """
import json, os, sys
from pathlib import Path
from tests.conftest import make_test_app

# Answers go to the test through the original stdout; the app's log lines (an unexpected
# error's, say) go to stderr, where the test reads them when an answer is wrong.
answers = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
app = make_test_app(sys.argv[1], Path(sys.argv[2]))
client = app.test_client()
print("ready", file=answers, flush=True)
for line in sys.stdin:
    name, count = line.split()
    statuses = []
    for number in range(int(count)):
        code = f"LN-{name}{number:04d}"
        response = client.post(
            "/api/trackables/lookup", json={"code": code}, environ_base={"REMOTE_ADDR": sys.argv[3]}
        )
        statuses.append(response.status_code)
    print(json.dumps(statuses), file=answers, flush=True)
"""


class Worker:
    """A separate OS process with its own app on the same database."""

    def __init__(self, database_url: str, tmp_path: Path, name: str) -> None:
        self.name = name
        self.errors: IO[str] = open(tmp_path / f"{name}.err", "w+")  # noqa: SIM115
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and snippet
            [sys.executable, "-c", WORKER, database_url, str(tmp_path / name), HOME],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
        )
        self._expect_line("ready")

    def _read_line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.errors.seek(0)
            raise AssertionError(f"worker {self.name} stopped:\n{self.errors.read()[-4000:]}")
        return line.strip()

    def _expect_line(self, expected: str) -> None:
        assert self._read_line() == expected

    def send(self, count: int) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{self.name} {count}\n")
        self.process.stdin.flush()

    def statuses(self) -> list[int]:
        found = json.loads(self._read_line())
        if 500 in found:  # what the worker's app logged says why
            self.errors.seek(0)
            raise AssertionError(
                f"worker {self.name} answered {found}:\n{self.errors.read()[-4000:]}"
            )
        return list(found)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.errors.close()


@pytest.mark.processes
def test_two_processes_share_one_budget(api, database_url, tmp_path, trackable):
    db.session.commit()  # nothing of this process holds the database
    first = Worker(database_url, tmp_path, "A")
    try:
        second = Worker(database_url, tmp_path, "B")
        try:
            # Five misses in each process, at the same time.
            first.send(5)
            second.send(5)
            assert first.statuses() == [200] * 5
            assert second.statuses() == [200] * 5
            assert count_rows(BudgetSpend, BudgetSpend.budget == GUESSES) == LIMIT
            # Neither process saw more than five misses itself, yet the eleventh is refused
            # in either, and in this process too.
            first.send(1)
            assert first.statuses() == [429]
            second.send(1)
            assert second.statuses() == [429]
            assert_refused(miss(api, number=99))
        finally:
            second.close()
    finally:
        first.close()
