"""GPX waypoints in and out (and a track out): pure functions, no Flask, no database.

Import (`parse_waypoints`) treats the file as hostile: a size limit before anything reads
it, defusedxml's expat parser refusing any DOCTYPE (no billion laughs, no XXE), and a
streaming walk that keeps only the waypoint being read, within depth and element limits.
gpxpy is not used for import (see `parse_waypoints`). Export (`write_gpx`) is a generator
of UTF-8 chunks for a streamed response, so memory does not grow with the number of
waypoints: notes as waypoints, a trackable's journey as one track (`ExportTrack`) whose
points are written exactly as waypoints are (GPX 1.1 gives `<trkpt>` the type of `<wpt>`).
"""

from __future__ import annotations

import io
import math
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_EVEN, Decimal
from typing import BinaryIO
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element, ParseError
from xml.sax.saxutils import quoteattr

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeElementTree

GPX10_NAMESPACE = "http://www.topografix.com/GPX/1/0"
GPX11_NAMESPACE = "http://www.topografix.com/GPX/1/1"
GPX_NAMESPACES = frozenset({GPX10_NAMESPACE, GPX11_NAMESPACE, ""})
DEFAULT_CREATOR = "Location Notes Service"

# Real exports nest at most ~6 levels below <gpx> (gpxx:WaypointExtension > Address > ...).
MAX_DEPTH = 32
# Elements kept while one <wpt> is read (its name/desc/cmt/time/link/url and their content).
MAX_WAYPOINT_ELEMENTS = 1_000
# Work bounds of one import (settings GPX_MAX_ELEMENTS, GPX_MAX_PARSE_SECONDS): the byte
# limit alone lets 10 MB of `<a/>` (2.6 million elements) hold a worker for many seconds.
# Reading costs ~4-6 us per element, so 200,000 elements (5,000 waypoints of ~10 elements and
# ~70,000 track points beside them) read in about a second or less.
MAX_ELEMENTS = 200_000
MAX_PARSE_SECONDS = 2.0
# The CPU clock is read every so many events (reading it costs about as much as an event).
_CLOCK_EVERY = 4096
# Export chunk size: large enough to keep write calls few, small enough to stay flat in memory.
CHUNK_CHARS = 16 * 1024

_WAYPOINT_FIELDS = frozenset({"name", "desc", "cmt", "time", "link", "url"})
# xsd:decimal, plus an exponent some script-written files use ("1e-05"); checked per attribute.
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# Characters XML 1.0 does not allow, even as character references (lone surrogates included).
_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NOT_IN_URI = re.compile("[\x00-\x20\x7f]")
_STEP_7 = Decimal("1e-7")
_STEP_6 = Decimal("1e-6")


class GpxError(Exception):
    """The upload cannot be read as GPX; `reason` is safe to show to the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Waypoint:
    """One importable `<wpt>`, read as written (the importer decides titles and limits).

    `name` has its whitespace collapsed and is "" when missing or blank. `description` is
    `<desc>`, followed after a blank line by `<cmt>` unless desc already contains it (Garmin
    often writes both equal; GPX 1.0 geocaches repeat the cmt inside the desc); `<cmt>` alone
    is used as is. Text is otherwise verbatim (Locus HTML in CDATA stays HTML). `time` is
    UTC-aware (no offset means UTC, as GPX prescribes), None when missing or unreadable.
    `link` is the first http(s) `<link href>` (GPX 1.1) or `<url>` (GPX 1.0). `index` is the
    0-based position among all `<wpt>` of the file, rejected ones included.
    """

    latitude: float
    longitude: float
    name: str
    description: str
    time: datetime | None
    link: str | None
    index: int


@dataclass(frozen=True)
class RejectedWaypoint:
    """A `<wpt>` left out because its coordinates are missing, not numbers or out of range."""

    index: int
    name: str
    reason: str


@dataclass(frozen=True)
class ParsedGpx:
    """The waypoints of a GPX file, in file order, and those that could not be used."""

    waypoints: list[Waypoint]
    rejected: list[RejectedWaypoint]


@dataclass(frozen=True)
class ExportWaypoint:
    """One note as a GPX 1.1 `<wpt>`; `link_text` becomes the link's `<text>` when given."""

    latitude: float
    longitude: float
    name: str
    description: str = ""
    time: datetime | None = None
    link: str | None = None
    link_text: str | None = None


@dataclass(frozen=True)
class ExportTrack:
    """One GPX 1.1 `<trk>` of one `<trkseg>`: `points` in order, each a `<trkpt>`."""

    name: str
    points: Iterable[ExportWaypoint]


