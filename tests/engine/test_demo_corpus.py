"""The fictional demo corpus prints exactly the values in truth.jsonl, consistently across filings."""

from __future__ import annotations

import html
import json
import re
import time
from collections import defaultdict
from pathlib import Path

import pymupdf
import pytest

from engine.demo_corpus import (
    BANNER,
    STATEMENTS,
    DemoFact,
    demo_companies,
    filing_facts,
    format_amount,
    generate_corpus,
    load_truth,
    plan_corpus,
    write_html_filing,
    write_pdf_filing,
)
from engine.errors import ConfigError

FACTS_PER_FILING = 2 * sum(len(rows) for rows in STATEMENTS.values())
PAGE_BREAK = re.compile(r'<hr style="page-break-after:always">|<div style="page-break-before:always">')
NUMBER = re.compile(r"\(?[\d,]+(?:\.\d+)?\)?|—")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo_corpus")
    generate_corpus(out, 24, seed=3, html_every=5)
    return out


@pytest.fixture(scope="module")
def documents(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in (corpus / "documents.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def facts_by_doc(corpus: Path) -> dict[str, list[DemoFact]]:
    grouped: dict[str, list[DemoFact]] = defaultdict(list)
    for fact in load_truth(corpus):
        grouped[fact.doc_name].append(fact)
    return grouped


def _column(fact: DemoFact) -> int:
    """0 for the current-period column, 1 for the prior one."""
    return 0 if fact.fiscal_year_column == fact.period[:4] else 1


def _column_values(facts: list[DemoFact], column: int) -> dict[tuple[str, str], float]:
    return {(f.statement, f.metric): f.value for f in facts if _column(f) == column}


def test_layout_manifests_and_readme(corpus: Path, documents: list[dict], facts_by_doc: dict) -> None:
    assert len(documents) == 24
    assert "fictional" in (corpus / "README.txt").read_text().lower()
    assert not list(corpus.rglob("*.tmp")), "temporary files must be renamed away"
    for i, doc in enumerate(documents, 1):
        assert re.fullmatch(r"([A-Z]{3,5})/10-[KQ]/\1_\d{4}(Q[1-3])?_10[KQ]\.(pdf|htm)", doc["path"])
        assert doc["path"].endswith(".htm" if i % 5 == 0 else ".pdf")
        assert Path(doc["path"]).stem == doc["doc_name"]
        assert (corpus / doc["path"]).is_file()
        assert len(facts_by_doc[doc["doc_name"]]) == FACTS_PER_FILING
        if doc["format"] == "pdf":
            with pymupdf.open(corpus / doc["path"]) as pdf:
                assert pdf.page_count == doc["pages"]
            assert 8 <= doc["pages"] <= 15
    # 4 companies x 2 fiscal years x (one 10-K + two 10-Qs)
    by_company = defaultdict(list)
    for doc in documents:
        by_company[doc["ticker"]].append((doc["form"], doc["period"]))
    assert len(by_company) == 4
    for filings in by_company.values():
        assert sorted(filings) == [("10-K", "2022"), ("10-K", "2023"), ("10-Q", "2022Q2"), ("10-Q", "2022Q3"),
                                   ("10-Q", "2023Q2"), ("10-Q", "2023Q3")]


def test_cover_page_identifies_the_filing(corpus: Path, documents: list[dict]) -> None:
    for doc in documents:
        if doc["format"] != "pdf":
            continue
        with pymupdf.open(corpus / doc["path"]) as pdf:
            cover = pdf[0].get_text()
        annual = doc["form"] == "10-K"
        for expected in (
            BANNER, "UNITED STATES", "SECURITIES AND EXCHANGE COMMISSION", "Washington, D.C. 20549",
            f"FORM {doc['form']}",
            f"{'ANNUAL' if annual else 'QUARTERLY'} REPORT PURSUANT TO SECTION 13 OR 15(d)",
            f"For the {'fiscal year' if annual else 'quarterly period'} ended {doc['period_end']}",
            f"{doc['company']}\n(Exact name of registrant as specified in its charter)",
            f"Trading Symbol(s)\nName of each exchange on which registered\nCommon Stock, $0.001 par value\n"
            f"{doc['ticker']}\n", "Commission File Number 001-",
        ):
            assert expected in cover, (doc["doc_name"], expected)


def test_every_fact_is_printed_on_its_page_in_its_row_and_column(
    corpus: Path, documents: list[dict], facts_by_doc: dict
) -> None:
    checked = 0
    for doc in documents:
        if doc["format"] != "pdf":
            continue
        with pymupdf.open(corpus / doc["path"]) as pdf:
            pages = [page.get_text().splitlines() for page in pdf]
        for fact in facts_by_doc[doc["doc_name"]]:
            rows = [line for line in pages[fact.page_index] if line.startswith(fact.metric + " ..")]
            assert len(rows) == 1, (fact, pages[fact.page_index])
            values = NUMBER.findall(rows[0][len(fact.metric):].replace("$", ""))
            assert len(values) == 2, rows[0]
            assert values[_column(fact)] == format_amount(fact.value, fact.unit), (fact, rows[0])
            checked += 1
    assert checked >= 19 * FACTS_PER_FILING


def test_html_filings_have_tables_page_breaks_and_the_same_facts(
    corpus: Path, documents: list[dict], facts_by_doc: dict
) -> None:
    html_docs = [doc for doc in documents if doc["format"] == "html"]
    assert len(html_docs) == 4
    markers = set()
    for doc in html_docs:
        text = (corpus / doc["path"]).read_text(encoding="utf-8")
        markers.update(PAGE_BREAK.findall(text))
        segments = PAGE_BREAK.split(text)
        assert len(segments) == doc["pages"]
        assert doc["company"] in segments[0] and "(Exact name of registrant" in segments[0]
        assert "FICTIONAL DEMO FILING" in segments[0]
        assert text.count("<table") == 4  # the cover's Section 12(b) table and three statements
        assert f"<td>{doc['ticker']}</td>" in segments[0]
        for fact in facts_by_doc[doc["doc_name"]]:
            label = re.escape(html.escape(fact.metric))
            row = re.search(rf"<tr><td[^>]*>{label}</td>(.*?)</tr>", segments[fact.page_index])
            assert row, fact
            cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1))]
            cells = [c for c in cells if c not in ("", "$")]  # the inline XBRL tags stripped
            assert cells[_column(fact)] == format_amount(fact.value, fact.unit), (fact, row.group(0))
    assert len(markers) == 2, "both EDGAR page-break styles should occur"


