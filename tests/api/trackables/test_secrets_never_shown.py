"""Secret codes and QR tokens are shown once, by the create (and rotate) responses, and
never again (contract: Trackable, "Secret short codes, scan URLs and QR payloads are
returned only by the create endpoints"; decisions: Trackable codes, secrets never reach
logs).

Trackables and groups are made through the API, their codes taken from the create
answers; then every trackable read, list, lookup, active-session, watch and entry route
and a set of error answers is crawled as the owner, a stranger and an anonymous browser
holding access sessions, and no body, header, log record, access-log line or the OpenAPI
document may carry a code in any letter case.
"""

from __future__ import annotations

import logging
import runpy
import sys
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.config import Config as GunicornConfig
from gunicorn.http.errors import InvalidRequestLine
from gunicorn.util import load_class

from app.platform.logs import JsonFormatter
from tests.conftest import ApiClient
from tests.factories import make_user

CREATE = "/api/trackables"
GROUPS = "/api/trackables/groups"
LOOKUP = "/api/trackables/lookup"
OWN_SECRET = "Kestrel-Vault_73"
GUNICORN_CONF = Path(__file__).resolve().parents[3] / "gunicorn.conf.py"
# Every access-log atom a code could reach: the request line, path, query, referer, the
# raw URI and the response's Location.
WIDE_ACCESS_FORMAT = (
    "%(r)s|%(U)s|%(q)s|%(f)s|%({referer}i)s|%({raw_uri}e)s|%({query_string}e)s|"
    "%({path_info}e)s|%({request_uri}e)s|%({location}o)s|%({cookie}i)s"
)
# Codes sent in requests that must be refused without being echoed.
REFUSED_CODES = ("LNq7Zr4Kx2", "tb-Heron-55", "Gt_Plover_8", "has space 9Wx")


@pytest.fixture
def app_overrides():
    # The crawl tries retired codes and other systems' codes on purpose: keep the guess
    # budget and the creation and rotation limits (their own tests are elsewhere) out of
    # the way.
    return {
        "SECRET_GUESS_LIMIT": 10_000,
        "SECRET_GUESS_ACCOUNT_LIMIT": 10_000,
        "TRACKABLES_PER_USER_PER_HOUR": 10_000,
        "SECRET_ROTATE_LIMIT": 10_000,
    }


@dataclass
class Exchange:
    label: str
    response: Any
    shows_codes: bool = False  # a create or rotate answer: the one place codes appear


@dataclass
class World:
    """What the crawl knows: the clients, the trackables and every code shown once."""

    owner: ApiClient
    stranger: ApiClient
    anonymous: ApiClient
    trackable_ids: list[str] = field(default_factory=list)
    group_ids: list[str] = field(default_factory=list)
    public_codes: list[str] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)  # short secrets and QR tokens
    current: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> codes now
    exchanges: list[Exchange] = field(default_factory=list)

    def call(self, label: str, client: ApiClient, method: str, url: str, **kwargs: Any) -> Any:
        response = client.open(method, url, **kwargs)
        self.exchanges.append(Exchange(label, response))
        return response

    def issued(self, label: str, response: Any) -> None:
        """Record a create or rotate answer and the codes it shows."""
        assert response.status_code in (200, 201), response.get_data(as_text=True)
        self.exchanges.append(Exchange(label, response, shows_codes=True))
        body = response.get_json()
        for item in body.get("items", [body]):
            token = item["scanUrl"].rsplit("/", 1)[1]
            assert item["qrPayload"] == item["scanUrl"]
            self.secrets.update((item["secretCode"], token))
            self.current[item["trackableId"]] = (item["secretCode"], token)
            if item["trackableId"] not in self.trackable_ids:
                self.trackable_ids.append(item["trackableId"])
                self.public_codes.append(item["publicCode"])


def browser(api: ApiClient, user: Any = None) -> ApiClient:
    """A client with a cookie jar of its own, signed in as `user` when given."""
    return ApiClient(api.client.application.test_client()).as_user(user)


