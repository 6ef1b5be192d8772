"""Characters refused in what people write: one rule, in two strengths.

A one-line name (an anonymous writer's display name) holds no control, invisible or
text-direction character. Multi-line text (comment bodies) keeps tabs, line breaks and the
zero-width joiners and marks emoji and some scripts need, and refuses the rest of the
controls and every text-direction embedding, override and isolate: those reorder what
follows them on screen, so a text would show other than it reads. The API's schemas, which
state the rule as a JSON Schema `pattern`, and the website's forms both use these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069).
DIRECTION_CONTROLS = r"\u202a-\u202e\u2066-\u2069"
# Zero-width characters, direction marks, line and paragraph separators.
INVISIBLE = r"\u200b-\u200f\u2028\u2029"


@dataclass(frozen=True)
class RefusedCharacters:
    """A set of characters a text may not hold, written as a regular-expression class
    that Python and JSON Schema (ECMA 262) read alike."""

    ranges: str
    _found: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_found", re.compile(f"[{self.ranges}]"))

    def search(self, text: str) -> re.Match[str] | None:
        """The first refused character in `text`, if any."""
        return self._found.search(text)

    @property
    def pattern(self) -> str:
        """The JSON Schema `pattern` a text without them matches."""
        return f"^[^{self.ranges}]*$"


IN_NAMES = RefusedCharacters(r"\x00-\x1f\x7f-\x9f" + INVISIBLE + DIRECTION_CONTROLS)
# Tab (09), line feed (0a) and carriage return (0d) are text here.
IN_TEXT = RefusedCharacters(r"\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + DIRECTION_CONTROLS)
