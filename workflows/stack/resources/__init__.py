"""What each resource type does in a stack operation, one module per type.

`base.ResourceHandler` is the contract (and OS::Heat::None's behaviour); the handlers
are registered by type name in `workflows/stack/resources/registry.py`.
"""
