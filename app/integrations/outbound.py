"""Outbound HTTP for external link checks, safe against server-side request forgery.

Pure of Flask: callers pass `OutboundSettings`. What is refused, and why, is listed in
docs/contract/README.md (External links). The rules a reader needs first: only http(s) on
allowed ports; every address a name resolves to must be public, and the connection goes to
that checked address (Host, SNI and the certificate check use the name), so DNS rebinding
cannot move it; each redirect hop is checked again, never followed automatically; one
deadline covers resolving, connecting, sending and reading (`Cutter`).
`post` sends a webhook delivery under the same rules; it never follows a redirect.
"""

from __future__ import annotations

import heapq
import ipaddress
import itertools
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import idna
import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.utils import requote_uri
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from app.integrations.addresses import IPAddress, blocked_reason
from app.integrations.html_title import extract_title, parse_content_type

DEFAULT_PORTS = {"http": 80, "https": 443}
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml"})
CHUNK_BYTES = 16 * 1024
MAX_ADDRESSES_TRIED = 3  # a name with many addresses: try a few, within the time budget
# Stop reading once the title is complete; a head without a title will not get one later.
HEAD_DONE = re.compile(rb"</title\s*>|</head\s*>", re.IGNORECASE)
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")  # spaces are percent-encoded
NUMBER_LABEL = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")
HOST_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")


# --- errors ------------------------------------------------------------------------------


class OutboundError(Exception):
    """A fetch that did not produce a page; `reason` is a sentence a user can read."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BlockedDestination(OutboundError):
    """Refused before connecting: scheme, port, user info or a non-public address."""


class InvalidUrl(BlockedDestination):
    """Not a web address this fetcher can parse."""


class UpstreamHttpError(OutboundError):
    """The destination answered with an HTTP error (4xx or 5xx)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"The linked page answered with HTTP status {status}.")
        self.status = status


class FetchFailed(OutboundError):
    """Not resolvable, not reachable, too slow, a TLS failure or too many redirects."""


class Unresolvable(FetchFailed):
    """The host name did not resolve, or not within the deadline."""


class TimedOut(FetchFailed):
    """No whole answer before the deadline (a silent or a trickling server)."""


class ConnectFailed(FetchFailed):
    """Refused, unreachable, broken off, or a TLS failure."""


class TlsFailed(ConnectFailed):
    """The server's TLS certificate could not be verified."""


# --- settings and targets ----------------------------------------------------------------


@dataclass(frozen=True)
class OutboundSettings:
    timeout_seconds: float = 5.0  # budget for the whole fetch, redirects included
    max_bytes: int = 512 * 1024
    max_redirects: int = 5
    allowed_ports: frozenset[int] = frozenset({80, 443})
    allow_loopback: bool = False  # tests only: lets a local server stand in for the web
    max_url_length: int = 2048
    max_title_length: int = 200
    ca_bundle: str | None = None  # None: the certifi bundle requests ships with
    user_agent: str = "LocationNotesLinkCheck/1.0"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> OutboundSettings:
        return cls(
            timeout_seconds=float(config["OUTBOUND_TIMEOUT_SECONDS"]),
            max_bytes=int(config["OUTBOUND_MAX_BYTES"]),
            max_redirects=int(config["OUTBOUND_MAX_REDIRECTS"]),
            allowed_ports=frozenset(int(port) for port in config["OUTBOUND_ALLOWED_PORTS"]),
            allow_loopback=bool(config.get("OUTBOUND_ALLOW_LOOPBACK", False)),
            max_url_length=int(config.get("OUTBOUND_MAX_URL_LENGTH", cls.max_url_length)),
            max_title_length=int(config.get("LINK_DESCRIPTION_MAX_LENGTH", cls.max_title_length)),
            ca_bundle=config.get("OUTBOUND_CA_BUNDLE") or None,
        )


@dataclass(frozen=True)
class Target:
    """A checked, normalized http(s) URL, split the way the fetcher uses it."""

    scheme: str
    host: str  # lower-case ASCII (IDNA) name, or the canonical text of an IP address
    port: int
    path: str  # path and ?query, percent-encoded; never empty
    address: IPAddress | None  # set when the URL names an IP address itself

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.path}"


@dataclass(frozen=True)
class Page:
    url: str  # where the page was found, after redirects
    status: int
    content_type: str  # media type, lower case, without parameters
    title: str  # "" when the page has none in the bytes read
    bytes_read: int
    redirects: int


