"""`HealthManagerWorkflow`: the durable loop of a cluster's health policy, and what it
receives (lifecycle events, policy changes). Kept light: the sandbox imports it too."""
