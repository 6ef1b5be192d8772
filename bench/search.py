#!/usr/bin/env python3
"""Benchmark: public note search (GET /api/notes/public/search) against its floor.

    .venv/bin/python bench/search.py [--requests 200] [--database h_search_bench]

1. Creates and migrates the database, and seeds it once as bench/notes_discovery.py does
   (1,000,000 notes, the same users, places, visibilities, languages and activity), with
   varied words: titles of 3 and bodies of 15 words drawn from a vocabulary of 5,000
   made-up words with Zipf frequencies (rank r drawn in proportion to 1/r), so a word's
   rank decides how many notes hold it. The GIN index is made after the COPY, then
   VACUUM (ANALYZE).
2. Serves the API (gunicorn.conf.py, access log off, rate limits on) and the search floor
   (bench/search_floor_app.py: plain psycopg2, one hand-written statement on the same
   index, orjson, no project code) with gunicorn, 2 sync workers each.
3. Checks that the API and the floor return the same records in the same order, with the
   same truncation, for every path timed.
4. Times each scenario request by request, API and floor in turn (each first half of the
   time), over a fresh connection each, and prints p50, p95 and api/floor, with the load
   average before and after.

A measuring tool, not a test: it asserts nothing but the equality of the results, and
bounds every loop. Target: api/floor p50 at most 1.5 in every scenario.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from discovery_floor import fetch, start_api, start_floor, stop, time_pair  # noqa: E402
from notes_discovery import REGION, Texts, ensure_database, percentile, seed  # noqa: E402

API_PORT, FLOOR_PORT = 8775, 8776  # not discovery_floor's, which may run beside
TARGET_P50 = 1.5
VOCABULARY = 5000
TITLE_WORDS, BODY_WORDS = 3, 15
SEARCH = "/api/notes/public/search"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="h_search_bench")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--notes", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--requests", type=int, default=200, help="timed per scenario")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--reseed", action="store_true")
    return parser.parse_args()


# --- words -------------------------------------------------------------------------------


def vocabulary() -> list[str]:
    """5,000 distinct made-up words of two or three syllables, most frequent first."""
    rng = random.Random(5000)
    onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
    codas = ["", "", "n", "r", "l", "k"]
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        syllables = rng.choice((2, 2, 3))
        word = "".join(
            rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(syllables)
        )
        words.setdefault(word)
    return list(words)


WORDS = vocabulary()


def note_texts(seed_value: int = 7) -> Texts:
    """(title, body) per note: Zipf-distributed words of WORDS."""
    rng = random.Random(seed_value)
    weights = [1.0 / rank for rank in range(1, VOCABULARY + 1)]
    cumulative = list(itertools.accumulate(weights))

    def texts(_number: int, _language: str) -> tuple[str, str]:
        drawn = rng.choices(WORDS, cum_weights=cumulative, k=TITLE_WORDS + BODY_WORDS)
        title = " ".join(drawn[:TITLE_WORDS]).capitalize()
        return title, " ".join(drawn[TITLE_WORDS:]).capitalize() + "."

    return texts


def seed_search(url: str, *, notes: int, users: int) -> None:
    """Seeds as notes_discovery does (with varied words), the GIN index made after."""
    import psycopg2

    connection = psycopg2.connect(url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM notes")
        if cursor.fetchone()[0] >= notes:
            print(f"seed: {notes:,} notes already there")
            connection.close()
            return
        # One CREATE INDEX after the COPY is far faster than a GIN insert per row.
        cursor.execute("DROP INDEX IF EXISTS ix_notes_search")
    started = time.perf_counter()
    seed(url, notes=notes, users=users, texts=note_texts())
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '256MB'")
        cursor.execute(
            "CREATE INDEX ix_notes_search ON notes USING gin (search_vector) "
            "WHERE is_publicly_discoverable"
        )
        cursor.execute("VACUUM (ANALYZE) notes")
    connection.close()
    print(f"seed and index: {time.perf_counter() - started:.0f} s")


# --- scenarios ---------------------------------------------------------------------------


def scenarios() -> dict[str, list[str]]:
    """Paths per scenario: one word by frequency rank (rare ~ a few hundred notes,
    medium ~ a few thousand, common ~ tens of thousands), two words, a language, a
    window."""

    def path(q: str, **extra: object) -> str:
        return SEARCH + "?" + urlencode({"q": q, **extra})

    rng = random.Random(11)
    rare = WORDS[2000:5000]
    medium = WORDS[150:400]
    common = WORDS[15:40]
    south, west, north, east = REGION
    window = {
        "minLatitude": south,
        "minLongitude": west,
        "maxLatitude": north,
        "maxLongitude": east,
    }
    found = {
        "rare": [path(word) for word in rng.sample(rare, 40)],
        "medium": [path(word) for word in rng.sample(medium, 40)],
        "common": [path(word) for word in common],
        "two words": [
            path(f"{a} {b}")
            for a, b in zip(rng.sample(common, 20), rng.sample(medium, 20), strict=True)
        ],
        "medium+lang": [
            path(word, contentLanguage=rng.choice(("en", "de", "ja")))
            for word in rng.sample(medium, 40)
        ],
        "medium+window": [path(word, **window) for word in rng.sample(medium, 40)],
    }
    return found


def compare(paths: dict[str, list[str]]) -> tuple[int, dict[str, float]]:
    """The API and the floor give the same records in the same order; returns how many
    paths were compared and each scenario's mean number of records."""
    checked, sizes = 0, {}
    for name, scenario in paths.items():
        counts = []
        for path in scenario:
            _, api_status, api_headers, api_body = fetch(API_PORT, path)
            _, floor_status, floor_headers, floor_body = fetch(FLOOR_PORT, path)
            if api_status != 200 or floor_status != 200:
                raise SystemExit(f"{path}: API {api_status}, floor {floor_status}")
            api_rows, floor_rows = json.loads(api_body), json.loads(floor_body)
            if api_rows != floor_rows:
                raise SystemExit(
                    f"{name} {path}: different results ({len(api_rows)} against "
                    f"{len(floor_rows)}; ids equal: "
                    f"{[r['noteId'] for r in api_rows] == [r['noteId'] for r in floor_rows]})"
                )
            truncated = (
                api_headers.get("x-result-truncated"),
                floor_headers.get("x-result-truncated"),
            )
            if truncated[0] != truncated[1]:
                raise SystemExit(f"{path}: truncation differs {truncated}")
            counts.append(len(api_rows))
            checked += 1
        sizes[name] = statistics.mean(counts)
    return checked, sizes


