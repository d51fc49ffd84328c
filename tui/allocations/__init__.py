"""Allocations (seed 004, HADM): the ledger (SQLite embedded, PostgreSQL shared), the HTTP
service (``fairtop serve-allocations``), the async client and ``fairtop balance``.

Imports only :mod:`tui.model` and :mod:`tui.engine` of fairtop. FastAPI, uvicorn and psycopg are
the optional ``allocations`` extra, imported only by the modules that need them.
"""