def test_accounting_identities_hold_in_every_column(facts_by_doc: dict) -> None:
    for facts in facts_by_doc.values():
        columns: dict[str, dict[str, float]] = defaultdict(dict)
        for f in facts:
            columns[f"{f.statement}|{f.column_label}"][f.metric] = f.value
        for key, v in columns.items():
            if key.startswith("income_statement"):
                assert v["Gross profit"] == v["Total revenue"] - v["Cost of revenue"]
                assert v["Operating income"] == (v["Gross profit"] - v["Research and development"]
                                                 - v["Selling general and administrative"])
                assert v["Income before income taxes"] == v["Operating income"] - v["Interest expense"]
                assert v["Net income"] == v["Income before income taxes"] - v["Provision for income taxes"]
                assert v["Total revenue"] > 0 and v["Diluted EPS"] * v["Net income"] >= 0
            elif key.startswith("balance_sheet"):
                parts = v["Cash and cash equivalents"] + v["Accounts receivable"] + v["Inventories"]
                assert parts < v["Total current assets"] <= v["Total assets"]
                assert v["Total current assets"] + v["Property plant and equipment net"] <= v["Total assets"]
                assert v["Total current liabilities"] + v["Long-term debt"] <= v["Total liabilities"]
                assert v["Total shareholders' equity"] == v["Total assets"] - v["Total liabilities"] > 0
            else:
                assert v["Capital expenditures"] < 0 and v["Dividends paid"] < 0
                assert v["Net cash used in investing activities"] <= v["Capital expenditures"]
                assert v["Depreciation and amortization"] > 0


def test_columns_agree_across_filings_of_a_company(facts_by_doc: dict) -> None:
    seen: dict[tuple[str, str, str], set[float]] = defaultdict(set)
    for facts in facts_by_doc.values():
        for f in facts:
            seen[(f.ticker, f.column_label, f.metric)].add(f.value)
    assert all(len(values) == 1 for values in seen.values())
    # Spelled out for the 10-Ks: the 2023 report's 2022 column is the 2022 report's current column.
    for ticker in {f.ticker for facts in facts_by_doc.values() for f in facts}:
        current = _column_values(facts_by_doc[f"{ticker}_2022_10K"], 0)
        prior = _column_values(facts_by_doc[f"{ticker}_2023_10K"], 1)
        assert current == prior and len(current) == FACTS_PER_FILING // 2
        # A 10-Q compares its quarter with the same quarter a year earlier, and its balance sheet with the
        # last fiscal year end.
        q_prior = _column_values(facts_by_doc[f"{ticker}_2023Q3_10Q"], 1)
        q_current = _column_values(facts_by_doc[f"{ticker}_2022Q3_10Q"], 0)
        assert {k: v for k, v in q_prior.items() if k[0] != "balance_sheet"} == {
            k: v for k, v in q_current.items() if k[0] != "balance_sheet"}
        assert {k: v for k, v in q_prior.items() if k[0] == "balance_sheet"} == {
            k: v for k, v in current.items() if k[0] == "balance_sheet"}


