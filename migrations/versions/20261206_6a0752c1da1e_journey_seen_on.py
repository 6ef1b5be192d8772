"""journey statistics: the first and last day a trackable was seen

Revision ID: 6a0752c1da1e
Revises: f3c7a9d2b418
Create Date: 2026-12-06 21:00:00.000000

Two nullable columns (the previous release neither reads nor writes them), filled from the
existing stops as services.trackables.statistics computes them: each stop's "seen on" day is
the UTC day of its observed time, else of its saved time; a trackable keeps the earliest and
the latest. Trackables without stops keep null.
"""

from datetime import UTC

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "6a0752c1da1e"
down_revision = "f3c7a9d2b418"
branch_labels = None
depends_on = None

BATCH = 500

stops = sa.table(
    "journey_stops",
    sa.column("trackable_id", sa.Uuid()),
    sa.column("associated_utc", sa.DateTime(timezone=True)),
    sa.column("observed_utc", sa.DateTime(timezone=True)),
)
trackables = sa.table(
    "trackables",
    sa.column("id", sa.Uuid()),
    sa.column("journey_first_seen_on", sa.Date()),
    sa.column("journey_last_seen_on", sa.Date()),
)


def upgrade():
    with op.batch_alter_table("trackables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("journey_first_seen_on", sa.Date(), nullable=True))
        batch_op.add_column(sa.Column("journey_last_seen_on", sa.Date(), nullable=True))
    _backfill()


def _backfill():
    bind = op.get_bind()
    seen = sa.func.coalesce(stops.c.observed_utc, stops.c.associated_utc)
    rows = bind.execute(
        sa.select(stops.c.trackable_id, sa.func.min(seen), sa.func.max(seen)).group_by(
            stops.c.trackable_id
        )
    )
    values = [
        {"key": trackable_id, "first": _day(first), "last": _day(last)}
        for trackable_id, first, last in rows
    ]
    update = (
        trackables.update()
        .where(trackables.c.id == sa.bindparam("key"))
        .values(
            journey_first_seen_on=sa.bindparam("first", type_=sa.Date()),
            journey_last_seen_on=sa.bindparam("last", type_=sa.Date()),
        )
    )
    for start in range(0, len(values), BATCH):
        bind.execute(update, values[start : start + BATCH])


def _day(moment):
    """The UTC day of a stored time (SQLite returns it without its zone, which is UTC)."""
    if moment.tzinfo is None:
        return moment.date()
    return moment.astimezone(UTC).date()


def downgrade():
    with op.batch_alter_table("trackables", schema=None) as batch_op:
        batch_op.drop_column("journey_last_seen_on")
        batch_op.drop_column("journey_first_seen_on")
