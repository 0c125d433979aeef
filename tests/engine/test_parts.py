"""A choice among the parts of a total the filing prints (engine.answer.parts): "which segment had the lowest net
sales", "which region had the biggest drop", on a generated 10-K whose segment note prints net sales and operating
income by segment, whose geographic note prints net sales by country ("Worldwide") beside property, plant and
equipment by country, and whose product-line table's rows do not add up to its total."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records import ColumnPeriod, StatementFact, StoredFact

SEGMENTS = {"Industrial": (5200, 4800, 1100, 1000), "Healthcare": (2100, 2300, 300, 420), "Consumer": (1700, 1400, 400, 280)}
REGIONS = {"United States": (5000, 4700), "China": (2500, 2200), "Germany": (1500, 1600)}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, embedder):  # noqa: ANN001, ANN201
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library
    from tests.engine.test_identity import add_table_page, write_cover_pdf

    tmp = tmp_path_factory.mktemp("parts")
    pdf = write_cover_pdf(tmp / "f" / "ACMEIND_2023_10K.pdf", name="ACME INDUSTRIES INC", form="10-K",
                          period_text="December 31, 2023")
    add_table_page(pdf, [("Consolidated Statements of Operations", "", ""), ("(in millions)", "2023", "2022"),
                         ("Net sales", "9,000", "8,500"), ("Cost of sales", "(5,400)", "(5,100)"),
                         ("Gross profit", "3,600", "3,400"), ("Selling, general and administrative", "(1,800)", "(1,700)"),
                         ("Operating income", "1,800", "1,700"), ("Income before income taxes", "1,700", "1,600"),
                         ("Net income", "1,300", "1,250")])
    rows = [("Note 12 - Segment information", "", ""), ("Net sales by reportable segment", "", ""),
            ("(in millions)", "2023", "2022")]
    rows += [(name, f"{v[0]:,}", f"{v[1]:,}") for name, v in SEGMENTS.items()] + [("Total net sales", "9,000", "8,500")]
    rows += [("Operating income by segment", "", "")]
    rows += [(name, f"{v[2]:,}", f"{v[3]:,}") for name, v in SEGMENTS.items()]
    rows += [("Total operating income", "1,800", "1,700")]
    add_table_page(pdf, rows)
    geo = [("Note 13 - Geographic information", "", ""), ("Net sales by geographic area", "", ""),
           ("(in millions)", "2023", "2022")]
    geo += [(name, f"{v[0]:,}", f"{v[1]:,}") for name, v in REGIONS.items()] + [("Worldwide", "9,000", "8,500")]
    # another amount by country under its own heading: its total names no amount, the heading above it does
    geo += [("Property, plant and equipment - net", "", ""), ("(in millions)", "2023", "2022"),
            ("United States", "6,900", "6,800"), ("China", "300", "250"), ("Total Company", "7,200", "7,050")]
    add_table_page(pdf, geo)
    # rows that do not add up to the total printed under them: not its parts
    add_table_page(pdf, [("Net sales by product line", "", ""), ("(in millions)", "2023", "2022"),
                         ("Widgets", "3,000", "2,900"), ("Gadgets", "2,000", "2,100"), ("Net sales", "9,000", "8,500")])
    add_table_page(pdf, [("Consolidated Balance Sheets", "", ""), ("(in millions)", "2023", "2022"),
                         ("Cash and cash equivalents", "1,200", "1,000"), ("Accounts receivable", "2,300", "2,100"),
                         ("Inventories", "1,500", "1,400"), ("Total current assets", "5,000", "4,500"),
                         ("Property, plant and equipment, net", "6,000", "5,800"), ("Total assets", "11,000", "10,300"),
                         ("Liabilities", "", ""), ("Accounts payable", "1,100", "1,000"),
                         ("Long-term debt", "3,400", "3,600"), ("Other liabilities", "500", "400"),
                         ("Total liabilities", "5,000", "5,000"), ("Total shareholders' equity", "6,000", "5,300")])
    # amounts the catalogue does not compute, by segment, as the segment note prints them (page 8)
    add_table_page(pdf, [("Note 14 - Segment backlog and goodwill", "", ""), ("Backlog by segment", "", ""),
                         ("(in millions)", "2023", "2022"), ("Industrial", "4,100", "3,900"),
                         ("Healthcare", "1,300", "1,600"), ("Consumer", "600", "500"), ("Total backlog", "6,000", "6,000"),
                         ("Goodwill by segment", "", ""), ("(in millions)", "2023", "2022"),
                         ("Industrial", "2,400", "2,300"), ("Healthcare", "3,100", "2,900"), ("Consumer", "900", "950"),
                         ("Total goodwill", "6,400", "6,150")])
    settings = Settings(home=tmp / "lib", ingest={"workers": 1})
    library = Library(settings.home)
    ingest(library, [tmp / "f"], settings)
    sync_indexes(library, settings, embedder)
    return build_pipeline(settings, library, Models(embedder))  # no chat model: the facts decide, or nothing does


def _growth(name: str, col: int, table: dict = SEGMENTS) -> float:
    v = table[name]
    return (v[col] / v[col + 1] - 1) * 100


@pytest.mark.parametrize(("question", "winner", "value", "page"), [
    ("Which segment had the lowest net sales for Acme Industries in FY2023?", "Consumer", 1700.0, 4),
    ("Which of Acme Industries' reportable segments generated the most revenue in FY2023?", "Industrial", 5200.0, 4),
    # the company's word for its segments ("business groups") and an analyst's verb for their sales
    ("Which of Acme Industries' business groups brought in the most sales in FY2023?", "Industrial", 5200.0, 4),
    ("Which region had the biggest drop in sales for Acme Industries in FY2023?", "Germany",
     _growth("Germany", 0, REGIONS), 5),
    ("Which country contributed the most net sales for Acme Industries in FY2023?", "United States", 5000.0, 5),
    ("In which reportable segment did Acme Industries' operating income grow the most in FY2023?", "Consumer",
     _growth("Consumer", 2), 4),
    ("Which segment had the weakest operating income performance at Acme Industries in FY2023?", "Healthcare",
     _growth("Healthcare", 2), 4),
    ("Excluding Industrial, which segment of Acme Industries had the highest revenue in FY2023?", "Healthcare",
     2100.0, 4),
    ("Which segment of Acme Industries has the highest operating income?", "Industrial", 1100.0, 4),  # latest 10-K
    # no amount named: the parts' revenue, by its growth
    ("Which of Acme Industries' segments grew fastest in FY2023?", "Consumer", _growth("Consumer", 0), 4),
    ("Which region of Acme Industries grew the slowest in FY2023?", "Germany", _growth("Germany", 0, REGIONS), 5),
])
def test_the_part_chosen_is_computed_from_the_parts_that_add_up_to_the_total(pipeline, question, winner, value,
                                                                             page) -> None:  # noqa: ANN001
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    assert text.startswith(f"{winner}: ") and run.answer.value == pytest.approx(value, rel=1e-6), text
    assert "which they add up to" in text and f"ACMEIND_2023_10K p. {page}" in text, text
    names = REGIONS if page == 5 else SEGMENTS
    shown = [name for name in names if f"{name}: " in text]
    assert shown == ([n for n in names if n != "Industrial"] if question.startswith("Excluding") else list(names))
    assert run.answer.citations and run.answer.citations[0].page_index == page - 1


@pytest.mark.parametrize(("question", "side", "named"), [
    ("Are there any segments that represent more than 20% of Acme Industries' net sales in FY2023?", "Yes",
     ["Industrial", "Healthcare"]),
    ("Does any reportable segment of Acme Industries account for over 60 percent of its revenue in FY2023?", "No",
     ["Industrial"]),
    ("Do any of Acme Industries' geographic regions make up less than 20% of net sales in FY2023?", "Yes",
     ["Germany"]),
])
def test_a_yes_no_of_the_parts_shares_is_computed_against_the_bar_written(pipeline, question, side,
                                                                          named) -> None:  # noqa: ANN001
    """Each part's share of the total its parts add up to, against the bar the question writes: yes naming the parts
    that pass (largest first), or no naming the nearest; no model call."""
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    assert text.startswith(f"{side}: "), text
    table = REGIONS if "regions" in question else SEGMENTS
    head = text.split("; the test:")[0]
    for name in named:
        assert f"{name} {table[name][0] / 9000 * 100:.1f}%" in head, text
    assert [n for n in table if f"{n} " in head] == [n for n in sorted(table, key=lambda n: -table[n][0])
                                                     if n in named]
    assert "Total net sales" in text or "Worldwide" in text


@pytest.mark.parametrize(("question", "table"), [
    ("What are Acme Industries' reportable segments in FY2023?", SEGMENTS),
    ("Which segments does Acme Industries report for FY2023?", SEGMENTS),
    ("What are the geographies that Acme Industries primarily operates in as of FY2023?", REGIONS),
    ("Which countries does Acme Industries report net sales for in FY2023?", REGIONS),
])
def test_what_the_parts_are_is_answered_with_every_part_its_amount_and_share(pipeline, question, table) -> None:  # noqa: ANN001
    """Every part the filing prints of the total, largest first, with its amount and its share of the total they add
    up to; from the facts, no model."""
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    order = sorted(table, key=lambda n: -table[n][0])
    assert [n for n in sorted(table, key=text.find)] == order, text
    for name in order:
        assert f"{name} ({table[name][0]:,} USD millions, {table[name][0] / 9000 * 100:.1f}%)" in text, text
    assert "which they add up to" in text and {i.variable for i in run.answer.inputs} == {*table, "total"}


def test_a_question_of_the_parts_change_or_a_sections_amount_is_no_list_of_parts(pipeline) -> None:  # noqa: ANN001
    for question in ("What drove the net sales growth of Acme Industries' segments in FY2023?",
                     "What are the current liabilities of Acme Industries in FY2023?",
                     "What are Acme Industries' segments with the highest net sales in FY2023?"):
        run = pipeline.run(question, store=False)
        plan = run.traces[0].payload.intent.plan
        assert plan is None or plan.choice != "all", (question, plan)


def test_a_bar_on_the_parts_growth_is_not_read_as_their_share(pipeline) -> None:  # noqa: ANN001
    run = pipeline.run("Are there any segments of Acme Industries with more than 20% revenue growth in FY2023?",
                       store=False)
    assert not run.answer.text.startswith(("Yes: ", "No: ")) or "share" not in run.answer.text, run.answer


def test_rows_that_do_not_add_up_to_the_total_are_not_its_parts(pipeline) -> None:  # noqa: ANN001
    """The product lines print 5,000 of 9,000: no choice is computed from them (without a chat model no answer)."""
    run = pipeline.run("Which product line had the highest net sales for Acme Industries in FY2023?", store=False)
    assert run.answer.value is None and run.answer.method != "facts", run.answer
    assert "prints no table whose product line rows add up" in run.answer.reason or run.status == "failed"


def _fact(n: int, label: str, parent: str, value: float, year: int, total: bool = False) -> StoredFact:
    return StoredFact(n, 1, "X_2022_10K", None, StatementFact(
        3, "table", "Year Ended December 31,", label, parent, total, 0 if year == 2022 else 1,
        ColumnPeriod(str(year), year, None, 12), f"{value:,.0f}", value, "thousands", "USD", n * 10, n * 10 + 5))


def test_a_nested_table_s_group_totals_are_the_parts() -> None:
    """Each segment's lines and its unlabelled total, then the total of the segments: the group totals are the parts
    (their lines are not), checked against the total they add up to."""
    from engine.answer.parts import parts_tables

    rows, n = [], 0
    for name, lines in (("Strip", (2104, 2729)), ("Regional", (2901, 284)), ("China", (567, 43))):
        for year, scale in ((2022, 1.0), (2021, 0.5)):
            for k, v in enumerate(lines):
                n += 1
                rows.append(_fact(n, ("Casino", "Rooms")[k], name, v * scale, year))
            n += 1
            rows.append(_fact(n, f"{name} (unlabeled total)", name, sum(lines) * scale, year, total=True))
    for year, scale in ((2022, 1.0), (2021, 0.5)):
        n += 1
        rows.append(_fact(n, "Reportable segment net revenues", "", (4833 + 3185 + 610) * scale, year))
    (table,) = parts_tables(rows, "revenue", 2022)
    assert [p.name for p in table.parts] == ["Strip", "Regional", "China"]
    assert [p.now.fact.value for p in table.parts] == [4833, 3185, 610]
    assert all(p.before is not None and p.before.fact.value == p.now.fact.value / 2 for p in table.parts)
    assert parts_tables(rows, "operating income", 2022) == []  # no total names it


@pytest.mark.parametrize(("question", "winner", "value"), [
    ("What was the largest liability on Acme Industries' balance sheet in FY2023?", "Long-term debt", 3400.0),
    ("Which current asset of Acme Industries was the largest at the end of FY2023?", "Accounts receivable", 2300.0),
])
def test_the_largest_line_of_a_balance_sheet_section(pipeline, question, winner, value) -> None:  # noqa: ANN001
    """"The largest liability": the lines of the section whose total they add up to, the largest named."""
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    assert run.answer.text.startswith(f"{winner}: ") and run.answer.value == pytest.approx(value), run.answer.text
    assert "ACMEIND_2023_10K p. 7" in run.answer.text


@pytest.mark.parametrize(("question", "winner", "value", "measure"), [
    ("Which segment had the largest backlog for Acme Industries at the end of FY2023?", "Industrial", 4100.0,
     "backlog"),
    # goodwill, a line the catalogue reads from the balance sheet: its parts chosen among the same way
    ("Which of Acme Industries' segments carried the least goodwill in FY2023?", "Consumer", 900.0, ""),
    ("Which segment's backlog shrank the most for Acme Industries in FY2023?", "Healthcare",
     (1300 / 1600 - 1) * 100, "backlog"),
])
def test_a_choice_among_the_parts_of_an_amount_the_catalogue_does_not_compute(pipeline, question, winner, value,
                                                                               measure) -> None:
    """An amount no catalogue formula computes (backlog; a company's own measure such as Adjusted Property EBITDAR) is
    chosen among the rows its table prints that add up to its total, named as the table prints it and said to be read
    from it (not computed from the statements); a catalogue line (goodwill) of every part is chosen the same way."""
    run = pipeline.run(question, store=False)
    a = run.answer
    assert run.status == "answered" and run.llm_calls == 0 and a.method == "facts", (a.text, a.reason)
    assert a.text.startswith(f"{winner}: ") and a.value == pytest.approx(value), a.text
    assert "ACMEIND_2023_10K p. 8" in a.text, a
    assert not measure or f"{measure} is read from the filing's table" in a.reason.lower(), a


@pytest.fixture(scope="module")
def unnamed(tmp_path_factory: pytest.TempPathFactory, embedder):  # noqa: ANN001, ANN201
    """A 10-K whose revenue by type prints no heading naming what its rows are, on a page that speaks of
    international customers, and whose segment table sits in the segment note a page below the note's heading."""
    from tests.engine.test_identity import add_table_page

    tmp = tmp_path_factory.mktemp("parts-unnamed")
    pdf = _ten_k(tmp, "BETASVC", "BETA SERVICES CORP")
    _income_statement(pdf, ("Total revenues", "6,000", "5,500"), ("(4,000)", "(3,800)"), ("1,500", "1,300"))
    prose = [(f"Amounts below are stated in millions of dollars before taxes, line {n}.", "", "")
             for n in range(1, 9)]
    add_table_page(pdf, [("Our international card members grew in every market we serve.", "", ""), *prose,
                         ("(in millions)", "2023", "2022"), ("Discount revenue", "4,000", "3,600"),
                         ("Net card fees", "1,500", "1,400"), ("Service fees", "500", "500"),
                         ("Total revenues", "6,000", "5,500")])
    add_table_page(pdf, [("Notes to Consolidated Financial Statements", "", ""),
                         ("Note 9 - Segment Information", "", ""), *prose])
    add_table_page(pdf, [*prose, ("(in millions)", "2023", "2022"),
                         ("Payments", "3,500", "3,300"), ("Lending", "2,500", "2,200"),
                         ("Total revenues", "6,000", "5,500")])
    return _pipeline_of(tmp, embedder)


def _ten_k(tmp: Path, key: str, name: str) -> Path:
    """The cover of ``name``'s FY2023 10-K, filed under ``key``, in ``tmp / "f"``."""
    from tests.engine.test_identity import write_cover_pdf

    return write_cover_pdf(tmp / "f" / f"{key}_2023_10K.pdf", name=name, form="10-K", period_text="December 31, 2023")


def _income_statement(pdf: Path, revenue: tuple[str, str, str], expenses: tuple[str, str],
                      net: tuple[str, str]) -> None:
    """A page of Item 8 with the year's income statement: revenue (its label and two years), expenses, net income."""
    from tests.engine.test_identity import add_table_page

    add_table_page(pdf, [("Item 8. Financial Statements and Supplementary Data", "", ""),
                         ("Consolidated Statements of Income", "", ""), ("(in millions)", "2023", "2022"),
                         revenue, ("Operating expenses", *expenses), ("Net income", *net)])


def test_a_table_that_says_nothing_of_its_rows_is_not_taken_for_the_parts_asked(unnamed) -> None:  # noqa: ANN001
    """Revenue by type on a page that says "international" is no table of regions: no region is chosen from it."""
    run = unnamed.run("Which region had the highest revenue for Beta Services in FY2023?", store=False)
    assert run.answer.method != "facts" and "Discount revenue" not in run.answer.text, run.answer


def test_a_table_printed_in_the_segment_note_is_of_segments(unnamed) -> None:  # noqa: ANN001
    """The note's heading is a page above the table; the section it is printed in says what its rows are."""
    run = unnamed.run("Which segment of Beta Services had the highest revenue in FY2023?", store=False)
    assert run.answer.method == "facts" and run.answer.text.startswith("Payments: "), run.answer
    assert "Lending: " in run.answer.text and "Discount revenue" not in run.answer.text


@pytest.fixture(scope="module")
def regions_under_categories(tmp_path_factory: pytest.TempPathFactory, embedder):  # noqa: ANN001, ANN201
    """A 10-K whose only table of revenue's parts is headed by product category but prints its regions
    (a retailer's "Domestic" and "International" segments under a heading that speaks of its categories)."""
    from tests.engine.test_identity import add_table_page

    tmp = tmp_path_factory.mktemp("parts-kind")
    pdf = _ten_k(tmp, "GAMMARET", "GAMMA RETAIL CORP")
    _income_statement(pdf, ("Revenue", "7,000", "6,400"), ("(6,000)", "(5,500)"), ("700", "650"))
    add_table_page(pdf, [("Revenue by product category", "", ""), ("(in millions)", "2023", "2022"),
                         ("Domestic", "6,000", "5,500"), ("International", "1,000", "900"),
                         ("Total revenue", "7,000", "6,400")])
    return _pipeline_of(tmp, embedder)


def test_a_table_whose_rows_are_parts_of_another_kind_is_not_taken(regions_under_categories) -> None:  # noqa: ANN001
    """Rows all named as regions are no product categories, whatever the heading above them says: no category is
    chosen from them (the written answer reads the filing instead)."""
    run = regions_under_categories.run("Which product category had the highest revenue for Gamma Retail in FY2023?",
                                       store=False)
    assert run.answer.method != "facts" and not run.answer.text.startswith("Domestic"), run.answer


@pytest.fixture(scope="module")
def brands(tmp_path_factory: pytest.TempPathFactory, embedder):
    """A 10-K whose revenue by geographic segment prints a row that names no place beside its regions (an apparel
    company's "Global Brand Divisions"), and whose segment note prints an operating loss for two segments."""
    from tests.engine.test_identity import add_table_page

    tmp = tmp_path_factory.mktemp("parts-brands")
    pdf = _ten_k(tmp, "DELTAWEAR", "DELTA WEAR INC")
    _income_statement(pdf, ("Revenue", "7,000", "6,400"), ("(6,000)", "(5,500)"), ("700", "650"))
    add_table_page(pdf, [("Note 9 - Operating segments", "", ""), ("Revenue by geographic segment", "", ""),
                         ("(in millions)", "2023", "2022"), ("North America", "3,500", "3,200"),
                         ("Greater China", "1,900", "1,700"), ("Europe", "1,480", "1,380"), ("Russia", "100", "100"),
                         ("Global Brand Divisions", "20", "20"), ("Total revenue", "7,000", "6,400"),
                         ("Operating income (loss) by segment", "", ""), ("(in millions)", "2023", "2022"),
                         ("Footwear", "1,400", "1,200"), ("Apparel", "(250)", "150"), ("Equipment", "(450)", "(100)"),
                         ("Total operating income", "700", "1,250")])
    return _pipeline_of(tmp, embedder)


@pytest.mark.parametrize(("question", "winner", "value"), [
    # a row that names a part of another kind is in the sum, not among the regions chosen; a country the reader does
    # not know as a place is still one
    ("Which of Delta Wear's regions brought in the least revenue in FY2023?", "Russia", 100.0),
    ("Which region had the highest revenue for Delta Wear in FY2023?", "North America", 3500.0),
    # no amount named, a profit or a loss: the parts' operating income (the most lost: the lowest)
    ("Which Delta Wear segment lost the most money in FY2023?", "Equipment", -450.0),
    ("Which segment of Delta Wear was the most profitable in FY2023?", "Footwear", 1400.0),
    ("Which of Delta Wear's segments made the least money in FY2023?", "Equipment", -450.0),
])
def test_regions_are_places_and_a_loss_chooses_the_lowest_profit(brands, question, winner, value) -> None:
    run = brands.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    assert text.startswith(f"{winner}: ") and run.answer.value == pytest.approx(value), text
    if "region" in question:
        assert "of the 4 regions among the parts of 'Total revenue'" in text, text
        assert "with Global Brand Divisions (no place named: not chosen among)" in text, text
        assert "Global Brand Divisions: " not in text, text
    else:
        assert "operating income" in run.answer.reasoning + text, text


MIX = {"Computing": ("41 %", "42 %", "(6.4)%", "(16.6)%"), "Appliances": ("20 %", "21 %", "(16.1)%", "(1.2)%"),
       "Entertainment": ("9 %", "7 %", "9.0 %", "(9.2)%"), "Services": ("30 %", "30 %", "7.6 %", "(8.5)%")}
ABROAD = {"Computing": ("45 %", "43 %", "3.1 %", "(6.6)%"), "Appliances": ("15 %", "16 %", "(2.0)%", "(1.2)%"),
          "Entertainment": ("12 %", "12 %", "(0.5)%", "(9.2)%"), "Services": ("28 %", "29 %", "1.5 %", "(8.5)%")}


def _write_rows(page, lines, xs, step: int) -> None:  # noqa: ANN001
    """Each line's cells printed at the columns ``xs``, one line every ``step`` points from the top margin."""
    for y, row in enumerate(lines):
        for x, cell in zip(xs, row):
            if cell:
                page.insert_text((x, 72 + step * y), cell, fontsize=9)


def _pipeline_of(tmp: Path, embedder):  # noqa: ANN001, ANN202
    """The filings written under ``tmp / "f"``, ingested and indexed, behind a pipeline with no chat model."""
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library

    settings = Settings(home=tmp / "lib", ingest={"workers": 1})
    library = Library(settings.home)
    ingest(library, [tmp / "f"], settings)
    sync_indexes(library, settings, embedder)
    return build_pipeline(settings, library, Models(embedder))


@pytest.fixture(scope="module")
def quarter(tmp_path_factory: pytest.TempPathFactory, embedder):  # noqa: ANN001, ANN201
    """A retailer's 10-Q whose MD&A prints its revenue categories' shares ("Revenue Mix", adding up to 100%) beside
    each category's comparable sales change, for the quarter and the quarter a year before."""
    import pymupdf

    from tests.engine.test_identity import write_cover_pdf

    tmp = tmp_path_factory.mktemp("mix")
    pdf = write_cover_pdf(tmp / "f" / "ACMERET_2023Q2_10Q.pdf", name="ACME RETAIL INC", form="10-Q",
                          period_text="June 30, 2023")
    doc = pymupdf.open(pdf)
    page = doc.new_page()
    xs = (72, 260, 330, 410, 480)
    for segment, table, total in (("Domestic", MIX, "(4.3)%"), ("International", ABROAD, "1.1 %")):
        lines = [(f"{segment} segment revenue mix and comparable sales changes by revenue category were as follows:",),
                 ("", "Revenue Mix", "", "Comparable Sales", ""),
                 ("", "Three Months Ended", "", "Three Months Ended", ""),
                 ("", "June 30, 2023", "June 30, 2022", "June 30, 2023", "June 30, 2022")]
        lines += [(name, *cells) for name, cells in table.items()] + [("Total", "100 %", "100 %", total, "(12.7)%")]
        page = doc.new_page() if segment != "Domestic" else page
        _write_rows(page, lines, xs, 16)
    doc.saveIncr()
    return _pipeline_of(tmp, embedder)


@pytest.mark.parametrize(("question", "winner", "value"), [
    ("Which Acme Retail product category performed the best (by top line) during Q2 of FY2023?", "Entertainment",
     9.0),
    ("Which revenue category of Acme Retail had the weakest sales growth in the second quarter of 2023?",
     "Appliances", -16.1),
    ("Which product category made up the largest share of Acme Retail's revenue in Q2 2023?", "Computing", 41.0),
    # the segment the question names: the table whose heading names it
    ("Which Acme Retail product category had the best sales performance in the international market in Q2 2023?",
     "Computing",
     3.1),
])
def test_a_quarters_share_table_gives_the_parts_and_their_change(quarter, question, winner, value) -> None:  # noqa: ANN001
    """A quarter's categories from the table of their shares of revenue (its rows add up to 100%) and the change
    printed beside them, the sign of a change printed "(6.4)%" kept; no model call."""
    run = quarter.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    assert text.startswith(f"{winner}: ") and run.answer.value == pytest.approx(value), text
    assert all(f"{name}: " in text for name in MIX) and "ACMERET_2023Q2_10Q" in text, text


QSEGMENTS = {"Cloud": (5200, 4800), "Devices": (2300, 2500), "Services": (1500, 1200)}
QPRODUCTS = {"Subscriptions": (4100, 3700), "Hardware": (2300, 2500), "Licenses": (1600, 1400), "Support": (1000, 900)}


@pytest.fixture(scope="module")
def segment_quarter(tmp_path_factory: pytest.TempPathFactory, embedder):  # noqa: ANN001, ANN201
    """A 10-Q whose segment note prints, on one page, the quarter's revenue by segment and then by product offering
    (both adding up to the same total), each introduced by its own sentence, after a paragraph that speaks of
    "businesses"."""
    import pymupdf

    from tests.engine.test_identity import write_cover_pdf

    tmp = tmp_path_factory.mktemp("segq")
    pdf = write_cover_pdf(tmp / "f" / "ACMESOFT_2023Q2_10Q.pdf", name="ACME SOFTWARE INC", form="10-Q",
                          period_text="June 30, 2023")
    doc = pymupdf.open(pdf)
    page = doc.new_page()
    xs = (72, 330, 420)
    lines: list[tuple[str, ...]] = [("NOTE 12 — SEGMENT INFORMATION",),
                                    ("Segment revenue was as follows during the periods presented:",),
                                    ("(In millions)",), ("", "Three Months Ended June 30,"), ("", "2023", "2022")]
    lines += [(name, f"{a:,}", f"{b:,}") for name, (a, b) in QSEGMENTS.items()]
    lines += [("Total", "9,000", "8,500"), ("",),
              ("No sales to an individual customer were 10% of revenue, given the nature of these businesses.",),
              ("Revenue, classified by significant product offerings, was as follows:",),
              ("(In millions)",), ("", "Three Months Ended June 30,"), ("", "2023", "2022")]
    lines += [(name, f"{a:,}", f"{b:,}") for name, (a, b) in QPRODUCTS.items()]
    lines += [("Total", "9,000", "8,500")]
    _write_rows(page, lines, xs, 15)
    doc.saveIncr()
    return _pipeline_of(tmp, embedder)


BY_SEGMENT = ("What was Acme Software's revenue by segment in Q2 2023?",
              "Give me Acme Software's revenue per segment for the second quarter of 2023.",
              "What was each segment's revenue at Acme Software in Q2 2023?")
BY_OFFERING = ("In Q2 2023, what was the revenue breakdown across Acme Software's product offerings?",)


@pytest.mark.parametrize("question", BY_SEGMENT + BY_OFFERING)
def test_a_quarters_parts_are_read_from_its_10q_the_table_its_lead_in_names(segment_quarter, question) -> None:  # noqa: ANN001
    """"Revenue by segment", "the breakdown across its product offerings" ask for every part, the noun said in the
    singular or after "by"/"per"/"each"/"across"; a quarter's parts are its 10-Q's three months, and of two tables
    on one page the one whose own lead-in sentence names the parts asked is taken (the paragraph above it speaking
    of "businesses" says nothing of its rows)."""
    table = QSEGMENTS if question in BY_SEGMENT else QPRODUCTS
    run = segment_quarter.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    for name, (now, _) in table.items():
        assert f"{name} ({now:,} USD millions, {now / 9000 * 100:.1f}%)" in text, text
    other = QPRODUCTS if table is QSEGMENTS else QSEGMENTS
    assert not any(f"{name} (" in text for name in other if name not in table), text
    assert "2023Q2 (3 months to 2023-06-30)" in text and text.startswith(f"{len(table)} "), text


@pytest.mark.parametrize(("question", "parts"), [
    ("What was Acme's revenue by segment in FY2023?", "segment"),
    ("Show Acme's operating income per region for FY2023.", "region"),
    ("How is Acme's revenue distributed among its regions in FY2023?", "regions"),
    ("What was the revenue breakdown across Acme's service offerings in FY2023?", "service offerings"),
    ("What was Acme's revenue breakdown by geography in FY2023?", "geography"),
    # no part named: a breakdown of what is not said, left unread (never the total alone)
    ("What was Acme's revenue breakdown in FY2023?", None),
])
def test_every_part_is_asked_however_the_parts_noun_is_said(question, parts) -> None:  # noqa: ANN001
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    plan = read_plan(parse_intent(question), load_catalogue())
    if parts is None:
        assert plan.status == "unread" and "breakdown" in plan.unread, plan
    else:
        assert (plan.status, plan.choice, plan.parts) == ("parts", "all", parts), plan


@pytest.mark.parametrize(("question", "name", "now", "before", "of"), [
    ("How much revenue did Acme Industries' Healthcare segment generate in FY2023?", "Healthcare", 2100, 2300, 9000),
    ("What was the operating income of Acme Industries' Consumer segment in FY2023?", "Consumer", 400, 280, None),
    ("What were Acme Industries' net sales in China in FY2023?", "China", 2500, 2200, 9000),
    # a name in capitals beside the metric, no "segment" said
    ("What was Acme Industries' Healthcare revenue in FY2023?", "Healthcare", 2100, 2300, 9000),
    ("How much of Acme Industries' FY2023 net sales came from Industrial?", "Industrial", 5200, 4800, 9000),
])
def test_a_part_the_question_names_is_its_row_of_the_table_of_parts(pipeline, question, name, now, before, of) -> None:  # noqa: ANN001
    """"The Healthcare segment's revenue", "net sales in China": the row of that name among the parts the filing
    prints of the total, with its share and the year before; from the facts, no model."""
    run = pipeline.run(question, store=False)
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    text = run.answer.text
    assert run.answer.value == pytest.approx(now) and text.startswith(f"{name}: {now:,} USD millions"), text
    assert f"{before:,} USD millions in FY2022 ({(now / before - 1) * 100:+.1f}%)" in text, text
    if of:
        assert f"{now / of * 100:.1f}% of" in text, text


def test_a_name_in_capitals_no_row_prints_is_not_answered_with_the_total(pipeline) -> None:  # noqa: ANN001
    """"Aerospace revenue": a part the filing does not print is no reason to give the company's total."""
    for question in ("What was Acme Industries' Aerospace revenue in FY2023?",
                     "What were Acme Industries' net sales in Latin America in FY2023?"):
        run = pipeline.run(question, store=False)
        assert run.answer.value is None and "9,000" not in run.answer.text, run.answer


def test_a_quarters_named_part_and_a_name_no_row_prints(segment_quarter) -> None:  # noqa: ANN001
    run = segment_quarter.run("How much of Acme Software's revenue was attributed to its Cloud segment in Q2 2023?",
                              store=False)
    assert run.status == "answered" and run.answer.value == pytest.approx(5200), run.answer
    assert "the same quarter a year before (+8.3%)" in run.answer.text and "2023Q2" in run.answer.text
    # a segment no table prints: not a row of another name, and no consolidated figure either
    run = segment_quarter.run("What was the revenue of Acme Software's Gaming segment in Q2 2023?", store=False)
    assert run.answer.method != "facts" and run.answer.value is None, run.answer


def test_a_table_of_blocks_one_per_part_gives_each_block_s_line_as_a_part() -> None:
    """A segment note printed as blocks ("North › Net sales", "South › Net sales", then "Consolidated › Net sales"):
    the total's own line under each other heading is a part, named by its heading; a line named otherwise in one
    block ("Operating income (loss)") is the same line by the metric it names."""
    from engine.answer.parts import parts_tables

    blocks = {"North": (800, 700, 100), "South": (300, 310, -10), "Consolidated": (1100, 1010, 90)}
    rows, n = [], 0
    for heading, (sales, costs, income) in blocks.items():
        for year, scale in ((2022, 1.0), (2021, 0.5)):
            for label, v in (("Net sales", sales), ("Operating expenses", costs),
                             ("Operating income (loss)" if heading == "South" else "Operating income", income)):
                n += 1
                rows.append(_fact(n, label, heading, v * scale * 1000, year))
    for metric, k in (("revenue", 0), ("operating expenses", 1), ("operating income", 2)):
        (table,) = parts_tables(rows, metric, 2022)
        assert [p.name for p in table.parts] == ["North", "South"], metric
        assert [p.now.fact.value for p in table.parts] == [blocks["North"][k] * 1000, blocks["South"][k] * 1000]
        assert all(p.before is not None and p.before.fact.value == p.now.fact.value / 2 for p in table.parts)
        assert table.total.fact.parent == "Consolidated"


@pytest.mark.parametrize(("question", "first", "also", "unread"), [
    ("What were Acme's net sales and operating expenses of each segment in FY2023?", "revenue",
     ("operating expenses",), ()),
    ("Show Acme's revenue and operating income by region for FY2023.", "revenue", ("operating income",), ()),
    ("Break down Acme's net sales and operating income by segment for FY2023.", "revenue", ("operating income",), ()),
    ("Show each segment's revenue and operating profit for Acme in FY2023.", "revenue", ("operating income",), ()),
    ("For each of Acme's regions, what were revenue and operating income in FY2023?", "revenue",
     ("operating income",), ()),
    ("How does Acme's revenue distribution across its segments compare to the cost of sales for those segments?",
     "revenue", ("cost of goods sold",), ()),
    (("In Acme's latest 10-Q, how does the revenue distribution across its business segments compare to the costs "
      "incurred in these segments?"), "revenue", ("operating expenses",), ()),
    ("How does Acme's revenue by segment compare to its marketing budget for those segments?", "revenue", (),
     ("marketing", "budget")),
])
def test_several_amounts_asked_of_every_part_are_each_read(question, first, also, unread) -> None:
    """Two amounts of every part, joined by "and" or set side by side ("compare to … for those segments": no
    change over time, fewer than two periods named): the first is the plan's, the others ``also``; the costs of
    each part are read as the operating expenses a table of parts prints (parts.toml [every] costs); the words of
    the other side that name no amount are unread, so that the answer says so."""
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    plan = read_plan(parse_intent(question), load_catalogue())
    assert (plan.status, plan.choice, plan.tree.name, plan.also, plan.unread) == ("parts", "all", first, also,
                                                                                  unread), plan


def test_a_comparison_of_the_parts_across_two_periods_is_no_list_of_two_amounts() -> None:
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    plan = read_plan(parse_intent("How does Acme's revenue by segment in FY2023 compare to FY2022?"),
                     load_catalogue())
    assert plan.choice != "all", plan


def test_two_amounts_of_every_part_are_each_given_and_one_the_filing_does_not_print_by_part_is_said(
        pipeline) -> None:
    """Net sales and operating income of each segment: both lists, from the facts, no model; cost of sales is
    printed for the company only: said not given by segment, as is a word of the question read as no amount."""
    run = pipeline.run("What were Acme Industries' net sales and operating income of each segment in FY2023?",
                       store=False)
    text = run.answer.text
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    for name, v in SEGMENTS.items():
        assert f"{name} ({v[0]:,} USD millions" in text and f"{name} ({v[2]:,} USD millions" in text, text
    assert text.index("by revenue") < text.index("by operating income"), text
    assert [c.passage_id for c in run.answer.citations] == [1, 2], run.answer.citations
    cost = pipeline.run("How does Acme Industries' net sales distribution across its segments in FY2023 compare to "
                        "the cost of sales for those segments?", store=False).answer
    assert "Industrial (5,200 USD millions" in cost.text, cost
    assert "The filing prints no table of cost of goods sold by segments" in cost.text, cost.text
    costs = pipeline.run("How does Acme Industries' net sales distribution across its segments in FY2023 compare to "
                         "the costs incurred in these segments?", store=False).answer
    assert costs.text.startswith("The question's 'costs' read as operating expenses") and "Industrial (5,200 USD millions" in \
        costs.text and "no table of operating expenses by segments" in costs.text, costs.text
    budget = pipeline.run("How does Acme Industries' net sales distribution across its segments in FY2023 compare to "
                          "its marketing budget for those segments?", store=False).answer
    assert "Industrial (5,200 USD millions" in budget.text and "Not read as an amount: 'marketing budget'" in \
        budget.text, budget.text


@pytest.mark.parametrize(("question", "names", "growth"), [
    ("How did Acme Industries' Industrial net sales growth compare to Healthcare net sales growth in FY2023?",
     ("Industrial", "Healthcare"), True),
    ("What were the net sales of Acme Industries' Industrial and Consumer segments in FY2023?",
     ("Industrial", "Consumer"), False),
])
def test_parts_named_side_by_side_are_each_given_with_their_growth_when_asked(pipeline, question, names,
                                                                             growth) -> None:
    """Two parts the question names, each its own row of the table of parts: their growth against the year before
    with both amounts when a growth is asked (never the amount of one of them alone), else their amounts and
    shares; from the facts, no model."""
    run = pipeline.run(question, store=False)
    plan = run.traces[0].payload.intent.plan
    assert (plan.choice, plan.included, plan.measure) == ("named", names, "growth" if growth else "value"), plan
    text = run.answer.text
    assert run.status == "answered" and run.llm_calls == 0 and run.answer.method == "facts", run.answer
    for name in names:
        now, before = SEGMENTS[name][0], SEGMENTS[name][1]
        if growth:
            assert f"{name}: {_growth(name, 0):+.2f}% ({before:,} USD millions in FY2022 to {now:,} USD millions" \
                in text, text
        else:
            assert f"{name}: {now:,} USD millions ({now / 9000 * 100:.1f}% of the total)" in text, text
    assert "Consumer" not in text if growth else "Healthcare" not in text, text


def test_us_beside_another_part_is_a_part_and_alone_reads_as_before() -> None:
    from engine.intent import parse_intent
    from engine.intent.reader import read_plan
    from engine.vocab.catalogue import load_catalogue

    both = read_plan(parse_intent("How did JnJ's US sales growth compare to international sales growth in FY2022?"),
                     load_catalogue())
    assert (both.choice, both.included, both.measure) == ("named", ("US", "international"), "growth"), both
    one = read_plan(parse_intent("What was Acme's revenue in the U.S. in FY2022?"), load_catalogue())
    assert (one.choice, one.included, one.measure) == ("named", ("U.S",), "value"), one
