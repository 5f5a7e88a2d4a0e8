"""Warden's benchmarks (`python -m bench`): a module or a package for each one, and
what they share: the running stack (`stack`, with the tests' own processes), the bare
echo workflow (`echo`), calls to Warden's API (`warden_api`), timing (`measure`),
histories (`histories`), processes' CPU and memory (`usage`), the figures' rows
(`figures`) and the table of docs/performance.md (`report`)."""
