"""Heat's `OS::Nova::*` types beside the server: keypairs."""
