"""The guess budget for secret codes (decisions: Trackable codes): lookups, `/trackable/{code}`
visits, writes carrying an `accessCode` that match nothing, and bring-your-own secrets
refused as taken count against the client; over its budget within
SECRET_GUESS_WINDOW_MINUTES every such request is 429 with `Retry-After` until enough
counted misses leave the window (docs/contract/trackables.md, Guess budget).

The budget is checked before a code is resolved, and a refused request counts nothing: an
over-budget client learns nothing about its guess, a hit included, and its wait does not
grow while it keeps knocking. Misses are budget spends in the database
(services.shared.budgets); no raw address is stored.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.error_codes import Code
from app.models.base import utcnow
from app.models.user import User
from app.platform import metrics
from app.platform.secret_keys import record_key
from app.services.shared.budgets import Budget, LimitExceeded, hold, spend_all, waits
from app.services.trackables import queries

log = logging.getLogger(__name__)

CLIENT, NETWORK = "secret-guess", "secret-guess-network"
ACCOUNT, ACCOUNT_NETWORK = "secret-guess-account", "secret-guess-account-network"
IPV6_CLIENT_PREFIX, IPV6_NETWORK_PREFIX, IPV4_NETWORK_PREFIX = 64, 48, 24

MISSES, ALARMS = metrics.SECRET_GUESS_MISSES, metrics.SECRET_GUESS_ALARMS


# Whose misses a refusal names, in the words of its 429 (the API's detail, the website).
WHOSE = {
    CLIENT: "from your address",
    NETWORK: "from your network (the addresses around yours)",
    ACCOUNT: "by your account",
    ACCOUNT_NETWORK: "by signed-in accounts on your network",
}
SCOPES = {
    CLIENT: "address",
    NETWORK: "network",
    ACCOUNT: "account",
    ACCOUNT_NETWORK: "account_network",
}
OWN_BUDGET_HINT = "Signed in with a confirmed e-mail address, you would have a budget of your own."


def wait_in_words(seconds: int) -> str:
    """`45 seconds`, `about 1 minute`, `about 10 minutes`."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = -(-seconds // 60)
    return f"about {minutes} minute{'s' if minutes != 1 else ''}"


