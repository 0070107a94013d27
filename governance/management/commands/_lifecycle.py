"""What the tool-lifecycle commands share: the actor, dates, and the services' refusals.

Each command is one action of docs/governance.md ("Commands"), through the same services as the
admin, recorded in the governance history with `via` the command's name and, with `--by`, the
staff member who ran it.
"""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable
from datetime import date

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from governance.services import Actor


def add_actor_option(parser: ArgumentParser) -> None:
    parser.add_argument("--by", metavar="USERNAME", help="The staff member the history records as having done it.")


def actor(username: str | None) -> Actor:
    if not username:
        return None
    try:
        return get_user_model()._default_manager.get_by_natural_key(username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"--by: no user is named {username!r}.") from None


def day(value: str) -> date:
    """An ISO date (argparse type)."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{value!r} is not a date: write YYYY-MM-DD.") from None


def through_services[T](action: Callable[[], T]) -> T:
    """Run a service; its refusal becomes a CommandError naming each field's problem."""
    try:
        return action()
    except ValidationError as refused:
        problems = (
            [f"{field}: {message}" for field, messages in refused.message_dict.items() for message in messages]
            if hasattr(refused, "error_dict")
            else list(refused.messages)
        )
        raise CommandError("Refused, nothing changed:\n  " + "\n  ".join(problems)) from None


def bound() -> str:
    """When the change is in force everywhere."""
    return f"every replica answers so within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request"
