"""Typed coordinates (app/web/coordinates.py): decimal degrees, degrees and decimal
minutes, degrees-minutes-seconds, with a sign or a hemisphere letter before or after;
what could be read two ways, or lies out of range, is refused with its reason."""

from __future__ import annotations

import pytest

from app.web.coordinates import Axis, CoordinateError, Problem, parse

LAT, LON = Axis.LATITUDE, Axis.LONGITUDE


@pytest.mark.parametrize(
    ("text", "axis", "expected"),
    [
        ("47.3769", LAT, 47.3769),
        ("-8.5417", LON, -8.5417),
        ("+8.5417", LON, 8.5417),
        ("47,3769", LAT, 47.3769),  # a German decimal comma
        (" 47.3769° ", LAT, 47.3769),
        ("0", LAT, 0.0),
        ("90", LAT, 90.0),
        ("-180", LON, -180.0),
        ("N 47° 22.614'", LAT, 47 + 22.614 / 60),
        ("N47°22.614'", LAT, 47 + 22.614 / 60),
        ("47 22.614 N", LAT, 47 + 22.614 / 60),
        ("47 22,614", LAT, 47 + 22.614 / 60),
        ("S 33° 52.1'", LAT, -(33 + 52.1 / 60)),
        ("47°22'36.8\"N", LAT, 47 + 22 / 60 + 36.8 / 3600),
        ("N 47°22'36.8\"", LAT, 47 + 22 / 60 + 36.8 / 3600),
        ("47°22'36.8''N", LAT, 47 + 22 / 60 + 36.8 / 3600),
        ("47\u00ba 22\u2032 36.8\u2033 N", LAT, 47 + 22 / 60 + 36.8 / 3600),  # phone marks
        ("8 32 30.1 E", LON, 8 + 32 / 60 + 30.1 / 3600),
        ("E 8 32 30.1", LON, 8 + 32 / 60 + 30.1 / 3600),
        ("8 32 30,1 O", LON, 8 + 32 / 60 + 30.1 / 3600),  # O: Ost
        ("w 73° 59.1'", LON, -(73 + 59.1 / 60)),
        ("73 59 W", LON, -(73 + 59 / 60)),
        ("\u22128.5417", LON, -8.5417),  # a typographic minus
        ("- 8.5417", LON, -8.5417),
    ],
)
def test_each_accepted_notation_reads_as_decimal_degrees(text, axis, expected):
    assert parse(text, axis) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("text", "axis", "problem"),
    [
        ("", LAT, Problem.EMPTY),
        ("   ", LON, Problem.EMPTY),
        ("north", LAT, Problem.UNREADABLE),
        ("nan", LAT, Problem.UNREADABLE),
        ("inf", LON, Problem.UNREADABLE),
        ("1e3", LON, Problem.UNREADABLE),
        ("N", LAT, Problem.UNREADABLE),
        ("-", LAT, Problem.UNREADABLE),
        ("47, 8", LAT, Problem.UNREADABLE),  # a pasted pair, not a decimal comma
        ("47.3769, 8.5417", LAT, Problem.UNREADABLE),
        ("47 22 36 10", LAT, Problem.UNREADABLE),  # four numbers
        ("22.614'", LAT, Problem.UNREADABLE),  # minutes without degrees
        ("47' 22°", LAT, Problem.UNREADABLE),  # units out of order
        ("47 N 8", LAT, Problem.UNREADABLE),
        ("47.5 30", LAT, Problem.AMBIGUOUS),  # decimals before the last number
        ("47° 22.5' 10\"", LAT, Problem.AMBIGUOUS),
        ("N 47 S", LAT, Problem.AMBIGUOUS),  # a letter at both ends
        ("-8 W", LON, Problem.AMBIGUOUS),  # a sign and a letter
        ("+47 N", LAT, Problem.AMBIGUOUS),
        ("8.5 E", LAT, Problem.WRONG_LETTER),  # a longitude's letter on a latitude
        ("N 47", LON, Problem.WRONG_LETTER),
        ("47 60", LAT, Problem.SIXTY),
        ("47 22 60", LAT, Problem.SIXTY),
        ("47 3769", LAT, Problem.SIXTY),
        ("8°32'75.5\"E", LON, Problem.SIXTY),
        ("90.0001", LAT, Problem.OUT_OF_RANGE),
        ("-91", LAT, Problem.OUT_OF_RANGE),
        ("90 0.5 N", LAT, Problem.OUT_OF_RANGE),
        ("180.5", LON, Problem.OUT_OF_RANGE),
        ("W 181", LON, Problem.OUT_OF_RANGE),
    ],
)
def test_each_refused_input_says_why(text, axis, problem):
    with pytest.raises(CoordinateError) as refused:
        parse(text, axis)
    assert refused.value.problem is problem


def test_the_axes_know_their_letters_and_limits():
    assert (LAT.positive, LAT.negative, LAT.limit) == ("N", "S", 90)
    assert (LON.positive, LON.negative, LON.limit) == ("E", "W", 180)
