"""Tool-surface governance, a Django app (label `tools`): a tool's lifecycle (live, deprecated,
alias, retired), the tool name ledger, contract changes and the client surface.

The tables (`models`) are written through `services` only, by the admin (`admin`), the
lifecycle commands (`management`) and the fixture (`fixtures`), and read through `selectors`.
Their canonical history is `governance/fixtures/tool_surface.json`. `runtime` answers calls to
deprecated tools, aliases, retired names and outdated inputs on every replica, judging retire-on
dates by `clock`; `client_surface` shapes what each kind of client is listed; `checks` keeps the
tables, the fixture and the registered tools consistent. The app keeps the label `tools`, so its
tables, migrations, admin URLs and permissions are those it had inside the tool catalogue
(docs/adr/0038-three-packages.md). docs/governance.md is the guide, docs/adr/0030-tool-lifecycle.md
the design.
"""
