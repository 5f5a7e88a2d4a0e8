"""A cluster's workflows: `ClusterWorkflow` (the entity), its operation children
(create, check, delete, update, scale-in with `NodeDeletionWorkflow` per victim,
recover with `NodeRecoveryWorkflow` per node) and the messages they take. Kept light:
the sandbox imports it too."""
