"""Optional error reporting (Sentry) and tracing (OpenTelemetry), both off by default.

- `SENTRY_DSN` set: unexpected errors (the 500s) go to Sentry (`error_reports`).
- `OTEL_EXPORTER_OTLP_ENDPOINT` set, or `OTEL_TRACING=true`: traces of requests, SQL
  statements and outbound HTTP go to an OTLP/HTTP collector (`tracing`).

Neither library is imported while its setting is unset: an instance without them runs
exactly as before. A setting whose extra is not installed refuses the start
(`MissingExtra`), rather than silently reporting nothing. Whatever leaves the service
through either is scrubbed as `scrub` says: no trackable code, no personal data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from app.platform import forking

log = logging.getLogger(__name__)

EXTENSION = "telemetry"
Reporter = Callable[[BaseException, str], None]


class MissingExtra(RuntimeError):
    """A setting asks for error reporting or tracing whose extra is not installed."""


@dataclass
class Telemetry:
    """What is on in this app: who hears of an unexpected error, and how to stop."""

    reporters: list[Reporter] = field(default_factory=list)
    stops: list[Callable[[], None]] = field(default_factory=list)
    tracing: Any = None  # tracing.Tracing when tracing is on (its provider: tests flush it)


def tracing_wanted(config: Mapping[str, Any]) -> bool:
    return bool(config.get("OTEL_EXPORTER_OTLP_ENDPOINT") or config.get("OTEL_TRACING"))


def start_telemetry(app: Flask) -> None:
    """Start what the settings ask for; the factory calls it first, before any engine is
    made or request hook added. Tests pass `SENTRY_TRANSPORT` or `TRACING_EXPORTER` (an
    object, never from the environment) to keep everything in the process."""
    telemetry = Telemetry()
    if app.config.get("SENTRY_DSN"):
        with _extra("sentry", "SENTRY_DSN", "sentry_sdk"):
            from app.platform.telemetry import error_reports
        transport = app.config.get("SENTRY_TRANSPORT")
        # Its transport's thread runs in the process that serves (app.platform.forking).
        forking.in_each_process(lambda: error_reports.start(app, transport=transport))
        telemetry.reporters.append(error_reports.report)
        telemetry.stops.append(error_reports.stop)
    if tracing_wanted(app.config):
        with _extra("otel", "OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACING", "opentelemetry"):
            from app.platform.telemetry import tracing
        telemetry.tracing = tracing.start(app, exporter=app.config.get("TRACING_EXPORTER"))
        telemetry.reporters.append(tracing.report)
        telemetry.stops.append(telemetry.tracing.stop)
    app.extensions[EXTENSION] = telemetry


def stop_telemetry(app: Flask) -> None:
    """Undo `start_telemetry` in this process (tests build apps with and without it)."""
    telemetry = app.extensions.get(EXTENSION)
    if telemetry is not None:
        for stop in reversed(telemetry.stops):
            stop()
        telemetry.reporters.clear()
        telemetry.stops.clear()


def reporting(app: Flask, track: Callable[[Exception], str]) -> Callable[[Exception], str]:
    """`track` (which stores an unexpected error and returns its ticket), followed by
    reporting the error under that ticket when reporting or tracing is on."""
    telemetry = app.extensions.get(EXTENSION)
    if telemetry is None or not telemetry.reporters:
        return track

    def track_and_report(error: Exception) -> str:
        ticket = track(error)
        for report in telemetry.reporters:
            try:
                report(error, ticket)
            except Exception:  # the 500 and its ticket stand whatever the report does
                log.warning("could not report the error of ticket %s", ticket, exc_info=True)
        return ticket

    return track_and_report


@contextmanager
def _extra(extra: str, setting: str, package: str) -> Iterator[None]:
    """Turns the import error of a missing extra into `MissingExtra`, naming the extra,
    the setting that asked for it and how to install it."""
    try:
        yield
    except ImportError as error:
        if not (error.name or "").startswith(package):
            raise  # an import error of our own code: raised as it is
        raise MissingExtra(
            f"{setting} is set, but the `{extra}` extra is not installed "
            f"({error.name} cannot be imported). Install it beside the runtime set: "
            f"pip install --require-hashes -r requirements/runtime.txt "
            f"-r requirements/{extra}.txt (or `make run EXTRAS={extra}`), or unset {setting}."
        ) from None
