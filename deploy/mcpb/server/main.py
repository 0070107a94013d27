"""The bundle's entry point: the released package's console script, serving MCP over stdio."""

from tomtom_mcp.cli import main

main(["stdio"])