def parse_target(url: str, settings: OutboundSettings) -> Target:
    """Parse and normalize an absolute URL, refusing what the rules refuse (no DNS here)."""
    if len(url) > settings.max_url_length:
        raise InvalidUrl(f"The address is longer than {settings.max_url_length} characters.")
    if CONTROL_CHARACTERS.search(url):
        raise InvalidUrl("The address contains control characters.")
    try:
        parts = urlsplit(url)
        explicit_port = parts.port
    except ValueError as error:
        raise InvalidUrl("The address is not a valid web address.") from error
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise BlockedDestination("Only http and https links are allowed.")
    if "@" in parts.netloc:
        raise BlockedDestination("Links must not contain a user name or password.")
    host, address = _parse_host(parts.hostname or "")
    port = DEFAULT_PORTS[scheme] if explicit_port is None else explicit_port
    if port not in settings.allowed_ports:
        raise BlockedDestination(f"Links to port {port} are not allowed.")
    path = requote_uri(parts.path or "/")
    if parts.query:
        path = f"{path}?{requote_uri(parts.query)}"
    target = Target(scheme, host, port, path, address)
    if len(target.url) > settings.max_url_length:
        raise InvalidUrl(f"The address is longer than {settings.max_url_length} characters.")
    return target


def _parse_host(host: str) -> tuple[str, IPAddress | None]:
    if not host or "%" in host:
        raise InvalidUrl("The address has no valid host name.")
    if ":" in host:  # an IPv6 literal; urlsplit has removed the brackets
        try:
            v6 = ipaddress.IPv6Address(host)
        except ValueError as error:
            raise InvalidUrl("The address has no valid host name.") from error
        return v6.compressed, v6
    name = _ascii_host(host[:-1] if host.endswith(".") else host)
    labels = name.split(".")
    # As browsers do (WHATWG URL): a host ending in a number is an IPv4 address, in any
    # spelling: 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 all mean 127.0.0.1.
    if NUMBER_LABEL.fullmatch(labels[-1]):
        v4 = _parse_ipv4(labels)
        return str(v4), v4
    if len(name) > 253 or not all(HOST_LABEL.fullmatch(label) for label in labels):
        raise InvalidUrl("The address has no valid host name.")
    return name, None


