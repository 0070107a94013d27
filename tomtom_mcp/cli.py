"""The `tomtom-maps-mcp` console script: the whole server from one installed command.

    tomtom-maps-mcp [stdio] [--apikey-file PATH] [--backend NAME]  MCP over stdio, for a desktop client
    tomtom-maps-mcp serve [--host HOST] [--port PORT]              MCP over HTTP at /mcp (uvicorn)
    tomtom-maps-mcp exec <tool> '<json>' [--apikey-file PATH]      run one tool, print its result
    tomtom-maps-mcp manage <command> [...]                         a Django management command
    tomtom-maps-mcp --version | --help

Help shows this program's commands and options and the environment variables a person sets
(`ENVIRONMENT`, each as README's configuration table states it: tests/test_cli.py compares
them), not Django's own options, which the commands still accept.

With no `DATABASE_URL`, stdio and serve first bring the embedded SQLite database in the user's
data directory up to date (tomtom_mcp/embedded.py); serve also collects the static files there.
The management commands `mcp_stdio` and `mcp_exec` do the work of stdio and exec; their help and
`--version` speak as `tomtom-maps-mcp` and report this package's version, not Django's.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

PROG = "tomtom-maps-mcp"
ENVIRONMENT = (
    ("TOMTOM_API_KEY", "none", "your TomTom API key (or --apikey-file PATH)"),
    ("TOMTOM_MAPS_BACKEND", "tomtom-orbis-maps", "or tomtom-maps, for accounts without Orbis access"),
    ("TOMTOM_TIMEOUT", "20.0", "seconds for all of one tool call's TomTom requests"),
    ("TOMTOM_MCP_DATA_DIR", "the user's data directory", "where the embedded database is kept"),
    ("DATABASE_URL", "the embedded SQLite database", "e.g. postgres://user@host:5432/name"),
    ("LOG_LEVEL", "INFO", "logs are JSON lines on stderr"),
)
"""The variables a person running the server sets, with their defaults (README's configuration
table has them all)."""
COMMANDS = "\n".join(
    [
        "commands:",
        f"  {PROG} [stdio]     MCP over stdio for a desktop client (the default; options above)",
        f"  {PROG} serve       MCP over HTTP at http://HOST:PORT/mcp (see `{PROG} serve --help`)",
        f"  {PROG} exec        run one tool and print its result (see `{PROG} exec --help`)",
        f"  {PROG} manage      a Django management command, e.g. `{PROG} manage migrate`",
        "",
        "environment (default):",
        *(f"  {name} ({default}): {meaning}" for name, default, meaning in ENVIRONMENT),
        "",
        "Without DATABASE_URL the server creates and migrates its SQLite database at start.",
    ]
)
ENVIRONMENT_HELP = "\n".join(
    ["environment (default):", *(f"  {name} ({default}): {meaning}" for name, default, meaning in ENVIRONMENT)]
)
SERVER_LOGGING = Path(__file__).with_name("server-logging.json")
"""uvicorn's own loggers as JSON lines on stderr, like every other log line."""


def _run(command_name: str, prog: str, argv: list[str], epilog: str | None = None) -> None:
    from django.core.management import get_commands, load_command_class
    from django.core.management.base import CommandError, handle_default_options

    from core.version import SERVER_NAME, version
    from tools.geometry.compiled import simplifier

    command = load_command_class(get_commands()[command_name], command_name)
    parser = command.create_parser(PROG, command_name)
    parser.prog = prog
    if epilog:
        parser.epilog = epilog
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._VersionAction):
            action.version = f"{SERVER_NAME} {version()} (simplifier: {simplifier()})"
    options = parser.parse_args(argv)
    handle_default_options(options)
    values = vars(options)
    args = values.pop("args", ())
    try:
        command.execute(*args, **values)
    except CommandError as exc:  # as Django's own `run_from_argv` answers it: the message, its status
        sys.stderr.write(f"{prog}: error: {exc}\n")
        sys.exit(exc.returncode)


def _serve(argv: list[str]) -> None:
    """Migrate the embedded database, collect the static files, then run uvicorn on the ASGI app."""
    parser = argparse.ArgumentParser(
        prog=f"{PROG} serve",
        description="Serve MCP over Streamable HTTP at /mcp, with /healthz, /readyz, the admin and the dashboard.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    options = parser.parse_args(argv)

    import uvicorn
    from django.core.management import call_command

    from tomtom_mcp.embedded import migrate_embedded_database

    migrate_embedded_database()
    call_command("collectstatic", interactive=False, verbosity=0)
    uvicorn.run(
        "tomtom_mcp.asgi:application",
        host=options.host,
        port=options.port,
        log_config=str(SERVER_LOGGING),
    )


def _manage(argv: list[str]) -> None:
    from django.core.management import execute_from_command_line

    execute_from_command_line([f"{PROG} manage", *argv])


def _stdio(argv: list[str]) -> None:
    if not {"-h", "--help", "--version"} & set(argv):
        from tomtom_mcp.embedded import migrate_embedded_database

        migrate_embedded_database()
    _run("mcp_stdio", PROG, argv, epilog=COMMANDS)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tomtom_mcp.settings")
    import django

    django.setup()
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else "stdio"
    if command == "exec":
        _run("mcp_exec", f"{PROG} exec", args[1:], epilog=ENVIRONMENT_HELP)
    elif command == "serve":
        _serve(args[1:])
    elif command == "manage":
        _manage(args[1:])
    else:
        _stdio(args[1:] if command == "stdio" else args)


if __name__ == "__main__":
    main()
