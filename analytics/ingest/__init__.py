"""Ingestion: the server's JSON-lines logs into events and rollups, one way through four stages.

    source (sources.py) -> decode (decode.py) -> batch (batches.py) -> store (store.py, rollups.py)

`pipeline.ingest(lines)` runs them, in one process or in worker processes (workers.py); the
management command `ingest_app_status` feeds it log files and stdin, the live path
(analytics/live.py) the lines the server logs. docs/adr/0027-ingestion.md says why each stage is
as it is, with the measurements.
"""
