"""The title of an HTML page from its first bytes: charset, entities, white space, length."""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser

META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.I)
META_SCAN_BYTES = 4096
BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# The WHATWG Encoding Standard reads these labels as windows-1252, as browsers do.
WINDOWS_1252_ALIASES = frozenset({"ascii", "latin-1", "iso8859-1"})
ELLIPSIS = "\u2026"
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def parse_content_type(value: str) -> tuple[str, str | None]:
    """`text/html; charset="UTF-8"` -> ("text/html", "UTF-8")."""
    media_type, _, parameters = value.partition(";")
    charset = None
    for parameter in parameters.split(";"):
        key, _, raw = parameter.partition("=")
        if key.strip().lower() == "charset":
            charset = raw.strip().strip("\"'") or None
    return media_type.strip().lower(), charset


def extract_title(body: bytes, header_charset: str | None = None, *, max_length: int = 200) -> str:
    """The first <title> outside SVG/MathML: entities decoded, white space collapsed, capped
    at `max_length` characters (an ellipsis marks a cut). "" when there is none."""
    if not body:
        return ""
    text = _decode(body, header_charset)
    parser = _TitleParser()
    parser.feed(text)
    parser.close()
    title = " ".join(CONTROL_CHARACTERS.sub(" ", "".join(parser.parts)).split())
    if len(title) <= max_length:
        return title
    return title[: max_length - 1].rstrip() + ELLIPSIS


def _decode(body: bytes, header_charset: str | None) -> str:
    """Byte order mark, then the Content-Type charset, then <meta>, else UTF-8."""
    for bom, encoding in BOMS:
        if body.startswith(bom):
            return body.decode(encoding, errors="replace")
    meta = META_CHARSET.search(body[:META_SCAN_BYTES])
    meta_charset = _text_encoding(meta.group(1).decode("ascii")) if meta else None
    if meta_charset and meta_charset.startswith(("utf-16", "utf-32")):
        meta_charset = "utf-8"  # a <meta> that was readable as ASCII cannot be right
    encoding = _text_encoding(header_charset) or meta_charset or "utf-8"
    return body.decode(encoding, errors="replace")


def _text_encoding(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip()).name
        b"x".decode(name, errors="replace")  # refuses codecs that are no text encoding (base64)
    except (LookupError, ValueError):
        return None
    return "cp1252" if name in WINDOWS_1252_ALIASES else name


class _TitleParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.state = "before"  # before -> inside -> done
        self.foreign_depth = 0  # <svg> and <math> have <title> elements of their own

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"svg", "math"}:
            self.foreign_depth += 1
        elif tag == "title" and self.state == "before" and not self.foreign_depth:
            self.state = "inside"

    def handle_endtag(self, tag: str) -> None:
        if tag in {"svg", "math"} and self.foreign_depth:
            self.foreign_depth -= 1
        elif tag == "title" and self.state == "inside":
            self.state = "done"

    def handle_data(self, data: str) -> None:
        if self.state == "inside":
            self.parts.append(data)
