"""actions.depends_on / depended_by the way Senlin links them: a cluster action depends
on its node actions (its `depends_on` lists them), each node action is depended on by
its cluster action. Rows written before were linked the other way round: swapped.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 13:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# One UPDATE reads every right-hand side before it writes (SQLite and PostgreSQL alike).
_SWAP = "UPDATE actions SET depends_on = depended_by, depended_by = depends_on"


def upgrade() -> None:
    op.execute(_SWAP)


def downgrade() -> None:
    op.execute(_SWAP)