def build_world(api: ApiClient) -> World:
    """Make trackables and groups through the API, open sessions, unlock, watch, rotate."""
    owner_user, stranger_user = make_user("olga"), make_user("sam")
    world = World(browser(api, owner_user), browser(api, stranger_user), browser(api))
    owner, stranger, anonymous = world.owner, world.stranger, world.anonymous

    single = {"activateImmediately": True}
    world.issued("create A", owner.post(CREATE, json={"name": "Alpha", **single}))
    world.issued(
        "create B (own secret, hidden)",
        owner.post(
            CREATE,
            json={
                "name": "Bravo",
                "secretCode": OWN_SECRET,
                "visibility": "VisibleOnceAccessed",
                **single,
            },
        ),
    )
    world.issued("create C (unactivated)", owner.post(CREATE, json={"name": "Charlie"}))
    for name, count, activate in (("Glacier Run", 3, False), ("Harbour Walk", 2, True)):
        response = owner.post(
            GROUPS,
            json={"name": name, "trackableCount": count, "activateImmediately": activate},
        )
        world.issued(f"create group {name}", response)
        world.group_ids.append(response.get_json()["trackableGroupId"])

    a, b, c, g0, _g1, _g2, h0, _h1 = world.trackable_ids
    # A's codes leak and are rotated: the old ones and the new ones are both secrets.
    world.issued("rotate A", owner.post(f"/api/trackables/{a}/secret/rotate", json={}))

    # The stranger unlocks B on the account and opens G's first item by its QR link,
    # then activates it; the anonymous browser opens C, H's first item and A.
    world.call("stranger unlocks B", stranger, "POST", LOOKUP, json={"code": OWN_SECRET})
    world.call("stranger scans G0", stranger, "GET", f"/trackable/{world.current[g0][1]}")
    world.call(
        "stranger activates G0",
        stranger,
        "POST",
        f"/api/trackables/{g0}/activate",
        json={"name": "Sam's paddle", "statusMessage": "Heading north"},
    )
    world.call("anonymous opens C", anonymous, "POST", LOOKUP, json={"code": world.current[c][0]})
    world.call(
        "anonymous scans H0", anonymous, "GET", LOOKUP, query_string={"code": world.current[h0][1]}
    )
    world.call("anonymous opens A", anonymous, "GET", f"/trackable/{world.current[a][0].lower()}")
    world.call(
        "anonymous status text",
        anonymous,
        "POST",
        f"/api/trackables/active/{c}/message",
        json={"statusMessage": "Found by the bridge"},
    )
    world.call("owner watches A", owner, "POST", f"/api/trackables/{a}/watch")
    world.call(
        "owner watches G", owner, "POST", f"/api/trackables/groups/{world.group_ids[0]}/watch"
    )
    world.call("stranger watches B", stranger, "POST", f"/api/trackables/{b}/watch")
    return world


def crawl_reads(world: World, who: str) -> list[Exchange]:
    """Every trackable read, list, lookup, active-session and entry route, as `who`."""
    client: ApiClient = getattr(world, who)
    start = len(world.exchanges)
    reads = ["/api/trackables/public", "/api/trackables/active", "/api/openapi.json"]
    if who != "anonymous":
        reads += ["/api/trackables/mine", "/api/trackables/watches"]
    for trackable_id in world.trackable_ids:
        reads += [f"/api/trackables/{trackable_id}", f"/api/trackables/active/{trackable_id}"]
    for url in reads:
        world.call(f"{who} GET {url}", client, "GET", url)
    for code in sorted(world.secrets) + world.public_codes + ["LN7777777Z", "TB1A2B3C"]:
        world.call(f"{who} lookup", client, "POST", LOOKUP, json={"code": code})
        world.call(f"{who} lookup ?code", client, "GET", LOOKUP, query_string={"code": code})
        world.call(f"{who} entry", client, "GET", f"/trackable/{code}")
    return world.exchanges[start:]


def crawl_errors(world: World) -> list[Exchange]:
    """Refusals around codes: bad and taken secrets on create and rotate, activation
    errors, and a few more problem answers."""
    owner, stranger, anonymous = world.owner, world.stranger, world.anonymous
    a, b, c, g0 = world.trackable_ids[:4]
    start = len(world.exchanges)
    taken = [OWN_SECRET, OWN_SECRET.lower(), world.current[a][0], world.current[a][1]]
    for code in list(REFUSED_CODES) + taken:
        world.call(
            f"create with {code!r}", owner, "POST", CREATE, json={"name": "X", "secretCode": code}
        )
        world.call(
            f"rotate C to {code!r}",
            owner,
            "POST",
            f"/api/trackables/{c}/secret/rotate",
            json={"secretCode": code},
        )
    world.call(
        "stranger rotates A",
        stranger,
        "POST",
        f"/api/trackables/{a}/secret/rotate",
        json={"secretCode": "Kite-Runner_4"},
    )
    world.call("stranger rotates C", stranger, "POST", f"/api/trackables/{c}/secret/rotate")
    world.call("anonymous rotates A", anonymous, "POST", f"/api/trackables/{a}/secret/rotate")
    for label, client, trackable_id, body in (
        ("activate A again", owner, a, {"name": "Again"}),
        ("stranger activates C", stranger, c, {"name": "Mine"}),
        ("anonymous activates C", anonymous, c, {"name": "Mine"}),
        ("activate G0 again", stranger, g0, {}),
        ("activate with half a stop", owner, c, {"initialJourneyStopLatitude": 1}),
    ):
        world.call(label, client, "POST", f"/api/trackables/{trackable_id}/activate", json=body)
    world.call("detach B from no group", owner, "DELETE", f"/api/trackables/{b}/group")
    world.call(
        "attach G0 elsewhere",
        stranger,
        "POST",
        f"/api/trackables/{g0}/group",
        json={"trackableGroupId": world.group_ids[1]},
    )
    world.call("empty lookup", anonymous, "GET", LOOKUP, query_string={"code": " "})
    world.call("end a session", anonymous, "DELETE", f"/api/trackables/active/{c}")
    return world.exchanges[start:]


