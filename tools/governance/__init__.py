"""Tool-surface governance: a tool's lifecycle (live, deprecated, alias, retired), the tool name
ledger and contract changes.

The tables live in the database (edited through `services`, read through `selectors`), their
canonical history in `tools/fixtures/tool_surface.json` (`fixtures`). `runtime` answers calls to
deprecated tools, aliases, retired names and outdated inputs on every replica, judging retire-on
dates by `clock`; `tools.checks` keeps the tables, the fixture and the registered tools
consistent. docs/governance.md is the guide, docs/adr/0030-tool-lifecycle.md the design.
"""
