"""trackable comments; retry tags (clientMutationId) unique per trackable on comments and stops

Revision ID: d07e2ee09a65
Revises: da7cd4a924d8
Create Date: 2026-11-23 13:59:18.901303

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'd07e2ee09a65'
down_revision = 'da7cd4a924d8'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('trackable_comments',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('trackable_id', sa.Uuid(), nullable=False),
    sa.Column('author_user_id', sa.Uuid(), nullable=True),
    sa.Column('author_display_name', sa.String(length=50), nullable=False),
    sa.Column('body', sa.Text(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('edited_utc', sa.DateTime(timezone=True), nullable=True),
    sa.Column('observed_utc', sa.DateTime(timezone=True), nullable=True),
    sa.Column('client_mutation_id', sa.String(length=100), nullable=True),
    sa.ForeignKeyConstraint(['author_user_id'], ['users.id'], name=op.f('fk_trackable_comments_author_user_id_users'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trackable_id'], ['trackables.id'], name=op.f('fk_trackable_comments_trackable_id_trackables'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_trackable_comments')),
    sa.UniqueConstraint('trackable_id', 'client_mutation_id', name=op.f('uq_trackable_comments_trackable_id'))
    )
    with op.batch_alter_table('trackable_comments', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_trackable_comments_author_user_id'), ['author_user_id'], unique=False)
        batch_op.create_index('ix_trackable_comments_trackable', ['trackable_id', 'created_utc'], unique=False)

    with op.batch_alter_table('journey_stops', schema=None) as batch_op:
        batch_op.create_unique_constraint(batch_op.f('uq_journey_stops_trackable_id'), ['trackable_id', 'client_mutation_id'])



def downgrade():
    with op.batch_alter_table('journey_stops', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_journey_stops_trackable_id'), type_='unique')

    with op.batch_alter_table('trackable_comments', schema=None) as batch_op:
        batch_op.drop_index('ix_trackable_comments_trackable')
        batch_op.drop_index(batch_op.f('ix_trackable_comments_author_user_id'))

    op.drop_table('trackable_comments')