def read_limited(stream: BinaryIO, *, max_bytes: int) -> bytes:
    """Read an upload stream, refusing it once it exceeds `max_bytes` (reads max_bytes+1)."""
    data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise GpxError(f"The GPX file is larger than {max_bytes} bytes.")
    return data


# Defends in this order: the size limit before anything reads the content; defusedxml's expat parser
# with forbid_dtd/forbid_entities/forbid_external, so any <!DOCTYPE stops the parse at its first
# event, before an element exists; a <gpx> root in the GPX 1.0 or 1.1 namespace or in none; then a
# streaming walk (iterparse) that keeps only the <wpt> being read. Tracks, routes and extensions
# leave the tree as they end; nesting beyond MAX_DEPTH and waypoints stuffed beyond
# MAX_WAYPOINT_ELEMENTS are refused. No regular expression runs over the raw file (one runs on a
# coordinate attribute). expat reads the encoding declaration itself: UTF-8 (BOM or not), UTF-16
# with BOM, ISO-8859-1 and other single-byte codecs. gpxpy 1.6 is not used: it decodes bytes as
# UTF-8 whatever the declaration says, runs \sxmlns:?[^=]*="[^"]+" over the whole text (quadratic on
# text full of " xmlns"), parses again with a parser defusedxml has not configured, builds every
# track point, keeps one link per waypoint and fails the whole file on one bad coordinate. Reading
# the safe parser's events by local name handles Garmin (gpxx, wptx1), OsmAnd and Locus exports as
# well.
def parse_waypoints(
    data: bytes,
    *,
    max_bytes: int,
    max_elements: int = MAX_ELEMENTS,
    max_seconds: float = MAX_PARSE_SECONDS,
) -> ParsedGpx:
    """Read the `<wpt>` elements of an untrusted GPX 1.0 or 1.1 file (see the module notes).

    Routes and tracks are ignored. Raises GpxError when the file is too large, empty, not
    well-formed, declares a DTD or entities, is too deeply nested or is not GPX, and as soon
    as it holds more than `max_elements` elements or its reading has used more than
    `max_seconds` of this thread's CPU time (the work, not only the bytes, is bounded).
    """
    if len(data) > max_bytes:
        raise GpxError(f"The GPX file is larger than {max_bytes} bytes.")
    # Stray whitespace before the XML declaration (seen in server-made files) is not an error
    # worth refusing; a UTF-16 file starts with its BOM and is left alone.
    data = data.lstrip(b" \t\r\n")
    if not data:
        raise GpxError("The GPX file is empty.")
    reader = _WaypointReader()
    deadline = time.thread_time() + max_seconds
    elements = 0
    for event, element in _events(data):
        if event == "start":
            elements += 1
            if elements > max_elements:
                raise GpxError(f"The GPX file holds more than {max_elements} elements.")
            if elements % _CLOCK_EVERY == 0 and time.thread_time() > deadline:
                raise GpxError("The GPX file takes too long to read; split it into smaller files.")
            reader.start(element)
        else:
            reader.end(element)
    return ParsedGpx(waypoints=reader.waypoints, rejected=reader.rejected)


def _events(data: bytes) -> Iterator[tuple[str, Element]]:
    """The parser's start/end events; its failures become GpxError (the reader's do not)."""
    try:
        yield from SafeElementTree.iterparse(
            io.BytesIO(data),
            events=("start", "end"),
            forbid_dtd=True,
            forbid_entities=True,
            forbid_external=True,
        )
    except DefusedXmlException:
        raise GpxError("GPX files with a DTD or entity declarations are not accepted.") from None
    except (ValueError, LookupError):
        # pyexpat's answer to a declared encoding it cannot read (multi-byte or unknown).
        raise GpxError("The file's character encoding is not supported; use UTF-8.") from None
    except ParseError as error:
        # expat's messages ("not well-formed (invalid token): line 3, column 7") echo no content.
        raise GpxError(f"The file is not well-formed XML: {error}.") from None


