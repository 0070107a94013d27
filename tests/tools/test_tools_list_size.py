"""Every conversation pays for `tools/list`: the whole surface stays within a byte budget.

The listing is built exactly as the server builds it (`tools.mcp.server.mcp_tool` for every
registered tool, dumped by alias without None) and measured as compact JSON.
"""

import json

from tools.mcp.server import mcp_tool
from tools.registry import default_tools

BUDGET_BYTES = 42_000


def tools_list_bytes() -> int:
    tools = [mcp_tool(tool).model_dump(by_alias=True, mode="json", exclude_none=True) for tool in default_tools()]
    return len(json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False).encode())


def test_tools_list_stays_within_budget():
    size = tools_list_bytes()
    print(f"tools/list: {size:,} bytes of {BUDGET_BYTES:,}")
    assert size <= BUDGET_BYTES, f"tools/list is {size:,} bytes; the budget is {BUDGET_BYTES:,}"
