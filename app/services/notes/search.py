"""Text search over public notes (contract notes: Public note search).

The notes anonymous discovery lists (`policies.notes.public_discovery_filter`, the one
rule) whose title or body match the words asked for, best match first, capped and narrowed
like discovery. The index is the database's own (app.models.note_search). Both databases
read the same syntax, PostgreSQL's web search one: words (all must match), `"a phrase"`,
`or` between two alternatives, `-word` to leave out; rewritten from one parse for each
database, so no text typed is ever read as another syntax.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select, String, bindparam, column, table, text

from app.auth import ANONYMOUS
from app.extensions import db
from app.models.note import Note
from app.models.note_search import (
    FTS_KEYS,
    FTS_TABLE,
    SEARCH_VECTOR,
    config_of,
    distinct_configs,
    language_cases,
)
from app.policies import notes as note_policy
from app.services.categories import canonical_language
from app.services.notes.discovery import CAP_PLUS_ONE, LANGUAGE, NoteList, capped, note_rows
from app.services.shared.areas import Bounds, window_clause

# Most characters of the words asked for: a few sentences. Each configuration reads them
# (PostgreSQL), so their length bounds the work of one request.
SEARCH_QUERY_MAX_LENGTH = 200

SEARCH_TEXT = bindparam("search_text", type_=String)  # PostgreSQL: web search syntax
SEARCH_MATCH = bindparam("search_match", type_=String)  # SQLite: an FTS5 query
# SQLite's bm25 weights, per FTS5 column (title, body).
SQLITE_TITLE_WEIGHT, SQLITE_BODY_WEIGHT = 2.5, 1.0


def search_public_notes(
    words: str, *, area: Bounds | None = None, content_language: str | None = None, cap: int
) -> NoteList:
    """Discoverable notes matching `words`, best match first (see above)."""
    language = canonical_language(content_language) if content_language else None
    params: dict[str, Any] = area.params() if area is not None else {}
    if language is not None:
        params[LANGUAGE.key] = language
    shape = area.shape if area is not None else None
    alternatives = parse_words(words)
    if alternatives is None:  # nothing to look for: punctuation, only `-word`s
        return NoteList([])
    if db.engine.dialect.name == "sqlite":
        statement = _sqlite_statement(shape, language is not None)
        params[SEARCH_MATCH.key] = fts5_query(alternatives)
    else:
        statement = _postgresql_statement(shape, config_of(language) if language else None)
        params[SEARCH_TEXT.key] = websearch_text(alternatives)
    # Never planned once (a prepared statement): PostgreSQL must see the words, so that it
    # computes each configuration's query while planning and the GIN index is asked for it.
    return capped(statement, params, cap, reused=True)


def _filters(shape: tuple[str, bool] | None, with_language: bool) -> list[Any]:
    """The discovery rule, and the window and language when asked for."""
    filters: list[Any] = [note_policy.public_discovery_filter()]
    if shape is not None:
        filters.append(window_clause(shape[1]))
    if with_language:
        filters.append(Note.content_language == LANGUAGE)
    return filters


# --- PostgreSQL --------------------------------------------------------------------------


def _query_in(config: str) -> str:
    """The words as one configuration reads them; empty when that reading has nothing
    the index can look up (only stop words and `-word`s): such a query would match
    nearly every note, and read them all."""
    query = f"websearch_to_tsquery('{config}'::regconfig, :search_text)"
    return f"(CASE WHEN querytree({query}) = 'T' THEN ''::tsquery ELSE {query} END)"


def _any_config() -> str:
    """The words in every configuration at once: the distinct readings, OR-ed.

    Computed once per statement (an InitPlan), not written as a constant: the planner
    estimates an OR of the same word read by 29 configurations as 29 different words,
    20 times too many notes, and plans a parallel scan compiled by JIT (100 ms more).
    For a value it cannot see it takes a fixed 0.5 % of the notes, which is closer.
    """
    readings = ", ".join(_query_in(name) for name in distinct_configs())
    union = "string_agg(DISTINCT '(' || reading::text || ')', ' | ')::tsquery"
    # Configuration names only, no input: the words are the bound `search_text`.
    return f"(SELECT {union} FROM unnest(ARRAY[{readings}]) AS reading WHERE reading::text <> '')"  # noqa: S608


# Each note is matched and ranked as its own language's configuration reads the query
# (websearch_to_tsquery in the note's configuration): the GIN index is asked for the notes matching
# in any configuration, and each candidate is then checked against its own. Ranked by ts_rank_cd
# (title weight A, body B), then most recent activity, then id.
@functools.lru_cache(maxsize=64)
def _postgresql_statement(shape: tuple[str, bool] | None, config: str | None) -> Select[Any]:
    """With a language: its configuration's query. Without: the GIN index is asked for
    the query of every configuration at once, and each note checked against its own."""
    vector = f"notes.{SEARCH_VECTOR}"
    if config is not None:
        own = _query_in(config)
        conditions = [f"{vector} @@ {own}"]
    else:
        own = language_cases("notes.content_language", _query_in("{config}"))
        conditions = [f"{vector} @@ {_any_config()}", f"{vector} @@ ({own})"]
    where = [text(condition).bindparams(SEARCH_TEXT) for condition in conditions]
    rank = text(f"ts_rank_cd({vector}, {own}) DESC").bindparams(SEARCH_TEXT)
    return (
        note_rows(ANONYMOUS)
        .where(*_filters(shape, config is not None), *where)
        .order_by(rank, Note.last_activity_utc.desc(), Note.id.desc())
        .limit(CAP_PLUS_ONE)
    )


# --- SQLite ------------------------------------------------------------------------------


# Ranked by bm25, the title weighing 2.5 times the body (as A against B on PostgreSQL), then the
# same tie-break.
@functools.lru_cache(maxsize=8)
def _sqlite_statement(shape: tuple[str, bool] | None, with_language: bool) -> Select[Any]:
    fts = table(FTS_TABLE, column("rowid"))
    keys = table(FTS_KEYS, column("id"), column("note_id"))
    rank = f"bm25({FTS_TABLE}, {SQLITE_TITLE_WEIGHT}, {SQLITE_BODY_WEIGHT})"
    return (
        note_rows(ANONYMOUS)
        .select_from(fts)
        .join(keys, keys.c.id == fts.c.rowid)
        .join(Note.__table__, Note.__table__.c.id == keys.c.note_id)
        .where(
            text(f"{FTS_TABLE} MATCH :search_match").bindparams(SEARCH_MATCH),
            *_filters(shape, with_language),
        )
        .order_by(text(rank), Note.last_activity_utc.desc(), Note.id.desc())
        .limit(CAP_PLUS_ONE)
    )


# --- the words asked for ----------------------------------------------------------------
#
# Both databases get the words rewritten from one parse (`parse_words`), never the text as
# typed: FTS5 would read `NEAR(`, `*`, `AND` or `title:` as syntax (a syntax error is a
# 500), and PostgreSQL's web search parser fails on runs of `-` ("tsquery stack too
# small"). The rewrite keeps the web search syntax: `or` separates alternatives; within
# one, every word and `"phrase"` must match and a `-word` or `-"phrase"` must not.

# A term: an optional `-`, then a quoted phrase (its closing quote may be missing) or a
# run of anything but white space and quotes.
_TERM = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')
# The words of a term, as the unicode61 tokenizer splits them: runs of letters and digits.
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Term:
    text: str  # a word as typed (without leading `-`), or a phrase's words
    is_phrase: bool = False


@dataclass
class Alternative:
    wanted: list[Term] = field(default_factory=list)
    unwanted: list[Term] = field(default_factory=list)


def parse_words(words: str) -> list[Alternative] | None:
    """The alternatives the words ask for; None when there is nothing to look for (only
    punctuation), or when an alternative has nothing but left-out words: it would match
    nearly every note, and the index cannot find those (so both databases find nothing).
    A term without a letter or digit is dropped, as PostgreSQL's parser drops it."""
    alternatives = [Alternative()]
    for minus, phrase, word in _TERM.findall(words):
        if not minus and not phrase and word.lower() == "or":
            if alternatives[-1] != Alternative():
                alternatives.append(Alternative())
            continue
        term = Term(phrase, is_phrase=True) if phrase else Term(word.lstrip("-"))
        if not _WORD.search(term.text):
            continue
        current = alternatives[-1]
        (current.unwanted if minus else current.wanted).append(term)
    alternatives = [alternative for alternative in alternatives if alternative != Alternative()]
    if not alternatives or any(not alternative.wanted for alternative in alternatives):
        return None
    return alternatives


