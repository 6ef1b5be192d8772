"""What a production start refuses, each setting named with what would go wrong.

A production instance must not sign with a development key, print QR codes that point at
localhost, log account mail, or keep rate limits in one process's memory (each worker
and each instance would then count alone). Development and tests run with no settings.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from config import DEV_SECRET, SECRET_SETTINGS

MIN_SECRET_LENGTH = 32  # HS256 keys shorter than the hash are weak (RFC 7518 3.2)
PRODUCTION_MAIL_BACKENDS = ("smtp",)
PROCESS_MEMORY_STORAGES = ("memory://",)


class InsecureConfiguration(RuntimeError):
    """Raised at start-up when a production app would run on unsafe settings."""


def production_problems(config: Mapping[str, Any]) -> list[str]:
    """Every unsafe setting of a production start, one sentence each (empty: safe)."""
    return [
        *_secret_problems(config),
        *_database_problems(config),
        *_proxy_problems(config),
        *_base_url_problems(config),
        *_mail_problems(config),
        *_limiter_problems(config),
        *_webhook_problems(config),
        *_metrics_problems(config),
    ]


def refusal_message(problems: list[str], env_name: str) -> str:
    """The refusal as printed: one line to start, one line per setting."""
    listed = "\n".join(f"- {problem}" for problem in problems)
    return f"Refusing to start in {env_name}, until these settings are fixed:\n{listed}"


def read_settings(settings: Any) -> None:
    """What a start reads into its settings (a Flask `Config`): config.py's defaults and
    the environment, then instance/config.py when present. The app factory and gunicorn's
    master both read them so."""
    from config import Config

    settings.from_object(Config)
    settings.from_pyfile("config.py", silent=True)  # instance/config.py, if present


def environment_refusal(instance_path: str) -> str | None:
    """The refusal of the settings a start would read (config.py, then instance/config.py)
    as printed, or None: for a process that checks them before making the app (gunicorn's
    master, so that the refusal is printed once rather than by every worker)."""
    from flask import Config as Settings

    settings = Settings(instance_path)
    read_settings(settings)
    if settings["ENV_NAME"] in {"development", "testing"}:
        return None
    problems = production_problems(settings)
    return refusal_message(problems, str(settings["ENV_NAME"])) if problems else None


def check_production_settings(config: Mapping[str, Any]) -> None:
    if config["ENV_NAME"] in {"development", "testing"}:
        return
    problems = production_problems(config)
    if problems:
        raise InsecureConfiguration(refusal_message(problems, str(config["ENV_NAME"])))


def _secret_problems(config: Mapping[str, Any]) -> list[str]:
    missing = [name for name in SECRET_SETTINGS if config.get(name) in (None, "", DEV_SECRET)]
    short = [
        name
        for name in SECRET_SETTINGS
        if name not in missing and len(str(config[name])) < MIN_SECRET_LENGTH
    ]
    problems = []
    if missing:
        problems.append(
            f"set {', '.join(missing)} in the environment (each its own long random value)."
        )
    if short:
        problems.append(f"{', '.join(short)} must be at least {MIN_SECRET_LENGTH} characters long.")
    records = str(config.get("RECORDS_KEY") or "")
    if records and len(records) < MIN_SECRET_LENGTH:
        problems.append(f"RECORDS_KEY must be at least {MIN_SECRET_LENGTH} characters long.")
    if config.get("SECRET_KEY_FALLBACKS") and not records:
        problems.append(
            "SECRET_KEYS_PREVIOUS is set but RECORDS_KEY is not: set RECORDS_KEY to the "
            "SECRET_KEY the stored recovery codes were made under (the one being replaced), "
            "or the rotation voids them."
        )
    by_value: dict[str, list[str]] = {}
    for name in (*SECRET_SETTINGS, "RECORDS_KEY"):
        if name not in missing and config.get(name):
            by_value.setdefault(str(config[name]), []).append(name)
    for names in by_value.values():
        if len(names) > 1:
            problems.append(
                f"{' and '.join(names)} have the same value: give each its own, so that one "
                "leaked or rotated key is not all of them."
            )
    return problems


def _database_problems(config: Mapping[str, Any]) -> list[str]:
    url = str(config.get("SQLALCHEMY_DATABASE_URI") or "")
    if not url.startswith("sqlite") or config.get("DATABASE_ALLOW_SQLITE"):
        return []
    return [
        "DATABASE_URL names SQLite, one file on one machine: no second instance, replica or "
        "backup while it serves; set DATABASE_URL=postgresql://... "
        "(DATABASE_ALLOW_SQLITE=true for a test rig on one machine)."
    ]


def _proxy_problems(config: Mapping[str, Any]) -> list[str]:
    problems = []
    for entry in config.get("TRUSTED_PROXIES") or []:
        try:
            ipaddress.ip_network(str(entry).strip(), strict=False)
        except ValueError:
            problems.append(
                f"TRUSTED_PROXIES: {entry!r} is not an address or CIDR range (every request "
                "would fail to name its client)."
            )
    return problems


def is_local_host(host: str) -> bool:
    """A loopback, private, link-local or unspecified address, or a localhost name."""
    host = host.strip("[]").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return (
        address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified
    )


def _base_url_problems(config: Mapping[str, Any]) -> list[str]:
    url = str(config.get("PUBLIC_BASE_URL") or "")
    if not url:
        return [
            "set PUBLIC_BASE_URL to the https address clients reach the service at: "
            "it is printed in every QR code and mailed in every account link."
        ]
    if config.get("PUBLIC_BASE_URL_ALLOW_LOCAL"):
        return []
    parts = urlsplit(url)
    problems = []
    if parts.scheme != "https":
        problems.append(
            f"PUBLIC_BASE_URL ({url}) must be https: scan URLs and account links would "
            "travel in clear text."
        )
    if not parts.hostname or is_local_host(parts.hostname):
        problems.append(
            f"PUBLIC_BASE_URL ({url}) names a local or private host that no finder's phone "
            "can reach; QR codes printed now would point there for good "
            "(PUBLIC_BASE_URL_ALLOW_LOCAL=true for a test rig on one machine)."
        )
    return problems


def _mail_problems(config: Mapping[str, Any]) -> list[str]:
    backend = config.get("MAIL_BACKEND")
    if backend in PRODUCTION_MAIL_BACKENDS:
        return []
    return [
        f"MAIL_BACKEND={backend} keeps account mail on this machine (confirmation and reset "
        "links in a log or a folder); set MAIL_BACKEND=smtp and MAIL_SMTP_*."
    ]


def _limiter_problems(config: Mapping[str, Any]) -> list[str]:
    storage = str(config.get("RATELIMIT_STORAGE_URI") or "")
    if not storage.startswith(PROCESS_MEMORY_STORAGES):
        return []
    return [
        f"RATELIMIT_STORAGE_URI={storage} counts in each process's memory: with several "
        "workers or instances every limit is multiplied; use the database (the default) "
        "or redis://."
    ]


def _webhook_problems(config: Mapping[str, Any]) -> list[str]:
    if not config.get("WEBHOOKS_ALLOW_LOOPBACK"):
        return []
    return [
        "WEBHOOKS_ALLOW_LOOPBACK lets anyone with an account make this server post to its "
        "own loopback services (tests only); leave it unset."
    ]


def _metrics_problems(config: Mapping[str, Any]) -> list[str]:
    token = str(config.get("METRICS_TOKEN") or "")
    if not token or len(token) >= MIN_SECRET_LENGTH:
        return []
    return [
        f"METRICS_TOKEN must be at least {MIN_SECRET_LENGTH} characters long: it opens "
        "/metrics on the service's public address."
    ]
