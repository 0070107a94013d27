"""The TomTom API client: `TomTomSession` (client.py) over our own pooled HTTP/1.1 client (http1.py),
one pool per process and event loop (docs/adr/0039-outbound-http-stacks.md)."""
