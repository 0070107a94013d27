#!/usr/bin/env bash
# Print the path of a Python >= 3.12 on this machine (Django 6 needs it), or fail saying so.
# Looks at $PYTHON, then python3.13/python3.12/python3 on PATH, then pyenv's installed versions
# (whose shims fail unless PYENV_VERSION is set, so they are used by full path).
set -u
candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
for name in python3.14 python3.13 python3.12 python3; do
  path="$(command -v "$name" 2>/dev/null)" && candidates+=("$path")
done
pyenv_root="${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}"
for dir in $(ls -d "$pyenv_root"/versions/3.1[2-9]* 2>/dev/null | sort -rV); do
  [ -x "$dir/bin/python" ] && candidates+=("$dir/bin/python")
done
for python in "${candidates[@]}"; do
  if "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
    echo "$python"
    exit 0
  fi
done
echo "No Python >= 3.12 found (looked at: ${candidates[*]:-nothing}). Install one, or set PYTHON=/path/to/python3.12+." >&2
exit 1
