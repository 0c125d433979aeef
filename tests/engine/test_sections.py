"""Sections read from a filing's own headings (engine.ingest.sections): the heading lines below are written the way
real filings print them (a PDF's broken words, capitals, tables of contents, cross-references in prose, running
headers), each page's expected sections marked by hand."""

from __future__ import annotations

import re

from engine.ingest.sections import chunk_sections, page_sections
from engine.records import ChunkSpan
from engine.vocab.sections import vocab

PROSE = "We describe our business below. " * 3

TEN_K = [
    # 0: a table of contents, item lines ending in page numbers
    "TABLE OF CONTENTS\nPART I\nITEM 1  Business  4\nITEM 1A  Risk Factors  10\nITEM 7  Management's Discussion "
    "and Analysis of Financial Condition and Results of Operations  16\nITEM 8  Financial Statements  51\n",
    # 1: the table of contents goes on, without page numbers but item after item
    "ITEM 9A  Controls and Procedures\nITEM 9B  Other Information\nITEM 10  Directors, Executive Officers and "
    "Corporate Governance\nITEM 11  Executive Compensation\n",
    # 2: Item 1, a PDF's broken word
    f"PART I\nItem 1. Busines s.\n{PROSE}\n",
    # 3: a cross-reference at the start of a line of prose is no heading
    f"{PROSE}\nItem 1. Business—Government Regulation and Price Constraints sections of this Form 10-K for more.\n",
    # 4: Item 1A in capitals, title on the next line
    f"ITEM 1A.\nRISK FACTORS\n{PROSE}\n",
    # 5: MD&A, its long title whole
    f"{PROSE}\nItem 7. Management’s Discussion and Analysis of Financial Condition and Results of Operations.\n{PROSE}",
    # 6: the statements, then the notes; a line starting "Note 5" in prose is no heading
    "Item 8. Financial Statements and Supplementary Data.\nNOTES TO CONSOLIDATED FINANCIAL STATEMENTS\n"
    "NOTE 1. SIGNIFICANT ACCOUNTING POLICIES\nNote 5 for the inventory method.\n",
    # 7: a running header, a cross-reference to an earlier note inside Note 3, a run-in heading
    "Notes to Consolidated Financial Statements\nNote 2A) describes the collaboration.\n"
    "Note 3 — Acquisitions. We acquired two businesses in the year.\n",
    # 8: a note, then the next item
    "Note 4. Commitments and Contingencies\nWe are subject to claims.\nItem 9A. Controls and Procedures\n",
]

EXPECTED_10K = [
    ("", []),
    ("", []),
    ("", ["Item 1 Business"]),
    ("Item 1 Business", []),
    ("Item 1 Business", ["Item 1A Risk Factors"]),
    ("Item 1A Risk Factors", ["Item 7 MD&A"]),
    ("Item 7 MD&A", ["Item 8 Financial Statements", "Notes to Financial Statements",
                     "Note 1 Significant Accounting Policies"]),
    ("Note 1 Significant Accounting Policies", ["Note 3 Acquisitions"]),
    ("Note 3 Acquisitions", ["Note 4 Commitments and Contingencies", "Item 9A Controls and Procedures"]),
]


def _names(pages, form):  # noqa: ANN001, ANN202
    return [(start, [n for _, n in found]) for start, found in page_sections(pages, form)]


def test_ten_k_items_and_notes_are_read_from_their_headings():
    assert _names(TEN_K, "10-K") == EXPECTED_10K


def test_a_ten_q_tells_part_one_from_part_two_by_title():
    pages = [
        "PART I — FINANCIAL INFORMATION\nItem 1. Financial Statements\nNote 1 – Summary of Significant "
        "Accounting Policies\n",
        f"Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations\n{PROSE}",
        f"PART II — OTHER INFORMATION\nItem 1. Legal Proceedings\n{PROSE}\nItem 1A. Risk Factors\n{PROSE}",
        "Item 2.  Unregistered Sales of Equity Securities and Use of Proceeds\nNone.\n",
    ]
    assert _names(pages, "10-Q") == [
        ("", ["Part I Item 1 Financial Statements", "Note 1 Summary of Significant Accounting Policies"]),
        ("Note 1 Summary of Significant Accounting Policies", ["Part I Item 2 MD&A"]),
        ("Part I Item 2 MD&A", ["Part II Item 1 Legal Proceedings", "Part II Item 1A Risk Factors"]),
        ("Part II Item 1A Risk Factors", ["Part II Item 2 Unregistered Sales of Equity"]),
    ]
    assert vocab().kind_of("Part II Item 1A Risk Factors") == "risk"


