"""GPX storage: reading untrusted waypoint files and streaming GPX 1.1 exports."""

from __future__ import annotations

import io
import itertools
import random
import time
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import gpxpy
import pytest
import xmlschema
from defusedxml import ElementTree

from app.storage import gpx
from app.storage.gpx import (
    CHUNK_CHARS,
    ExportWaypoint,
    GpxError,
    ParsedGpx,
    RejectedWaypoint,
    Waypoint,
    duplicate_key,
    parse_waypoints,
    read_limited,
    text_key,
    write_gpx,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "gpx"
MAX_BYTES = 1024 * 1024
NS = "{http://www.topografix.com/GPX/1/1}"
GENERATED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def parse_sample(name: str) -> ParsedGpx:
    return parse_waypoints((DATA / name).read_bytes(), max_bytes=MAX_BYTES)


def parse_text(body: str, *, root: str = "") -> ParsedGpx:
    root = root or '<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">'
    document = f'<?xml version="1.0" encoding="UTF-8"?>\n{root}{body}</gpx>'
    return parse_waypoints(document.encode("utf-8"), max_bytes=MAX_BYTES)


def export(
    waypoints: list[ExportWaypoint], *, creator: str = "Tests", name: str | None = None
) -> bytes:
    return b"".join(write_gpx(waypoints, creator=creator, name=name, generated_utc=GENERATED))


def at(hour: int, minute: int = 0, second: int = 0, micro: int = 0, *, day: str) -> datetime:
    year, month, dom = (int(part) for part in day.split("-"))
    return datetime(year, month, dom, hour, minute, second, micro, tzinfo=UTC)


@pytest.fixture(scope="module")
def gpx_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(DATA / "gpx11.xsd"), allow="local")


# --- real exports -------------------------------------------------------------------------


def test_garmin_basecamp_waypoints_read_past_gpxx_extensions() -> None:
    parsed = parse_sample("garmin_basecamp.gpx")
    assert parsed.rejected == []
    assert [w.name for w in parsed.waypoints] == ["Zurich HB", "Uetliberg", "Parking Zoo"]
    zurich, uetliberg, parking = parsed.waypoints
    assert (zurich.latitude, zurich.longitude) == (47.376887, 8.541694)
    assert zurich.time == at(14, 3, 11, day="2024-04-19")
    assert zurich.description == "Meet at the big clock"  # cmt equal to desc is not repeated
    assert zurich.link is None  # the metadata link belongs to the file, not the waypoint
    assert uetliberg.description == "Viewpoint over the lake\n\nTower closes at dusk"
    assert uetliberg.link == "https://www.uetliberg.ch/"
    assert parking.description == "Pay at the machine, coins only"  # cmt alone
    assert parking.time is None
    assert [w.index for w in parsed.waypoints] == [0, 1, 2]


def test_garmin_etrex_waypoints_from_a_single_line_file() -> None:
    parsed = parse_sample("garmin_etrex.gpx")
    assert [(w.name, w.latitude, w.longitude) for w in parsed.waypoints] == [
        ("001", 46.559103, 7.980712),
        ("HUT", 46.547705, 7.962139),
    ]
    assert parsed.waypoints[1].description == "WATER REFILL"
    assert parsed.waypoints[1].time == at(11, 7, 45, day="2024-06-02")


def test_osmand_favourites_with_osmand_extensions() -> None:
    parsed = parse_sample("osmand_favourites.gpx")
    eiffel, louvre, opera = parsed.waypoints
    assert eiffel.name == "Tour Eiffel"
    assert eiffel.description == "Go early, the queue grows after 10"
    assert eiffel.time == at(10, 15, 30, 250_000, day="2024-03-02")
    assert louvre.link == "https://www.louvre.fr/en"
    assert louvre.description == ""
    assert (opera.latitude, opera.longitude) == (-33.8567844, 151.213108)
    assert opera.time is None


