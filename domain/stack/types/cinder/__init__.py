"""Heat's `OS::Cinder::*` types: volumes and their attachments to servers."""
