"""docs/architecture.md stays true to the code: every service area, job kind and
registered hook is named there, and every `docs/...` path that code, tests or docs name
exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = (ROOT / "docs" / "architecture.md").read_text()
# Where a reader is sent to a page under docs/ (not a URL path such as /api/docs/...).
DOCS_PATH = re.compile(r"(?<![\w/.-])docs/[\w./-]*[\w/]")
NAMING_PLACES = ("app", "tests", "bench", "docs", "deploy", ".ci")
NAMING_FILES = ("README.md", "Makefile", "config.py", "gunicorn.conf.py", "wsgi.py", ".env.example")


def test_every_service_area_is_on_the_page():
    areas = sorted(
        path.name
        for path in (ROOT / "app" / "services").iterdir()
        if (path / "__init__.py").is_file()
    )
    section = ARCHITECTURE.split("## Service areas", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    assert sorted(listed) == areas


def test_every_job_kind_is_on_the_page(app):
    kinds = app.extensions["job_kinds"]
    missing = [name for name in kinds.names if f"`{name}`" not in ARCHITECTURE]
    assert missing == []
    for name in kinds.names:  # each with its lane
        row = next(line for line in ARCHITECTURE.splitlines() if f"`{name}`" in line)
        assert f"| {kinds.get(name).lane} |" in row, name


@pytest.mark.parametrize(
    "hooks", ["viewer_parts", "account_cleanups", "parent_removals", "event_listeners"]
)
def test_every_registered_hook_is_on_the_page(app, hooks):
    names = [hook.__name__ for hook in getattr(app.extensions["area_hooks"], hooks)]
    assert [name for name in names if f"`{name}`" not in ARCHITECTURE] == []
    if hooks == "account_cleanups":  # in the order DELETE /api/account runs them
        places = [ARCHITECTURE.index(f"`{name}`") for name in names]
        assert places == sorted(places)


def test_every_scheduled_clean_up_is_on_the_page(app):
    names = [clean_up.__name__ for clean_up in app.extensions["job_clean_ups"]]
    assert [name for name in names if f"`{name}`" not in ARCHITECTURE] == []


def named_docs_paths() -> dict[str, set[str]]:
    """Each `docs/...` path named in the repository -> the files that name it."""
    files = [ROOT / name for name in NAMING_FILES if (ROOT / name).is_file()]
    for place in NAMING_PLACES:
        files += [path for path in (ROOT / place).rglob("*") if path.is_file()]
    named: dict[str, set[str]] = {}
    for path in files:
        if "__pycache__" in path.parts or path.suffix in {".png", ".pdf", ".jpg", ".mo"}:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for found in DOCS_PATH.findall(text):
            named.setdefault(found.rstrip("."), set()).add(path.relative_to(ROOT).as_posix())
    return named


def test_every_docs_path_named_exists():
    missing = {
        path: sorted(places)
        for path, places in named_docs_paths().items()
        if not (ROOT / path).exists()
    }
    assert missing == {}


MODULE_DOCSTRING_LINES = 10
# A ticket reference in code, tests or docs: the word and a number or a colon after it. A
# library's own tracker ("SQLAlchemy's", "its", then the word) is a fact about the library.
TICKET = re.compile(r"(?<!its )(?<!'s )\b[Ii]ssues? (?:\d+|: )|\(issue: ")


def python_files() -> list[Path]:
    return sorted(
        path
        for place in ("app", "tests")
        for path in (ROOT / place).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def test_module_docstrings_are_short():
    long = {}
    for path in python_files():
        docstring = ast.get_docstring(ast.parse(path.read_text()), clean=False)
        lines = len(docstring.strip().splitlines()) if docstring else 0
        if lines > MODULE_DOCSTRING_LINES:
            long[path.relative_to(ROOT).as_posix()] = lines
    assert long == {}, "say what the module is for and why in at most ten lines"


def cited_files() -> list[Path]:
    """Everything the next engineer reads: code, tests, benchmarks, tools, migrations, the
    settings and the docs."""
    places = ("app", "tests", "bench", "tools", "migrations", "docs", "deploy")
    suffixes = {".py", ".md", ".html", ".toml", ".yml", ".yaml", ".sh"}
    found = [
        path
        for place in places
        for path in (ROOT / place).rglob("*")
        if path.suffix in suffixes and "__pycache__" not in path.parts
    ]
    tops = ("README.md", "CHANGELOG.md", "config.py", "gunicorn.conf.py", "wsgi.py", "Makefile")
    return sorted([*found, *(ROOT / name for name in tops), ROOT / ".ci" / "run"])


def test_code_tests_and_docs_cite_reasons_not_tickets():
    cited = [
        f"{path.relative_to(ROOT).as_posix()}:{number}"
        for path in cited_files()
        if path != Path(__file__).resolve()  # the rule's own pattern
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if TICKET.search(line)
    ]
    assert cited == []


def test_pages_stay_readable():
    pages = [ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")]
    limits = {ROOT / "README.md": 250}
    long = {
        page.relative_to(ROOT).as_posix(): lines
        for page in pages
        if (lines := len(page.read_text().splitlines())) > limits.get(page, 800)
    }
    assert long == {}, "split the page or cut it: the README at most 250 lines, others 800"
