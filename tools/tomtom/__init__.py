"""The TomTom API client: one pooled async httpx client per process and event loop."""
