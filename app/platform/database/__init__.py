"""The database under every area, one concern a module: the engine and its connections
(engine), what a request answers while the database is away (outages, guard), reads
below the ORM (driver), and the locks of a read that decides a write (locks)."""

from __future__ import annotations

from app.platform.database.driver import (
    TABLES_WRITTEN,
    PreparedStatement,
    cursor_alone,
    execute_by_driver,
    get_by_driver,
    insert_by_driver,
    loaded,
    mapped_columns,
    note_tables_written,
    prepared,
    prepared_statements_on,
)
from app.platform.database.engine import (
    LAST_CHECKIN,
    enforce_foreign_keys,
    engine_options,
    measure_pool,
    ping_when_idle,
    release_pools,
)
from app.platform.database.locks import (
    begin_immediate,
    first_in_transaction,
    get_for_write,
    insert_ignoring_duplicates,
    lock_for_write,
    lock_rows,
    on_write_lock,
    savepoints_inside_transactions,
)
from app.platform.database.outages import (
    CONFLICT_CODES,
    RETRY_AFTER_SECONDS,
    check_database,
    database_conflict,
    database_unavailable,
    guard_against_outages,
    is_conflict,
    is_outage,
    note_failure,
    register_outage_answers,
)
from app.platform.database.replica import (
    RoutingSession,
    primary_when,
    read_engine,
    replica_report,
)

__all__ = [
    "CONFLICT_CODES",
    "LAST_CHECKIN",
    "RETRY_AFTER_SECONDS",
    "TABLES_WRITTEN",
    "PreparedStatement",
    "RoutingSession",
    "begin_immediate",
    "check_database",
    "cursor_alone",
    "database_conflict",
    "database_unavailable",
    "enforce_foreign_keys",
    "engine_options",
    "execute_by_driver",
    "first_in_transaction",
    "get_by_driver",
    "get_for_write",
    "guard_against_outages",
    "insert_by_driver",
    "insert_ignoring_duplicates",
    "is_conflict",
    "is_outage",
    "loaded",
    "lock_for_write",
    "lock_rows",
    "mapped_columns",
    "measure_pool",
    "note_failure",
    "note_tables_written",
    "on_write_lock",
    "ping_when_idle",
    "prepared",
    "prepared_statements_on",
    "primary_when",
    "read_engine",
    "register_outage_answers",
    "release_pools",
    "replica_report",
    "savepoints_inside_transactions",
]
