"""Printable label sheets: the sheet layouts and the PDF drawing, pure functions
of what is to be printed (no database, no request).

Each label carries the QR code of the item's scan URL (segno, drawn as vector squares so it
stays sharp at any printer resolution, with its four-module quiet zone), the public code and
the secret code (Courier: 0 and O, 1 and l tell apart), each captioned, and an optional
line of text (Helvetica; wrapped over a few lines, the last cut with "..." if need be).
Codes are never cut: a long bring-your-own secret wraps and the codes' size goes down
until they fit. The layouts are real label sheets, measured as their makers publish them.
The PDF is built in memory and is deterministic (no creation date, no random id).
"""

from __future__ import annotations

import io
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import segno
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.lib.units import inch, mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import FILL_NON_ZERO, Canvas

PAPERS: dict[str, tuple[float, float]] = {"a4": A4, "letter": LETTER}

CODE_FONT, PUBLIC_CODE_FONT, TEXT_FONT = "Courier", "Courier-Bold", "Helvetica"
CAPTION_FONT = "Helvetica-Oblique"
CAPTION_SCALE = 0.6  # a caption's size, in code sizes
MIN_CAPTION_SIZE = 4.0  # points
COURIER_ADVANCE = 0.6  # every Courier glyph is 600/1000 em wide
LEADING = 1.18  # line height, in font sizes
MIN_CODE_SIZE = 5.0  # points: below this a code is no longer readable
TEXT_MAX_LINES = 3
ELLIPSIS = "..."


@dataclass(frozen=True)
class SheetLayout:
    """One sheet of labels: its paper, grid and label size, in points from the top left."""

    name: str
    paper: str
    description: str
    columns: int
    rows: int
    label_width: float
    label_height: float
    left: float  # page edge to the first column
    top: float  # page edge to the first row
    column_pitch: float  # from one column's left edge to the next's
    row_pitch: float
    padding: float  # kept clear inside each label (die-cut tolerance, rounded corners)
    code_size: float  # the codes' font size when they fit

    @property
    def per_page(self) -> int:
        return self.columns * self.rows

    @property
    def page_size(self) -> tuple[float, float]:
        return PAPERS[self.paper]

    def origin(self, position: int) -> tuple[float, float]:
        """The bottom-left corner of the label at `position` on its page (row by row)."""
        row, column = divmod(position, self.columns)
        x = self.left + column * self.column_pitch
        y = self.page_size[1] - self.top - row * self.row_pitch - self.label_height
        return x, y


LAYOUTS: dict[str, SheetLayout] = {
    layout.name: layout
    for layout in (
        SheetLayout(
            "avery-l7160",
            "a4",
            "A4, 3 x 7 labels of 63.5 x 38.1 mm (Avery L7160 and compatibles)",
            3,
            7,
            63.5 * mm,
            38.1 * mm,
            7.25 * mm,
            15.15 * mm,
            66.04 * mm,
            38.1 * mm,
            2 * mm,
            8,
        ),
        SheetLayout(
            "avery-l7165",
            "a4",
            "A4, 2 x 4 labels of 99.1 x 67.7 mm (Avery L7165 and compatibles)",
            2,
            4,
            99.1 * mm,
            67.7 * mm,
            4.65 * mm,
            13.1 * mm,
            101.6 * mm,
            67.7 * mm,
            3 * mm,
            11,
        ),
        SheetLayout(
            "avery-5160",
            "letter",
            'US Letter, 3 x 10 labels of 2.625 x 1" (Avery 5160 and compatibles)',
            3,
            10,
            2.625 * inch,
            1 * inch,
            0.1875 * inch,
            0.5 * inch,
            2.75 * inch,
            1 * inch,
            0.06 * inch,
            7.5,
        ),
        SheetLayout(
            "avery-5163",
            "letter",
            'US Letter, 2 x 5 labels of 4 x 2" (Avery 5163 and compatibles)',
            2,
            5,
            4 * inch,
            2 * inch,
            0.15625 * inch,
            0.5 * inch,
            4.1875 * inch,
            2 * inch,
            0.12 * inch,
            11,
        ),
    )
}


@dataclass(frozen=True)
class Captions:
    """What each code on a label is, in the label's language."""

    public_code: str
    secret_code: str
    qr_code: str


ENGLISH_CAPTIONS = Captions("Public code", "Secret code", "Scan the QR code")


