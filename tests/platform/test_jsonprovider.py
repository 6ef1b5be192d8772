"""The app's JSON (app.platform.jsonprovider): what it writes beyond JSON's own types, and
what it refuses to write."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from flask import json

from app.models.base import UtcDateTime, render_item


def test_decimals_and_uuids_are_written_as_numbers_and_strings(app):
    key = uuid.UUID("12345678-1234-5678-1234-567812345678")
    text = json.dumps({"price": Decimal("1.25"), "id": key, 7: "seven"})
    assert json.loads(text) == {"price": 1.25, "id": str(key), "7": "seven"}


def test_anything_else_it_cannot_write_is_a_type_error(app):
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps({"tags": {"a"}})


def test_a_utc_column_takes_aware_times_only_and_stores_them_in_utc():
    column = UtcDateTime()
    later = datetime(2026, 12, 6, 10, 0, tzinfo=timezone(timedelta(hours=2)))
    assert column.process_bind_param(later, None) == datetime(2026, 12, 6, 8, 0, tzinfo=UTC)
    assert column.process_bind_param(None, None) is None
    with pytest.raises(ValueError, match="naive datetime"):
        column.process_bind_param(datetime(2026, 12, 6, 10, 0), None)


def test_migrations_spell_the_utc_column_as_a_plain_sqlalchemy_type():
    assert render_item("type", UtcDateTime(), None) == "sa.DateTime(timezone=True)"
    assert render_item("type", object(), None) is False
    assert render_item("column", UtcDateTime(), None) is False
