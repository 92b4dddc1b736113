"""MCP tools, a few per module, each a thin call into the engine (see memtui.mcp.server)."""
