"""Declarative base, column types and the constraint naming convention."""

from __future__ import annotations

import math
import sqlite3
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, MetaData, TypeDecorator, Uuid, event
from sqlalchemy.engine import Dialect, Engine
from sqlalchemy.orm import DeclarativeBase, registry

# Named constraints let Alembic's batch mode rebuild SQLite tables and drop them by name.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every database (SQLite forgets the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given for a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


GUID = Uuid(as_uuid=True)

# External link fields, on notes, teams, trackables and groups.
LINK_URL_MAX_LENGTH = 2048
LINK_DESCRIPTION_MAX_LENGTH = 500


class Base(DeclarativeBase):
    registry = registry(
        metadata=MetaData(naming_convention=NAMING_CONVENTION),
        type_annotation_map={uuid.UUID: GUID, datetime: UtcDateTime},
    )


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> uuid.UUID:
    return uuid.uuid4()


def render_item(type_: str, obj: object, autogen_context: object) -> str | bool:
    """Alembic autogenerate: write our column types as plain SQLAlchemy types, so that
    migrations never import app.models."""
    if type_ == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


# The circle test in SQL (services.areas) uses sin, cos and radians. PostgreSQL has
# them; SQLite has them only when built with its math functions, so a connection without
# them gets Python's.
_SQLITE_MATH = {"sin": math.sin, "cos": math.cos, "radians": math.radians}


@event.listens_for(Engine, "connect")
def _sqlite_math_functions(dbapi_connection: Any, connection_record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    for name, function in _SQLITE_MATH.items():
        try:
            dbapi_connection.execute(f"SELECT {name}(0)")
        except sqlite3.OperationalError:
            dbapi_connection.create_function(name, 1, function, deterministic=True)
