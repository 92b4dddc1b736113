"""The MCP server: memtui's memory as tools and resources for any MCP client."""