def test_locus_points_take_the_first_http_link_and_cdata_text() -> None:
    parsed = parse_sample("locus_points.gpx")
    orloj, bridge = parsed.waypoints
    assert orloj.name == "Orloj"
    assert orloj.description == "<p>Astronomical clock, show at the full hour</p>"
    assert orloj.link == "https://en.wikipedia.org/wiki/Prague_astronomical_clock"  # not file://
    assert orloj.time == at(12, 30, 5, 123_000, day="2024-02-11")
    assert bridge.name == "Charles Bridge & Kampa"
    assert bridge.description == "Statues < 1700 are copies"
    assert bridge.link is None


def test_gpx_1_0_in_iso_8859_1_reads_url_and_accents() -> None:
    parsed = parse_sample("gpx10_geocaches.gpx")
    cache, cafe = parsed.waypoints
    assert cache.name == "GC1M7Q4"
    # the cmt is already part of the desc, so it is not appended
    assert cache.description == "Mariensäule by Käfer, Traditional Cache (1.5/2)"
    assert cache.link == "http://www.geocaching.com/seek/cache_details.aspx?wp=GC1M7Q4"
    assert cache.time == at(10, 20, day="2009-08-01")
    assert cafe.name == "Englischer Garten, Café"
    assert cafe.link is None  # ftp is not a web link


def test_only_waypoints_are_taken_from_a_file_with_tracks_and_routes() -> None:
    parsed = parse_sample("tracks_routes_waypoints.gpx")
    assert [w.name for w in parsed.waypoints] == ["Trailhead", "Lunch spot"]
    assert parsed.rejected == []


def test_waypoints_without_names_get_an_empty_name() -> None:
    parsed = parse_sample("unnamed_waypoints.gpx")
    assert [w.name for w in parsed.waypoints] == ["", "", "", "London Eye"]
    assert parsed.waypoints[1].description == "Gate with the guards"
    # out of schema order (time after name) and with an offset: still read, in UTC
    assert parsed.waypoints[2].time == at(8, day="2024-07-01")


def test_utf8_names_with_a_byte_order_mark() -> None:
    parsed = parse_sample("utf8_names.gpx")
    assert [w.name for w in parsed.waypoints] == [
        "東京タワー",
        "Ακρόπολη",
        "Brandenburger Tor \u2013 Straße des 17. Juni",
        "برج خليفة",
        "Cristo Redentor 🙏",
    ]
    assert parsed.waypoints[0].description == "展望台は午後11時まで"


@pytest.mark.parametrize(
    ("declared", "codec"),
    [
        ("UTF-16", "utf-16"),
        ("UTF-16BE", "utf-16-be"),
        ("ISO-8859-1", "latin-1"),
        ("windows-1252", "cp1252"),
    ],
)
def test_declared_encodings_are_honoured(declared: str, codec: str) -> None:
    name = "Café Müller \u2013 Straße" if "UTF" in declared else "Café Müller"
    document = (
        f'<?xml version="1.0" encoding="{declared}"?>\n'
        '<gpx version="1.1" creator="t" xmlns="http://www.topografix.com/GPX/1/1">'
        f'<wpt lat="1" lon="2"><name>{name}</name></wpt></gpx>'
    )
    parsed = parse_waypoints(document.encode(codec), max_bytes=MAX_BYTES)
    assert [w.name for w in parsed.waypoints] == [name]


@pytest.mark.parametrize("declared", ["Shift_JIS", "x-unknown"])
def test_encodings_expat_cannot_read_are_refused(declared: str) -> None:
    data = f'<?xml version="1.0" encoding="{declared}"?><gpx><wpt lat="1" lon="2"/></gpx>'
    with pytest.raises(GpxError) as caught:
        parse_waypoints(data.encode("ascii"), max_bytes=MAX_BYTES)
    assert caught.value.reason == "The file's character encoding is not supported; use UTF-8."


