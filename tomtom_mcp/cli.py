"""The `tomtom-mcp` console script.

    tomtom-mcp [--apikey KEY] [--backend NAME]         serve MCP over stdio
    tomtom-mcp exec <tool> '<json>' [--apikey KEY]     run one tool, print its result
    tomtom-mcp --version                               print the server's version

The management commands `mcp_stdio` and `mcp_exec` do the work; their help and `--version` speak
as `tomtom-mcp` and report this package's version, not Django's.
"""

from __future__ import annotations

import argparse
import os
import sys


def _run(command_name: str, prog: str, argv: list[str]) -> None:
    from django.core.management import load_command_class
    from django.core.management.base import handle_default_options

    from core.version import SERVER_NAME, version

    command = load_command_class("tools", command_name)
    parser = command.create_parser("tomtom-mcp", command_name)
    parser.prog = prog
    for action in parser._actions:
        if isinstance(action, argparse._VersionAction):
            action.version = f"{SERVER_NAME} {version()}"
    options = parser.parse_args(argv)
    handle_default_options(options)
    values = vars(options)
    args = values.pop("args", ())
    command.execute(*args, **values)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    import django

    django.setup()
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "exec":
        _run("mcp_exec", "tomtom-mcp exec", args[1:])
    else:
        _run("mcp_stdio", "tomtom-mcp", args)


if __name__ == "__main__":
    main()