def _ascii_host(name: str) -> str:
    if name.isascii():
        return name.lower()
    try:
        return idna.encode(name, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as error:
        raise InvalidUrl("The address has no valid host name.") from error


def _parse_ipv4(labels: list[str]) -> ipaddress.IPv4Address:
    invalid = InvalidUrl("The address has no valid IPv4 address.")
    if len(labels) > 4 or not all(NUMBER_LABEL.fullmatch(label) for label in labels):
        raise invalid
    numbers = []
    for label in labels:
        if label[:2].lower() == "0x":
            digits, base = label[2:], 16
        elif len(label) > 1 and label.startswith("0"):
            digits, base = label[1:], 8
        else:
            digits, base = label, 10
        try:
            numbers.append(int(digits, base) if digits else 0)
        except ValueError as error:  # 8 or 9 in an octal part
            raise invalid from error
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (5 - len(numbers)):
        raise invalid
    value = last + sum(number << (8 * (3 - index)) for index, number in enumerate(leading))
    return ipaddress.IPv4Address(value)


# --- resolving and checking --------------------------------------------------------------


# Loopback by definition (RFC 6761): never a destination out on the web.
LOOPBACK_NAMES = re.compile(r"(.+\.)?localhost\.?", re.IGNORECASE)


def names_loopback(host: str) -> bool:
    """`localhost` and names under it: they can only ever reach this machine."""
    return bool(LOOPBACK_NAMES.fullmatch(host))


def resolve_host(host: str, port: int) -> list[IPAddress]:
    """Every address the system resolver gives for `host`, in its order (tests replace it)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


# Lookups run here so that one that hangs can be left behind at the deadline (the system
# resolver cannot be interrupted); a few at once, in each process that looks names up.
_RESOLVERS: ThreadPoolExecutor | None = None
_RESOLVERS_LOCK = threading.Lock()
RESOLVER_THREADS = 4


def _resolvers() -> ThreadPoolExecutor:
    global _RESOLVERS
    with _RESOLVERS_LOCK:
        if _RESOLVERS is None:
            _RESOLVERS = ThreadPoolExecutor(RESOLVER_THREADS, thread_name_prefix="resolve")
        return _RESOLVERS


def _resolve(host: str, port: int) -> list[IPAddress]:
    return resolve_host(host, port)  # read at each call: tests replace it


def resolve_within(host: str, port: int, deadline: float | None) -> list[IPAddress]:
    """`resolve_host`, or Unresolvable when it fails or is not done by `deadline`."""
    unresolved = Unresolvable(f"The host name {host} could not be resolved.")
    try:
        if deadline is None:
            addresses = _resolve(host, port)
        else:
            lookup = _resolvers().submit(_resolve, host, port)
            addresses = lookup.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout as error:
        raise unresolved from error
    except (OSError, UnicodeError) as error:
        raise unresolved from error
    if not addresses:
        raise unresolved
    return addresses


def checked_addresses(
    target: Target, settings: OutboundSettings, deadline: float | None = None
) -> list[IPAddress]:
    """Resolve once (by `deadline`) and check every address; the caller connects only
    to these."""
    if target.address is not None:
        addresses = [target.address]
    else:
        addresses = resolve_within(target.host, target.port, deadline)
    for address in addresses:
        reason = blocked_reason(address, allow_loopback=settings.allow_loopback)
        if reason:
            raise BlockedDestination(
                f"The link leads to an address that is not allowed ({reason})."
            )
    return addresses


# --- fetching ----------------------------------------------------------------------------


class Cutter:
    """The connections of one session, shut down when a deadline passes (`until`): a read
    blocked on a server that answers nothing, or one byte at a time, then ends at once.
    urllib3's own timeouts bound each socket operation, not their sum."""

    def __init__(self) -> None:
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()

    def watch(self, connection: Any) -> None:
        with self._lock:
            self._connections.add(connection)

    def cut(self) -> None:
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            sock = getattr(connection, "sock", None)  # set before a TLS handshake begins
            if sock is not None:
                _shut_down(sock)

    @contextmanager
    def until(self, deadline: float) -> Iterator[None]:
        """Cut this session's connections if the block is still running at `deadline`."""
        token = _WATCHDOG.arm(deadline, self)
        try:
            yield
        finally:
            _WATCHDOG.disarm(token)


class _Watchdog:
    """One thread per process that cuts the sessions whose deadline passed: cheaper than a
    timer thread per request. Armed deadlines wait in a heap; a disarmed one is dropped
    when it reaches the top. The thread starts at the first arming in each process (a
    forked worker gets its own)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._heap: list[tuple[float, int, Cutter]] = []
        self._armed: set[int] = set()
        self._tokens = itertools.count()
        self._pid: int | None = None

    def arm(self, deadline: float, cutter: Cutter) -> int:
        with self._condition:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._heap.clear()
                self._armed.clear()
                threading.Thread(target=self._run, name="outbound-deadlines", daemon=True).start()
            token = next(self._tokens)
            earliest = not self._heap or deadline < self._heap[0][0]
            heapq.heappush(self._heap, (deadline, token, cutter))
            self._armed.add(token)
            if earliest:
                self._condition.notify()  # it sleeps until a later deadline, or for ever
            return token

    def disarm(self, token: int) -> None:
        with self._condition:
            self._armed.discard(token)

    def _run(self) -> None:
        while True:
            with self._condition:
                while True:
                    while self._heap and self._heap[0][1] not in self._armed:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._condition.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        _, token, cutter = heapq.heappop(self._heap)
                        self._armed.discard(token)
                        break
                    self._condition.wait(wait)
            cutter.cut()


_WATCHDOG = _Watchdog()


def _shut_down(sock: socket.socket) -> None:
    """Shut the connection down under whoever reads it. Through a duplicate of its
    descriptor: an SSL socket's own shutdown would drop its TLS state under the reader."""
    try:
        descriptor = sock.fileno()
        if descriptor < 0:
            return
        with socket.fromfd(descriptor, sock.family, sock.type) as twin:
            twin.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed meanwhile: nothing left to cut


def _watched_pools(cutter: Cutter) -> dict[str, type[HTTPConnectionPool]]:
    """urllib3's pool classes, their connections made known to `cutter`."""

    class WatchedHTTPConnection(HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            cutter.watch(self)

    class WatchedHTTPSConnection(HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            cutter.watch(self)

    class WatchedHTTPConnectionPool(HTTPConnectionPool):
        ConnectionCls = WatchedHTTPConnection

    class WatchedHTTPSConnectionPool(HTTPSConnectionPool):
        ConnectionCls = WatchedHTTPSConnection

    return {"http": WatchedHTTPConnectionPool, "https": WatchedHTTPSConnectionPool}


class PinnedHostAdapter(HTTPAdapter):
    """Connects to the IP address in the URL but speaks TLS to the host name: SNI and the
    certificate check use `server_hostname`, so pinning the address keeps HTTPS verified.
    Its connections are known to `cutter`, which ends them at a deadline."""

    def __init__(self, server_hostname: str | None, cutter: Cutter | None = None) -> None:
        # init_poolmanager (called below) reads both
        self.server_hostname = server_hostname
        self.cutter = cutter or Cutter()
        super().__init__(max_retries=0)

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        if self.server_hostname:
            # urllib3 drops these for plain-http pools.
            pool_kwargs["server_hostname"] = self.server_hostname
            pool_kwargs["assert_hostname"] = self.server_hostname
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        # PoolManager's documented table of the pool class per scheme.
        self.poolmanager.pool_classes_by_scheme = _watched_pools(self.cutter)


# A server that trickles bytes cannot stretch the deadline: when it passes, the connection is shut
# down under the reader (Cutter), and a resolver that hangs is left behind. The body is read only up
# to the end of the page title (or max_bytes); at most max_redirects hops, each parsed and checked
# again.
def fetch_page(url: str, settings: OutboundSettings) -> Page:
    """GET `url`, following up to `max_redirects` checked redirects, and read its title."""
    deadline = time.monotonic() + settings.timeout_seconds
    target = parse_target(url, settings)
    for hop in range(settings.max_redirects + 1):
        cutter = Cutter()
        with (
            requests.Session() as session,
            cutter.until(deadline),
            _get(session, target, settings, deadline, cutter) as response,
        ):
            status = response.status_code
            if status in REDIRECT_STATUSES:
                location = _header_text(response.headers.get("Location", "")).strip()
                if not location:
                    raise FetchFailed("The linked page redirects without saying where to.")
                target = parse_target(urljoin(target.url, location), settings)
                continue
            if status >= 400:
                raise UpstreamHttpError(status)
            if not 200 <= status < 300:
                raise FetchFailed(f"The linked page answered with HTTP status {status}.")
            return _read_page(response, target, settings, deadline, hop)
    raise FetchFailed(f"The linked page redirects more than {settings.max_redirects} times.")


def _header_text(value: str) -> str:
    """Headers arrive decoded as Latin-1; a server sending UTF-8 bytes meant UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _get(
    session: requests.Session,
    target: Target,
    settings: OutboundSettings,
    deadline: float,
    cutter: Cutter,
) -> requests.Response:
    headers = {
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        "Accept-Encoding": "identity",  # the byte cap then counts what the server sends
    }
    return _send(session, "GET", target, settings, deadline, cutter, headers=headers)


def _send(
    session: requests.Session,
    method: str,
    target: Target,
    settings: OutboundSettings,
    deadline: float,
    cutter: Cutter,
    *,
    headers: Mapping[str, str],
    data: bytes | None = None,
) -> requests.Response:
    """One request to the checked addresses of `target` (never a redirect followed); the
    caller holds `cutter.until(deadline)` around it and the reading of its answer."""
    addresses = checked_addresses(target, settings, deadline)
    session.trust_env = False  # no proxies, .netrc or CA overrides from the environment
    pinned_name = None if target.address else target.host
    current = session.get_adapter("https://")
    if (
        not isinstance(current, PinnedHostAdapter)
        or current.server_hostname != pinned_name
        or current.cutter is not cutter
    ):
        # A session that sent to this host name before keeps its adapter, and with it the
        # pool of connections to the addresses checked (a Poster's kept-alive ones).
        adapter = PinnedHostAdapter(pinned_name, cutter)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
    sent = {"Host": target.netloc, "User-Agent": settings.user_agent, **headers}
    for address in addresses[:MAX_ADDRESSES_TRIED]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        host = f"[{address.compressed}]" if address.version == 6 else str(address)
        pinned = f"{target.scheme}://{host}:{target.port}{target.path}"
        try:
            return session.request(
                method,
                pinned,
                headers=sent,
                data=data,
                allow_redirects=False,
                stream=True,
                timeout=(remaining, remaining),
                verify=settings.ca_bundle or True,
            )
        except requests.exceptions.ReadTimeout as error:
            raise _too_slow() from error
        except requests.exceptions.ConnectionError as error:
            if time.monotonic() >= deadline:
                raise _too_slow() from error  # cut at the deadline, in any phase
            if isinstance(error, requests.exceptions.SSLError):
                raise TlsFailed(
                    "The linked site's TLS certificate could not be verified."
                ) from error
            continue  # refused, unreachable or a connect timeout: try the next address
        except requests.exceptions.RequestException as error:
            if time.monotonic() >= deadline:
                raise _too_slow() from error
            raise ConnectFailed("The linked page could not be fetched.") from error
    if time.monotonic() >= deadline:
        raise _too_slow()
    raise ConnectFailed("The linked site could not be reached.")


def _too_slow() -> TimedOut:
    return TimedOut("The linked page took too long to answer.")


# --- posting (webhook deliveries) --------------------------------------------------------


@dataclass(frozen=True)
class Posted:
    """What an endpoint answered a POST: its status (any, 3xx included: redirects are not
    followed), the start of its body (at most `max_bytes`) and how long it took."""

    status: int
    body: bytes
    latency_ms: int


def post(url: str, body: bytes, headers: Mapping[str, str], settings: OutboundSettings) -> Posted:
    """POST `body` to `url` under the same rules as a fetch (checked and pinned addresses,
    one time budget), without following a redirect: a 3xx is the endpoint's answer. Reads
    at most `settings.max_bytes` of the answer. Raises OutboundError when no answer came."""
    with Poster(settings) as poster:
        return poster.post(url, body, headers)


class Poster:
    """`post` for many deliveries in a row (a webhook drain): one session, so a connection
    to an address already checked is kept alive and used again. Every POST is checked as
    `post` checks it (the URL, the resolution, each address); only the connection is
    reused, and only to the same checked address and host name. Use it as a context
    manager: leaving closes the connections."""

    def __init__(self, settings: OutboundSettings) -> None:
        self.settings = settings
        self.session = requests.Session()
        self.cutter = Cutter()

    def __enter__(self) -> Poster:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.session.close()

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> Posted:
        started = time.monotonic()
        deadline = started + self.settings.timeout_seconds
        target = parse_target(url, self.settings)
        sent = {**headers, "Connection": "keep-alive"}
        with (
            self.cutter.until(deadline),
            _send(
                self.session,
                "POST",
                target,
                self.settings,
                deadline,
                self.cutter,
                headers=sent,
                data=body,
            ) as answer,
        ):
            status = answer.status_code
            read = _read_capped(answer, self.settings.max_bytes, deadline)
        return Posted(status, read, int((time.monotonic() - started) * 1000))


def _read_capped(response: requests.Response, limit: int, deadline: float) -> bytes:
    """At most `limit` bytes of the body, within the deadline; what arrived before a stall
    or a break is kept."""
    buffer = bytearray()
    try:
        while len(buffer) < limit and time.monotonic() < deadline:
            chunk = response.raw.read1(min(CHUNK_BYTES, limit - len(buffer)))
            if not chunk:
                break
            buffer += chunk
    except (urllib3.exceptions.HTTPError, OSError):
        pass
    return bytes(buffer[:limit])


def _read_page(
    response: requests.Response,
    target: Target,
    settings: OutboundSettings,
    deadline: float,
    redirects: int,
) -> Page:
    media_type, charset = parse_content_type(response.headers.get("Content-Type", ""))
    head = _read_head(response, settings.max_bytes, deadline) if media_type in HTML_TYPES else b""
    return Page(
        url=target.url,
        status=response.status_code,
        content_type=media_type,
        title=extract_title(head, charset, max_length=settings.max_title_length),
        bytes_read=len(head),
        redirects=redirects,
    )


def _read_head(response: requests.Response, limit: int, deadline: float) -> bytes:
    """Read until the title is complete, `limit` bytes or the deadline; a page that stalls
    or breaks off after a 2xx answer is still a working link, with what was read."""
    buffer = bytearray()
    try:
        while len(buffer) < limit and time.monotonic() < deadline:
            # read1 returns what has arrived instead of waiting for a full chunk, so a
            # server dripping bytes cannot hold us past the deadline.
            chunk = response.raw.read1(min(CHUNK_BYTES, limit - len(buffer)))
            if not chunk:
                break
            buffer += chunk
            if HEAD_DONE.search(buffer):
                break
    except (urllib3.exceptions.HTTPError, OSError):
        pass
    return bytes(buffer[:limit])
