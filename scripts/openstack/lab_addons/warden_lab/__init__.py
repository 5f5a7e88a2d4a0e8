"""Add-ons that let real OpenStack services run as a lab with no agents and no VMs."""
