"""Protocol adapters: the MCP server over Streamable HTTP (ASGI) and stdio, built on the SDK."""