def test_gpx_without_namespace_is_accepted() -> None:
    parsed = parse_text('<wpt lat="1.5" lon="-2.5"><name>Plain</name></wpt>', root="<gpx>")
    assert [(w.name, w.latitude, w.longitude) for w in parsed.waypoints] == [("Plain", 1.5, -2.5)]


def test_elements_of_foreign_namespaces_are_not_waypoint_fields() -> None:
    parsed = parse_text(
        '<wpt lat="1" lon="2" xmlns:x="urn:x"><x:name>Not it</x:name><name>It</name></wpt>'
        '<x:wpt xmlns:x="urn:x" lat="3" lon="4"/>'
    )
    assert [w.name for w in parsed.waypoints] == ["It"]


def test_mixed_content_in_a_description_keeps_all_its_text() -> None:
    parsed = parse_text(
        '<wpt lat="1" lon="2"><desc>Open <b xmlns="urn:html">daily</b> till 6</desc></wpt>'
    )
    assert parsed.waypoints[0].description == "Open daily till 6"


def test_only_a_cmt_becomes_the_description() -> None:
    parsed = parse_text('<wpt lat="1" lon="2"><cmt> Bring cash </cmt></wpt>')
    assert parsed.waypoints[0].description == "Bring cash"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-04-20T09:41:02", at(9, 41, 2, day="2024-04-20")),  # no offset: UTC
        ("2024-04-20T11:41:02+02:00", at(9, 41, 2, day="2024-04-20")),
        ("2024-04-20T09:41:02.5Z", at(9, 41, 2, 500_000, day="2024-04-20")),
        ("yesterday", None),
        ("2024-13-40T00:00:00Z", None),
    ],
)
def test_waypoint_times_are_utc_or_none(raw: str, expected: datetime | None) -> None:
    parsed = parse_text(f'<wpt lat="1" lon="2"><time>{raw}</time></wpt>')
    read = parsed.waypoints[0].time
    assert read == expected
    if read is not None:
        assert read.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    ("attributes", "reason"),
    [
        ('lon="2"', "latitude is missing"),
        ('lat="" lon="2"', "latitude is missing"),
        ('lat="north" lon="2"', "latitude is not a number"),
        ('lat="NaN" lon="2"', "latitude is not a number"),
        ('lat="inf" lon="2"', "latitude is not a number"),
        ('lat="1_0" lon="2"', "latitude is not a number"),
        ('lat="1e999" lon="2"', "latitude is outside -90..90"),
        ('lat="90.0001" lon="2"', "latitude is outside -90..90"),
        ('lat="1"', "longitude is missing"),
        ('lat="1" lon="-180.5"', "longitude is outside -180..180"),
    ],
)
def test_waypoints_with_unusable_coordinates_are_rejected_alone(
    attributes: str, reason: str
) -> None:
    parsed = parse_text(
        f'<wpt lat="1" lon="1"><name>Good</name></wpt><wpt {attributes}><name> Bad </name></wpt>'
        '<wpt lat="3" lon="3"/>'
    )
    assert [w.index for w in parsed.waypoints] == [0, 2]
    assert parsed.rejected == [RejectedWaypoint(index=1, name="Bad", reason=reason)]


@pytest.mark.parametrize(
    ("lat", "lon", "expected"),
    [
        (" +45.5 ", "-0.5", (45.5, -0.5)),
        ("1e-05", "180", (0.00001, 180.0)),
        ("-90", ".5", (-90, 0.5)),
    ],
)
def test_coordinate_spellings_that_are_accepted(
    lat: str, lon: str, expected: tuple[float, float]
) -> None:
    waypoint = parse_text(f'<wpt lat="{lat}" lon="{lon}"/>').waypoints[0]
    assert (waypoint.latitude, waypoint.longitude) == expected


def test_a_file_without_waypoints_gives_an_empty_result() -> None:
    assert parse_text("<metadata><name>x</name></metadata>") == ParsedGpx([], [])