def test_an_eight_k_names_its_items():
    pages = [
        "FORM 8-K\nCURRENT REPORT\nApple Inc.\n",
        "Item 1.01 Entry into a Material Definitive Agreement.\nOn May 1 the Company entered into a supplemental "
        "indenture.\nItem 9.01 Financial Statements and Exhibits.\n(d) Exhibits.\n",
    ]
    assert _names(pages, "8-K") == [
        ("", []),
        ("", ["Item 1.01 Material Definitive Agreement", "Item 9.01 Financial Statements and Exhibits"]),
    ]
    assert vocab().kind_of("Item 1.01 Material Definitive Agreement") == "agreement"


def test_an_earnings_release_is_sectioned_by_its_capitalised_headings():
    pages = ["FOR IMMEDIATE RELEASE\nCompany reports results\nOVERALL FINANCIAL RESULTS\n($ in Millions)  2022  2021\n"
             "Reported Sales  $23,706  $24,804\nSEGMENT SALES RESULTS\nConsumer Health  $3,767  $3,728\n"]
    (start, found), = page_sections(pages, "EARNINGS")
    assert start == "Release"
    assert [n for _, n in found] == ["Release: For Immediate Release", "Release: Overall Financial Results",
                                     "Release: Segment Sales Results"]
    assert vocab().kind_of("Release: Segment Sales Results") == "release"


def test_a_chunk_takes_the_last_heading_before_its_first_character():
    page = f"{PROSE}\nItem 1A. Risk Factors\n{PROSE}"
    at = page.index("Item 1A")
    chunks = [ChunkSpan(0, 0, 0, at - 1, "text", page[: at - 1]), ChunkSpan(0, 1, at + 25, len(page), "text", "x")]
    # before the first heading, a form's first pages are its cover (the Section 12(b) table, the filer's status)
    assert chunk_sections([page], chunks, "10-K") == ["Cover page", "Item 1A Risk Factors"]
    assert vocab().kind_of("Cover page") == "cover"
    later = [PROSE, PROSE, page]
    moved = [ChunkSpan(2, 0, 0, at - 1, "text", page[: at - 1]), ChunkSpan(2, 1, at + 25, len(page), "text", "x")]
    assert chunk_sections(later, moved, "10-K") == ["", "Item 1A Risk Factors"]
    assert chunk_sections([page], chunks[:1], "EARNINGS") == ["Release"]  # a release has no cover of items


def test_a_chunk_is_of_the_section_most_of_its_characters_are_printed_in():
    """A chunk that begins with Item 2's last line and goes on with the whole of Item 3 is Item 3's (PepsiCo's
    legal proceedings were stored as 'Item 2 Properties'); one that begins with a long Item 2 stays Item 2's."""
    tail = "Our properties are suitable and adequate for our operations."
    legal = ("We are party to a variety of litigation, claims and legal proceedings. Management believes that the "
             "final outcome will not have a material adverse effect on our financial condition.")
    page = f"Item 2. Properties.\n{PROSE}\n{tail}\nItem 3. Legal Proceedings.\n{legal}\nItem 4. Mine Safety Disclosures.\n"
    start = page.index(tail)
    chunk = ChunkSpan(0, 1, start, len(page), "text", page[start:])
    assert chunk_sections([page], [chunk], "10-K") == ["Item 3 Legal Proceedings"]
    whole = ChunkSpan(0, 0, 0, page.index(legal) + 20, "text", page[: page.index(legal) + 20])
    assert chunk_sections([page], [whole], "10-K") == ["Item 2 Properties"]


def test_a_written_question_asks_of_sections_by_its_words_and_topic():
    from engine.intent import parse_intent

    risks = parse_intent("What are the major risks Pfizer highlights regarding its reliance on Comirnaty revenues?")
    assert risks.sections[:2] == ("risk", "market_risk") and not risks.numeric
    agenda = parse_intent("What was the key agenda of the AMCOR's 8-K filing dated 1st July 2022?")
    assert "agreement" in agenda.sections
    number = parse_intent("What was 3M's FY2018 capital expenditure in USD millions?")
    assert number.sections == ()


def test_a_notes_heading_gives_its_kind_and_a_question_ranks_the_best_kind_first():
    v = vocab()
    assert v.kinds_of("Note 21 Legal Proceedings") == ("legal", "notes")
    assert v.kinds_of("Note 13 Liabilities, Commitments and Contingencies") == ("legal", "notes")
    assert v.kinds_of("Note 3 Acquisitions and Divestitures") == ("transaction", "notes")
    assert v.kinds_of("Note 22 Segment and Revenue Information") == ("segments", "notes")
    assert v.kinds_of("Note 7 Earnings Per Share") == ("notes",)
    assert v.kinds_of("Item 1A Risk Factors") == ("risk",) and v.kinds_of("") == ()
    from engine.intent import parse_intent

    legal = parse_intent("Has Globex reported any materially important ongoing legal battles in FY2022?").sections
    assert legal[:2] == ("legal", "notes")
    assert v.rank_of("Note 21 Legal Proceedings", legal) == 0 == v.rank_of("Item 3 Legal Proceedings", legal)
    assert v.rank_of("Note 7 Earnings Per Share", legal) == 1
    assert v.rank_of("Item 7 MD&A", legal) is None
    geography = parse_intent("What are the geographies that Globex primarily operates in as of 2022?").sections
    assert geography[0] == "segments" and v.rank_of("Note 22 Segment and Revenue Information", geography) == 0


