"""Ingest: PDF and SEC HTML filings, LOFin folders; identity, dedupe, incremental, resumable."""

from __future__ import annotations

from engine.ingest.runner import (
    IngestEvent,
    IngestReport,
    Refreshed,
    discover,
    ingest,
    ingest_iter,
    refresh_concepts,
    refresh_facts,
    refresh_folios,
    refresh_identity,
    refresh_readings,
    refresh_sections,
    stale_readings,
)

__all__ = ["IngestEvent", "IngestReport", "Refreshed", "discover", "ingest", "ingest_iter", "refresh_concepts",
           "refresh_facts", "refresh_folios", "refresh_identity", "refresh_readings", "refresh_sections",
           "stale_readings"]
