"""The pages' message catalogues (app/web/i18n.py): every string the pages use is in
each catalogue and translated into German; catalogues compile without a manual step."""

from __future__ import annotations

from pathlib import Path

from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from app.web import i18n

ROOT = Path(__file__).resolve().parents[2]
METHODS = [("app/web/**.py", "python"), ("app/web/templates/**.html", "jinja2")]
KEYWORDS = {"_": None, "gettext": None, "_l": None, "ngettext": (1, 2)}


def used_messages() -> set[str]:
    found = extract_from_dir(str(ROOT), METHODS, keywords=KEYWORDS)
    return {message if isinstance(message, str) else message[0] for _, _, message, *_ in found}


def catalogue(lang: str):
    path = i18n.SOURCES / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as file:
        return read_po(file, locale=lang)


def singular(message_id: str | tuple[str, ...]) -> str:
    """A message's id; a plural message (ngettext) by its singular."""
    return message_id if isinstance(message_id, str) else message_id[0]


def translated(message) -> bool:
    forms = [message.string] if isinstance(message.string, str) else message.string
    return bool(forms) and all(forms)


def test_every_page_string_is_in_each_catalogue_and_translated_into_german():
    used = used_messages()
    assert len(used) > 50
    for lang in ("en", "de"):
        assert used <= {singular(message.id) for message in catalogue(lang) if message.id}, lang
    german = {
        singular(message.id): translated(message) for message in catalogue("de") if message.id
    }
    untranslated = sorted(text for text in used if not german.get(text))
    assert untranslated == []
    assert not any(message.fuzzy for message in catalogue("de") if message.id)


def test_catalogues_compile_when_missing_or_older_and_not_otherwise(tmp_path):
    written = i18n.compile_catalogues(i18n.SOURCES, tmp_path)
    mo = tmp_path / "de" / "LC_MESSAGES" / "messages.mo"
    assert mo in written
    with mo.open("rb") as file:
        assert read_mo(file).get("Journey").string == "Reise"
    assert i18n.compile_catalogues(i18n.SOURCES, tmp_path) == []  # up to date
    (i18n.SOURCES / "de" / "LC_MESSAGES" / "messages.po").stat()
    mo.unlink()
    assert i18n.compile_catalogues(i18n.SOURCES, tmp_path) == [mo]
