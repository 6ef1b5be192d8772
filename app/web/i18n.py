"""Message catalogues of the website pages (Flask-Babel).

The catalogues are `app/web/translations/<lang>/LC_MESSAGES/messages.po`, in git; English
is the source language. `make messages` extracts new strings and merges them into each
`.po`. Compiled `.mo` files are never in git: the app compiles them at start (see
`compile_catalogues`). The page language comes from the URL (`/{lang}/...`); anything else
served by the app is not translated.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask, g
from flask_babel import Babel

SOURCES = Path(__file__).resolve().parent / "translations"
DEFAULT_LANGUAGE = "en"

babel = Babel()


# Into instance/translations/ when the .mo is missing or older than its .po (milliseconds), written
# to a temporary file and renamed so workers starting together never read half a file. make run and
# make test need no extra step.
def compile_catalogues(sources: Path, target: Path) -> list[Path]:
    """Compile every `.po` under `sources` into the same layout under `target` when its
    `.mo` is missing or older; the `.mo` files written."""
    written = []
    for po in sorted(sources.glob("*/LC_MESSAGES/*.po")):
        mo = target / po.relative_to(sources).with_suffix(".mo")
        if mo.is_file() and mo.stat().st_mtime >= po.stat().st_mtime:
            continue
        mo.parent.mkdir(parents=True, exist_ok=True)
        with po.open("rb") as file:
            catalog = read_po(file, locale=po.parts[-3])
        handle, temporary = tempfile.mkstemp(dir=mo.parent, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as file:
                write_mo(file, catalog)
            os.replace(temporary, mo)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        written.append(mo)
    return written


def page_language() -> str:
    """The language of the page being rendered (set from its URL), else the default."""
    return str(g.get("page_language") or DEFAULT_LANGUAGE)


def install_i18n(app: Flask) -> None:
    target = Path(app.instance_path) / "translations"
    compile_catalogues(SOURCES, target)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(target)
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT_LANGUAGE)
    babel.init_app(app, locale_selector=page_language)
