"""nodes.role, nodes.metadata_ and clusters.config (Senlin's node role and metadata, and
cluster config)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 06:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('clusters', schema=None) as batch_op:
        batch_op.add_column(sa.Column('config', sa.JSON(), nullable=False, server_default='{}'))
        batch_op.add_column(sa.Column('timeout', sa.Integer(), nullable=True))
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                'role',
                sqlmodel.sql.sqltypes.AutoString(length=255),
                nullable=False,
                server_default='',
            )
        )
        batch_op.add_column(
            sa.Column('metadata_', sa.JSON(), nullable=False, server_default='{}')
        )


def downgrade() -> None:
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.drop_column('metadata_')
        batch_op.drop_column('role')
    with op.batch_alter_table('clusters', schema=None) as batch_op:
        batch_op.drop_column('timeout')
        batch_op.drop_column('config')
