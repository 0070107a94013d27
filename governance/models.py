"""The tool-surface tables: the tool name ledger, deprecated tools, aliases, retired tools,
contract changes, and the governance history (`GovernanceEvent`, one row per change to the
others).

Rows are written through `governance.services` (the admin and code share it) and read
through `governance.selectors`. The ledger only grows: its rows cannot be deleted, from
the admin (no delete permission), the ORM (`delete()` on a row or a queryset) or a cascade
(`pre_delete` receiver in `governance.receivers`), and a row's name never changes (not
through `save()`, `QuerySet.update()` or `bulk_update()`). On PostgreSQL a trigger refuses the
same in SQL (migration 0004). A row's dates and note may be corrected.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from governance.surface import INPUT_NAME_LENGTH, Alias, ChangeKind, Deprecation, InputChange
from tools.definition import TOOL_NAME

tool_name_validator = RegexValidator(TOOL_NAME, "A tool name is 1-128 of A-Z a-z 0-9 _ - .")


class AppendOnlyError(Exception):
    """Raised by any attempt to delete or rename a ledger row."""


LEDGER_IS_APPEND_ONLY = "The tool name ledger only grows: {name} cannot be deleted or renamed."


class ToolNameQuerySet(models.QuerySet["ToolName"]):
    """Refuses every bulk path that would delete or rename ledger rows."""

    def _names(self) -> str:
        return ", ".join(self.values_list("name", flat=True)[:5]) or "a ledger row"

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=self._names()))

    def update(self, **kwargs: Any) -> int:
        if "name" in kwargs:
            raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=self._names()))
        return super().update(**kwargs)

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        if "name" in fields:
            raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name="a ledger row"))
        return super().bulk_update(objs, fields, batch_size=batch_size)

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        # Not list[ToolName]: django-stubs makes a custom queryset generic in its model, and
        # QuerySet.bulk_create returns a list of that type variable.
        if kwargs.get("update_conflicts"):  # an upsert may rewrite a row's name
            raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name="a ledger row"))
        return super().bulk_create(objs, *args, **kwargs)


class ToolName(models.Model):
    """The tool name ledger: every tool name ever listed, live or retired."""

    name = models.CharField(max_length=128, unique=True, validators=[tool_name_validator])
    first_seen = models.DateField(help_text="When a release first listed the name.")
    first_release = models.CharField(max_length=40, blank=True, help_text="The release that first listed it.")
    note = models.TextField(blank=True)

    objects = ToolNameQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        base_manager_name = "objects"
        verbose_name = "ledger name"
        verbose_name_plural = "tool name ledger"

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            stored = ToolName.objects.filter(pk=self.pk).values_list("name", flat=True).first()
            if stored is not None and stored != self.name:
                raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=stored))
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(LEDGER_IS_APPEND_ONLY.format(name=self.name))


class RetiredTool(models.Model):
    """A ledger name the server no longer offers: never listed, and a call to it is answered
    with the tools that replace it."""

    tool = models.OneToOneField(
        ToolName, to_field="name", db_column="name", on_delete=models.PROTECT, related_name="retirement"
    )
    replaced_by = models.JSONField(default=list, blank=True, help_text="The live tools a caller should use.")
    since = models.DateField(default=timezone.localdate)
    release = models.CharField(max_length=40, blank=True, help_text="The release that retired it.")
    message = models.TextField(blank=True, help_text="Added to the answer: what to do instead.")

    class Meta:
        ordering = ["tool"]

    def __str__(self) -> str:
        return f"{self.name} (retired)"

    @property
    def name(self) -> str:
        return self.tool_id

    def clean(self) -> None:
        if not isinstance(self.replaced_by, list) or not all(isinstance(n, str) for n in self.replaced_by):
            raise ValidationError({"replaced_by": "A list of tool names."})
        for name in self.replaced_by:
            tool_name_validator(name)


def _tool_names(value: Any, field: str) -> None:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise ValidationError({field: "A list of tool names."})
    for name in value:
        tool_name_validator(name)


class DeprecatedTool(models.Model):
    """A live tool on its way out: still listed and answered, its description and every result
    carrying a notice that names the tools replacing it (in order) and, when set, the UTC day it
    is retired (`retire_on`). On that day every replica answers it as retired, and the first to
    read the tables records the retirement (governance.services)."""

    tool = models.OneToOneField(
        ToolName, to_field="name", db_column="name", on_delete=models.PROTECT, related_name="deprecation"
    )
    replaced_by = models.JSONField(
        default=list, blank=True, help_text="The live tools a caller should use, in the order the notice names them."
    )
    since = models.DateField(default=timezone.localdate, help_text="When it was deprecated.")
    retire_on = models.DateField(
        null=True, blank=True, help_text="The UTC day it is retired on every replica; empty: not scheduled."
    )
    reason = models.TextField(
        blank=True, help_text="Why, and what to do instead; becomes the retired answer's message."
    )

    class Meta:
        ordering = ["tool"]

    def __str__(self) -> str:
        return f"{self.name} (deprecated)"

    @property
    def name(self) -> str:
        return self.tool_id

    def clean(self) -> None:
        _tool_names(self.replaced_by, "replaced_by")

    def as_deprecation(self) -> Deprecation:
        return Deprecation(self.name, tuple(self.replaced_by), self.since, self.retire_on, self.reason)


class ToolAlias(models.Model):
    """An old name whose calls reach `target`, a live tool, with the arguments `arguments`
    renames (`{"old": "new"}`; `{"old": null}` leaves one out); the answer is the target's with a
    notice. Until `retire_on`, when it is retired like a deprecated tool."""

    tool = models.OneToOneField(
        ToolName, to_field="name", db_column="name", on_delete=models.PROTECT, related_name="alias"
    )
    target = models.ForeignKey(
        ToolName,
        to_field="name",
        db_column="target",
        on_delete=models.PROTECT,
        related_name="aliases",
        help_text="The live tool that answers calls to the old name.",
    )
    arguments = models.JSONField(
        default=dict, blank=True, help_text="Arguments the old name took under another name: old name -> new name."
    )
    since = models.DateField(default=timezone.localdate)
    retire_on = models.DateField(
        null=True, blank=True, help_text="The UTC day the old name is retired on every replica; empty: not scheduled."
    )
    reason = models.TextField(blank=True, help_text="Why; becomes the retired answer's message.")

    class Meta:
        ordering = ["tool"]
        verbose_name = "alias"
        verbose_name_plural = "aliases"

    def __str__(self) -> str:
        return f"{self.name} (alias of {self.target_id})"

    @property
    def name(self) -> str:
        return self.tool_id

    def clean(self) -> None:
        from governance import rules

        problems = rules.mapping_problems(self.arguments)
        if problems:
            raise ValidationError({"arguments": [f"{problem}." for problem in problems]})

    def as_alias(self) -> Alias:
        return Alias(self.name, self.target_id, self.since, tuple(self.arguments.items()), self.retire_on, self.reason)


# --- Governance history: GovernanceEvent (append-only) ---------------------------------------


class GovernanceEventQuerySet(models.QuerySet["GovernanceEvent"]):
    """Refuses every bulk path that would rewrite or remove history."""

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)

    # The plugin makes custom querysets generic, so list[GovernanceEvent] cannot match the base.
    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if kwargs.get("update_conflicts"):
            raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)
        return super().bulk_create(objs, *args, **kwargs)


HISTORY_IS_APPEND_ONLY = "The governance history only grows: an event is never changed or deleted."


class GovernanceEvent(models.Model):
    """One change to the tool surface: a ledger row added or corrected, a deprecation, an
    alias, a retirement or a contract change created, changed or deleted. Written by `governance.services` in the
    transaction of the change it describes; never changed or deleted.

    `tool` is the ledger name the change is about (a plain name, so the history outlives any
    row). `actor` is the username of the staff member who made it, empty for code; `via` says
    where it came from (`admin`, a management command's name, `migrate`, `schedule` for a
    retire-on date that came, `code`). `changes` holds, per
    field, its value before and after (`{"field": [before, after]}`; `null` on the side where
    the row did not exist).
    """

    class Subject(models.TextChoices):
        LEDGER = "ledger", "ledger name"
        DEPRECATION = "deprecation", "deprecation"
        ALIAS = "alias", "alias"
        RETIREMENT = "retirement", "retirement"
        CONTRACT_CHANGE = "contract_change", "contract change"

    class Action(models.TextChoices):
        CREATED = "created", "created"
        UPDATED = "updated", "updated"
        DELETED = "deleted", "deleted"

    time = models.DateTimeField(default=timezone.now, db_index=True)
    tool = models.CharField(max_length=128, db_index=True, validators=[tool_name_validator])
    subject = models.CharField(max_length=20, choices=Subject.choices)
    action = models.CharField(max_length=10, choices=Action.choices)
    actor = models.CharField(max_length=150, blank=True, help_text="The staff member's username; empty for code.")
    via = models.CharField(
        max_length=40, help_text="admin, a management command, migrate, schedule (a retire-on date) or code."
    )
    message = models.TextField(max_length=4000)
    changes = models.JSONField(default=dict, blank=True)

    objects = GovernanceEventQuerySet.as_manager()

    class Meta:
        ordering = ["time", "pk"]
        base_manager_name = "objects"
        verbose_name = "governance event"
        verbose_name_plural = "governance history"

    def __str__(self) -> str:
        return f"{self.tool}: {self.get_subject_display()} {self.get_action_display()}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and GovernanceEvent.objects.filter(pk=self.pk).exists():
            raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError(HISTORY_IS_APPEND_ONLY)

    @property
    def who(self) -> str:
        """The staff member, or where a change made by code came from."""
        return f"{self.actor} ({self.via})" if self.actor else self.via


# --- Contract changes ------------------------------------------------------------------------


CHANGE_KINDS = [
    (ChangeKind.REMOVED.value, "removed input"),
    (ChangeKind.RENAMED.value, "renamed input"),
    (ChangeKind.TYPE_CHANGED.value, "type changed"),
    (ChangeKind.UNIT_CHANGED.value, "unit changed"),
]


class ContractChange(models.Model):
    """A breaking change to one input of a tool that kept its name."""

    tool = models.ForeignKey(ToolName, to_field="name", on_delete=models.PROTECT, related_name="contract_changes")
    input = models.CharField(max_length=INPUT_NAME_LENGTH)
    kind = models.CharField(max_length=20, choices=CHANGE_KINDS)
    new_input = models.CharField(
        max_length=INPUT_NAME_LENGTH, blank=True, help_text="Renamed or unit changed: the input that takes over."
    )
    was = models.JSONField(
        null=True,
        blank=True,
        help_text='Type changed: a JSON Schema of the old shape, e.g. {"type": "string"}. '
        'Unit changed: the old unit, e.g. "percent".',
    )
    now = models.JSONField(
        null=True,
        blank=True,
        help_text='Type changed: a JSON Schema of the new shape, e.g. {"type": "array", "items": {"type": "string"}}. '
        'Unit changed: the new unit, e.g. "kWh".',
    )
    since = models.DateField(default=timezone.localdate)
    instead = models.TextField(help_text="What to send instead; part of the error the caller gets.")

    class Meta:
        ordering = ["tool", "input"]
        constraints = [models.UniqueConstraint(fields=["tool", "input"], name="tools_contract_change_unique")]

    def __str__(self) -> str:
        return f"{self.tool_id}.{self.input} ({self.kind})"

    def as_change(self) -> InputChange:
        return InputChange(
            tool=self.tool_id,
            input=self.input,
            kind=ChangeKind(self.kind),
            since=self.since,
            instead=self.instead,
            new_input=self.new_input,
            was=self.was,
            now=self.now,
        )

    def clean(self) -> None:
        from governance import rules

        if self.kind not in ChangeKind:
            return  # the field's own choices validation reports it
        problem = rules.record_problem(self.as_change())
        if problem is not None:
            raise ValidationError({"kind": f"{problem}."})


class ClientSurface(models.Model):
    """An operator rule shaping the tool surface for clients whose name matches `pattern`
    (governance.client_surface): whether widgets are offered, and which tools are not listed."""

    WIDGET_CHOICES = [
        ("declared", "as the client declares (MCP Apps capability)"),
        ("always", "always (a host that renders MCP Apps without declaring it)"),
        ("never", "never (text only)"),
    ]

    pattern = models.CharField(
        max_length=256,
        unique=True,
        help_text="Client name pattern, case-insensitive: * any characters, ? one (e.g. claude-code*).",
    )
    position = models.PositiveIntegerField(
        default=100, help_text="Rules are tried lowest first; the first whose pattern matches applies."
    )
    widgets = models.CharField(max_length=10, choices=WIDGET_CHOICES, default="declared")
    hidden_tools = models.JSONField(
        default=list,
        blank=True,
        help_text="Tools not listed to these clients; calls to them are still answered.",
    )
    note = models.TextField(blank=True, help_text="Why the rule exists.")

    class Meta:
        ordering = ["position", "pattern"]
        verbose_name = "client surface rule"

    def __str__(self) -> str:
        return self.pattern

    def clean(self) -> None:
        if not isinstance(self.hidden_tools, list) or not all(isinstance(n, str) for n in self.hidden_tools):
            raise ValidationError({"hidden_tools": "A list of tool names."})
        for name in self.hidden_tools:
            tool_name_validator(name)
