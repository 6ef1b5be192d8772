"""events and notifications: the transactional outbox of watchable changes and the inbox

Revision ID: e8814d97c75e
Revises: c4a8e2f61d07
Create Date: 2026-11-27 09:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = 'e8814d97c75e'
down_revision = 'c4a8e2f61d07'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('events',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('event_type', sa.String(length=50), nullable=False),
    sa.Column('trackable_id', sa.Uuid(), nullable=True),
    sa.Column('group_id', sa.Uuid(), nullable=True),
    sa.Column('note_id', sa.Uuid(), nullable=True),
    sa.Column('actor_user_id', sa.Uuid(), nullable=True),
    sa.Column('fields', sa.JSON(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['actor_user_id'], ['users.id'], name=op.f('fk_events_actor_user_id_users'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['group_id'], ['trackable_groups.id'], name=op.f('fk_events_group_id_trackable_groups'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['note_id'], ['notes.id'], name=op.f('fk_events_note_id_notes'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['trackable_id'], ['trackables.id'], name=op.f('fk_events_trackable_id_trackables'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_events'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_events_actor_user_id'), ['actor_user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_events_trackable_id'), ['trackable_id'], unique=False)

    op.create_table('notifications',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('event_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('read_utc', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['event_id'], ['events.id'], name=op.f('fk_notifications_event_id_events'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_notifications_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_notifications')),
    sa.UniqueConstraint('event_id', 'user_id', name=op.f('uq_notifications_event_id'))
    )
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.create_index('ix_notifications_inbox', ['user_id', 'created_utc', 'id'], unique=False)



def downgrade():
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.drop_index('ix_notifications_inbox')

    op.drop_table('notifications')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_events_trackable_id'))
        batch_op.drop_index(batch_op.f('ix_events_actor_user_id'))

    op.drop_table('events')
