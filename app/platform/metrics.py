"""Process-local counters of events worth watching (the secret-code miss alarm, ...).

There is no metrics endpoint yet: this is the one place counters are kept, so an exporter
(Prometheus, say) can later read `counters()` without touching the code that counts.
Each counter only grows, per process, as Prometheus counters do.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Counter:
    name: str
    help: str = ""
    _value: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def inc(self, amount: int = 1) -> None:
        with self._lock:
            self._value += amount

    @property
    def value(self) -> int:
        return self._value


_counters: dict[str, Counter] = {}
_registry_lock = threading.Lock()


def counter(name: str, help: str = "") -> Counter:
    """The counter of this name, made on first use."""
    with _registry_lock:
        found = _counters.get(name)
        if found is None:
            found = _counters[name] = Counter(name, help)
        elif help and not found.help:
            found.help = help
        return found


def counters() -> list[Counter]:
    """Every counter made so far, by name."""
    with _registry_lock:
        return sorted(_counters.values(), key=lambda item: item.name)
