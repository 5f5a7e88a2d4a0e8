"""`python -m worker`."""

from worker.main import main

main()
