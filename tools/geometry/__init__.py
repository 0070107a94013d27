"""Pure geometry helpers for tool answers (numpy and shapely, no Django)."""
