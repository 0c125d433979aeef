"""Line-item lookup: statement rows that print the asked metric join the passage prefilter."""

from __future__ import annotations

from engine.intent import line_item_metrics, parse_intent
from engine.records import Chunk, Filing, FilingIdentity
from engine.retrieval.lineitems import LineItemIndex, label_metrics

_CASH_FLOWS = """Consolidated Statements of Cash Flows
(Millions)  2021  2020
Net cash provided by operating activities  5,100  4,800
Purchases of property and equipment (PP&E)  (1,577)  (1,373)
Proceeds from sale of PP&E  262  49
"""
_BALANCE = """Consolidated Balance Sheets
(Millions)  2021  2020
Total current assets  9,000  8,500
Deferred revenue  300  280
Total current liabilities  6,000  5,900
"""
_PROSE = "Capital spending was discussed with the board. Purchases of equipment rose in 2021 as we expanded."
_OLD = """(Millions)  2016  2015
Capital expenditures  900  800
"""


def _chunk(cid: int, fid: int, text: str, context: str = "") -> Chunk:
    return Chunk(cid, fid, f"DOC{fid}", cid, 0, len(text), "table", text, context)


def _filing(fid: int) -> Filing:
    return Filing(fid, f"sha{fid}", f"/x/{fid}.pdf", FilingIdentity(f"DOC{fid}"), 10, 3, "")


def test_ratio_questions_look_for_their_components():
    assert line_item_metrics(parse_intent("What was the company's FY2021 current ratio?").metrics) == (
        "current assets", "current liabilities")
    assert line_item_metrics(parse_intent("What is Acme's FY2021 free cash flow?").metrics) == (
        "cash from operations", "capital expenditures")
    assert line_item_metrics(parse_intent("What was Acme's 2021 capex?").metrics) == ("capital expenditures",)
    assert line_item_metrics(parse_intent("Who audits Acme?").metrics) == ()


def test_row_labels_name_or_only_mention_a_metric():
    assert label_metrics("Purchases of property and equipment (PP&E)")[0] == "capital expenditures"
    assert label_metrics("Property and equipment, net")[0] == "property plant and equipment"
    named, mentioned = label_metrics("Deferred revenue")
    assert named is None and "revenue" in mentioned


def test_rank_prefers_exact_rows_in_the_asked_year_and_interleaves_components():
    chunks = {1: [_chunk(10, 1, _PROSE), _chunk(11, 1, _CASH_FLOWS), _chunk(12, 1, _OLD)],
              2: [_chunk(20, 2, _BALANCE)]}
    loads: list[int] = []

    def load(fids):
        loads.extend(fids)
        return [c for f in fids for c in chunks[f]]

    index = LineItemIndex(load)
    capex = index.rank(parse_intent("What was the FY2021 capital expenditure?"), [_filing(1), _filing(2)])
    assert [h.chunk_id for h in capex] == [11, 12]  # the prose has no rows; 2016 columns rank below 2021
    assert capex[0].labels == ("Purchases of property and equipment (PP&E)",)
    assert capex[0].score > capex[1].score

    fcf = index.rank(parse_intent("What was the FY2021 free cash flow?"), [_filing(1), _filing(2)])
    assert [h.chunk_id for h in fcf] == [11, 12]  # the statement prints both components and comes first
    ratio = index.rank(parse_intent("What was the FY2021 current ratio?"), [_filing(1), _filing(2)])
    assert [h.chunk_id for h in ratio] == [20]
    assert "Deferred revenue" not in ratio[0].labels
    assert loads == [1, 2]  # each filing's rows are read once, then served from the index

    assert index.rank(parse_intent("Who is the auditor?"), [_filing(1)]) == []
