"""Senlin clusters: state and rules, nodes, profiles, size arithmetic, membership,
lifecycle messages, receivers, health detection and recovery steps, and the policy
types under `policies/`."""