def test_mdna_prose_quotes_the_table_numbers(corpus: Path, documents: list[dict], facts_by_doc: dict) -> None:
    for doc in documents:
        if doc["format"] != "pdf":
            continue
        with pymupdf.open(corpus / doc["path"]) as pdf:
            text = " ".join(page.get_text() for page in pdf).replace("\n", " ")
        match = re.search(r"Total revenue (?:increased|decreased) [\d.]+% to \$([\d,]+) million .*? from "
                          r"\$([\d,]+) million", text)
        assert match, doc["doc_name"]
        revenue = {_column(f): f.value for f in facts_by_doc[doc["doc_name"]] if f.metric == "Total revenue"}
        assert [int(g.replace(",", "")) for g in match.groups()] == [revenue[0], revenue[1]]
        net = next(f for f in facts_by_doc[doc["doc_name"]] if f.metric == "Net income" and _column(f) == 0)
        assert f"Net {'income' if net.value >= 0 else 'loss'} was ${abs(net.value):,.0f} million" in text


def test_same_seed_same_bytes_other_seed_other_numbers(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    generate_corpus(tmp_path / "a", 7, seed=11, html_every=3, progress=lambda *args: calls.append(args))
    generate_corpus(tmp_path / "b", 7, seed=11, html_every=3)
    generate_corpus(tmp_path / "c", 7, seed=12, html_every=3)
    assert calls == [(i, 7) for i in range(1, 8)]
    for name in ("truth.jsonl", "documents.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert (tmp_path / "a" / "truth.jsonl").read_bytes() != (tmp_path / "c" / "truth.jsonl").read_bytes()
    for doc in (tmp_path / "a").rglob("*_10*.*"):
        assert doc.read_bytes() == (tmp_path / "b" / doc.relative_to(tmp_path / "a")).read_bytes(), doc


def test_single_filing_writers_match_the_facts(tmp_path: Path) -> None:
    spec = plan_corpus(3, seed=5)[2]
    facts = filing_facts(spec)
    write_pdf_filing(spec, tmp_path / "one.pdf")
    write_html_filing(spec, tmp_path / "one.htm")
    with pymupdf.open(tmp_path / "one.pdf") as pdf:
        page_count = pdf.page_count
        revenue = next(f for f in facts if f.metric == "Total revenue" and _column(f) == 0)
        assert format_amount(revenue.value) in pdf[revenue.page_index].get_text()
    assert len(PAGE_BREAK.split((tmp_path / "one.htm").read_text(encoding="utf-8"))) == page_count
    assert len(facts) == FACTS_PER_FILING and {f.doc_name for f in facts} == {spec.doc_name}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.htm", "one.pdf"]


def test_companies_are_unique_and_stable_at_scale() -> None:
    companies = demo_companies(3000, seed=2)  # beyond the two-word names, so three-word names are used too
    assert len({c.name for c in companies}) == 3000
    assert len({c.ticker for c in companies}) == 3000
    assert all(re.fullmatch(r"[A-Z]{3,5}", c.ticker) for c in companies)
    assert len({c.file_number for c in companies}) == 3000
    assert demo_companies(10, seed=2) == companies[:10]
    assert [c.name for c in demo_companies(10, seed=3)] != [c.name for c in companies[:10]]


def test_bad_arguments_raise_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        generate_corpus(tmp_path, 0)
    with pytest.raises(ConfigError):
        plan_corpus(5, html_every=-1)


def test_scale_smoke_200_filings(tmp_path: Path) -> None:
    started = time.perf_counter()
    specs = generate_corpus(tmp_path, 200, seed=1, html_every=10)
    elapsed = time.perf_counter() - started
    print(f"demo corpus: 200 filings in {elapsed:.2f} s ({200 / elapsed:.0f} filings/s)")
    assert len(specs) == 200 and len({s.doc_name for s in specs}) == 200
    assert len((tmp_path / "truth.jsonl").read_text().splitlines()) == 200 * FACTS_PER_FILING
    assert len(list(tmp_path.rglob("*.htm"))) == 20
    assert elapsed < 60
