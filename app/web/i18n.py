"""Message catalogues of the website pages (Flask-Babel).

The catalogues are `app/web/translations/<lang>/LC_MESSAGES/messages.po`, in git; English
is the source language. `make messages` extracts new strings and merges them into each
`.po`. Compiled `.mo` files are never in git: the app compiles them at start (see
`compile_catalogues`). The page language comes from the URL (`/{lang}/...`); anything else
served by the app is not translated. Every page links itself in the other languages
(`other_language_url`).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import Flask, current_app, g, request, url_for
from flask_babel import Babel
from werkzeug.routing import Rule

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


def language_page(endpoint: str, **values: Any) -> None:
    """Name the page that stands for this one in another language, for a page with no
    address of its own (what a form's POST answers); `values` as for url_for."""
    g.language_page = (endpoint, values)


# Where the address must not be repeated (a 404 or error page: it may hold a typed code) the link
# is that page's own, or the home page; an address without a language (the entry route) leads to
# the page standing for it (`language_free`: the home page's code box).
def other_language_url(lang: str, language_free: Mapping[str, str]) -> str:
    """This page in language `lang`: the same address with the language changed (its
    query kept, so sign-in keeps `next`); for a refused form, the page it came from."""
    endpoint = request.endpoint or ""
    if endpoint in language_free:
        return url_for(language_free[endpoint], lang=lang)
    named = g.get("language_page")
    if named is not None:
        return url_for(named[0], **named[1], lang=lang)
    if g.get("page_not_found"):
        return url_for("pages.not_found", lang=lang)
    rules = _rules(endpoint)
    if g.get("error_page") or not any("lang" in rule.arguments for rule in rules):
        return url_for("pages.home", lang=lang)
    args = dict(request.view_args or {})  # without `lang`: the pages take it out
    if request.method == "GET":  # url_for's own options (`_external`, ...) never from a query
        query = {k: v for k, v in request.args.lists() if not k.startswith("_") and k != "lang"}
        return url_for(endpoint, **{**query, **args, "lang": lang})
    if any("GET" in (rule.methods or ()) for rule in rules):  # a refused sign-in: its page
        kept: dict[str, Any] = {"next": request.form["next"]} if request.form.get("next") else {}
        return url_for(endpoint, **{**kept, **args, "lang": lang})
    if "trackable_id" in args:  # the active landing's forms
        return url_for("pages.active_page", trackable_id=args["trackable_id"], lang=lang)
    return url_for("pages.home", lang=lang)


def _rules(endpoint: str) -> list[Rule]:
    try:
        return list(current_app.url_map.iter_rules(endpoint))
    except KeyError:  # no route matched
        return []


def install_i18n(app: Flask) -> None:
    target = Path(app.instance_path) / "translations"
    compile_catalogues(SOURCES, target)
    app.config["BABEL_TRANSLATION_DIRECTORIES"] = str(target)
    app.config.setdefault("BABEL_DEFAULT_LOCALE", DEFAULT_LANGUAGE)
    babel.init_app(app, locale_selector=page_language)
