"""Content languages: a BCP 47 tag in its conventional casing, as notes, categories, teams
and area watches store it and as filters compare it."""

from __future__ import annotations


def canonical_language(tag: str) -> str:
    """BCP 47 conventional casing: `en-us` -> `en-US`, `zh-hant-tw` -> `zh-Hant-TW`."""
    head, *rest = tag.strip().split("-")
    parts = [head.lower()]
    for part in rest:
        if (len(part) == 2 and part.isalpha()) or (len(part) == 3 and part.isdigit()):
            parts.append(part.upper())
        elif len(part) == 4 and part.isalpha():
            parts.append(part.title())
        else:
            parts.append(part.lower())
    return "-".join(parts)