def websearch_text(alternatives: list[Alternative]) -> str:
    """For PostgreSQL's `websearch_to_tsquery`: the same terms, each word as typed (its
    parser splits and normalises it), at most one `-` before a term."""

    def written(term: Term) -> str:
        return f'"{term.text}"' if term.is_phrase else term.text

    return " or ".join(
        " ".join(
            [written(term) for term in alternative.wanted]
            + ["-" + written(term) for term in alternative.unwanted]
        )
        for alternative in alternatives
    )


def fts5_query(alternatives: list[Alternative]) -> str:
    """For SQLite's FTS5: every term an FTS5 string, so nothing typed is FTS5 syntax. A
    word is its runs of letters and digits (`NEAR(lighthouse` is `near` and `lighthouse`,
    as PostgreSQL's parser reads it); a phrase, or a left-out word, one string."""
    parts = []
    for alternative in alternatives:
        wanted: list[str] = []
        for term in alternative.wanted:
            pieces = [term.text] if term.is_phrase else _WORD.findall(term.text)
            wanted.extend(_string(piece) for piece in pieces)
        part = "(" + " AND ".join(wanted) + ")"
        if alternative.unwanted:
            unwanted = " OR ".join(_string(term.text) for term in alternative.unwanted)
            part = f"({part} NOT ({unwanted}))"
        parts.append(part)
    return " OR ".join(parts)


def _string(text: str) -> str:
    """An FTS5 string: whatever it holds is words to look for, never syntax."""
    return '"' + text.replace('"', '""') + '"'