class GuessBudgetExceeded(LimitExceeded):
    """429 problem details with Retry-After (seconds); `budget` is the spent one (the
    one with the longest wait), and the detail says in words whose it is and how long
    to wait."""

    def __init__(self, retry_after: int, budget: Budget) -> None:
        super().__init__("", retry_after, code=Code.SECRET_GUESS_LIMIT_REACHED)
        self.budget = budget
        self.detail = " ".join(
            part for part in (self.state, f"Try again in {self.wait}.", self.hint) if part
        )

    @property
    def wait(self) -> str:
        return wait_in_words(self.retry_after)

    @property
    def scope(self) -> str:
        """Whose budget is spent, for a page to say in its language: `address`,
        `network`, `account` or `account_network`."""
        return SCOPES[self.budget.name]

    @property
    def window_minutes(self) -> int:
        return int(self.budget.window.total_seconds() // 60)

    @property
    def hint(self) -> str | None:
        """The way out for a finder in a crowd, unless it is already taken."""
        return None if self.budget.name in (ACCOUNT, ACCOUNT_NETWORK) else OWN_BUDGET_HINT

    @property
    def state(self) -> str:
        """`10 codes that match nothing were tried from your address in the last 10
        minutes, as many as this service allows.`"""
        minutes = int(self.budget.window.total_seconds() // 60)
        return (
            f"{self.budget.limit} codes that match nothing were tried {WHOSE[self.budget.name]} "
            f"in the last {minutes} minute{'s' if minutes != 1 else ''}, as many as this "
            "service allows."
        )


@dataclass(frozen=True)
class GuessClient:
    """Whose budget a guess spends: keyed hashes of the client and of its network, and
    the id of a signed-in account with a confirmed e-mail address (its own budget)."""

    client: str
    network: str
    account: str | None = None


def _networks(client_ip: str) -> tuple[str, str]:
    """The client's and its network's text: `v4:192.0.2.10`, `v4:192.0.2.0/24`;
    `v6:2001:db8:1:2::/64`, `v6:2001:db8:1::/48`. Text that is no address (a garbled
    forwarded header) is its own client and network."""
    try:
        address = ipaddress.ip_address(client_ip.strip().split("%")[0])
    except ValueError:
        return f"raw:{client_ip}", f"raw:{client_ip}"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if isinstance(address, ipaddress.IPv4Address):
        network = ipaddress.ip_network(f"{address}/{IPV4_NETWORK_PREFIX}", strict=False)
        return f"v4:{address}", f"v4:{network}"
    client = ipaddress.ip_network(f"{address}/{IPV6_CLIENT_PREFIX}", strict=False)
    network = ipaddress.ip_network(f"{address}/{IPV6_NETWORK_PREFIX}", strict=False)
    return f"v6:{client}", f"v6:{network}"


# An anonymous client is its IPv4 address, or its IPv6 /64 (one home line holds a whole /64), as
# app.extensions.client_ip resolves it (trusted proxies only): SECRET_GUESS_LIMIT misses. Its
# network (IPv4 /24, IPv6 /48) has a larger allowance of its own, SECRET_GUESS_NETWORK_LIMIT, so
# renting a block of addresses buys little; both are kept as keyed hashes. An account whose e-mail
# is not confirmed counts as anonymous (an account costs nothing until then). A confirmed account
# spends its own budget, SECRET_GUESS_ACCOUNT_LIMIT wherever it is, and its network's allowance for
# such accounts, SECRET_GUESS_ACCOUNT_NETWORK_LIMIT: anonymous misses behind the same address (an
# event's Wi-Fi, a school) do not lock it out, and each confirmed address adds only its own budget,
# within its network's.
def guess_key(client_ip: str, config: Mapping[str, Any], user: User | None = None) -> GuessClient:
    """The budget's client and network for an address (HMAC-SHA256, hex), and the account
    when `user` has confirmed their e-mail address."""
    key = record_key(config, "secret-guesses")
    client, network = _networks(client_ip)
    account = str(user.id) if user is not None and user.is_email_confirmed else None
    return GuessClient(
        hmac.new(key, b"secret-guesses:" + client.encode(), hashlib.sha256).hexdigest(),
        hmac.new(key, b"secret-guesses:" + network.encode(), hashlib.sha256).hexdigest(),
        account,
    )


def _spenders(guess_client: GuessClient, config: Mapping[str, Any]) -> list[tuple[Budget, str]]:
    """The (budget, subject) pairs a miss of this client spends: its own, then its
    network's. An account's subject is its id, so its spends go with the account."""
    window = "SECRET_GUESS_WINDOW_MINUTES"
    if guess_client.account is not None:
        return [
            (
                Budget.from_config(ACCOUNT, config, "SECRET_GUESS_ACCOUNT_LIMIT", window),
                guess_client.account,
            ),
            (
                Budget.from_config(
                    ACCOUNT_NETWORK, config, "SECRET_GUESS_ACCOUNT_NETWORK_LIMIT", window
                ),
                guess_client.network,
            ),
        ]
    return [
        (Budget.from_config(CLIENT, config, "SECRET_GUESS_LIMIT", window), guess_client.client),
        (
            Budget.from_config(NETWORK, config, "SECRET_GUESS_NETWORK_LIMIT", window),
            guess_client.network,
        ),
    ]


# Locks what the guess spends (the network; for an account the account, then its network), so the
# check and the count are one step until the request commits: parallel misses cannot slip past the
# budget together.
def check_budget(
    guess_client: GuessClient, config: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Raise GuessBudgetExceeded (429) when the client or its network has used its budget.
    From here to the commit, the guesses that spend the same budgets wait for this one
    (`count_miss`)."""
    now = now or utcnow()
    spenders = _spenders(guess_client, config)
    # An account is locked before its network, always in this order, so two requests
    # never wait for each other's second lock. The anonymous client shares its network's.
    if guess_client.account is not None:
        hold(f"{ACCOUNT}:{guess_client.account}")
    hold(f"{spenders[1][0].name}:{guess_client.network}")
    answers = waits(spenders, now)
    refused = [
        (seconds, budget)
        for seconds, (budget, _) in zip(answers, spenders, strict=True)
        if seconds is not None
    ]
    if refused:
        seconds, budget = max(refused, key=lambda pair: pair[0])
        metrics.GUESS_BUDGET_REFUSALS.labels(scope=SCOPES[budget.name]).inc()
        raise GuessBudgetExceeded(seconds, budget)


def count_miss(
    guess_client: GuessClient, config: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Count one miss for the client (or account) and its network (after `check_budget`,
    same transaction), then watch the misses of all clients."""
    now = now or utcnow()
    spenders = _spenders(guess_client, config)
    spend_all(spenders, now)
    MISSES.inc()
    _watch_all_clients(spenders[0][0].window, int(config["SECRET_GUESS_ALARM_MISSES"]), now)


# Misses across all clients above SECRET_GUESS_ALARM_MISSES in one window raise an alarm (a warning
# and the secret_guess_alarms_total counter), at most once per window per process. It locks nobody
# out: one attacker must not be able to lock out every finder.
class _Alarm:
    """When this process last raised the alarm: one warning per window, not per miss."""

    def __init__(self) -> None:
        self.raised_utc: datetime | None = None
        self.lock = threading.Lock()

    def due(self, window: timedelta, now: datetime) -> bool:
        with self.lock:
            return self.raised_utc is None or now - self.raised_utc >= window

    def raise_once(self, window: timedelta, now: datetime) -> bool:
        with self.lock:
            if self.raised_utc is not None and now - self.raised_utc < window:
                return False
            self.raised_utc = now
            return True


_alarm = _Alarm()


def _watch_all_clients(window: timedelta, threshold: int, now: datetime) -> None:
    """Warn when misses across all clients and accounts reach `threshold` in the window
    (0: never). The count reads at most `threshold` rows, and none while an alarm of this
    process is fresh, so an attack does not make every miss dearer."""
    if threshold <= 0 or not _alarm.due(window, now):
        return
    total = queries.misses_since((CLIENT, ACCOUNT), now - window, threshold)
    if total < threshold or not _alarm.raise_once(window, now):
        return
    ALARMS.inc()
    log.warning(
        "Secret code misses across all clients reached %d in the last %d minutes "
        "(SECRET_GUESS_ALARM_MISSES): someone may be guessing codes from many addresses.",
        threshold,
        window.total_seconds() // 60,
    )
