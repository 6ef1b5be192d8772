"""teams, memberships and invite links

Revision ID: 6f59b4e15370
Revises: 886a021c897a
Create Date: 2026-11-22 05:46:40.319395

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '6f59b4e15370'
down_revision = '886a021c897a'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('teams',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('name', sa.String(length=50), nullable=False),
    sa.Column('slug', sa.String(length=50), nullable=False),
    sa.Column('title', sa.String(length=100), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('external_link_url', sa.String(length=2048), nullable=True),
    sa.Column('external_link_description', sa.String(length=500), nullable=False),
    sa.Column('join_policy', sa.Enum('Open', 'RequestsAllowed', 'InviteOnly', name='joinpolicy', native_enum=False, length=64), nullable=False),
    sa.Column('page_visibility', sa.Enum('Public', 'MembersOnly', name='pagevisibility', native_enum=False, length=64), nullable=False),
    sa.Column('default_note_visibility', sa.Enum('Private', 'Public', 'VisibleOnceAssociatedTrackableAccessed', name='notevisibility', native_enum=False, length=64), nullable=False),
    sa.Column('content_language', sa.String(length=35), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_activity_utc', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_teams')),
    sa.UniqueConstraint('slug', name=op.f('uq_teams_slug'))
    )
    op.create_table('team_invite_links',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('team_id', sa.Uuid(), nullable=False),
    sa.Column('code', sa.String(length=26), nullable=False),
    sa.Column('created_by_user_id', sa.Uuid(), nullable=False),
    sa.Column('is_single_use', sa.Boolean(), nullable=False),
    sa.Column('used_utc', sa.DateTime(timezone=True), nullable=True),
    sa.Column('used_by_user_id', sa.Uuid(), nullable=True),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['created_by_user_id'], ['users.id'], name=op.f('fk_team_invite_links_created_by_user_id_users'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_team_invite_links_team_id_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['used_by_user_id'], ['users.id'], name=op.f('fk_team_invite_links_used_by_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_team_invite_links')),
    sa.UniqueConstraint('code', name=op.f('uq_team_invite_links_code'))
    )
    with op.batch_alter_table('team_invite_links', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_team_invite_links_created_by_user_id'), ['created_by_user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_team_invite_links_team_id'), ['team_id'], unique=False)

    op.create_table('team_memberships',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('team_id', sa.Uuid(), nullable=False),
    sa.Column('user_id', sa.Uuid(), nullable=False),
    sa.Column('status', sa.Enum('RequestingMembership', 'Invited', 'Member', 'Denied', 'Refused', name='membershipstatus', native_enum=False, length=64), nullable=False),
    sa.Column('is_admin', sa.Boolean(), nullable=False),
    sa.Column('created_utc', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_utc', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_team_memberships_team_id_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_team_memberships_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_team_memberships')),
    sa.UniqueConstraint('team_id', 'user_id', name=op.f('uq_team_memberships_team_id'))
    )
    with op.batch_alter_table('team_memberships', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_team_memberships_user_id'), ['user_id'], unique=False)



def downgrade():
    with op.batch_alter_table('team_memberships', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_team_memberships_user_id'))

    op.drop_table('team_memberships')
    with op.batch_alter_table('team_invite_links', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_team_invite_links_team_id'))
        batch_op.drop_index(batch_op.f('ix_team_invite_links_created_by_user_id'))

    op.drop_table('team_invite_links')
    op.drop_table('teams')
