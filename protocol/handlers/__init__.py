"""The MCP server's request handlers (protocol/server.py wires them into the SDK's `Server`).

One module a family, each a class holding what its handlers share, over ``callers``
(`Callers`: who is calling, shaped by the client rules, and the tools it is offered):

- ``tools``: `tools/list`, `tools/call` and the `listing_once` middleware;
- ``resources``: the widgets' `ui://` resources and the reference data;
- ``prompts``: the workflow prompts.
"""
