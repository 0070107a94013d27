"""Seed the host families of the common MCP hosts (editable in the admin afterwards).

Patterns match the whole client name (the `clientInfo.name` a host sends, or its User-Agent
when it sends none), ignoring case. Cursor comes before VS Code: its name contains "vscode".
"""

from django.db import migrations

FAMILIES = [
    # (position, name, pattern, description)
    (10, "Claude (desktop, web)", r"claude-ai", "Claude desktop and claude.ai both name themselves claude-ai."),
    (20, "Claude Code", r"claude-code.*", ""),
    (30, "ChatGPT", r"(chatgpt|openai).*", "ChatGPT's connector; versions in the name are grouped."),
    (40, "Cursor", r"cursor.*", "Before VS Code: Cursor calls itself cursor-vscode."),
    (50, "VS Code", r"(visual studio code|vscode|vs ?code).*", "VS Code's built-in MCP client and Copilot agent mode."),
    (60, "Windsurf", r"windsurf.*", ""),
    (70, "Zed", r"zed.*", ""),
    (80, "Cline", r"cline.*", ""),
    (90, "Goose", r"goose.*", ""),
    (100, "MCP Inspector", r"(mcp-)?inspector.*", "The MCP Inspector (mcp-inspector, inspector-client)."),
]


def seed(apps, schema_editor):
    HostFamily = apps.get_model("analytics", "HostFamily")
    for position, name, pattern, description in FAMILIES:
        HostFamily.objects.get_or_create(
            name=name, defaults={"pattern": pattern, "position": position, "description": description}
        )


def unseed(apps, schema_editor):
    HostFamily = apps.get_model("analytics", "HostFamily")
    HostFamily.objects.filter(name__in=[name for _, name, _, _ in FAMILIES]).delete()


class Migration(migrations.Migration):
    dependencies = [("analytics", "0002_tool_calls_and_host_families")]

    operations = [migrations.RunPython(seed, unseed)]
