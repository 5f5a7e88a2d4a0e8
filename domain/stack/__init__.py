"""Heat stacks: state, the rules of which operations a stack allows, update plans,
scaling groups, and the resource types (one module per type under `types/`)."""
