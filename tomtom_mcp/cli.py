"""The `tomtom-mcp` console script.

    tomtom-mcp [--apikey KEY] [--backend NAME]         serve MCP over stdio
    tomtom-mcp exec <tool> '<json>' [--apikey KEY]     run one tool, print its result
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    import django
    from django.core.management import call_command

    django.setup()
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "exec":
        call_command("mcp_exec", *args[1:])
    else:
        call_command("mcp_stdio", *args)


if __name__ == "__main__":
    main()
