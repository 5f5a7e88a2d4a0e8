"""software_configs and software_deployments tables (Heat's software configs)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 19:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

import store.columns


revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('software_configs',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('project_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('group', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('body', sa.JSON(), nullable=False),
    sa.Column('created_at', store.columns.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('software_configs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_software_configs_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_software_configs_project_id'), ['project_id'], unique=False)


    op.create_table('software_deployments',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('project_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('config_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('server_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('input_values', sa.JSON(), nullable=True),
    sa.Column('output_values', sa.JSON(), nullable=True),
    sa.Column('action', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('status_reason', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('stack_user_project_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('stack_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('resource_name', sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True),
    sa.Column('created_at', store.columns.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', store.columns.UTCDateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('software_deployments', schema=None) as batch_op:
        for column in ('config_id', 'created_at', 'project_id', 'server_id', 'stack_id'):
            batch_op.create_index(
                batch_op.f(f'ix_software_deployments_{column}'), [column], unique=False
            )


def downgrade() -> None:
    with op.batch_alter_table('software_deployments', schema=None) as batch_op:
        for column in ('stack_id', 'server_id', 'project_id', 'created_at', 'config_id'):
            batch_op.drop_index(batch_op.f(f'ix_software_deployments_{column}'))

    op.drop_table('software_deployments')
    with op.batch_alter_table('software_configs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_software_configs_project_id'))
        batch_op.drop_index(batch_op.f('ix_software_configs_created_at'))

    op.drop_table('software_configs')
