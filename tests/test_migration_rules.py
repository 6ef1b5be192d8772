"""Expand and contract, read from the migrations since the previous release: the previous
release must keep working on the new schema while it still serves (docs/operations.md,
"Upgrading"). Read here: a new NOT NULL column has a server default; an index on an
existing table is built CONCURRENTLY outside the transaction; no backfill shares a
migration with the NOT NULL it prepares. What the code still writes (a dropped table or
column) is checked by running the previous release on the migrated database (.ci/run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from alembic.config import Config as AlembicConfig
from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
PREVIOUS_RELEASE_HEAD = "c41e7a2d9b86"  # 0.1.0's last migration (CHANGELOG.md)


def since_previous_release() -> list[Path]:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    paths = []
    for revision in scripts.walk_revisions():
        if revision.revision == PREVIOUS_RELEASE_HEAD:
            return paths
        paths.append(Path(revision.path))
    raise AssertionError(f"{PREVIOUS_RELEASE_HEAD} is not in the history")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in call.keywords if item.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _method(call: ast.Call) -> str:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return call.func.id if isinstance(call.func, ast.Name) else ""


def violations(source: str) -> list[str]:
    """What in `upgrade()` would break the previous release or lock a table while it serves."""
    tree = ast.parse(source)
    upgrade = next(
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "upgrade"
    )
    created: set[str] = set()
    in_autocommit: set[int] = set()
    for node in ast.walk(upgrade):
        if isinstance(node, ast.With) and "autocommit_block" in ast.unparse(node.items[0]):
            in_autocommit |= {id(inner) for inner in ast.walk(node)}
    calls = [node for node in ast.walk(upgrade) if isinstance(node, ast.Call)]
    for call in calls:
        if _method(call) == "create_table" and call.args:
            created.add(ast.literal_eval(call.args[0]))
    batch_tables = {
        id(inner): ast.literal_eval(item.context_expr.args[0])
        for node in ast.walk(upgrade)
        if isinstance(node, ast.With)
        for item in node.items
        if isinstance(item.context_expr, ast.Call)
        and _method(item.context_expr) == "batch_alter_table"
        for inner in ast.walk(node)
    }
    found: list[str] = []
    backfills = any(
        _method(call) == "execute" and "UPDATE" in ast.unparse(call).upper() for call in calls
    )
    for call in calls:
        method = _method(call)
        line = f"line {call.lineno}"
        if method == "add_column":
            column = next(
                (
                    arg
                    for arg in call.args
                    if isinstance(arg, ast.Call) and _method(arg) == "Column"
                ),
                None,
            )
            if column is not None:
                nullable = _keyword(column, "nullable")
                not_null = isinstance(nullable, ast.Constant) and nullable.value is False
                if not_null and _keyword(column, "server_default") is None:
                    found.append(f"{line}: a NOT NULL column with no server default")
        elif method == "create_index":
            table_arg = call.args[1] if len(call.args) > 1 else _keyword(call, "table_name")
            table = (
                ast.literal_eval(table_arg)
                if table_arg is not None
                else batch_tables.get(id(call), "")
            )
            if table not in created:
                if not _is_true(_keyword(call, "postgresql_concurrently")):
                    found.append(f"{line}: an index on {table} built without CONCURRENTLY")
                elif id(call) not in in_autocommit:
                    found.append(f"{line}: CONCURRENTLY inside the migration's transaction")
        elif method == "alter_column" and backfills:
            nullable = _keyword(call, "nullable")
            if isinstance(nullable, ast.Constant) and nullable.value is False:
                found.append(f"{line}: NOT NULL set in the migration that backfills")
    return found


def test_the_previous_release_head_is_known():
    assert since_previous_release()  # at least this release's own migrations


@pytest.mark.parametrize("path", since_previous_release(), ids=lambda path: path.stem)
def test_migrations_since_the_previous_release_keep_it_working(path):
    assert violations(path.read_text()) == []


PLANTED = {
    "a NOT NULL column with no server default": """
def upgrade():
    with op.batch_alter_table("notes") as batch_op:
        batch_op.add_column(sa.Column("owner_user_name", sa.String(100), nullable=False))
""",
    "an index on notes built without CONCURRENTLY": """
def upgrade():
    op.create_index("ix_notes_title", "notes", ["title"])
""",
    "CONCURRENTLY inside the migration's transaction": """
def upgrade():
    op.create_index("ix_notes_title", "notes", ["title"], postgresql_concurrently=True)
""",
    "NOT NULL set in the migration that backfills": """
def upgrade():
    op.add_column("notes", sa.Column("owner_user_name", sa.String(100), nullable=True))
    op.execute("UPDATE notes SET owner_user_name = ''")
    op.alter_column("notes", "owner_user_name", nullable=False)
""",
}


@pytest.mark.parametrize("expected", PLANTED)
def test_each_rule_catches_its_planted_migration(expected):
    assert any(expected in found for found in violations(PLANTED[expected]))


def test_what_the_previous_release_survives_passes():
    assert not violations("""
def upgrade():
    op.create_table("things", sa.Column("id", sa.Integer(), primary_key=True))
    op.create_index("ix_things_id", "things", ["id"])
    op.add_column("notes", sa.Column("rank", sa.Integer(), server_default="0", nullable=False))
    with op.get_context().autocommit_block():
        op.create_index("ix_notes_rank", "notes", ["rank"], postgresql_concurrently=True)
""")
