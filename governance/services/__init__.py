"""Writes to the tool surface: the one path for the admin, the management commands, migrations'
hooks, the fixture, the replicas (a retire-on date that came) and code.

Every function is keyword-only, validates with the same rules the system checks report
(`rules`), calls `full_clean()` and runs in one transaction. A rule a write would break raises
`ValidationError` keyed by the field at fault, so the admin shows it on the form; a write that
breaks several rules is refused naming all of them at once (`lifecycle.refusals`).

- A name must be in the ledger before it can be deprecated, aliased or retired (an alias may
  add a name no release listed, `unlisted=True`); replacements and an alias's target must be
  live tools (registered, not retired, not an alias), and not app-only unless the tool they
  replace is app-only too (a model is never listed an app-only tool).
- A name is in at most one lifecycle state: deprecating takes a live tool; making a name an
  alias ends its deprecation; retiring ends its deprecation or alias. A retire-on date is a
  later UTC day (`clock.today`); when it comes, `scheduled_retirements_fire` turns the
  deprecation or alias into a retirement (via `schedule`).
- Undoing a state (un-retiring, withdrawing a deprecation, removing an alias) takes a reason,
  which the history keeps.
- Retiring a tool, or making it an alias, deletes its contract changes: the retired-tool
  answer, or the alias's target, covers every call.
- A contract change names a live tool, and its kind agrees with the current schema: a removed
  or renamed input is gone from it (a new name is in it), a type change's `now` is the input's
  current shape and `was` no longer passes, a unit change names the input that took over.
- The ledger only grows (`ledger_add` never changes or removes a row).
- Every write records a `GovernanceEvent` in its own transaction (`history.audited`): what
  changed (each field before and after), a sentence saying so, and who made it (`by`, the
  admin's user, and `via`).
- The committed history (the fixture) is written as it stands, not by these rules
  (`committed`).

One module per entity (`ledger`, `deprecations`, `aliases`, `retirements`, `contract_changes`,
`committed`); callers use this package: `services.<name>(...)`.
"""

from governance.services.aliases import alias_create, alias_remove, alias_update, alias_validate
from governance.services.committed import committed_history_seed, committed_record_delete, committed_record_put
from governance.services.contract_changes import (
    contract_change_delete,
    contract_change_record,
    contract_change_update,
    contract_change_validate,
)
from governance.services.deprecations import (
    deprecation_create,
    deprecation_update,
    deprecation_validate,
    deprecation_withdraw,
)
from governance.services.history import (
    ALIAS_FIELDS,
    CONTRACT_CHANGE_FIELDS,
    DEPRECATION_FIELDS,
    EVENT_MESSAGE_MAX,
    LEDGER_FIELDS,
    RETIREMENT_FIELDS,
    Action,
    Actor,
    Audit,
    Committed,
    Record,
    Subject,
    audited,
    governance_event_record,
    snapshot,
)
from governance.services.ledger import ledger_add, ledger_update
from governance.services.retirements import (
    VIA_SCHEDULE,
    retired_tool_create,
    retired_tool_unretire,
    retired_tool_update,
    retired_tool_validate,
    retirement_cancel,
    retirement_schedule,
    scheduled_retirements_fire,
)

__all__ = [
    "ALIAS_FIELDS",
    "CONTRACT_CHANGE_FIELDS",
    "DEPRECATION_FIELDS",
    "EVENT_MESSAGE_MAX",
    "LEDGER_FIELDS",
    "RETIREMENT_FIELDS",
    "VIA_SCHEDULE",
    "Action",
    "Actor",
    "Audit",
    "Committed",
    "Record",
    "Subject",
    "alias_create",
    "alias_remove",
    "alias_update",
    "alias_validate",
    "audited",
    "committed_history_seed",
    "committed_record_delete",
    "committed_record_put",
    "contract_change_delete",
    "contract_change_record",
    "contract_change_update",
    "contract_change_validate",
    "deprecation_create",
    "deprecation_update",
    "deprecation_validate",
    "deprecation_withdraw",
    "governance_event_record",
    "ledger_add",
    "ledger_update",
    "retired_tool_create",
    "retired_tool_unretire",
    "retired_tool_update",
    "retired_tool_validate",
    "retirement_cancel",
    "retirement_schedule",
    "scheduled_retirements_fire",
    "snapshot",
]
