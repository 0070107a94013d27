"""Tool-surface governance: the tool name ledger, retired tools and contract changes.

The three tables live in the database (edited through `services`, read through `selectors`),
their canonical history in `tools/fixtures/tool_surface.json` (`fixtures`). `runtime` answers
calls to retired names and outdated inputs on every replica; `tools.checks` keeps the tables,
the fixture and the registered tools consistent. docs/governance.md is the guide.
"""
