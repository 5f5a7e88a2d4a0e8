"""Heat's `OS::Glance::*` types: images imported from a URL."""
