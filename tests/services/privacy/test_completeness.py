"""The data export is complete: every table of the models with a column that
refers to a user is exported by that column, or the column is on the reviewed list of
what is not exported, with its reason; and no secret-looking column is exported without
review. A model or column added later fails here until the catalogue
(app/services/privacy/catalogue.py) says what becomes of it.

A column refers to a user when it has a foreign key to `users`, when its name ends in
`user_id` (ids kept without a foreign key), or when it is one of the columns below that
hold a user's id, or a key made from it, by value."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from sqlalchemy import Column, ForeignKey, Integer, MetaData, String, Table, Uuid

from app.models import Base
from app.services.privacy.archive import exported_columns
from app.services.privacy.catalogue import (
    EXCLUDED,
    FILES,
    NOT_EXPORTED,
    REVIEWED_NOT_SECRET,
    JsonFile,
    Part,
)

USER_ID_NAME = re.compile(r"(^|_)user_id$")
# Columns that hold a user by value, found by reading the models (no foreign key, no
# telling name); each is handled in the catalogue like any other reference.
BY_VALUE = {
    "budget_spends.subject": "an account's own budgets are kept under its id as text",
    "content_images.parent_id": "a profile image's parent is its user",
    "content_reports.client_key": "`user:<id>` for a signed-in sender",
    "jobs.payload": "jobs name the accounts they work for",
    "login_failures.email_hash": "a keyed hash of an address, an account's or not",
    "rate_limit_counters.key": "a hash of a limit's key, an email for the sign-in limits",
}
SECRET_LOOKING = re.compile(r"hash|secret|password|token|stamp|nonce|key|code")


def user_references(metadata: MetaData, by_value: Iterable[str] = ()) -> list[tuple[str, ...]]:
    """Each reference to a user, as `table.column` names (a composite foreign key's
    columns together)."""
    references: list[tuple[str, ...]] = []
    for table in metadata.sorted_tables:
        if table.name == "users":
            references.append(("users.id",))
            continue
        in_keys: set[str] = set()
        for constraint in table.foreign_key_constraints:
            if constraint.referred_table.name == "users":
                names = tuple(f"{table.name}.{column.name}" for column in constraint.columns)
                references.append(names)
                in_keys.update(names)
        for column in table.columns:
            name = f"{table.name}.{column.name}"
            if USER_ID_NAME.search(column.name) and name not in in_keys:
                references.append((name,))
    known = {name for reference in references for name in reference}
    references += [(name,) for name in by_value if name not in known]
    return references


def unaccounted(
    metadata: MetaData,
    files: Iterable[JsonFile],
    not_exported: Iterable[str],
    by_value: Iterable[str] = tuple(BY_VALUE),
) -> list[str]:
    """The references no part selects rows by and the reviewed list does not name."""
    selecting = {
        f"{part.table.name}.{name}"
        for json_file in files
        for part in json_file.parts
        for name in (*part.by, *part.refers)
    }
    ok = selecting | set(not_exported)
    return [
        " + ".join(reference)
        for reference in user_references(metadata, by_value)
        if not ok & set(reference)
    ]


def parts() -> list[Part]:
    return [part for json_file in FILES for part in json_file.parts]


def columns_of(metadata: MetaData) -> set[str]:
    return {f"{table.name}.{column.name}" for table in metadata.sorted_tables for column in table.c}


def test_every_reference_to_a_user_is_exported_or_excluded_with_a_reason():
    missing = unaccounted(Base.metadata, FILES, NOT_EXPORTED)
    assert not missing, (
        "columns that refer to a user are neither exported nor in NOT_EXPORTED "
        f"(app/services/privacy/catalogue.py): {missing}"
    )


def test_the_check_finds_a_new_model_that_refers_to_a_user():
    metadata = MetaData()
    Table("users", metadata, Column("id", Uuid, primary_key=True))
    Table(
        "gadgets",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("maker_id", Uuid, ForeignKey("users.id")),
    )
    Table(
        "gadget_logs",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("seen_by_user_id", Uuid),  # no foreign key: found by its name
        Column("label", String(20)),
    )
    found = unaccounted(metadata, [], [], ["gadget_logs.label"])
    assert sorted(found) == [
        "gadget_logs.label",
        "gadget_logs.seen_by_user_id",
        "gadgets.maker_id",
        "users.id",
    ]
    listed = ["gadget_logs.seen_by_user_id", "gadget_logs.label"]
    assert sorted(unaccounted(metadata, [], listed, ["gadget_logs.label"])) == [
        "gadgets.maker_id",
        "users.id",
    ]


def test_the_users_table_is_exported_by_its_id():
    assert any(part.table.name == "users" and part.by == ("id",) for part in parts())


def test_every_listed_column_exists():
    existing = columns_of(Base.metadata)
    for listing in (EXCLUDED, NOT_EXPORTED, REVIEWED_NOT_SECRET, BY_VALUE):
        stale = set(listing) - existing
        assert not stale, f"no such columns: {sorted(stale)}"
    for part in parts():
        for name in (*part.by, *part.refers, *(part.columns or ())):
            assert name in part.table.c, f"{part.key}: {part.table.name} has no {name}"


def test_every_reason_says_something():
    for listing in (EXCLUDED, NOT_EXPORTED, REVIEWED_NOT_SECRET):
        for column, reason in listing.items():
            assert len(reason.split()) >= 4, column


def test_the_secrets_the_issue_names_are_excluded():
    for column in (
        "users.password_hash",
        "users.security_stamp",
        "users.two_factor_shared_key",
        "refresh_tokens.token_hash",
        "recovery_codes.code_hash",
        "email_codes.nonce_hash",
        "trackable_codes.code_hash",
        "webhook_subscriptions.secret_encrypted",
        "webhook_subscriptions.previous_secret_encrypted",
    ):
        assert column in EXCLUDED, column
    assert "recovery_codes.user_id" in NOT_EXPORTED  # the table holds nothing but hashes


@pytest.mark.parametrize("part", parts(), ids=lambda part: f"{part.table.name}:{part.key}")
def test_no_secret_looking_column_is_exported_unreviewed(part):
    for name in exported_columns(part):
        column = f"{part.table.name}.{name}"
        if SECRET_LOOKING.search(name):
            assert column in REVIEWED_NOT_SECRET, (
                f"{column} looks like a secret: add it to EXCLUDED or REVIEWED_NOT_SECRET"
            )
        assert column not in EXCLUDED


def test_file_and_list_names_are_unique():
    names = [json_file.name for json_file in FILES]
    assert len(names) == len(set(names))
    for json_file in FILES:
        keys = [part.key for part in json_file.parts]
        assert len(keys) == len(set(keys)), json_file.name
        assert not {"exportedUtc", "accountId"} & set(keys), json_file.name