def leaks(text: str, codes: set[str] | tuple[str, ...]) -> list[str]:
    """The codes found in `text`, in any letter case."""
    folded = text.casefold()
    return sorted(code for code in codes if code.casefold() in folded)


def shown(response: Any) -> str:
    """A response's status line, headers and body, as a client sees them."""
    headers = "\n".join(f"{name}: {value}" for name, value in response.headers.items())
    return f"{response.status}\n{headers}\n\n{response.get_data(as_text=True)}"


def assert_nothing_shown(exchanges: list[Exchange], codes: set[str] | tuple[str, ...]) -> None:
    found = [(e.label, leaks(shown(e.response), codes)) for e in exchanges if not e.shows_codes]
    assert [(label, hits) for label, hits in found if hits] == []


@pytest.fixture
def world(api):
    return build_world(api)


# --- the codes are real ------------------------------------------------------------------


def test_the_codes_shown_once_are_real_and_distinct(world):
    # 1 + 1 + 1 + 3 + 2 trackables, plus A's codes from before its rotation.
    assert len(world.trackable_ids) == 8
    assert len(world.secrets) == 2 * 8 + 2
    assert OWN_SECRET in world.secrets
    for trackable_id, (secret, token) in world.current.items():
        for code in (secret, token):
            body = browser(world.owner).post(LOOKUP, json={"code": code}).get_json()
            assert (body["found"], body["trackableId"]) == (True, trackable_id)


def test_the_world_was_built_without_errors(world):
    failed = [e.label for e in world.exchanges if e.response.status_code >= 400]
    assert failed == []


# --- bodies and headers ------------------------------------------------------------------


@pytest.mark.parametrize("who", ["owner", "stranger", "anonymous"])
def test_no_read_lookup_or_entry_answer_shows_a_code(world, who):
    exchanges = crawl_reads(world, who)
    assert all(e.response.status_code < 500 for e in exchanges)
    assert_nothing_shown(world.exchanges, world.secrets)


def test_lookups_with_a_code_succeed_without_showing_it(world):
    exchanges = crawl_reads(world, "anonymous")
    hits = [e for e in exchanges if e.label.startswith("anonymous lookup")]
    assert sum(e.response.get_json()["found"] for e in hits) >= 2 * len(world.current) * 2
    assert_nothing_shown(hits, world.secrets)


def test_entry_redirects_carry_no_code_in_their_location(world):
    exchanges = crawl_reads(world, "stranger")
    redirects = [e for e in exchanges if e.response.status_code == 302]
    assert redirects
    for exchange in redirects:
        location = exchange.response.headers["Location"]
        assert leaks(location, world.secrets) == [], exchange.label
        assert "/trackables/" in location


def test_refusals_do_not_echo_a_submitted_or_stored_code(world):
    exchanges = crawl_errors(world)
    statuses = {e.label: e.response.status_code for e in exchanges}
    assert statuses["create with 'LNq7Zr4Kx2'"] == 400
    assert statuses[f"create with {OWN_SECRET.lower()!r}"] == 400
    assert statuses[f"rotate C to {OWN_SECRET!r}"] == 400
    assert statuses["stranger rotates A"] == 403
    assert statuses["activate A again"] == 400
    for exchange in exchanges:
        if exchange.response.status_code >= 400:
            assert exchange.response.mimetype == "application/problem+json", exchange.label
    assert_nothing_shown(exchanges, world.secrets | set(REFUSED_CODES))


# --- logs --------------------------------------------------------------------------------


def test_no_log_record_carries_a_code(api, caplog):
    caplog.set_level(logging.DEBUG)
    # Every logger that sets its own level (app at LOG_LEVEL, sqlalchemy at WARNING) too:
    # the SQL with its parameters and result rows shows what reaches the database.
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET:
            caplog.set_level(logging.DEBUG, logger=name)
    world = build_world(api)
    for who in ("owner", "stranger", "anonymous"):
        crawl_reads(world, who)
    crawl_errors(world)
    assert caplog.records  # the SQL of the crawl at least: the capture works
    assert any("trackable_codes" in record.getMessage() for record in caplog.records)
    plain = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    for record in caplog.records:
        lines = (record.getMessage(), str(record.args), plain.format(record))
        lines += (JsonFormatter().format(record),)
        assert leaks("\n".join(lines), world.secrets | set(REFUSED_CODES)) == [], record.name


