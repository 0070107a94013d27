#!/usr/bin/env bash
# How to point the usual MCP hosts at this server.
url="$1"
here="$(cd "$(dirname "$0")/.." && pwd)"
cat <<TXT

TomTom Maps MCP server: $url   (health: ${url%/mcp}/healthz)
Send your TomTom key as the tomtom-api-key header, or set TOMTOM_API_KEY in .env.

  Claude Code:     claude mcp add --transport http tomtom-maps $url --header "tomtom-api-key: YOUR_KEY"
  Claude Desktop:  claude_desktop_config.json -> "mcpServers": {"tomtom-maps": {"command": "$here/.venv/bin/tomtom-maps-mcp",
                     "env": {"TOMTOM_API_KEY": "YOUR_KEY"}}}      (stdio)
  VS Code:         .vscode/mcp.json -> {"servers": {"tomtom-maps": {"type": "http", "url": "$url",
                     "headers": {"tomtom-api-key": "YOUR_KEY"}}}}
  Cursor:          ~/.cursor/mcp.json -> {"mcpServers": {"tomtom-maps": {"url": "$url",
                     "headers": {"tomtom-api-key": "YOUR_KEY"}}}}

TXT
