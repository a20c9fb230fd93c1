"""How agents reach a store: the MCP server and the HTTP API, on one table of calls."""
