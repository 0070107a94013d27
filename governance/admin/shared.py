"""What every page of the governance admin says and links to: the actor's `via`, the
stylesheet, how soon a change is in force, and the links to a tool's history and old callers.

One place, so the deprecated, aliased and retired tools' pages and the ledger word the same
bound the same way and point at the same pages.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html_join

VIA_ADMIN = "admin"
MEDIA = forms.Media(css={"all": ("tools/governance.css",)}, js=("tools/governance.js",))
"""The stylesheet, and the small script of the forms (confirmations shown when the picked name
needs them, the alias's argument pairs checked as you type); every form works without it."""


def in_force_text() -> str:
    return (
        f"Every replica answers so within {settings.GOVERNANCE_REFRESH_SECONDS:g} s plus one request "
        "(GOVERNANCE_REFRESH_SECONDS), without a restart or a deploy."
    )


RETIRE_ON_HELP = (
    "The UTC day it is retired: from 00:00 UTC that day every replica answers it as retired (within "
    "GOVERNANCE_REFRESH_SECONDS), with no deploy and no one at the admin; the first replica to notice records "
    "it in the history. A later day than today; empty: not scheduled."
)


def governance_history_url(name: str) -> str:
    return reverse("admin:tools_toolname_governance", args=[name])


def old_callers_url(name: str) -> str | None:
    """The analytics dashboard's old callers (retired names, outdated inputs), for this tool only;
    None where the analytics are not installed."""
    try:
        dashboard = reverse("analytics:dashboard")
    except NoReverseMatch:
        return None
    return f"{dashboard}?{urlencode({'tool': name})}#old-callers"


def governance_links(name: str) -> str:
    """Links to the tool's governance history and to the clients still calling it the old way."""
    links = [(governance_history_url(name), "Governance history")]
    if (callers := old_callers_url(name)) is not None:
        links.append((callers, "Old callers (analytics): clients still calling it the old way"))
    return format_html_join(" · ", '<a href="{}">{}</a>', links)
