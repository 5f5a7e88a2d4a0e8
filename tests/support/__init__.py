"""Test support shared by the test packages (simcloud servers, Temporal, `eventually`)."""
