"""Heat's template language (as Heat keeps `heat/engine/hot/`): templates and their
versions, intrinsic functions, parameters, environments and property schemas."""
