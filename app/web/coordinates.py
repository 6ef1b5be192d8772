"""Coordinates typed by a person, read into decimal degrees: pure, no Flask.

One axis per call (a latitude or a longitude), in decimal degrees, degrees and decimal
minutes, or degrees, minutes and seconds, with a hemisphere letter (N/S, E/W, German O for
Ost) or a sign, never both. Anything that could be read two ways is refused rather than
guessed.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass


class Axis(enum.Enum):
    LATITUDE = ("N", "S", 90)
    LONGITUDE = ("E", "W", 180)

    @property
    def positive(self) -> str:
        return self.value[0]

    @property
    def negative(self) -> str:
        return self.value[1]

    @property
    def limit(self) -> int:
        return self.value[2]


class Problem(enum.Enum):
    """Why a typed coordinate was refused (the pages say it in words)."""

    EMPTY = "empty"
    UNREADABLE = "unreadable"
    AMBIGUOUS = "ambiguous"
    WRONG_LETTER = "wrong_letter"  # E/W on a latitude, N/S on a longitude
    SIXTY = "sixty"  # minutes or seconds of 60 or more
    OUT_OF_RANGE = "out_of_range"


@dataclass(frozen=True)
class CoordinateError(ValueError):
    problem: Problem

    def __str__(self) -> str:
        return self.problem.value


# What phones and word processors type instead of the plain marks.
MARKS = str.maketrans(
    {
        "\u00ba": "°",  # masculine ordinal
        "\u02da": "°",  # ring above
        "\u2032": "'",  # prime
        "\u2019": "'",  # right single quotation mark
        "\u2018": "'",  # left single quotation mark
        "\u00b4": "'",  # acute accent
        "`": "'",
        "\u2033": '"',  # double prime
        "\u201d": '"',  # right double quotation mark
        "\u201c": '"',  # left double quotation mark
        "\u2212": "-",  # minus sign
        "\u2013": "-",  # en dash
        "\u00a0": " ",  # no-break space
    }
)
LETTERS = {"N": "N", "S": "S", "E": "E", "W": "W", "O": "E"}  # O: Ost, German for east
NUMBER = r"(?:\d+(?:[.,]\d+)?)"
PART = re.compile(rf"\s*({NUMBER})\s*(°|''|'|\"|)\s*")
UNITS = {"°": 0, "'": 1, "''": 2, '"': 2}


# Accepted: 47.3769, -8.5417, 47,3769 (a German decimal comma), 47.3769°; N 47° 22.614', 47 22.614;
# 47°22'36.8"N, 8 32 30.1 E. Only the last number may have decimals, minutes and seconds stay below
# 60 and the units, when written, come in order; refused as ambiguous: 47.5 30, N 47 S, -8 W, 47, 8.
def parse(text: str, axis: Axis) -> float:
    """The coordinate in decimal degrees, or CoordinateError saying why not."""
    value = text.translate(MARKS).strip().upper()
    if not value:
        raise CoordinateError(Problem.EMPTY)
    value, letter = _letter(value)
    sign = 1
    if value.startswith(("+", "-")):
        if letter is not None:  # "-8 W": west twice, or a typo?
            raise CoordinateError(Problem.AMBIGUOUS)
        sign = -1 if value[0] == "-" else 1
        value = value[1:]
    if letter is not None:
        if letter not in (axis.positive, axis.negative):
            raise CoordinateError(Problem.WRONG_LETTER)
        sign = -1 if letter == axis.negative else 1
    degrees = sign * _degrees(value)
    if not math.isfinite(degrees) or abs(degrees) > axis.limit:
        raise CoordinateError(Problem.OUT_OF_RANGE)
    return degrees


def _letter(value: str) -> tuple[str, str | None]:
    """The text without its hemisphere letter, and the letter (one, first or last)."""
    first = LETTERS.get(value[0])
    last = LETTERS.get(value[-1]) if len(value) > 1 else None
    if first and last:
        if re.search("[A-Z]", value[1:-1]):  # a word ("nan"), not two letters
            raise CoordinateError(Problem.UNREADABLE)
        raise CoordinateError(Problem.AMBIGUOUS)
    if first:
        return value[1:].strip(), first
    if last:
        return value[:-1].strip(), last
    return value, None


def _degrees(value: str) -> float:
    """Unsigned degrees from one, two or three numbers (degrees, minutes, seconds)."""
    parts: list[tuple[str, str]] = []
    position = 0
    while position < len(value):
        found = PART.match(value, position)
        if found is None or found.end() == position:
            raise CoordinateError(Problem.UNREADABLE)
        parts.append((found.group(1), found.group(2)))
        position = found.end()
    if not parts or len(parts) > 3:
        raise CoordinateError(Problem.UNREADABLE)
    for index, (_number, unit) in enumerate(parts):
        if unit and UNITS[unit] != index:  # minutes written as degrees, or out of order
            raise CoordinateError(Problem.UNREADABLE)
    if any(_has_decimals(number) for number, _unit in parts[:-1]):
        raise CoordinateError(Problem.AMBIGUOUS)  # "47.5 30": which is meant?
    numbers = [float(number.replace(",", ".")) for number, _unit in parts]
    if any(number >= 60 for number in numbers[1:]):
        raise CoordinateError(Problem.SIXTY)
    return sum(number / 60**index for index, number in enumerate(numbers))


def _has_decimals(number: str) -> bool:
    return "." in number or "," in number