def test_words_that_only_say_where_to_look_do_not_rank_sentences_and_subject_words_do():
    from engine.intent import parse_intent

    customers = parse_intent("Who are the primary customers of Globex as of FY2022?")
    assert "customers" in customers.about and "business" in customers.sections
    drove = parse_intent("What drove gross margin change as of FY2022 for Globex?")
    assert "drove" not in drove.about and "gross margin change" in drove.about and drove.sections[0] == "mdna"
    assert "drove" not in drove.keywords
    for asked in ("What were the key factors influencing Globex's net income in FY2022?",
                  "What factors contributed to the change in Globex's gross margin in FY2022?",
                  "What has led to the decline in Globex's operating income in FY2022?"):
        why = parse_intent(asked)  # (asked why in other words: the MD&A's causes, not the statement's row)
        assert why.relation == "explanation" and why.sections[0] == "mdna", (asked, why.relation, why.sections)
        assert not re.search(r"influencing|contributed to|led to", why.about), why.about
    risks = parse_intent("What are the major risks Globex highlights about its supply chain?")
    assert "risks" not in risks.about and "supply chain" in risks.about and risks.sections[0] == "risk"
    either = parse_intent("Did Globex's wages expense as a percent of net sales increase or decrease in FY2023?")
    assert either.offered == "increase or decrease" and "decrease" not in either.about


def test_a_press_release_filed_as_an_exhibit_is_a_release_section():
    pages = [
        "FORM 8-K\nCURRENT REPORT\nGlobex Corp.\nItem 2.02 Results of Operations and Financial Condition.\nOn August 30 "
        "the Company issued the press release attached as Exhibit 99.1.\nItem 9.01 Financial Statements and "
        "Exhibits.\n(d) Exhibits.\n99.1 Press release dated August 30, 2023\n",
        "Exhibit 99.1\n\nGlobex Announces Completion of the Separation of its Consumer Business\nAs a result, Globex "
        "will present its Consumer business as discontinued operations.\nUPDATED FULL-YEAR GUIDANCE\nSales of $9.9 "
        "billion.\n",
    ]
    assert _names(pages, "8-K") == [
        ("", ["Item 2.02 Results of Operations", "Item 9.01 Financial Statements and Exhibits"]),
        ("Item 9.01 Financial Statements and Exhibits", ["Release: Exhibit 99.1", "Release: Updated Full-year Guidance"]),
    ]
    assert vocab().kind_of("Release: Exhibit 99.1") == "release"
    agreement = ["Item 1.01 Entry into a Material Definitive Agreement.\nThe Company entered into credit agreements.\n"
                 "Item 9.01 Financial Statements and Exhibits.\n",
                 "Exhibit 99.1\n\nEXECUTION COPY\n364-DAY\nCREDIT AGREEMENT\nARTICLE I DEFINITIONS\n",
                 "Exhibit 4.6\n\nSECOND SUPPLEMENTAL INDENTURE\nThis indenture is dated as of June 30, 2022.\n",
                 "Exhibit 99.2\n\nN  E  W  S   R  E  L  E  A  S  E\nGLOBEX NAMES A NEW CHIEF EXECUTIVE\n"]
    assert [n for _, found in _names(agreement, "8-K") for n in found][2:] == [
        "Exhibit 99.1", "Exhibit 4.6", "Release: Exhibit 99.2", "Release: Globex Names A New Chief Executive"]
    assert [vocab().kind_of(n) for n in ("Exhibit 99.1", "Exhibit 4.6", "Exhibit 10.2")] == [
        "exhibits", "securities", "agreement"]
    # a 10-K's exhibits are not read as sections (its exhibit index prints their numbers)
    assert _names(["Item 15. Exhibits\nExhibit 99.1\nDescription of regulation\n"], "10-K")[0][1] == [
        "Item 15 Exhibits"]


