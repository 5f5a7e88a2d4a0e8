"""Heat resource types, one module per type: schema and the pure rules of that type.

Each module defines `NAME` and `TYPE`; `domain/stack/resource_types.py` registers them. What a
type does on create / update / delete / check is in `workflows/stack/resources/`.
"""
