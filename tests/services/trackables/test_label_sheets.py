"""The label sheets as drawn (services.trackables.label_sheets), without HTTP: the layouts
are the real sheets, every code fits on every layout uncut, the text is cut to fit, and
the QR codes read back from the rendered pages."""

from __future__ import annotations

import pytest
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth

from app.services.trackables.labels.label_sheets import (
    CAPTION_FONT,
    CODE_FONT,
    ENGLISH_CAPTIONS,
    LAYOUTS,
    MIN_CODE_SIZE,
    TEXT_FONT,
    LabelContent,
    block_height,
    fit_text,
    page_count,
    printable,
    qr_side,
    render_sheets,
    text_block,
    wrap_code,
)
from tests.labels_pdf import read_sheets

LONGEST_OWN_SECRET = "Kestrel-Vault_73-" * 3 + "Heron-Plover-9"  # 64 characters
LONG_TEXT = "Found me? Take me to the next hut and log it on the site. Thank you, finder!" * 2


def column(layout):
    """The text column beside the QR code, as _draw_label measures it."""
    pad = layout.padding
    width, height = layout.label_width - 2 * pad, layout.label_height - 2 * pad
    return width - qr_side(layout) - max(pad, 1.5 * mm), height


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_the_grid_lies_on_the_paper_inside_the_printable_margins(layout):
    width, height = layout.page_size
    right = layout.left + (layout.columns - 1) * layout.column_pitch + layout.label_width
    bottom = layout.top + (layout.rows - 1) * layout.row_pitch + layout.label_height
    assert layout.left > 0
    assert layout.top > 0
    assert right < width
    assert bottom < height
    assert layout.column_pitch >= layout.label_width
    assert layout.row_pitch >= layout.label_height


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@pytest.mark.parametrize("secret", ["LN4K7Q2MZX", LONGEST_OWN_SECRET])
def test_the_codes_and_a_line_of_text_fit_every_label_uncut(layout, secret):
    width, height = column(layout)
    label = LabelContent("https://n.example/trackable/x", "LN-4K7Q2M", secret, LONG_TEXT)

    lines = text_block(layout, label, width, height)

    assert block_height(lines) <= height
    assert all(stringWidth(line.text, line.font, line.size) <= width for line in lines)
    codes = [line for line in lines if line.font == CODE_FONT]
    assert "".join(line.text for line in codes) == secret
    assert codes[0].size >= MIN_CODE_SIZE
    text = [line.text for line in lines if line.font == TEXT_FONT]
    assert text
    assert text[-1].endswith("...")


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
def test_each_code_comes_under_its_caption_and_the_qr_code_keeps_room_for_its_own(layout):
    width, height = column(layout)
    label = LabelContent("https://n.example/trackable/x", "LN-4K7Q2M", "LN4K7Q2MZX", "Hi")

    lines = text_block(layout, label, width, height)

    fonts = [line.font for line in lines]
    captions = [line.text for line in lines if line.font == CAPTION_FONT]
    assert captions == [ENGLISH_CAPTIONS.public_code, ENGLISH_CAPTIONS.secret_code]
    assert fonts[:4] == [CAPTION_FONT, "Courier-Bold", CAPTION_FONT, CODE_FONT]
    assert qr_side(layout) < layout.label_height - 2 * layout.padding


def test_a_word_too_long_for_a_line_is_broken_and_the_rest_cut():
    lines = fit_text("Supercalifragilistic " * 3, TEXT_FONT, 10, 40, 2)
    assert len(lines) == 2
    assert all(stringWidth(line, TEXT_FONT, 10) <= 40 for line in lines)
    assert lines[-1].endswith("...")


def test_text_that_fits_is_left_whole():
    assert fit_text("Take me north", TEXT_FONT, 8, 200, 3) == ["Take me north"]


def test_text_wraps_at_spaces():
    assert fit_text("aaa bbb ccc", TEXT_FONT, 10, stringWidth("aaa bbb", TEXT_FONT, 10), 3) == [
        "aaa bbb",
        "ccc",
    ]


def test_a_code_wraps_into_equal_pieces():
    assert wrap_code("ABCDEFGHIJ", 4) == ["ABCD", "EFGH", "IJ"]


def test_text_is_one_line_of_what_the_built_in_fonts_draw():
    assert printable("Grüße\taus  Köln, 5 € ") == "Grüße aus Köln, 5 €"
    assert printable("Zürich 🏔 東京") == "Zürich ? ??"


@pytest.mark.parametrize(
    ("count", "skip", "pages"), [(1, 0, 1), (21, 0, 1), (22, 0, 2), (2, 20, 2)]
)
def test_page_count(count, skip, pages):
    assert page_count(LAYOUTS["avery-l7160"], count, skip) == pages


def test_the_pdf_is_the_same_for_the_same_labels():
    labels = [LabelContent("https://n.example/trackable/abc", "LN-4K7Q2M", "LN4K7Q2MZX")]
    layout = LAYOUTS["avery-l7160"]
    assert render_sheets(layout, labels) == render_sheets(layout, labels)


@pytest.mark.parametrize("layout_name", list(LAYOUTS))
def test_long_base_urls_still_read_back(layout_name):
    """A deployment under a long base URL makes bigger QR codes: still readable."""
    layout = LAYOUTS[layout_name]
    url = "https://labels.some-long-deployment-name.example.org/location-notes/trackable/"
    labels = [
        LabelContent(url + f"{n:03d}" + "A-b_" * 24 + "z", "LN-4K7Q2M", "LN4K7Q2MZX")
        for n in range(3)
    ]

    sheet = read_sheets(render_sheets(layout, labels), layout)

    assert sheet.codes == {(0, n): label.scan_url for n, label in enumerate(labels)}
