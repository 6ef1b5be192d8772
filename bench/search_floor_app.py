"""The search floor: GET /api/notes/public/search written as directly as it can be, to
measure the API against (bench/search.py serves it with gunicorn).

    gunicorn -w 2 bench.search_floor_app:app        (DATABASE_URL=postgresql://...)

No project code: a bare WSGI callable, plain psycopg2 (one autocommit connection per
worker), one statement written by hand on the same GIN index (`ix_notes_search`), orjson.
It answers only what the benchmark sends (plain words, optionally `contentLanguage` and a
window); validation, the parse of the web search syntax, rate limits and logging are what
the API adds on top.

Same records, same order as the API: the discovery rule, each note matched and ranked in
its own language's text search configuration (the index asked for the words in every
configuration at once), `ts_rank_cd`, then newest activity, then id; at most 500, and
`X-Result-Truncated: true` when there were more.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

import orjson
import psycopg2

from bench.floor_app import COLUMNS, KEYS, WINDOW, WINDOW_WRAPPED

CAP = 500
# Language subtag -> configuration, as the notes' generated column reads them (the
# migration `public_note_search`); `simple` otherwise.
CONFIGS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish",
    "nl": "dutch", "en": "english", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "nb": "norwegian",
    "nn": "norwegian", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "yi": "yiddish",
}  # fmt: skip


def query_in(config: str) -> str:
    """The words in one configuration; empty when it leaves nothing the index can find."""
    query = f"websearch_to_tsquery('{config}', %(q)s)"
    return f"(CASE WHEN querytree({query}) = 'T' THEN ''::tsquery ELSE {query} END)"


OWN = (
    "CASE lower(split_part(n.content_language, '-', 1)) "
    + " ".join(f"WHEN '{subtag}' THEN {query_in(config)}" for subtag, config in CONFIGS.items())
    + f" ELSE {query_in('simple')} END"
)
# The distinct readings of the words, OR-ed, computed once (an InitPlan): as a constant,
# the planner counts one word read by 29 configurations as 29 words, and plans a parallel
# scan compiled by JIT.
READINGS = ", ".join(query_in(config) for config in [*dict.fromkeys(CONFIGS.values()), "simple"])
UNION = "string_agg(DISTINCT '(' || r::text || ')', ' | ')::tsquery"
ANY = f"(SELECT {UNION} FROM unnest(ARRAY[{READINGS}]) AS r WHERE r::text <> '')"  # noqa: S608
ORDER = "n.last_activity_utc DESC, n.id DESC LIMIT %(limit)s"


def statement(where: str, language: str | None) -> str:
    if language is not None:
        own = query_in(CONFIGS.get(language.split("-")[0].lower(), "simple"))
        match = f"n.search_vector @@ {own} AND n.content_language = %(language)s"
    else:
        own = OWN
        match = f"n.search_vector @@ {ANY} AND n.search_vector @@ ({own})"
    # Constant SQL: the words, the window and the language are bound parameters.
    return (
        f"SELECT {COLUMNS} FROM notes n WHERE n.is_publicly_discoverable AND {match}{where}"  # noqa: S608
        f" ORDER BY ts_rank_cd(n.search_vector, {own}) DESC, {ORDER}"
    )


_connection: Any = None


def cursor() -> Any:
    global _connection
    if _connection is None or _connection.closed:
        _connection = psycopg2.connect(os.environ["DATABASE_URL"])
        _connection.autocommit = True
    return _connection.cursor()


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ["PATH_INFO"] != "/api/notes/public/search":
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]
    query = dict(parse_qsl(environ.get("QUERY_STRING", "")))
    params: dict[str, Any] = {"limit": CAP + 1, "q": query["q"]}
    where = ""
    if "minLatitude" in query:
        names = ("minLatitude", "minLongitude", "maxLatitude", "maxLongitude")
        south, west, north, east = (float(query[name]) for name in names)
        params.update(south=south, west=west, north=north, east=east)
        where = " AND " + (WINDOW_WRAPPED if west > east else WINDOW)
    language = query.get("contentLanguage")
    if language:
        params["language"] = language
    with cursor() as cur:
        cur.execute(statement(where, language or None), params)
        rows = cur.fetchall()
    body = orjson.dumps([dict(zip(KEYS, row, strict=True)) for row in rows[:CAP]])
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    if len(rows) > CAP:
        headers.append(("X-Result-Truncated", "true"))
    start_response("200 OK", headers)
    return [body]