class _WaypointReader:
    """State of the streaming walk: the open elements and the results so far."""

    def __init__(self) -> None:
        self.stack: list[Element] = []
        self.waypoints: list[Waypoint] = []
        self.rejected: list[RejectedWaypoint] = []
        self.in_waypoint = False
        self.kept = 0

    def start(self, element: Element) -> None:
        self.stack.append(element)
        depth = len(self.stack)
        if depth > MAX_DEPTH:
            raise GpxError(f"The GPX file nests elements more than {MAX_DEPTH} levels deep.")
        namespace, local = _split_tag(element.tag)
        if depth == 1:
            if local != "gpx" or namespace not in GPX_NAMESPACES:
                raise GpxError("The file is not GPX: its root element must be <gpx>.")
        elif depth == 2:
            self.in_waypoint = local == "wpt" and namespace in GPX_NAMESPACES
            self.kept = 0

    def end(self, element: Element) -> None:
        depth = len(self.stack)
        self.stack.pop()
        if depth == 1:
            return
        parent = self.stack[-1]
        if depth == 2:
            if self.in_waypoint:
                self._finish_waypoint(element)
                self.in_waypoint = False
            parent.remove(element)
            return
        # Inside <wpt>, the fields and their content stay until the waypoint ends (mixed
        # content needs the whole subtree); everything else leaves the tree as it ends, so
        # a long track or a large extension never accumulates.
        field = element if depth == 3 else self.stack[2]
        if self.in_waypoint and _is_field(field):
            self.kept += 1
            if self.kept > MAX_WAYPOINT_ELEMENTS:
                raise GpxError(
                    f"A waypoint holds more than {MAX_WAYPOINT_ELEMENTS} elements "
                    "in its name, description, time or links."
                )
            return
        parent.remove(element)

    def _finish_waypoint(self, wpt: Element) -> None:
        index = len(self.waypoints) + len(self.rejected)
        texts: dict[str, str] = {}
        links: list[str] = []
        for child in wpt:
            local = _split_tag(child.tag)[1]
            if local == "link":
                links.append(child.get("href") or "")
            elif local == "url":
                links.append(_text(child))
            elif local not in texts:
                texts[local] = _text(child)
        name = " ".join(texts.get("name", "").split())
        latitude, problem = _coordinate(wpt.get("lat"), "latitude", 90.0)
        longitude, lon_problem = _coordinate(wpt.get("lon"), "longitude", 180.0)
        problem = problem or lon_problem
        if latitude is None or longitude is None:
            self.rejected.append(
                RejectedWaypoint(index=index, name=name, reason=problem or "invalid coordinates")
            )
            return
        self.waypoints.append(
            Waypoint(
                latitude=latitude,
                longitude=longitude,
                name=name,
                description=_description(texts.get("desc", ""), texts.get("cmt", "")),
                time=_parse_time(texts.get("time", "")),
                link=next((url for url in map(_http_url, links) if url), None),
                index=index,
            )
        )


def _split_tag(tag: str) -> tuple[str, str]:
    if tag.startswith("{"):
        namespace, _, local = tag[1:].partition("}")
        return namespace, local
    return "", tag


def _is_field(element: Element) -> bool:
    namespace, local = _split_tag(element.tag)
    return local in _WAYPOINT_FIELDS and namespace in GPX_NAMESPACES


def _text(element: Element) -> str:
    return "".join(element.itertext())


def _coordinate(raw: str | None, label: str, limit: float) -> tuple[float | None, str | None]:
    if raw is None or not raw.strip():
        return None, f"{label} is missing"
    value = raw.strip()
    if len(value) > 40 or not _DECIMAL.fullmatch(value):
        return None, f"{label} is not a number"
    number = float(value)
    if not math.isfinite(number) or not -limit <= number <= limit:
        return None, f"{label} is outside -{limit:g}..{limit:g}"
    return number, None


def _description(desc: str, cmt: str) -> str:
    desc, cmt = desc.strip(), cmt.strip()
    if desc and cmt and cmt not in desc:
        return f"{desc}\n\n{cmt}"
    return desc or cmt


def _parse_time(raw: str) -> datetime | None:
    value = raw.strip()
    if not value or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _http_url(raw: str) -> str | None:
    value = raw.strip()
    try:
        parts = urlsplit(value)
    except ValueError:
        return None
    if parts.scheme.lower() in {"http", "https"} and parts.netloc:
        return value
    return None