# --- refused files ------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["billion_laughs.gpx", "xxe.gpx"])
def test_dtds_and_entities_are_refused(sample: str) -> None:
    with pytest.raises(GpxError) as caught:
        parse_sample(sample)
    assert caught.value.reason == "GPX files with a DTD or entity declarations are not accepted."


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE gpx SYSTEM "http://attacker.example/evil.dtd">',
        '<!DOCTYPE gpx [<!ENTITY % remote SYSTEM "http://attacker.example/x"> %remote;]>',
        "<!DOCTYPE gpx>",
    ],
)
def test_any_doctype_is_refused_before_the_root(prolog: str) -> None:
    document = (
        f'<?xml version="1.0"?>{prolog}<gpx version="1.1" creator="t"><wpt lat="1" lon="2"/></gpx>'
    )
    with pytest.raises(GpxError, match="DTD"):
        parse_waypoints(document.encode(), max_bytes=MAX_BYTES)


def test_an_undeclared_entity_reference_is_malformed() -> None:
    with pytest.raises(GpxError, match="not well-formed XML: undefined entity"):
        parse_text('<wpt lat="1" lon="2"><name>&secret;</name></wpt>')


def test_an_oversized_file_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser must not run")

    monkeypatch.setattr(gpx.SafeElementTree, "iterparse", no_parsing)
    data = (DATA / "garmin_basecamp.gpx").read_bytes()
    with pytest.raises(GpxError) as caught:
        parse_waypoints(data, max_bytes=len(data) - 1)
    assert caught.value.reason == f"The GPX file is larger than {len(data) - 1} bytes."


def test_a_file_of_exactly_the_limit_is_read() -> None:
    data = (DATA / "garmin_etrex.gpx").read_bytes()
    assert len(parse_waypoints(data, max_bytes=len(data)).waypoints) == 2


def test_read_limited_stops_after_one_byte_past_the_limit() -> None:
    stream = io.BytesIO(b"x" * 10_000)
    with pytest.raises(GpxError, match="larger than 100 bytes"):
        read_limited(stream, max_bytes=100)
    assert stream.tell() == 101
    assert read_limited(io.BytesIO(b"<gpx/>"), max_bytes=6) == b"<gpx/>"


def test_a_malformed_file_is_refused_with_its_position() -> None:
    with pytest.raises(GpxError) as caught:
        parse_sample("malformed.gpx")
    assert caught.value.reason.startswith("The file is not well-formed XML:")
    assert "line 7" in caught.value.reason


@pytest.mark.parametrize(
    "data",
    [
        (DATA / "not_gpx.kml").read_bytes(),
        b"<html><head><title>Login</title></head><body><p>Hello</p></body></html>",
        b'<gpx xmlns="urn:not-topografix"><wpt lat="1" lon="2"/></gpx>',
        b'<gpx:gpx xmlns:gpx="http://www.topografix.com/GPX/1/1/extra"/>',
    ],
)
def test_documents_that_are_not_gpx_are_refused(data: bytes) -> None:
    with pytest.raises(GpxError) as caught:
        parse_waypoints(data, max_bytes=MAX_BYTES)
    assert caught.value.reason == "The file is not GPX: its root element must be <gpx>."


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "The GPX file is empty."),
        (b" \r\n\t", "The GPX file is empty."),
        (b"<!DOCTYPE html><html><body>Not found</body></html>", "DTD"),
        (b"PK\x03\x04 zip archive", "not well-formed XML"),
    ],
)
def test_empty_and_non_xml_uploads_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(GpxError, match=message):
        parse_waypoints(data, max_bytes=MAX_BYTES)


def test_whitespace_before_the_xml_declaration_is_tolerated() -> None:
    data = b"\r\n  " + (DATA / "garmin_etrex.gpx").read_bytes()
    assert len(parse_waypoints(data, max_bytes=MAX_BYTES).waypoints) == 2