def match_counts(url: str, paths: dict[str, list[str]]) -> dict[str, float]:
    """How many discoverable notes each scenario's first word matches (median), in
    English: the size of what is ranked before the cap."""
    from urllib.parse import parse_qs, urlsplit

    import psycopg2

    connection = psycopg2.connect(url)
    counts: dict[str, float] = {}
    with connection.cursor() as cursor:
        for name, scenario in paths.items():
            found = []
            for path in scenario[:5]:
                q = parse_qs(urlsplit(path).query)["q"][0]
                cursor.execute(
                    "SELECT count(*) FROM notes WHERE is_publicly_discoverable AND "
                    "search_vector @@ websearch_to_tsquery('english', %s)",
                    (q,),
                )
                found.append(cursor.fetchone()[0])
            counts[name] = statistics.median(found)
    connection.close()
    return counts


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    args = parse_args()
    url = ensure_database(args.server, args.database, reseed=args.reseed)
    seed_search(url, notes=args.notes, users=args.users)
    paths = scenarios()
    matches = match_counts(url, paths)
    print(f"load average before: {load()}")
    servers = [start_api(url, args.workers, API_PORT)]
    try:
        servers.append(
            start_floor("the floor", FLOOR_PORT, args.workers, "bench.search_floor_app:app", url)
        )
        compared, sizes = compare(paths)
        print(f"same records, same order, same truncation: {compared} paths")
        timed = {
            name: time_pair(API_PORT, FLOOR_PORT, scenario, args.requests)
            for name, scenario in paths.items()
        }
    finally:
        stop(servers)
    print(f"load average after: {load()}")
    print(f"\n{args.notes:,} notes, {args.requests} requests per scenario, times in ms")
    print(
        f"{'scenario':<14} {'matches':>8} {'listed':>7} {'api p50':>8} {'api p95':>8}"
        f" {'floor p50':>9} {'floor p95':>9} {'p50 x':>6} {'p95 x':>6}  target {TARGET_P50}"
    )
    for name, (api_times, floor_times) in timed.items():
        p50 = statistics.median(api_times) / statistics.median(floor_times)
        p95 = percentile(api_times, 0.95) / percentile(floor_times, 0.95)
        verdict = "ok" if p50 <= TARGET_P50 else "MISSED"
        print(
            f"{name:<14} {matches[name]:8.0f} {sizes[name]:7.0f}"
            f" {statistics.median(api_times):8.2f} {percentile(api_times, 0.95):8.2f}"
            f" {statistics.median(floor_times):9.2f} {percentile(floor_times, 0.95):9.2f}"
            f" {p50:6.2f} {p95:6.2f}  {verdict}"
        )


if __name__ == "__main__":
    main()