def write_gpx(
    waypoints: Iterable[ExportWaypoint],
    *,
    track: ExportTrack | None = None,
    creator: str = DEFAULT_CREATOR,
    name: str | None = None,
    generated_utc: datetime | None = None,
) -> Iterator[bytes]:
    """Yield a GPX 1.1 document of `waypoints` (and `track`) as UTF-8 chunks of about
    CHUNK_CHARS.

    Consumes `waypoints` and the track's points lazily, one at a time. `<metadata>` holds
    `name` (when given) and `generated_utc` (default: now). Each `<wpt>` (and `<trkpt>`)
    holds, in schema order, `<time>`, `<name>`, `<desc>` and `<link>` when present;
    coordinates carry up to 7 decimals (~1 cm), and a longitude that rounds to 180 is
    written as -180 (the schema's range is [-180, 180)). Points whose coordinates are not
    finite or out of range are left out: they cannot be written as valid GPX. Characters
    XML 1.0 forbids are removed from text. The track follows the waypoints, as the schema
    orders them.
    """
    generated = _format_time(generated_utc or datetime.now(UTC))
    creator = quoteattr(_NOT_XML_CHAR.sub("", creator))
    title = _element_text(name or "")
    header = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<gpx xmlns="{GPX11_NAMESPACE}" version="1.1" creator={creator}\n',
        '     xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"\n',
        f'     xsi:schemaLocation="{GPX11_NAMESPACE} {GPX11_NAMESPACE}/gpx.xsd">\n',
        "  <metadata>\n",
        f"    <name>{title}</name>\n" if title else "",
        f"    <time>{generated}</time>\n",
        "  </metadata>\n",
    ]
    yield from _chunked(_pieces(header, waypoints, track))


def _pieces(
    header: list[str], waypoints: Iterable[ExportWaypoint], track: ExportTrack | None
) -> Iterator[str]:
    yield "".join(header)
    for waypoint in waypoints:
        if (piece := _format_waypoint(waypoint)) is not None:
            yield piece
    if track is not None:
        track_name = _element_text(track.name)
        yield "  <trk>\n" + (f"    <name>{track_name}</name>\n" if track_name else "")
        yield "    <trkseg>\n"
        for point in track.points:
            if (piece := _format_waypoint(point, tag="trkpt", indent="      ")) is not None:
                yield piece
        yield "    </trkseg>\n  </trk>\n"
    yield "</gpx>\n"


def _chunked(pieces: Iterable[str]) -> Iterator[bytes]:
    buffer: list[str] = []
    size = 0
    for piece in pieces:
        buffer.append(piece)
        size += len(piece)
        if size >= CHUNK_CHARS:
            yield "".join(buffer).encode("utf-8")
            buffer.clear()
            size = 0
    yield "".join(buffer).encode("utf-8")


def _format_waypoint(
    waypoint: ExportWaypoint, *, tag: str = "wpt", indent: str = "  "
) -> str | None:
    # Runs once per point of an export that may hold 100,000 of them: each element is one
    # f-string and the point one more (no list of parts), and the helpers below hand back
    # their input untouched when it needs no change, so few temporary strings are made.
    latitude = _grid_text(waypoint.latitude, 90)
    longitude = _grid_text(waypoint.longitude, 180)
    if latitude is None or longitude is None:
        return None
    when = ""
    if waypoint.time is not None:
        when = f"{indent}  <time>{_format_time(waypoint.time)}</time>\n"
    name = ""
    if text := _element_text(waypoint.name):
        name = f"{indent}  <name>{text}</name>\n"
    description = ""
    if text := _element_text(waypoint.description):
        description = f"{indent}  <desc>{text}</desc>\n"
    link = ""
    if href := _uri(waypoint.link or ""):
        text = _element_text(waypoint.link_text or "")
        text = f"<text>{text}</text>" if text else ""
        link = f"{indent}  <link href={_quote_uri(href)}>{text}</link>\n"
    return (
        f'{indent}<{tag} lat="{latitude}" lon="{longitude}">\n'
        f"{when}{name}{description}{link}{indent}</{tag}>\n"
    )


def _element_text(text: str) -> str:
    """Escaped element content, or "" when nothing but whitespace would be left."""
    # search before sub: almost no text holds a forbidden character, and search allocates nothing.
    if _NOT_XML_CHAR.search(text):
        text = _NOT_XML_CHAR.sub("", text)
    # Same test as `not text.strip()` (both use Unicode whitespace) without a stripped copy.
    if not text or text.isspace():
        return ""
    # xml.sax.saxutils.escape, inlined (str.replace returns the text itself when it has no
    # match). \r is escaped so that a CRLF in a note survives XML's line-end normalisation.
    return (
        text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("\r", "&#13;")
    )


