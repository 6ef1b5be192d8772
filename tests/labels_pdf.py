"""Reading label PDFs back, as a printer and a phone would: each page rendered at 300 dpi
(pypdfium2), every QR code on it decoded (zxing-cpp) and placed in the sheet's grid by
its centre, and the page's text extracted."""

from __future__ import annotations

from dataclasses import dataclass

import pypdfium2 as pdfium
import zxingcpp

from app.services.trackables.labels.label_sheets import SheetLayout

DPI = 300
POINTS_PER_PIXEL = 72 / DPI


@dataclass(frozen=True)
class ReadSheet:
    page_sizes: list[tuple[float, float]]  # points
    codes: dict[tuple[int, int], str]  # (page, position in the grid) -> decoded text
    decoded: int  # QR codes found (two in one cell would be lost in `codes`)
    texts: list[str]  # each page's text


def read_sheets(pdf: bytes, layout: SheetLayout) -> ReadSheet:
    document = pdfium.PdfDocument(pdf)
    sizes, codes, texts, decoded = [], {}, [], 0
    try:
        for number in range(len(document)):
            page = document[number]
            sizes.append(page.get_size())
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            image = page.render(scale=DPI / 72).to_pil()
            for result in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode):
                # At times zxing reads a short phantom (`802`) in the printed glyphs; every
                # code on a label is a URL, and a label whose own code misreads still lacks
                # its URL below, so ignoring phantoms hides no defect.
                if not result.text.startswith(("http://", "https://")):
                    continue
                decoded += 1
                codes[(number, cell_of(layout, result.position))] = result.text
            textpage.close()
            page.close()
    finally:
        document.close()
    return ReadSheet(sizes, codes, decoded, texts)


def cell_of(layout: SheetLayout, position: zxingcpp.Position) -> int:
    """The grid position (row by row) of the label whose area holds the code's centre."""
    corners = (position.top_left, position.top_right, position.bottom_left, position.bottom_right)
    x = sum(point.x for point in corners) / 4 * POINTS_PER_PIXEL
    y = sum(point.y for point in corners) / 4 * POINTS_PER_PIXEL  # from the page's top
    column = int((x - layout.left) // layout.column_pitch)
    row = int((y - layout.top) // layout.row_pitch)
    assert 0 <= column < layout.columns, (x, y)
    assert 0 <= row < layout.rows, (x, y)
    return row * layout.columns + column


def page_count(pdf: bytes) -> int:
    document = pdfium.PdfDocument(pdf)
    try:
        return len(document)
    finally:
        document.close()
