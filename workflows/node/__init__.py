"""The entity workflow of a standalone node (Senlin's orphan node)."""