def test_the_apps_log_lines_redact_a_code_in_a_traceback(world):
    """The app's own handler (plain or JSON) writes no code quoted by an exception."""
    secret = world.current[world.trackable_ids[0]][0]
    try:
        raise ValueError(f"could not serve /trackable/{secret}")
    except ValueError:
        record = logging.getLogger("app.probe").makeRecord(
            "app.probe", logging.ERROR, __file__, 1, "unexpected failure", None, sys.exc_info()
        )
    (handler,) = logging.getLogger("app").handlers
    assert handler.filter(record)  # adds the request id
    for formatter in (handler.formatter, JsonFormatter()):
        line = formatter.format(record)
        assert "ValueError" in line
        assert leaks(line, {secret}) == []


def access_log_lines(exchanges: list[Exchange], access_format: str, path: Path) -> str:
    """What the project's gunicorn logger (gunicorn.conf.py's `logger_class`) writes for
    these requests with `access_format`."""
    settings = runpy.run_path(str(GUNICORN_CONF))
    config = GunicornConfig()
    config.set("accesslog", str(path))
    config.set("access_log_format", access_format)
    logger = load_class(settings["logger_class"], section="gunicorn.loggers")(config)
    try:
        for exchange in exchanges:
            request, response = exchange.response.request, exchange.response
            environ = dict(request.environ)
            query = environ.get("QUERY_STRING", "")
            environ["RAW_URI"] = environ["PATH_INFO"] + (f"?{query}" if query else "")
            logger.access(
                SimpleNamespace(
                    status=response.status,
                    sent=len(response.get_data()),
                    headers=list(response.headers.items()),
                ),
                SimpleNamespace(headers=list(request.headers.items())),
                environ,
                timedelta(milliseconds=3),
            )
    finally:
        for handler in logger.access_log.handlers + logger.error_log.handlers:
            handler.close()
        logger.access_log.handlers.clear()
        logger.error_log.handlers.clear()
    return path.read_text()


@pytest.mark.parametrize("access_format", ["project", "wide"])
def test_access_log_lines_carry_no_code(world, tmp_path, access_format):
    if access_format == "project":
        access_format = runpy.run_path(str(GUNICORN_CONF))["access_log_format"]
    else:
        access_format = WIDE_ACCESS_FORMAT
    for who in ("owner", "stranger", "anonymous"):
        crawl_reads(world, who)
    crawl_errors(world)
    base = world.anonymous.client.application.config["PUBLIC_BASE_URL"]
    secret = world.current[world.trackable_ids[2]][0]
    # A page opened from a /trackable/{code} link names it in the Referer.
    world.call(
        "landing with referer",
        world.anonymous,
        "GET",
        f"/api/trackables/active/{world.trackable_ids[2]}",
        headers={"Referer": f"{base}/trackable/{secret}"},
    )
    text = access_log_lines(world.exchanges, access_format, tmp_path / "access.log")
    assert len(text.splitlines()) == len(world.exchanges)
    assert "/trackable/[redacted]" in text
    assert leaks(text, world.secrets | set(REFUSED_CODES)) == []


def test_gunicorn_error_log_lines_carry_no_code(world, tmp_path):
    """What gunicorn's worker writes to its error log about a request it failed to parse
    or to handle (gunicorn.workers.base.Worker.handle_error) names the request's URI."""
    secret, token = world.current[world.trackable_ids[0]]
    settings = runpy.run_path(str(GUNICORN_CONF))
    config = GunicornConfig()
    config.set("errorlog", str(tmp_path / "error.log"))
    config.set("loglevel", "debug")
    logger = load_class(settings["logger_class"], section="gunicorn.loggers")(config)
    try:
        line = f"GET /trackable/{secret} HTTP/1.1 extra"
        logger.warning(f"Invalid request from ip=127.0.0.1: {InvalidRequestLine(line)}")
        try:
            raise RuntimeError(f"broken while serving /api/trackables/lookup?code={token}")
        except RuntimeError:
            logger.exception("Error handling request %s %s", "GET", f"/trackable/{token}")
        logger.debug("Ignored premature client disconnection. %s", f"/trackable/{secret}")
    finally:
        for handler in logger.access_log.handlers + logger.error_log.handlers:
            handler.close()
        logger.access_log.handlers.clear()
        logger.error_log.handlers.clear()
    text = (tmp_path / "error.log").read_text()
    assert "Error handling request GET /trackable/[redacted]" in text
    assert "RuntimeError" in text  # the traceback is still logged
    assert leaks(text, {secret, token}) == []


# --- the API description -----------------------------------------------------------------


def test_the_openapi_document_contains_no_generated_code(world):
    response = world.anonymous.get("/api/openapi.json")
    assert response.status_code == 200
    assert leaks(response.get_data(as_text=True), world.secrets) == []
