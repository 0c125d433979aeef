"""The Tables panel's line-item search over the library's stored facts (:mod:`engine.facts.search`): filings
generated with PyMuPDF, ingested into a real library."""

from __future__ import annotations

from pathlib import Path

from engine.facts.search import search_facts
from engine.ingest import ingest
from engine.settings import Settings
from engine.store import Library
from tests.engine.test_fact_store import _pdf


def test_search_facts_finds_a_row_by_its_words_and_a_company_by_its_name(tmp_path: Path) -> None:
    """"net income" lists the "Net income" rows before "Other expense (income), net" (bm25 alone prefers the short
    label); a company's name in the words keeps its filings; each hit carries its table's printed heading."""
    folder = tmp_path / "f"
    folder.mkdir()
    for name in ("ACME", "BOLT"):
        _pdf(folder / f"{name}_2023_10K.pdf",
             [("Net sales", "1,000", "900"), ("Other expense (income), net", "12", "(4)"), ("Net income", "120", "95")])
    home = tmp_path / "lib"
    with Library(home) as library:
        assert [e.status for e in ingest(library, [folder], Settings(home=home)).events] == ["added"] * 2
        found = search_facts(library, "net income")
        assert [h.stored.fact.label for h in found.hits[:4]] == ["Net income"] * 4
        assert {h.doc_name for h in found.hits[:4]} == {"ACME_2023_10K", "BOLT_2023_10K"}
        assert all(h.heading == "CONSOLIDATED STATEMENTS OF OPERATIONS" and h.primary for h in found.hits)
        acme = search_facts(library, "net income acme")
        assert {h.doc_name for h in acme.hits} == {"ACME_2023_10K"} and acme.words == "net income"
        # the company is read as the question reader reads names, whatever the box's case
        assert {h.doc_name for h in search_facts(library, "Net income ACME").hits} == {"ACME_2023_10K"}
        assert {h.doc_name for h in search_facts(library, "bolt net income").hits} == {"BOLT_2023_10K"}
        assert {h.doc_name for h in search_facts(library, "net income", company="BOLT").hits} == {"BOLT_2023_10K"}
        capped = search_facts(library, "net", limit=2)
        assert len(capped.hits) == 2 and capped.total == 12 and capped.more == 10
        assert search_facts(library, "goodwill").hits == ()
