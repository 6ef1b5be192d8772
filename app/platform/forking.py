"""What must not cross a fork when gunicorn's master preloads the app (gunicorn.conf.py).

The master makes the app once; each worker is a fork of it, ready to answer at once, so a
reload (HUP) or a recycled worker leaves no gap. Threads (error reporting's transport,
tracing's exporter) and database connections must not be shared across that fork: the
factory hands them to `in_each_process` and `after_fork`; the master's `when_ready` hook
calls `before_forks`, each worker's `post_fork` hook `after_fork_in_worker`. Where nothing
preloads (tests, flask commands, the job worker) `in_each_process` runs its work at once.
"""

from __future__ import annotations

from collections.abc import Callable

_preloading = False
_in_each_process: list[Callable[[], None]] = []
_after_fork: list[Callable[[], None]] = []
_before_forks: list[Callable[[], None]] = []


def preloading() -> None:
    """This process is gunicorn's master and makes the app for its workers to inherit."""
    global _preloading
    _preloading = True


def in_each_process(start: Callable[[], None]) -> None:
    """`start` in the process that serves: now, or in each worker after its fork."""
    if _preloading:
        _in_each_process.append(start)
    else:
        start()


def after_fork(reset: Callable[[], None], before_forks: Callable[[], None]) -> None:
    """When preloading: `before_forks` once in the master before it forks its workers
    (closing what it opened while the app was made), `reset` in each worker after its fork
    (dropping, without closing, what the master's memory still holds)."""
    if _preloading:
        _after_fork.append(reset)
        _before_forks.append(before_forks)


def before_forks() -> None:
    """The master, before its first workers (gunicorn's `when_ready`)."""
    for release in _before_forks:
        release()


def after_fork_in_worker() -> None:
    """A worker, just forked (gunicorn's `post_fork`)."""
    global _preloading
    _preloading = False
    for reset in _after_fork:
        reset()
    for start in _in_each_process:
        start()
    _after_fork.clear()
    _in_each_process.clear()
    _before_forks.clear()
