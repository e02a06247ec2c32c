"""Fault injection against the transcript store with real processes (D1-D19 of the catalog)."""