def test_deep_nesting_is_refused() -> None:
    depth = gpx.MAX_DEPTH + 5
    body = '<wpt lat="1" lon="2"><extensions>' + "<x:a xmlns:x='urn:x'>" * depth
    body += "</x:a>" * depth + "</extensions></wpt>"
    with pytest.raises(GpxError, match=f"more than {gpx.MAX_DEPTH} levels deep"):
        parse_text(body)


def test_a_waypoint_stuffed_with_elements_is_refused() -> None:
    stuffing = "<i xmlns='urn:x'/>" * (gpx.MAX_WAYPOINT_ELEMENTS + 1)
    with pytest.raises(GpxError, match="more than 1000 elements"):
        parse_text(f'<wpt lat="1" lon="2"><desc>{stuffing}</desc></wpt>')


def test_large_extensions_and_tracks_are_not_limited_by_the_element_cap() -> None:
    points = "".join(f'<trkpt lat="1" lon="{i / 1000}"/>' for i in range(5000))
    extra = "<x:v xmlns:x='urn:x'>1</x:v>" * 5000
    parsed = parse_text(
        f'<wpt lat="1" lon="2"><name>A</name><extensions>{extra}</extensions></wpt>'
        f"<trk><trkseg>{points}</trkseg></trk>"
    )
    assert [w.name for w in parsed.waypoints] == ["A"]


GPX_OPEN = b'<gpx xmlns="http://www.topografix.com/GPX/1/1" version="1.1">'


def empty_elements(count: int) -> bytes:
    """A GPX file of `count` elements: the root and `count - 1` empty `<a/>`."""
    return GPX_OPEN + b"<a/>" * (count - 1) + b"</gpx>"


def test_a_file_of_exactly_the_element_limit_is_read() -> None:
    data = empty_elements(1000)
    assert parse_waypoints(data, max_bytes=MAX_BYTES, max_elements=1000).waypoints == []


def test_one_element_past_the_limit_is_refused() -> None:
    with pytest.raises(GpxError, match="more than 1000 elements"):
        parse_waypoints(empty_elements(1001), max_bytes=MAX_BYTES, max_elements=1000)


def test_a_parse_past_its_cpu_budget_is_refused() -> None:
    data = empty_elements(3 * gpx._CLOCK_EVERY)
    with pytest.raises(GpxError, match="takes too long to read"):
        parse_waypoints(data, max_bytes=MAX_BYTES, max_seconds=0.0)


