"""A stack's workflows: `StackWorkflow` (the entity), `StackOperationWorkflow` (one
create, update, delete, … walked over the dependency graph), its resource handlers and
the messages the API and apps send it. Kept light: the sandbox imports it too."""
