"""The caller's IP address: X-Forwarded-For is honoured only from trusted proxies."""

from __future__ import annotations

import functools
import ipaddress

from flask import Request, current_app

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> list[Network]:
    """TRUSTED_PROXIES parsed, once per setting."""
    return [ipaddress.ip_network(entry, strict=False) for entry in entries]


def _is_trusted(address: str, trusted: list[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in trusted)


RESOLVED = "location_notes.client_ip"  # the request's answer, kept in its environ


def resolve_client_ip(request: Request) -> str:
    """The remote address; when it is a trusted proxy, the right-most untrusted address
    of X-Forwarded-For (a client cannot spoof entries a trusted proxy appended). Worked
    out once per request (the access log asks for every request, and a lookup again)."""
    resolved = request.environ.get(RESOLVED)
    if resolved is None:
        resolved = request.environ[RESOLVED] = _resolve(request)
    return str(resolved)


def _resolve(request: Request) -> str:
    remote = request.remote_addr or ""
    trusted = _networks(tuple(current_app.config["TRUSTED_PROXIES"]))
    if not trusted or not _is_trusted(remote, trusted):
        return remote
    forwarded = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",")]
    for hop in reversed([hop for hop in forwarded if hop]):
        if not _is_trusted(hop, trusted):
            return hop
    return remote
