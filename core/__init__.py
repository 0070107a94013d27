"""What every app of the server shares, and nothing else: the leaf of the import graph.

- `core.version`: the server's name and version.
- `core.logging`: JSON-lines logging (one object per line, a stable message).
- `core.events`: every log event the server writes, each declared once as a typed record.
- `core.app_status`: the App status contract, the events about app data and widgets.
- `core.errors`: the closed set of error codes a tool call can end with.

Nothing here imports Django or another package of this project (import-linter keeps it so).
"""