def test_ten_megabytes_of_empty_elements_are_refused_at_the_element_limit() -> None:
    data = empty_elements((10 * 1024 * 1024 - 100) // 4)  # 2.6 million elements
    # The time budget is out of play (60 s): the element count alone stops the parse.
    with pytest.raises(GpxError, match="more than 200000 elements"):
        parse_waypoints(data, max_bytes=len(data), max_seconds=60)


def test_the_largest_accepted_file_reads_within_the_budget() -> None:
    point = b'<trkpt lat="47.1234567" lon="8.1234567"><ele>423.2</ele></trkpt>'
    waypoint = b'<wpt lat="47.1" lon="8.1"><name>Hut</name></wpt>'
    points = (gpx.MAX_ELEMENTS - 5) // 2
    data = GPX_OPEN + waypoint + b"<trk><trkseg>" + point * points + b"</trkseg></trk></gpx>"
    parsed = parse_waypoints(data, max_bytes=len(data), max_seconds=60)
    assert [item.name for item in parsed.waypoints] == ["Hut"]


def test_text_full_of_xmlns_tokens_is_read_in_linear_time() -> None:
    # gpxpy's `\sxmlns:?[^=]*="[^"]+"` over the raw text is quadratic on this input
    # (minutes at this size); the streaming parser reads it in well under a second.
    noise = " xmlns" * 300_000
    data = f'<gpx><wpt lat="1" lon="2"><name>N</name><desc>{noise}</desc></wpt></gpx>'.encode()
    # A complexity guard, not a speed target: CPU seconds, so a busy machine does not count.
    started = time.thread_time()
    parsed = parse_waypoints(data, max_bytes=len(data))
    assert time.thread_time() - started < 10
    assert len(parsed.waypoints[0].description) == len(noise) - 1


# --- export -------------------------------------------------------------------------------


SAMPLE_EXPORT = [
    ExportWaypoint(
        latitude=47.376887,
        longitude=8.541694,
        name="Zurich HB",
        description="Meet at the big clock\nPlatform 3",
        time=datetime(2024, 4, 19, 14, 3, 11, tzinfo=UTC),
        link="https://example.org/zurich?a=1&b=2",
        link_text="Station & more",
    ),
    ExportWaypoint(
        latitude=-33.8567844,
        longitude=151.213108,
        name="Quotes \"double\" and 'single' <tags> & ]]>",
        description="Line one\r\nLine two\twith tab",
        time=datetime(2024, 3, 2, 10, 15, 30, 250_000, tzinfo=UTC),
    ),
    ExportWaypoint(latitude=35.6585805, longitude=139.7454329, name="東京タワー 🙏"),
    ExportWaypoint(latitude=0.0, longitude=-0.0, name="Null Island", description=""),
]


def test_export_round_trips_through_the_parser() -> None:
    parsed = parse_waypoints(export(SAMPLE_EXPORT), max_bytes=MAX_BYTES)
    assert parsed.rejected == []
    assert parsed.waypoints == [
        Waypoint(
            latitude=w.latitude,
            longitude=w.longitude,
            name=w.name,
            description=w.description,
            time=w.time,
            link=w.link,
            index=index,
        )
        for index, w in enumerate(SAMPLE_EXPORT)
    ]


def test_export_is_valid_gpx_1_1(gpx_schema: xmlschema.XMLSchema) -> None:
    edge_cases = [
        *SAMPLE_EXPORT,
        ExportWaypoint(latitude=90, longitude=180, name="Pole", description="lon 180"),
        ExportWaypoint(latitude=-90, longitude=179.99999999, name="Rounds to 180"),
        ExportWaypoint(
            latitude=1,
            longitude=2,
            name="Naive and odd link",
            time=datetime(2024, 1, 1, 0, 0, 0, 1),
            link="https://example.org/a b\x01",
        ),
    ]
    gpx_schema.validate(io.BytesIO(export(edge_cases, name="My notes")))


def test_the_schema_check_is_not_vacuous(gpx_schema: xmlschema.XMLSchema) -> None:
    valid = export([ExportWaypoint(latitude=1, longitude=2, name="A", description="B")])
    assert gpx_schema.is_valid(io.BytesIO(valid))
    assert not gpx_schema.is_valid(io.BytesIO(valid.replace(b'lon="2"', b'lon="180"')))
    swapped = valid.replace(b"<name>A</name>", b"").replace(b"</desc>", b"</desc><name>A</name>")
    assert not gpx_schema.is_valid(io.BytesIO(swapped))


def test_export_structure_namespace_and_element_order() -> None:
    root = ElementTree.fromstring(export(SAMPLE_EXPORT[:1], creator="Tests", name="Mine"))
    assert root.tag == f"{NS}gpx"
    assert root.get("version") == "1.1"
    assert root.get("creator") == "Tests"
    metadata, wpt = list(root)
    assert [child.tag for child in metadata] == [f"{NS}name", f"{NS}time"]
    assert metadata.findtext(f"{NS}time") == "2024-05-01T12:00:00Z"
    assert [child.tag for child in wpt] == [f"{NS}time", f"{NS}name", f"{NS}desc", f"{NS}link"]
    assert wpt.findtext(f"{NS}time") == "2024-04-19T14:03:11Z"
    link = wpt.find(f"{NS}link")
    assert link is not None
    assert link.get("href") == "https://example.org/zurich?a=1&b=2"
    assert link.findtext(f"{NS}text") == "Station & more"


def test_export_leaves_out_empty_fields() -> None:
    root = ElementTree.fromstring(export([ExportWaypoint(latitude=1, longitude=2, name=" ")]))
    assert list(root)[1].attrib == {"lat": "1", "lon": "2"}
    assert list(list(root)[1]) == []


@pytest.mark.parametrize(
    ("latitude", "longitude", "lat_text", "lon_text"),
    [
        (52.52, 13.405, "52.52", "13.405"),
        (52.123456789, -0.000000001, "52.1234568", "0"),
        (-0.0, 180.0, "0", "-180"),
        (10, -179.99999996, "10", "-180"),
        (1e-7, 5e-8, "0.0000001", "0"),
    ],
)
def test_export_coordinates_have_at_most_seven_decimals(
    latitude: float, longitude: float, lat_text: str, lon_text: str
) -> None:
    wpt = list(ElementTree.fromstring(export([ExportWaypoint(latitude, longitude, "P")])))[1]
    assert (wpt.get("lat"), wpt.get("lon")) == (lat_text, lon_text)


def test_export_skips_waypoints_that_cannot_be_valid() -> None:
    waypoints = [
        ExportWaypoint(latitude=float("nan"), longitude=1, name="NaN"),
        ExportWaypoint(latitude=91, longitude=1, name="Too far north"),
        ExportWaypoint(latitude=1, longitude=float("inf"), name="Infinite"),
        ExportWaypoint(latitude=1, longitude=1, name="Fine"),
    ]
    parsed = parse_waypoints(export(waypoints), max_bytes=MAX_BYTES)
    assert [w.name for w in parsed.waypoints] == ["Fine"]


def test_export_removes_characters_xml_forbids() -> None:
    dirty = ExportWaypoint(
        latitude=1, longitude=2, name="A\x00B\x0bC\ud800D\ufffeE", description="x\x1fy"
    )
    waypoint = parse_waypoints(export([dirty]), max_bytes=MAX_BYTES).waypoints[0]
    assert (waypoint.name, waypoint.description) == ("ABCDE", "xy")


def test_export_times_are_utc_with_z() -> None:
    plus_two = timezone(timedelta(hours=2))
    waypoints = [
        ExportWaypoint(1, 2, "Aware", time=datetime(2024, 6, 1, 12, 0, tzinfo=plus_two)),
        ExportWaypoint(1, 2, "Naive", time=datetime(2024, 6, 1, 12, 0)),
        ExportWaypoint(1, 2, "Micro", time=datetime(2024, 6, 1, 12, 0, 0, 5, tzinfo=UTC)),
    ]
    root = ElementTree.fromstring(export(waypoints))
    assert [w.findtext(f"{NS}time") for w in root.iter(f"{NS}wpt")] == [
        "2024-06-01T10:00:00Z",
        "2024-06-01T12:00:00Z",
        "2024-06-01T12:00:00.000005Z",
    ]


def test_export_is_readable_by_gpxpy() -> None:
    document = gpxpy.parse(export(SAMPLE_EXPORT).decode("utf-8"))
    assert [w.name for w in document.waypoints] == [w.name for w in SAMPLE_EXPORT]
    assert document.waypoints[0].link == "https://example.org/zurich?a=1&b=2"
    assert document.waypoints[1].description == "Line one\r\nLine two\twith tab"


def many_waypoints(count: int, consumed: list[int]) -> Iterator[ExportWaypoint]:
    for number in range(count):
        consumed[0] = number + 1
        yield ExportWaypoint(
            latitude=(number % 180_000) / 1000 - 90,
            longitude=(number % 360_000) / 1000 - 180,
            name=f"Note {number} & co",
            description=f"Body of note {number}\nsecond line",
            time=GENERATED + timedelta(seconds=number),
            link=f"https://example.org/notes/{number}",
        )


@pytest.mark.slow
def test_export_of_100000_waypoints_streams_in_flat_memory() -> None:
    consumed = [0]
    total = chunks = largest = 0
    tracemalloc.start()
    try:
        stream = write_gpx(many_waypoints(100_000, consumed), generated_utc=GENERATED)
        first = next(stream)
        consumed_at_first_chunk = consumed[0]
        for chunk in itertools.chain([first], stream):
            chunks += 1
            total += len(chunk)
            largest = max(largest, len(chunk))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert consumed[0] == 100_000
    assert consumed_at_first_chunk < 1_000  # the input is pulled lazily, chunk by chunk
    assert total > 20_000_000  # the document itself is tens of megabytes ...
    assert peak < 2 * 1024 * 1024  # ... while the generator never holds more than a chunk
    assert chunks > 1_000
    assert largest < 4 * CHUNK_CHARS + 1024


def test_streamed_chunks_join_into_one_document() -> None:
    consumed = [0]
    chunks = list(write_gpx(many_waypoints(500, consumed), generated_utc=GENERATED))
    assert len(chunks) > 2
    parsed = parse_waypoints(b"".join(chunks), max_bytes=10 * MAX_BYTES)
    assert len(parsed.waypoints) == 500
    assert parsed.waypoints[499].name == "Note 499 & co"


# --- duplicate keys -----------------------------------------------------------------------


def test_duplicate_key_normalises_the_title() -> None:
    key = duplicate_key("  Café   Müller ", 48.1, 11.5)
    assert duplicate_key("CAFÉ MÜLLER", 48.1, 11.5) == key
    assert duplicate_key("Cafe\u0301 Mu\u0308ller", 48.1, 11.5) == key  # decomposed accents
    assert duplicate_key("Ｃａｆé Müller", 48.1, 11.5) == key  # full-width letters
    assert duplicate_key("Café Müller 2", 48.1, 11.5) != key


def test_duplicate_key_rounds_coordinates_to_six_decimals() -> None:
    assert duplicate_key("A", 52.1234561, 13.0) == ("a", 52_123_456, 13_000_000)
    assert duplicate_key("A", 52.12345649, 13.0) == duplicate_key("A", 52.1234561, 13.0)
    assert duplicate_key("A", 52.123457, 13.0) != duplicate_key("A", 52.123456, 13.0)
    assert duplicate_key("A", 1.0, 180.0) == duplicate_key("A", 1.0, -180.0)


def test_duplicate_key_of_a_reimported_export_matches_the_note() -> None:
    rng = random.Random(20240501)
    notes = [(rng.uniform(-90, 90), rng.uniform(-180, 180)) for _ in range(2000)]
    notes.append((52.12345649, 13.00000051))  # the 7th exported decimal is a 5
    waypoints = [ExportWaypoint(lat, lon, f"N{i}") for i, (lat, lon) in enumerate(notes)]
    parsed = parse_waypoints(export(waypoints), max_bytes=10 * MAX_BYTES)
    for (lat, lon), waypoint in zip(notes, parsed.waypoints, strict=True):
        assert duplicate_key(waypoint.name, waypoint.latitude, waypoint.longitude) == (
            duplicate_key(waypoint.name, lat, lon)
        )


@pytest.mark.parametrize(("lat", "lon"), [(float("nan"), 1.0), (1.0, 200.0), (-91.0, 0.0)])
def test_duplicate_key_refuses_impossible_coordinates(lat: float, lon: float) -> None:
    with pytest.raises(ValueError, match="coordinates"):
        duplicate_key("A", lat, lon)


def test_text_key_ignores_line_endings_and_outer_whitespace_only() -> None:
    assert text_key(" Line one\r\nLine two\n") == text_key("Line one\nLine two")
    assert text_key("Cafe\u0301") == text_key("Café")
    assert text_key("Line one") != text_key("line one")
