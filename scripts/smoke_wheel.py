"""Start the installed package as a desktop client would and ask it for its tools.

Run by the release workflow against each built wheel (.github/workflows/release.yml), in an
environment holding only that wheel and its dependencies: `tomtom-maps-mcp --version` must name
the compiled simplifier (a wheel without its kernel is a build failure, not a slower release),
and stdio must answer `initialize` and `tools/list`. TomTom is never called.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile

from mcp import Client, StdioServerParameters

EXPECTED = {"tomtom-geocode", "tomtom-routing", "tomtom-traffic"}


async def listed_tools(command: str, home: str) -> set[str]:
    env = {**os.environ, "HOME": home, "TOMTOM_MCP_DATA_DIR": home, "TOMTOM_API_KEY": "smoke-test-key"}
    params = StdioServerParameters(command=command, args=["stdio"], env=env)
    async with Client(params, mode="legacy") as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def main() -> None:
    command = shutil.which("tomtom-maps-mcp", path=os.path.dirname(sys.executable)) or shutil.which("tomtom-maps-mcp")
    if command is None:
        raise SystemExit("the console script tomtom-maps-mcp is not installed")
    version = subprocess.run([command, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    print(version)
    if "compiled kernel" not in version:
        raise SystemExit(f"the wheel runs without its compiled kernel: {version}")
    with tempfile.TemporaryDirectory() as home:
        names = asyncio.run(listed_tools(command, home))
    if missing := sorted(EXPECTED - names):
        raise SystemExit(f"tools/list lacks {missing}")
    print(f"{len(names)} tools listed over stdio")


if __name__ == "__main__":
    main()
