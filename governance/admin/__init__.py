"""The admin for product staff: a tool's whole lifecycle, contract changes, the ledger.

Every write goes through `governance.services` (the same rules as the management commands,
code and the system checks), with the staff member as the actor, so each one lands in the
governance history; forms show a broken rule on the field at fault. Pickers offer what a rule
allows and label every ledger name with its status (live, deprecated, alias, retired, dropped);
the services still judge what is saved.

One module a table, and the parts they share; importing this package (Django's admin
autodiscovery) registers every admin:

- `ledger`: **the tool name ledger**; names are read-only, their dates and note are corrected
  through the services. It routes two pages of its own:
  - `history`: one tool's **governance history** (`admin:tools_toolname_governance`);
  - `fixture`: **compare with the committed fixture** (`admin:tools_toolname_fixture`): what the
    admin changed against `governance/fixtures/tool_surface.json`, the new file to download, and
    what `check --deploy --database default` reports now and once the file is committed.
- `deprecated` and `aliases`: **deprecated tools** and **aliases**, added and edited here, with
  ordered replacements, the reason and the retire-on date; withdrawn or ended on a page that asks
  why.
- `retired`: **retired tools**; retiring a live tool is the kill switch (every replica stops
  listing it and answers calls to it as retired within GOVERNANCE_REFRESH_SECONDS plus one
  request; the form asks for a confirmation); un-retiring is its own page that asks why (no
  generic delete).
- `lifecycle`: what those three share: each tool's page shows who still calls it (the analytics'
  panel, when the analytics are installed), links to its governance history and the analytics'
  old callers, and undoing asks why.
- `contract_changes`, `events` (the governance history, read-only) and `client_surfaces`.
- `summary`: the header each tool's pages open on (state, replacements, retire-on date, who still
  calls it with a total and per host family, from the analytics' `tool_summary` tags) and its
  CSV download (`admin:tools_toolname_callers_csv`).
- Shared: `fields` (the status-labelled pickers, the ordered replacements of live tools a model
  can call, every services' refusal on the form at once), `mapping` (an alias's argument pairs,
  checked as you type by `tools/governance.js`) and `shared` (`via`, the stylesheet and script,
  how soon a change is in force, the links).
"""

from governance.admin import aliases, client_surfaces, contract_changes, deprecated, events, ledger, retired

__all__ = ["aliases", "client_surfaces", "contract_changes", "deprecated", "events", "ledger", "retired"]