@dataclass(frozen=True)
class LabelContent:
    """What one label shows (the codes already checked by the caller)."""

    scan_url: str
    public_code: str
    secret_code: str
    text: str = ""
    captions: Captions = ENGLISH_CAPTIONS


def page_count(layout: SheetLayout, count: int, skip: int = 0) -> int:
    """Pages for `count` labels starting after `skip` used positions of the first sheet."""
    return max(1, math.ceil((skip + count) / layout.per_page))


def render_sheets(layout: SheetLayout, labels: Sequence[LabelContent], skip: int = 0) -> bytes:
    """The PDF of `labels` on `layout`'s sheets, the first `skip` positions left blank (a
    sheet already partly used)."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=layout.page_size, invariant=True, pageCompression=1)
    canvas.setTitle("Trackable labels")
    canvas.setCreator("Location Notes Service")
    # A code printed on several labels (spares) is encoded once; forgotten with the render.
    encoded: dict[str, Any] = {}
    for index, label in enumerate(labels):
        position = (skip + index) % layout.per_page
        if index and position == 0:
            canvas.showPage()
        if label.scan_url not in encoded:
            encoded[label.scan_url] = segno.make(
                label.scan_url, error="l", micro=False, boost_error=True
            ).matrix
        _draw_label(canvas, layout, layout.origin(position), label, encoded[label.scan_url])
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


# --- one label ---------------------------------------------------------------------------


def qr_side(layout: SheetLayout) -> float:
    """The QR code's square (quiet zone included), with its caption's line below it."""
    width = layout.label_width - 2 * layout.padding
    height = layout.label_height - 2 * layout.padding
    return min(height - qr_caption_size(layout) * LEADING, width * 0.5)


def qr_caption_size(layout: SheetLayout) -> float:
    return max(MIN_CAPTION_SIZE, layout.code_size * CAPTION_SCALE)


def _draw_label(
    canvas: Canvas,
    layout: SheetLayout,
    origin: tuple[float, float],
    label: LabelContent,
    matrix: Any,
) -> None:
    pad = layout.padding
    x, y = origin[0] + pad, origin[1] + pad
    width, height = layout.label_width - 2 * pad, layout.label_height - 2 * pad
    side = qr_side(layout)
    caption_size = qr_caption_size(layout)
    bottom = y + (height - side - caption_size * LEADING) / 2  # the QR and its caption centred
    _draw_qr(canvas, matrix, x, bottom + caption_size * LEADING, side)
    caption = one_line(label.captions.qr_code, CAPTION_FONT, caption_size, side)
    canvas.setFont(CAPTION_FONT, caption_size)
    canvas.drawCentredString(x + side / 2, bottom + caption_size * 0.22, caption)
    gap = max(pad, 1.5 * mm)
    _draw_texts(canvas, layout, label, x + side + gap, y, width - side - gap, height)


def _draw_qr(canvas: Canvas, matrix: Any, x: float, y: float, side: float) -> None:
    """The QR code of `matrix` (segno's rows of modules) in a square of `side` points,
    quiet zone included, dark modules as filled squares (runs of a row drawn as one
    rectangle). The whole code is one path filled once, drawn in module units (a scaled
    coordinate system): small whole numbers, and two rows meet on exactly the same edge."""
    border = 4
    size = len(matrix) + 2 * border
    module = side / size
    canvas.setFillGray(0)
    canvas.saveState()
    canvas.transform(module, 0, 0, module, x, y)  # a module a unit, from the bottom left
    path = canvas.beginPath()
    for row_index, row in enumerate(matrix):
        bottom = size - border - row_index - 1
        start = None
        for column, dark in enumerate([*row, 0]):
            if dark and start is None:
                start = column
            elif not dark and start is not None:
                path.rect(start + border, bottom, column - start, 1)
                start = None
    canvas.drawPath(path, stroke=0, fill=1, fillMode=FILL_NON_ZERO)  # their union
    canvas.restoreState()


def _draw_texts(
    canvas: Canvas,
    layout: SheetLayout,
    label: LabelContent,
    x: float,
    y: float,
    width: float,
    height: float,
) -> None:
    """The lines beside the QR code, as one block centred in their column."""
    lines = text_block(layout, label, width, height)
    cursor = y + height - max(0.0, (height - block_height(lines)) / 2)
    for line in lines:
        cursor -= line.height
        canvas.setFont(line.font, line.size)
        canvas.drawString(x, cursor + line.size * 0.22, line.text)  # baseline above descenders


@dataclass(frozen=True)
class Line:
    font: str
    size: float
    text: str
    space_before: float = 0.0

    @property
    def height(self) -> float:
        return self.space_before + self.size * LEADING


def block_height(lines: Sequence[Line]) -> float:
    return sum(line.height for line in lines)


def text_block(layout: SheetLayout, label: LabelContent, width: float, height: float) -> list[Line]:
    """The public code, the secret code (both never cut, each under its caption) and the
    text, for a column of `width` x `height` points: the codes' size goes down from the
    layout's until they and at least one line of text fit (not below MIN_CODE_SIZE)."""
    text = printable(label.text)
    size = layout.code_size
    while True:
        lines = _lines(label, text, size, width, height)
        fits = block_height(lines) <= height and (not text or lines[-1].font == TEXT_FONT)
        if fits or size <= MIN_CODE_SIZE:
            return lines
        size -= 0.5


def _lines(label: LabelContent, text: str, size: float, width: float, height: float) -> list[Line]:
    columns = max(1, int(width / (COURIER_ADVANCE * size)))
    gap = size * 0.5
    caption_size = max(MIN_CAPTION_SIZE, size * CAPTION_SCALE)

    def caption(words: str, space_before: float = 0.0) -> Line:
        fitted = one_line(words, CAPTION_FONT, caption_size, width)
        return Line(CAPTION_FONT, caption_size, fitted, space_before)

    lines = [caption(label.captions.public_code)]
    lines += [Line(PUBLIC_CODE_FONT, size, part) for part in wrap_code(label.public_code, columns)]
    lines.append(caption(label.captions.secret_code, gap))
    lines += [Line(CODE_FONT, size, part) for part in wrap_code(label.secret_code, columns)]
    if text:
        text_size = size * 0.9
        room = height - block_height(lines) - gap
        count = min(TEXT_MAX_LINES, int(room / (text_size * LEADING)))
        if count > 0:
            wrapped = fit_text(text, TEXT_FONT, text_size, width, count)
            lines += [
                Line(TEXT_FONT, text_size, part, gap if i == 0 else 0)
                for i, part in enumerate(wrapped)
            ]
    return lines


def wrap_code(code: str, columns: int) -> list[str]:
    """A code in pieces of `columns` characters (monospaced: every piece fits)."""
    return [code[start : start + columns] for start in range(0, len(code), columns)] or [""]


def printable(text: str) -> str:
    """The text as the built-in fonts can draw it: one line, and each character outside
    their Windows-1252 repertoire shown as `?`."""
    flat = " ".join(unicodedata.normalize("NFC", text).split())
    return "".join(char if _drawable(char) else "?" for char in flat)


def _drawable(char: str) -> bool:
    try:
        char.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


def fit_text(text: str, font: str, size: float, width: float, max_lines: int) -> list[str]:
    """`text` wrapped at spaces into at most `max_lines` lines of `width` points; a word
    longer than a line is broken, and what does not fit ends the last line with "..."."""
    lines: list[str] = []
    rest = text
    while rest and len(lines) < max_lines:
        line = _longest_prefix(rest, font, size, width)
        if len(line) < len(rest) and " " in line and rest[len(line)] != " ":
            line = line.rsplit(" ", 1)[0]  # break at the last space, not in a word
        lines.append(line.rstrip())
        rest = rest[len(line) :].lstrip()
    if rest and lines:
        lines[-1] = _with_ellipsis(lines[-1], font, size, width)
    return lines


def one_line(text: str, font: str, size: float, width: float) -> str:
    """`text` as one printable line of at most `width` points, cut with "..." if need be."""
    return (fit_text(printable(text), font, size, width, 1) or [""])[0]


def _longest_prefix(text: str, font: str, size: float, width: float) -> str:
    low, high = 1, len(text)  # at least one character per line, or nothing would end
    while low < high:
        middle = (low + high + 1) // 2
        if stringWidth(text[:middle], font, size) <= width:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def _with_ellipsis(line: str, font: str, size: float, width: float) -> str:
    while line and stringWidth(line.rstrip() + ELLIPSIS, font, size) > width:
        line = line[:-1]
    return line.rstrip() + ELLIPSIS
