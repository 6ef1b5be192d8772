"""The guess budget for secret codes (decisions: Trackable codes): lookups, `/trackable/{code}`
visits, writes carrying an `accessCode` that match nothing, and bring-your-own secrets
refused as taken count against the client; after SECRET_GUESS_LIMIT misses within
SECRET_GUESS_WINDOW_MINUTES every such request is 429 with `Retry-After` until enough
counted misses leave the window.

- The client is its IPv4 address, or its IPv6 /64 (one home line holds a whole /64), as
  app.extensions.client_ip resolves it (trusted proxies only). Its network (IPv4 /24,
  IPv6 /48) has a larger allowance of its own, SECRET_GUESS_NETWORK_LIMIT, so renting a
  block of addresses buys little. Both are kept as keyed hashes: no raw address is stored.
- Misses are budget spends in the database (services.shared.budgets), one for the client
  and one for its network. `check_budget` locks the network, so the check and the count
  are one step until the request commits: parallel misses cannot slip past the budget
  together.
- The budget is checked before a code is resolved, and a refused request counts nothing:
  an over-budget client learns nothing about its guess, a hit included, and its wait does
  not grow while it keeps knocking.
- Misses across all clients above SECRET_GUESS_ALARM_MISSES in one window raise an alarm
  (a warning and the `secret_guess_alarms_total` counter), at most once per window per
  process. It locks nobody out: one attacker must not be able to lock out every finder.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from app.extensions import db
from app.models.base import utcnow
from app.models.budget import BudgetSpend
from app.platform import metrics
from app.services.shared.budgets import Budget, LimitExceeded, hold, spend_all, waits

log = logging.getLogger(__name__)

CLIENT, NETWORK = "secret-guess", "secret-guess-network"
IPV6_CLIENT_PREFIX, IPV6_NETWORK_PREFIX, IPV4_NETWORK_PREFIX = 64, 48, 24

MISSES = metrics.counter(
    "secret_guess_misses_total", "Secret code misses counted against a client's guess budget."
)
ALARMS = metrics.counter(
    "secret_guess_alarms_total",
    "Times misses across all clients reached SECRET_GUESS_ALARM_MISSES in one window.",
)


class GuessBudgetExceeded(LimitExceeded):
    """429 problem details with Retry-After (seconds)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "Too many codes that match nothing were tried from this address.",
            retry_after,
            code="secret_guess_limit_reached",
        )


@dataclass(frozen=True)
class GuessClient:
    """Whose budget a guess spends: keyed hashes of the client and of its network."""

    client: str
    network: str


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


def guess_key(client_ip: str, config: Mapping[str, Any]) -> GuessClient:
    """The budget's client and network for an address (HMAC-SHA256, hex)."""
    key = str(config["SECRET_KEY"]).encode()
    client, network = _networks(client_ip)
    return GuessClient(
        hmac.new(key, b"secret-guesses:" + client.encode(), hashlib.sha256).hexdigest(),
        hmac.new(key, b"secret-guesses:" + network.encode(), hashlib.sha256).hexdigest(),
    )


def _budgets(config: Mapping[str, Any]) -> tuple[Budget, Budget]:
    window = "SECRET_GUESS_WINDOW_MINUTES"
    return (
        Budget.from_config(CLIENT, config, "SECRET_GUESS_LIMIT", window),
        Budget.from_config(NETWORK, config, "SECRET_GUESS_NETWORK_LIMIT", window),
    )


def check_budget(
    guess_client: GuessClient, config: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Raise GuessBudgetExceeded (429) when the client or its network has used its budget.
    From here to the commit, the network's guesses wait for this one (`count_miss`)."""
    now = now or utcnow()
    client_budget, network_budget = _budgets(config)
    hold(f"{NETWORK}:{guess_client.network}")
    answers = waits(
        [(client_budget, guess_client.client), (network_budget, guess_client.network)], now
    )
    refused = [seconds for seconds in answers if seconds is not None]
    if refused:
        raise GuessBudgetExceeded(max(refused))


def count_miss(
    guess_client: GuessClient, config: Mapping[str, Any], *, now: datetime | None = None
) -> None:
    """Count one miss for the client and its network (after `check_budget`, same
    transaction), then watch the misses of all clients."""
    now = now or utcnow()
    client_budget, network_budget = _budgets(config)
    spend_all([(client_budget, guess_client.client), (network_budget, guess_client.network)], now)
    MISSES.inc()
    _watch_all_clients(client_budget, int(config["SECRET_GUESS_ALARM_MISSES"]), now)


class _Alarm:
    """When this process last raised the alarm: one warning per window, not per miss."""

    def __init__(self) -> None:
        self.raised_utc: datetime | None = None
        self.lock = threading.Lock()

    def due(self, budget: Budget, now: datetime) -> bool:
        with self.lock:
            return self.raised_utc is None or now - self.raised_utc >= budget.window

    def raise_once(self, budget: Budget, now: datetime) -> bool:
        with self.lock:
            if self.raised_utc is not None and now - self.raised_utc < budget.window:
                return False
            self.raised_utc = now
            return True


_alarm = _Alarm()


def _watch_all_clients(budget: Budget, threshold: int, now: datetime) -> None:
    """Warn when misses across all clients reach `threshold` in the window (0: never).
    The count reads at most `threshold` rows, and none while an alarm of this process
    is fresh, so an attack does not make every miss dearer."""
    if threshold <= 0 or not _alarm.due(budget, now):
        return
    recent = (
        select(BudgetSpend.id)
        .where(BudgetSpend.budget == budget.name, BudgetSpend.spent_utc > now - budget.window)
        .limit(threshold)
        .subquery()
    )
    total = db.session.scalar(select(func.count()).select_from(recent)) or 0
    if total < threshold or not _alarm.raise_once(budget, now):
        return
    ALARMS.inc()
    log.warning(
        "Secret code misses across all clients reached %d in the last %d minutes "
        "(SECRET_GUESS_ALARM_MISSES): someone may be guessing codes from many addresses.",
        threshold,
        budget.window.total_seconds() // 60,
    )
