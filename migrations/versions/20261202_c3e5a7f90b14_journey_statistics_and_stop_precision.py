"""journey statistics on trackables, and each stop's precision and country

Revision ID: c3e5a7f90b14
Revises: c4f1a9e07b3d
Create Date: 2026-12-02 09:00:00.000000

Existing stops are all `exact` (the 1e-4 degree grid they were saved on). Their country
is looked up in the offline GeoNames index (no network; built in the instance folder when
there are stops at all), then every trackable's statistics are computed from its stops,
oldest first, as services.trackables.statistics computes them (the haversine is copied
here so that this migration keeps meaning what it meant when it was written).
"""

import itertools
import math
from pathlib import Path

from alembic import op
import sqlalchemy as sa
from flask import current_app


# revision identifiers, used by Alembic.
revision = "c3e5a7f90b14"
down_revision = "c4f1a9e07b3d"
branch_labels = None
depends_on = None

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)
BATCH = 500

stops = sa.table(
    "journey_stops",
    sa.column("id", sa.Uuid()),
    sa.column("trackable_id", sa.Uuid()),
    sa.column("latitude", sa.Float()),
    sa.column("longitude", sa.Float()),
    sa.column("associated_utc", sa.DateTime(timezone=True)),
    sa.column("country_code", sa.String(2)),
)
trackables = sa.table(
    "trackables",
    sa.column("id", sa.Uuid()),
    sa.column("journey_distance_km", sa.Float()),
    sa.column("journey_countries", sa.JSON()),
)


def upgrade():
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("precision", sa.String(length=16), server_default="exact", nullable=False)
        )
        batch_op.add_column(
            sa.Column("country_code", sa.String(length=2), server_default="", nullable=False)
        )
    with op.batch_alter_table("trackables", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("journey_distance_km", sa.Float(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("journey_stop_count", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column(
                "journey_countries", sa.JSON(), server_default=sa.text("'[]'"), nullable=False
            )
        )
        batch_op.add_column(
            sa.Column("journey_first_stop_utc", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column("journey_last_stop_utc", sa.DateTime(timezone=True), nullable=True)
        )
    _backfill_countries()
    _backfill_statistics()


def _backfill_countries():
    bind = op.get_bind()
    points = bind.execute(sa.select(stops.c.latitude, stops.c.longitude).distinct()).all()
    if not points:
        return  # no stops: the index is not built for nothing
    from app.integrations.geo import GeoSettings, country_code_at

    config = current_app.config
    settings = GeoSettings(
        geocoder_max_distance_km=config.get("GEOCODER_MAX_DISTANCE_KM", 50.0),
        cache_dir=str(Path(current_app.instance_path) / "geo"),
    )
    found = []
    for latitude, longitude in points:
        code = country_code_at(settings, latitude, longitude)
        if code:
            found.append({"lat": latitude, "lon": longitude, "code": code})
    update = (
        stops.update()
        .where(stops.c.latitude == sa.bindparam("lat"), stops.c.longitude == sa.bindparam("lon"))
        .values(country_code=sa.bindparam("code"))
    )
    for start in range(0, len(found), BATCH):
        bind.execute(update, found[start : start + BATCH])


def _backfill_statistics():
    bind = op.get_bind()
    # Count and times in SQL; distance and countries need the stops in order (below).
    op.execute(
        "UPDATE trackables SET "
        "journey_stop_count = (SELECT count(*) FROM journey_stops s "
        "WHERE s.trackable_id = trackables.id), "
        "journey_first_stop_utc = (SELECT min(s.associated_utc) FROM journey_stops s "
        "WHERE s.trackable_id = trackables.id), "
        "journey_last_stop_utc = (SELECT max(s.associated_utc) FROM journey_stops s "
        "WHERE s.trackable_id = trackables.id)"
    )
    ordered = bind.execute(
        sa.select(
            stops.c.trackable_id, stops.c.latitude, stops.c.longitude, stops.c.country_code
        ).order_by(stops.c.trackable_id, stops.c.associated_utc, stops.c.id)
    )
    values = []
    for trackable_id, rows in itertools.groupby(ordered, key=lambda row: row.trackable_id):
        rows = list(rows)
        distance = sum(
            _haversine_km(a.latitude, a.longitude, b.latitude, b.longitude)
            for a, b in zip(rows, rows[1:])
        )
        countries = list(dict.fromkeys(row.country_code for row in rows if row.country_code))
        values.append({"key": trackable_id, "distance": round(distance, 3), "countries": countries})
    update = (
        trackables.update()
        .where(trackables.c.id == sa.bindparam("key"))
        .values(
            journey_distance_km=sa.bindparam("distance"),
            journey_countries=sa.bindparam("countries", type_=sa.JSON()),
        )
    )
    for start in range(0, len(values), BATCH):
        bind.execute(update, values[start : start + BATCH])


def _haversine_km(lat1, lon1, lat2, lon2):
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((phi2 - phi1) / 2) ** 2
        + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def downgrade():
    with op.batch_alter_table("trackables", schema=None) as batch_op:
        batch_op.drop_column("journey_last_stop_utc")
        batch_op.drop_column("journey_first_stop_utc")
        batch_op.drop_column("journey_countries")
        batch_op.drop_column("journey_stop_count")
        batch_op.drop_column("journey_distance_km")
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.drop_column("country_code")
        batch_op.drop_column("precision")