def _uri(link: str) -> str:
    # xsd:anyURI may not contain spaces or control characters; notes' links are validated
    # upstream, this only keeps the export valid if one slips through (search first: a
    # valid link needs no substitution).
    if _NOT_XML_CHAR.search(link):
        link = _NOT_XML_CHAR.sub("", link)
    link = link.strip()
    if _NOT_IN_URI.search(link):
        link = _NOT_IN_URI.sub(lambda match: f"%{ord(match.group()):02X}", link)
    return link


def _quote_uri(link: str) -> str:
    """quoteattr(link) for a `_uri` result (it holds no tab, CR or LF), without its dict."""
    if '"' in link:
        return quoteattr(link)
    return f'"{link.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")}"'


def _format_time(value: datetime) -> str:
    if value.tzinfo is not UTC:
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    # isoformat's default timespec writes microseconds only when nonzero; on a UTC datetime
    # it ends in "+00:00", which becomes "Z".
    return value.isoformat().replace("+00:00", "Z")


def _grid_text(value: float, limit: int) -> str | None:
    """`_decimal_text(_grid(value, limit))`, or None when `_grid` gives None.

    An export calls this twice per point, and Decimal makes several objects each time, so
    repr's digits, which `_grid` rounds, are rounded here as text. Decimal still does the
    rare cases: exponent notation (magnitudes below 1e-4) and a round-up that carries
    through a 9.
    """
    number = float(value)
    if not -limit <= number <= limit:  # NaN fails the comparison as well
        return None
    text = repr(number)
    point = text.find(".")
    if point < 0 or "e" in text:
        return _decimal_text(_on_grid(number, limit))
    cut = point + 8  # the end of the 7th decimal
    if len(text) > cut:
        last, dropped = text[cut - 1], text[cut]
        beyond_half = len(text.rstrip("0")) > cut + 1  # a nonzero digit after `dropped`
        if dropped > "5" or (dropped == "5" and (beyond_half or last in "13579")):
            if last == "9":
                return _decimal_text(_on_grid(number, limit))
            text = text[: cut - 1] + chr(ord(last) + 1)  # half-even goes away from zero
        else:
            text = text[:cut].rstrip("0").rstrip(".")  # half-even goes toward zero
    elif text.endswith(".0"):
        text = text[:-2]  # a whole number; up to 7 decimals are written as they are
    if text in ("0", "-0"):
        return "0"
    if text == "180" and limit == 180:
        return "-180"
    return text


def _grid(value: float, limit: int) -> Decimal | None:
    """A coordinate on the export grid (7 decimals); longitude 180 becomes -180."""
    number = float(value)
    if not math.isfinite(number) or not -limit <= number <= limit:
        return None
    return _on_grid(number, limit)


def _on_grid(number: float, limit: int) -> Decimal:
    # repr gives the shortest decimal that reads back as the same float, so "52.1234565"
    # parsed from a file rounds exactly as written, not as its binary approximation.
    step = Decimal(repr(number)).quantize(_STEP_7, rounding=ROUND_HALF_EVEN)
    if limit == 180 and step >= 180:
        step -= 360
    return step


def _decimal_text(value: Decimal) -> str:
    if value == 0:
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def duplicate_key(title: str, latitude: float, longitude: float) -> tuple[str, int, int]:
    """The key the importer compares: (normalised title, latitude µ°, longitude µ°).

    Title: Unicode NFKC, whitespace collapsed, casefolded. Garmin units upper-case and
    apps re-type names, and the spec's outcomes for a match (duplicate or skipped) never
    create a note, so a loose title match errs on the side of not cloning notes.

    Coordinates: on the export's 7-decimal grid first, then rounded to 6 decimals (about
    0.1 m), as integers. 6 decimals absorb float noise and apps that rewrite coordinates,
    while pins a metre apart stay distinct. Rounding through the export grid makes the key of
    a re-imported export equal the key of the note it came from in every case; rounding the
    raw float straight to 6 decimals would disagree whenever the 7th exported decimal is a 5.

    Raises ValueError for coordinates that are not finite or out of range.
    """
    lat, lon = _grid(latitude, 90), _grid(longitude, 180)
    if lat is None or lon is None:
        raise ValueError("coordinates are not finite or out of range")
    title_key = " ".join(unicodedata.normalize("NFKC", title).split()).casefold()
    return title_key, _micro_degrees(lat), _micro_degrees(lon)


def _micro_degrees(value: Decimal) -> int:
    return int(value.quantize(_STEP_6, rounding=ROUND_HALF_EVEN).scaleb(6))


def text_key(text: str) -> str:
    """The form in which two texts are compared for "same text": NFC, LF line ends, stripped."""
    return unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n")).strip()
