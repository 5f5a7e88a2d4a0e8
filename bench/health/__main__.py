"""`python -m bench.health`: run the benchmark and print its table (nothing saved;
`python -m bench health` also writes bench/results/)."""

from __future__ import annotations

import asyncio

from bench.health.runner import run
from bench.health.tables import table

print(table(asyncio.run(run())))