def test_the_auditors_report_is_a_section_of_its_own_ended_by_the_statements_or_the_next_item():
    """The auditor's report is no note's text and no statement's: printed before the statements, the first primary
    statement's heading ends it; printed after the last note, the next item does."""
    opinion = "In our opinion, the financial statements present fairly, in all material respects, the position."
    before = [f"Item 8. Financial Statements and Supplementary Data\nReport of Independent Registered Public "
              f"Accounting Firm\n{opinion}", "Consolidated Statements of Operations\n(in millions)  2023  2022\n"
              "Net sales  100  90", f"Notes to Consolidated Financial Statements\nNote 1. Basis of Presentation\n"
              f"{PROSE}"]
    found = [name for _, names in page_sections(before, "10-K") for _, name in names]
    assert found == ["Item 8 Financial Statements", "Auditor's Report", "Item 8 Financial Statements",
                     "Notes to Financial Statements", "Note 1 Basis of Presentation"]
    after = [f"Item 8. Financial Statements and Supplementary Data\nNote 21. Legal Proceedings\n{PROSE}",
             f"Table of Contents\nREPORT OF INDEPENDENT REGISTERED PUBLIC ACCOUNTING FIRM\n{opinion}",
             f"{opinion}\nItem 9. Changes in and Disagreements with Accountants on Accounting and Financial "
             "Disclosure\nNone."]
    found = [name for _, names in page_sections(after, "10-K") for _, name in names]
    assert found[1:] == ["Note 21 Legal Proceedings", "Auditor's Report", "Item 9 Changes in Accountants"]
    assert vocab().kinds_of("Auditor's Report") == ("audit",)
    # a sentence that names the report is no heading
    said = [f"Item 8. Financial Statements and Supplementary Data\nNote 1. Basis\nAs stated in the Report of "
            f"Independent Registered Public Accounting Firm included herein, {opinion}"]
    assert "Auditor's Report" not in [name for _, names in page_sections(said, "10-K") for _, name in names]



def test_a_filing_ordered_its_own_way_is_sectioned_by_its_cross_reference_index():
    """A 10-Q whose headings carry no "Item" (Intel's) and that maps its items in a cross-reference index: each page
    takes the item whose listed pages hold its printed folio ("Other Key Information  40" at its foot); on a page
    several items list, a line printing an item's title begins it there; a page the filing's own headings place
    keeps them; a page no item lists has none."""
    def page(body: str, folio: int) -> str:
        return f"Table of Contents\n\n{body}\n{PROSE}\nOther Key Information  {folio}\n"

    pages = ["Quillon Corp. Form 10-Q for the quarterly period ended July 1, 2023\n"]  # 0: the cover
    pages += [page("A Quarter in Review", 1), page("Consolidated Condensed Statements of Income", 2),
              page("Notes to the statements", 3), page("Litigation", 4), page("Results of operations", 5),
              page("Market discussion", 6)]  # 1-6: folios 1-6
    pages.append(page("Quantitative and Qualitative Disclosures About Market Risk\nOur exposure is modest.\n"
                      "Risk Factors\nThe risks described in our Form 10-K could affect us.\nControls and Procedures\n"
                      "Our controls are effective.", 7))  # 7: three items, each under its title
    pages.append(page("Form 10-Q Cross-Reference Index\nItem Number  Item\nPart I - Financial Information\n"
                      "Item 1.  Financial Statements  Pages 2 - 4\n"
                      "Item 2.  Management's Discussion and Analysis of Financial Condition and Results of "
                      "Operations:\nResults of operations  Pages 1, 5 - 6\n"
                      "Item 3.  Quantitative and Qualitative Disclosures About Market Risk  Page 7\n"
                      "Item 4.  Controls and Procedures  Page 7\nPart II - Other Information\n"
                      "Item 1.  Legal Proceedings  Page 4\nItem 1A.  Risk Factors  Page 7\n"
                      "Item 3.  Defaults Upon Senior Securities  Not applicable\n", 8))  # 8: the index
    pages.append(page("Signatures", 9))
    spans = [ChunkSpan(i, 0, len("Table of Contents\n\n"), len("Table of Contents\n\n") + 10, "text", "x")
             for i in range(len(pages))]
    seven = pages[7]
    spans += [ChunkSpan(7, k + 1, seven.index(w), seven.index(w) + 20, "text", "x")
              for k, w in enumerate(("Our exposure", "The risks described", "Our controls"))]
    assert chunk_sections(pages, spans, "10-Q") == [
        "Cover page", "Part I Item 2 MD&A",
        "Part I Item 1 Financial Statements", "Part I Item 1 Financial Statements",
        "Part II Item 1 Legal Proceedings",  # listed by two items: the one listing fewer pages
        "Part I Item 2 MD&A", "Part I Item 2 MD&A",
        "Part I Item 3 Market Risk", "", "",
        "Part I Item 3 Market Risk", "Part II Item 1A Risk Factors", "Part I Item 4 Controls and Procedures"]
    # the filing's own "Item" headings decide where it prints them
    pages[5] = f"Item 2. Management's Discussion and Analysis of Financial Condition and Results of Operations\n{PROSE}"
    assert chunk_sections(pages, spans[5:6], "10-Q") == ["Part I Item 2 MD&A"]
