"""Senlin policy types, one module each (`batch`, `deletion`, `health`); `specs` is the
one entry point for a user's policy spec, `base` what every spec model shares."""
