"""The MCP SDK's shapes, one module per SDK major (and fastmcp): the only code that reads its internals.

:mod:`.common` holds what both majors share (or what is told apart by a feature check on one
object), :mod:`.v1` mcp 1.x's internals, :mod:`.v2` mcp 2.x's, :mod:`.fastmcp` fastmcp's. An SDK
change is fixed in one place, and functions here never raise on an unexpected shape: they
return ``None`` (or an empty value).
"""
