"""The Library tab's Tables panel and the page viewer's cell highlight, on the real path: filings generated with
PyMuPDF (and the demo corpus's SEC-style HTML) ingested into a real library, the main window opened on it, a
filing selected, a cell clicked as a user clicks it."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pymupdf
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor

from analyst_app.views.facts_grid import LOW_CONFIDENCE_TIP
from analyst_app.views.page_viewer import CELL_PAD
from engine.demo_corpus import format_amount
from engine.store import Library


def bare(printed: str) -> str:
    """A printed amount without its currency sign ("$7,232" → "7,232"): the reader may keep the sign or not."""
    return printed.replace("$", "").strip()


def select_filing(window, doc_name: str):
    """Click the filing's row on the Library tab and bring the Tables panel forward; returns the grid."""
    view = window.library_view
    window.tabs.setCurrentWidget(view)
    row = next(r for r in range(view.proxy.rowCount()) if view.proxy.index(r, 0).data() == doc_name)
    view.table.selectRow(row)
    view.show_tables()
    return view.tables


def click_cell(qtbot, grid, row: int, col: int) -> None:
    index = grid.model.index(row, col)
    grid.view.scrollTo(index)
    qtbot.mouseClick(grid.view.viewport(), Qt.MouseButton.LeftButton, pos=grid.view.visualRect(index).center())


def cell_of(grid, label: str, period_label: str) -> tuple[int, int]:
    return grid.row_labels().index(label), 1 + grid.column_labels().index(period_label)


def truth_period_label(t: dict, facts) -> str:
    """The column a true value belongs under: its fiscal year's period as the stored facts label it."""
    months = 0 if t["statement"] == "balance_sheet" else 12
    return next(s.fact.period.label for s in facts
                if s.fact.period.fiscal_year == int(t["fiscal_year_column"]) and s.fact.period.months == months)


def expected_rect(box, zoom: float) -> QRectF:
    x0, y0, x1, y1 = box
    return QRectF(x0 * zoom, y0 * zoom, (x1 - x0) * zoom, (y1 - y0) * zoom)


def assert_covers(rect: QRectF | None, box, zoom: float) -> None:
    """The highlight holds the cell's box at this zoom, padded by no more than CELL_PAD on each side."""
    want = expected_rect(box, zoom)
    assert rect is not None and rect.contains(want), (rect, want)
    for got, exp in ((rect.left(), want.left()), (rect.top(), want.top())):
        assert exp - got == pytest.approx(CELL_PAD, abs=0.01)
    for got, exp in ((rect.right(), want.right()), (rect.bottom(), want.bottom())):
        assert got - exp == pytest.approx(CELL_PAD, abs=0.01)


def tinted(window, rect: QRectF) -> QColor:
    """The colour the viewer shows just inside the highlight, beside the cell's glyphs."""
    pm = window.viewer.pixmap()
    dpr = pm.devicePixelRatio()
    return QColor(pm.toImage().pixel(int((rect.left() + CELL_PAD - 0.5) * dpr), int(rect.center().y() * dpr)))


def test_pdf_statement_grid_and_cell_highlight(window, qtbot, demo_truth) -> None:
    library = Library(window.ctx.home)
    filing = next(f for f in library.filings() if f.path.endswith(".pdf") and f.identity.form == "10-K")
    doc = filing.identity.doc_name
    truth = [t for t in demo_truth if t["doc_name"] == doc and t["statement"] == "balance_sheet"]
    stored = [s for s in library.facts(filing_ids=[filing.id]) if s.fact.page_index == truth[0]["page_index"]]

    grid = select_filing(window, doc)
    assert window.library_view.bottom.currentWidget() is grid and grid.filing.id == filing.id
    assert grid.load_seconds < 0.25
    names = [grid.table_box.itemText(i) for i in range(grid.table_box.count())]
    title = stored[0].fact.title
    assert f"Balance sheet — {title}, p. {truth[0]['page_index'] + 1}" in names
    assert any(n.startswith("Income statement — ") for n in names) and any(n.startswith("Cash flows — ") for n in names)
    grid.select_group(grid.group_index("balance sheet"))

    # rows: the printed line items in printed order; columns: the table's two balance-sheet dates, newest first
    metrics = list(dict.fromkeys(t["metric"] for t in truth))
    assert grid.row_labels() == metrics
    years = list(dict.fromkeys(t["fiscal_year_column"] for t in truth))
    assert grid.column_labels() == [truth_period_label({**truth[0], "fiscal_year_column": y}, stored) for y in years]
    assert all(label.startswith("as of ") for label in grid.column_labels())
    for t in truth:  # every true value under its row and period, as printed
        row, col = cell_of(grid, t["metric"], truth_period_label(t, stored))
        assert bare(grid.model.index(row, col).data()) == format_amount(t["value"])
    total = grid.row_labels().index("Total assets")
    assert grid.model.index(total, 0).data(Qt.ItemDataRole.FontRole).bold()
    assert grid.model.index(total, 1).data(Qt.ItemDataRole.FontRole).bold()
    assert f"{len(metrics)} rows × 2 periods" in grid.info.text()

    # clicking a cell opens its page with the cell's box highlighted at the viewer's zoom
    t = next(x for x in truth if x["metric"] == "Inventories")
    row, col = cell_of(grid, "Inventories", truth_period_label(t, stored))
    fact = grid.model.fact(grid.model.index(row, col))
    assert bare(fact.fact.printed) == format_amount(t["value"]) and fact.fact.box is not None
    click_cell(qtbot, grid, row, col)
    viewer = window.viewer
    assert viewer.filing.id == filing.id and viewer.page_index == t["page_index"] and viewer.mode == "pdf"
    assert window.viewer_dock.isVisible()
    assert_covers(viewer.highlight_rect(), fact.fact.box, viewer.zoom)
    color = tinted(window, viewer.highlight_rect())
    assert color.red() > 230 and color.blue() < 190, color.name()  # yellow over the white page: visible
    assert "Inventories" in viewer.title.text() and bare(fact.fact.printed) in viewer.match_label.text()
    with pymupdf.open(filing.path) as pdf:  # the highlighted region prints the cell's value
        inside = pdf[t["page_index"]].get_textbox(pymupdf.Rect(*(v / viewer.zoom for v in viewer.highlight_rect().getCoords())))
    assert bare(fact.fact.printed) in inside

    viewer.zoom_in()  # the highlight follows the zoom
    assert_covers(viewer.highlight_rect(), fact.fact.box, viewer.zoom)
    viewer.zoom_out()
    viewer.zoom_out()
    assert_covers(viewer.highlight_rect(), fact.fact.box, viewer.zoom)

    # another cell of the same table moves the highlight
    other = grid.model.fact(grid.model.index(grid.row_labels().index("Total assets"), 2))
    click_cell(qtbot, grid, grid.row_labels().index("Total assets"), 2)
    assert_covers(viewer.highlight_rect(), other.fact.box, viewer.zoom)

    viewer.next_page()  # another page: no highlight
    assert viewer.page_index == t["page_index"] + 1 and viewer.highlight_rect() is None and not viewer.match_label.text()
    chunk = library.chunks([other.chunk_id])[0]
    viewer.show_chunk(filing, chunk)  # a chunk (a citation) replaces the cell
    assert viewer.page_index == other.fact.page_index and viewer.highlight_rect() is None and viewer.fact is None


def test_html_filing_highlights_the_cell_characters(window, qtbot, demo_truth) -> None:
    library = Library(window.ctx.home)
    filing = next(f for f in library.filings() if f.path.endswith(".htm"))
    doc = filing.identity.doc_name
    truth = [t for t in demo_truth if t["doc_name"] == doc and t["statement"] == "income_statement"]
    stored = [s for s in library.facts(filing_ids=[filing.id]) if s.fact.page_index == truth[0]["page_index"]]

    grid = select_filing(window, doc)
    assert grid.group.statement == "income statement"  # a statement first, not a table of contents
    assert grid.row_labels() == list(dict.fromkeys(t["metric"] for t in truth))
    assert all(label.startswith("FY") for label in grid.column_labels())
    assert "inline XBRL" in grid.info.text()
    t = next(x for x in truth if x["metric"] == "Total revenue")
    row, col = cell_of(grid, "Total revenue", truth_period_label(t, stored))
    index = grid.model.index(row, col)
    fact = grid.model.fact(index)
    assert index.data() == fact.fact.printed and bare(index.data()) == format_amount(t["value"])
    assert fact.fact.source == "xbrl" and fact.fact.value == t["value"]
    assert f"us-gaap:{fact.fact.concept}" in index.data(Qt.ItemDataRole.ToolTipRole)

    click_cell(qtbot, grid, row, col)
    viewer = window.viewer
    assert viewer.page_index == t["page_index"] and viewer.mode == "text" and viewer.highlight_rect() is None
    assert viewer.highlight_range() == (fact.fact.char_start, fact.fact.char_end)
    start, end = viewer.highlight_range()
    assert viewer.text.toPlainText()[start:end] == fact.fact.printed
    assert any(s.cursor.selectionStart() == start and s.cursor.selectionEnd() == end
               for s in viewer.text.extraSelections())
    viewer.next_page()
    assert viewer.highlight_range() is None and viewer.text.extraSelections() == []


def _table_pdf(path: Path, header: tuple[str, str], title: str, rows: list[tuple[int, str, str, str]]) -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "ACME WIDGETS INC. ANNUAL REPORT", fontsize=10)
    page = doc.new_page()
    y = 72
    for line in (title, "(In millions)"):
        page.insert_text((72, y), line, fontsize=10)
        y += 16
    page.insert_text((300, y), header[0], fontsize=10)
    page.insert_text((420, y), header[1], fontsize=10)
    for indent, label, a, b in rows:
        y += 16
        page.insert_text((72 + indent, y), label, fontsize=10)
        for x, cell in ((330, a), (450, b)):
            if cell:
                page.insert_text((x, y), cell, fontsize=10)
    doc.save(path)


def _prose_pdf(path: Path) -> None:
    doc = pymupdf.open()
    for i in range(2):
        text = ("ACME WIDGETS INC. FORM 8-K CURRENT REPORT. " if i == 0 else "") + (
            "The company announced a change of its principal office; no financial statements are filed. " * 12)
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 520, 700), text, fontsize=11)
    doc.save(path)


@pytest.fixture()
def acme_home(tmp_path: Path) -> Path:
    """A library of three generated PDFs: a balance sheet with a heading, an income statement whose headers do
    not state the period, and an 8-K with no table at all."""
    from engine.ingest import ingest
    from engine.settings import Settings

    folder = tmp_path / "acme"
    folder.mkdir()
    _table_pdf(folder / "ACME_2023_10K.pdf", ("December 31, 2023", "December 31, 2022"), "CONSOLIDATED BALANCE SHEETS",
               [(0, "Current assets:", "", ""), (12, "Cash and cash equivalents", "1,200", "950"),
                (12, "Inventories", "(40)", "300"), (0, "Total current assets", "1,160", "1,250")])
    _table_pdf(folder / "ACME_2023Q1_10Q.pdf", ("2023", "2022"), "CONDENSED STATEMENTS OF OPERATIONS",
               [(0, "Revenue", "500", "450"), (0, "Net income", "60", "55")])
    _prose_pdf(folder / "ACME_2023_8K.pdf")
    home = tmp_path / "acme-library"
    with Library(home) as library:
        report = ingest(library, [folder], Settings(home=home))
        assert [e.status for e in report.events] == ["added"] * 3
    return home


def test_generated_pdfs_headings_low_confidence_and_no_tables(make_window, qtbot, acme_home) -> None:
    window = make_window(acme_home)
    grid = select_filing(window, "ACME_2023_10K")
    assert grid.row_labels() == ["Current assets", "Cash and cash equivalents", "Inventories", "Total current assets"]
    assert grid.column_labels() == ["as of 2023-12-31", "as of 2022-12-31"]
    heading = grid.model.index(0, 0)
    assert heading.data() == "Current assets" and heading.data(Qt.ItemDataRole.FontRole).italic()
    assert grid.model.index(0, 1).data() is None  # a heading prints no values
    assert grid.model.index(1, 0).data().strip() == "› Cash and cash equivalents"
    assert [grid.model.index(2, c).data() for c in (1, 2)] == ["(40)", "300"]
    click_cell(qtbot, grid, 2, 1)
    fact = grid.model.fact(grid.model.index(2, 1))
    assert window.viewer.page_index == 1 and fact.fact.value == -40
    assert_covers(window.viewer.highlight_rect(), fact.fact.box, window.viewer.zoom)

    grid = select_filing(window, "ACME_2023Q1_10Q")  # "2023" / "2022": the headers do not say which period
    assert grid.column_labels() == ["2023 (period not stated)", "2022 (period not stated)"]
    low = grid.model.index(0, 1)
    assert low.data() == "500" and grid.model.fact(low).fact.confidence == "low"
    assert low.data(Qt.ItemDataRole.FontRole).italic()
    assert low.data(Qt.ItemDataRole.ForegroundRole).color().lightness() > 100  # grey, not black
    assert LOW_CONFIDENCE_TIP in low.data(Qt.ItemDataRole.ToolTipRole)
    assert "4 low confidence" in grid.info.text()

    grid = select_filing(window, "ACME_2023_8K")  # no table: a message, not an empty grid
    assert grid.stack.currentWidget() is grid.empty and not grid.view.isVisible()
    assert "no tables read from this filing" in grid.message().lower()
    assert grid.table_box.count() == 0 and not grid.table_box.isEnabled()

    window.library_view.table.selectAll()  # several filings: which one?
    assert "select one filing" in grid.message().lower()


def test_a_filing_with_2000_facts_loads_without_blocking(app_home, make_window) -> None:
    with Library(app_home) as library:
        filing = next(f for f in library.filings() if f.path.endswith(".pdf") and f.identity.form == "10-K")
        base = [s.fact for s in library.facts(filing_ids=[filing.id])]
        many = [dataclasses.replace(f, label=f"{f.label} ({k})", char_start=f.char_start + 100_000 * k,
                                    char_end=f.char_end + 100_000 * k)
                for k in range(2000 // len(base) + 1) for f in base][:2000]
        library.replace_facts(filing.id, many, "synthetic")
    window = make_window(app_home)
    started = time.perf_counter()
    grid = select_filing(window, filing.identity.doc_name)
    seconds = time.perf_counter() - started
    assert sum(len(g.facts) for g in grid.groups) == 2000
    print(f"2,000 facts: query {grid.load_seconds * 1000:.0f} ms, selection to grid {seconds * 1000:.0f} ms")
    assert grid.load_seconds < 0.2 and seconds < 0.5


def test_the_answer_card_shows_the_reading_the_computation_and_each_input_boxed_on_its_page(
        make_window, qtbot, acme_home, embedder) -> None:
    """A facts answer on the Ask tab: under the value, how the question was read, how the number was computed and
    the input table; clicking an input opens its page with that cell boxed (not the whole table)."""
    from PySide6.QtCore import QUrl

    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings

    from engine.indexing import sync_indexes

    with Library(acme_home) as library:
        sync_indexes(library, Settings(home=acme_home), embedder)
        run = build_pipeline(Settings(home=acme_home), library, Models(embedder)).run(
            "What was ACME's cash and cash equivalents at the end of FY2023?")
        assert run.status == "answered" and run.answer.method == "facts", run.answer
        (ref,) = run.answer.inputs
        fact = library.facts(ids=[ref.fact_id])[0]
    window = make_window(acme_home)
    window.ask_view.show_stored_run(run.id)
    card, text = window.ask_view.answer_view.toHtml(), window.ask_view.answer_view.toPlainText()
    assert "Read as: cash and" in text and "Computed:" in text, text
    assert f'href="fact:{ref.fact_id}"' in card and "1 input, each a statement cell" in text
    assert f"ACME_2023_10K p. {fact.fact.page_index + 1}" in text
    window.ask_view._anchor(QUrl(f"fact:{ref.fact_id}"))
    viewer = window.viewer
    assert viewer.page_index == fact.fact.page_index
    assert_covers(viewer.highlight_rect(), fact.fact.box, viewer.zoom)


def _statement_page(doc, title_lines: list[str], header: tuple[str, str], rows: list[tuple[int, str, str, str, int]]):
    """A page printing a table under its title lines: rows (indent, label, value, value, extra space above)."""
    page = doc.new_page()
    y = 72
    for line in title_lines:
        page.insert_text((72, y), line, fontsize=10)
        y += 16
    page.insert_text((300, y), header[0], fontsize=10)
    page.insert_text((420, y), header[1], fontsize=10)
    for indent, label, a, b, space in rows:
        y += 16 + space
        page.insert_text((72 + indent, y), label, fontsize=10)
        for x, cell in ((330, a), (450, b)):
            page.insert_text((x, y), cell, fontsize=10)


def open_filing(make_window, tmp_path: Path, doc: pymupdf.Document, doc_name: str):
    """Save ``doc`` as ``doc_name``.pdf, ingest it into a new library, open the window on it and select it on the
    Library tab's Tables panel: (window, grid)."""
    from engine.ingest import ingest
    from engine.settings import Settings

    folder = tmp_path / doc_name
    folder.mkdir()
    doc.save(folder / f"{doc_name}.pdf")
    home = tmp_path / f"{doc_name}-library"
    with Library(home) as library:
        assert [e.status for e in ingest(library, [folder], Settings(home=home)).events] == ["added"]
    window = make_window(home)
    return window, select_filing(window, doc_name)


def test_tables_are_titled_by_their_printed_heading_primary_first_and_nested_as_printed(make_window, tmp_path):
    """A segment note on page 2 and the income statement on page 3: the statement is listed first, each titled by
    its own printed heading (not "Year ended December 31,"); "Operating income", "Interest expense" and "Provision
    for income taxes", printed after a space at the margin, sit at the level of "Net sales", not under
    "Operating expenses"."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "CORN GLASS INC. ANNUAL REPORT ON FORM 10-K", fontsize=10)
    _statement_page(doc, ["Note 14. Segment Information", "Year ended December 31,", "(In millions)"], ("2023", "2022"),
                    [(0, "Optical Communications", "4,012", "3,563", 0), (0, "Display Technologies", "3,306", "3,147", 0),
                     (0, "Total segment net sales", "7,318", "6,710", 0)])
    _statement_page(doc, ["Consolidated Statements of Income", "Years ended December 31,"],
                    ("2023", "2022"),
                    [(0, "Net sales", "11,503", "11,290", 0), (0, "Cost of sales", "7,468", "6,829", 0),
                     (0, "Gross margin", "4,035", "4,461", 12), (0, "Operating expenses:", "", "", 12),
                     (12, "Selling, general and administrative expenses", "1,585", "1,799", 0),
                     (12, "Research, development and engineering expenses", "1,031", "993", 0),
                     (0, "Operating income", "1,306", "1,575", 12), (0, "Interest income", "21", "38", 12),
                     (0, "Interest expense", "(221)", "(191)", 0),
                     (0, "Provision for income taxes", "(256)", "(437)", 12)])
    _window, grid = open_filing(make_window, tmp_path, doc, "CORN_2023_10K")

    names = [grid.table_box.itemText(i) for i in range(grid.table_box.count())]
    assert names[0].startswith("Income statement — Consolidated Statements of Income, p. 3")
    assert any("Note 14. Segment Information, p. 2" in n for n in names[1:])
    assert not any("Year ended" in n or "untitled" in n for n in names)

    grid.select_group(0)
    rows = {r.label: r for r in grid.model.table.rows}
    assert rows["Selling, general and administrative expenses"].level == 1
    for label in ("Operating income", "Interest income", "Interest expense", "Provision for income taxes"):
        assert rows[label].level == rows["Net sales"].level == 0, label
    shown = {grid.model.index(i, 0).data().strip(): i for i in range(grid.model.rowCount())}
    assert "Operating income" in shown and "› Research, development and engineering expenses" in shown


def test_a_table_whose_page_prints_no_heading_is_named_by_the_section_it_is_printed_in(make_window, tmp_path):
    """The segment note's heading is a page above its table: the table is named by the note and its first row,
    not by its first row alone."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "BETA SERVICES CORP ANNUAL REPORT ON FORM 10-K", fontsize=10)
    notes = doc.new_page()
    for k, line in enumerate(["Item 8. Financial Statements and Supplementary Data",
                              "Notes to Consolidated Financial Statements", "Note 9. Segment Information",
                              "We report two segments, whose net revenues follow on the next page."]):
        notes.insert_text((72, 72 + 16 * k), line, fontsize=10)
    _statement_page(doc, [], ("2023", "2022"), [(0, "Payments", "3,500", "3,300", 0), (0, "Lending", "2,500", "2,200", 0),
                                                (0, "Total net revenues", "6,000", "5,500", 0)])
    _window, grid = open_filing(make_window, tmp_path, doc, "BETASVC_2023_10K")
    names = [grid.table_box.itemText(i) for i in range(grid.table_box.count())]
    assert any("Note 9 Segment Information: table beginning “Payments”, p. 3" in n for n in names), names


def test_row_levels_follow_indentation_and_totals():
    from analyst_app.views.facts_grid import row_levels

    # (heading, total, x, blank line before): "Operating expenses:" at the margin, its rows indented, then
    # "Operating income" back at the margin
    printed = [(False, False, 17.4, False), (True, False, 17.4, True), (False, False, 28.1, False),
               (False, False, 28.1, False), (False, False, 17.4, True)]
    assert row_levels(printed) == [0, 0, 1, 1, 0]
    # no positions: a total closes its group ("Total operating expenses" then "Operating income")
    no_x = [(True, False, None, False), (False, False, None, False), (False, True, None, False),
            (False, False, None, False)]
    assert row_levels(no_x) == [0, 1, 1, 0]
    # no positions, no totals: a blank line after the group's rows closes it; none keeps the rows in it
    assert row_levels([(True, False, None, False), (False, False, None, False), (False, False, None, True)]) == [0, 1, 0]
    assert row_levels([(True, False, None, False), (False, False, None, False), (False, False, None, False)]) == [0, 1, 1]


@pytest.fixture()
def two_companies_home(tmp_path: Path) -> Path:
    """Two companies' 10-Ks (generated PDFs), each printing "Accounts payable" in its balance sheet."""
    from engine.ingest import ingest
    from engine.settings import Settings

    folder = tmp_path / "two"
    folder.mkdir()
    for name, payable in (("ACME", "1,587"), ("BOLT", "2,204")):
        doc = pymupdf.open()
        doc.new_page().insert_text((72, 72), f"{name} INDUSTRIES INC. ANNUAL REPORT ON FORM 10-K", fontsize=10)
        _statement_page(doc, ["Consolidated Balance Sheets", "(In millions)"], ("December 31, 2023", "December 31, 2022"),
                        [(0, "Current liabilities:", "", "", 0), (12, "Accounts payable", payable, "1,456", 0),
                         (12, "Accrued expenses", "900", "850", 0), (0, "Total current liabilities", "2,487", "2,306", 0)])
        doc.save(folder / f"{name}_2023_10K.pdf")
    home = tmp_path / "two-library"
    with Library(home) as library:
        assert [e.status for e in ingest(library, [folder], Settings(home=home)).events] == ["added"] * 2
    return home


def search(qtbot, grid, text: str) -> list[list[str]]:
    """Type ``text`` in the Tables panel's search box and press Enter; the listed hits as their cells' texts."""
    grid.search.clear()
    qtbot.keyClicks(grid.search, text)
    with qtbot.waitSignal(grid.searched, timeout=20000):
        qtbot.keyClick(grid.search, Qt.Key.Key_Return)
        if grid.searcher is not None:  # the search runs in a worker: until its hits arrive, the panel says so
            assert grid.results_info.text().startswith("Searching the line items") and grid.results.rowCount() == 0
    return [[grid.results.item(r, c).text() for c in range(grid.results.columnCount())]
            for r in range(grid.results.rowCount())]


def test_search_finds_a_line_item_across_companies_and_opens_its_cell(make_window, qtbot, two_companies_home,
                                                                     monkeypatch):
    window = make_window(two_companies_home)
    grid = select_filing(window, "ACME_2023_10K")
    hits = search(qtbot, grid, "accounts payable")
    assert grid.stack.currentWidget() is grid.results_page and grid.results_page.isVisible()
    # (company, filing, row, period, value, page, table)
    payable = [h for h in hits if h[2] == "Current liabilities › Accounts payable"]
    assert {h[1] for h in payable} == {"ACME_2023_10K", "BOLT_2023_10K"} and len(payable) == 4
    assert all(h[6] == "Consolidated Balance Sheets" and h[5] == "p. 2" for h in payable), payable
    assert {bare(h[4]) for h in payable} >= {"1,587", "2,204"}
    assert not any("Accrued" in h[2] for h in hits)  # every word must be in the row

    hits = search(qtbot, grid, "accounts payable bolt")  # a company's name keeps its filings
    assert {h[1] for h in hits} == {"BOLT_2023_10K"} and "BOLT" in grid.results_info.text()
    assert not grid.more_label.isVisible()

    # double-click the 2023 cell: BOLT's balance sheet in the grid, the row selected, the cell boxed on its page;
    # the list's filter hid BOLT: it is cleared, so the filing shown is the one selected
    window.library_view.filter.setText("ACME")
    row = next(i for i, h in enumerate(hits) if bare(h[4]) == "2,204")
    rect = grid.results.visualRect(grid.results.model().index(row, 2))
    qtbot.mouseClick(grid.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # a double-click's press
    qtbot.mouseDClick(grid.results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert grid.stack.currentWidget() is grid.view and grid.filing.identity.doc_name == "BOLT_2023_10K"
    assert [f.identity.doc_name for f in window.library_view.selected_filings()] == ["BOLT_2023_10K"]
    assert window.library_view.filter.text() == "" and grid.info.text().startswith("BOLT_2023_10K · ")
    current = grid.view.currentIndex()
    assert grid.model.table.rows[current.row()].label == "Accounts payable"
    fact = grid.model.fact(current)
    assert bare(fact.fact.printed) == "2,204"
    viewer = window.viewer
    assert viewer.filing.identity.doc_name == "BOLT_2023_10K" and viewer.page_index == 1
    assert_covers(viewer.highlight_rect(), fact.fact.box, viewer.zoom)
    assert grid.back_btn.isVisible()  # the results are one click away
    qtbot.mouseClick(grid.back_btn, Qt.MouseButton.LeftButton)
    assert grid.stack.currentWidget() is grid.results_page and grid.results.rowCount() == len(hits)

    # a search typed over a running one: only the latest one's hits are listed, whichever finishes first
    grid.search.setText("payable")
    grid.run_search()
    hits = search(qtbot, grid, "accounts payable bolt")
    qtbot.waitUntil(lambda: not window.ctx.running_jobs(), timeout=20000)
    assert {h[1] for h in hits} == {"BOLT_2023_10K"} and grid.results.rowCount() == len(hits)
    assert {grid.results.item(r, 1).text() for r in range(grid.results.rowCount())} == {"BOLT_2023_10K"}

    # Enter on a hit opens it too; a capped list says how many more it found
    monkeypatch.setattr("analyst_app.views.facts_grid.SEARCH_LIMIT", 3)
    hits = search(qtbot, grid, "payable")
    assert len(hits) == 3 and grid.more_label.isVisible() and grid.more_label.text().startswith("1 more")
    grid.results.setFocus()
    grid.results.setCurrentCell(0, 0)
    qtbot.keyClick(grid.results, Qt.Key.Key_Return)
    assert grid.stack.currentWidget() is grid.view
    assert grid.model.table.rows[grid.view.currentIndex().row()].label == "Accounts payable"

    assert search(qtbot, grid, "goodwill impairment") == [] and "no line item" in grid.results_info.text().lower()


def test_rows_nest_by_how_far_right_their_labels_are_printed(make_window, tmp_path):
    """No blank line and no total after the operating expenses: only the labels' positions say that "Operating
    income" is back at the margin; a row printed further right than a line item with values sits under it."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "DENT CORP. ANNUAL REPORT ON FORM 10-K", fontsize=10)
    _statement_page(doc, ["CONSOLIDATED STATEMENTS OF OPERATIONS", "Years ended December 31,", "(In millions)"],
                    ("2023", "2022"),
                    [(0, "Net sales", "11,503", "11,290", 0), (14, "Services", "2,100", "1,900", 0),
                     (0, "Cost of sales", "7,468", "6,829", 0), (0, "Operating expenses:", "", "", 0),
                     (14, "Selling, general and administrative", "1,585", "1,799", 0),
                     (14, "Research and development", "1,031", "993", 0),
                     (0, "Operating income", "1,419", "1,669", 0), (0, "Interest expense", "(221)", "(191)", 0)])
    _window, grid = open_filing(make_window, tmp_path, doc, "DENT_2023_10K")
    assert grid.group.statement == "income statement"
    levels = {r.label: r.level for r in grid.model.table.rows}
    assert levels == {"Net sales": 0, "Services": 1, "Cost of sales": 0, "Operating expenses": 0,
                      "Selling, general and administrative": 1, "Research and development": 1,
                      "Operating income": 0, "Interest expense": 0}, levels
    shown = [grid.model.index(i, 0).data() for i in range(grid.model.rowCount())]
    assert shown[shown.index("Operating income") - 1].strip() == "› Research and development"

    # the same rows without positions (an HTML filing): nothing closes the operating expenses' group
    from analyst_app.views.facts_grid import FactTable

    blind = {r.label: r.level for r in FactTable.of(grid.group.facts, grid.group.page_text).rows}
    assert blind["Operating income"] == 1 and blind["Services"] == 0


def test_a_subtotal_printed_further_right_is_known_by_its_values_not_nested_under_the_row_above(make_window, tmp_path):
    """Some filings indent their subtotals: "Gross profit" (revenues less cost of sales) and a total printed right
    of their rows. A row whose values are the sum, or the first less the rest, of the rows right above is their
    total at their level; a row further right whose values are not (an "of which" row) still nests."""
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "SWOOSH INC. ANNUAL REPORT ON FORM 10-K", fontsize=10)
    _statement_page(doc, ["CONSOLIDATED STATEMENTS OF INCOME", "Year ended May 31,", "(In millions)"],
                    ("2023", "2022"),
                    [(0, "Revenues", "51,217", "46,710", 0),
                     (0, "Cost of sales", "28,925", "25,231", 0), (7, "Gross profit", "22,292", "21,479", 0),
                     (0, "Demand creation expense", "4,060", "3,850", 0),
                     (0, "Operating overhead expense", "12,317", "10,954", 0),
                     (7, "Selling and administrative expense", "16,377", "14,804", 0),
                     (0, "Income before income taxes", "5,915", "6,675", 0), (14, "Foreign", "3,100", "3,400", 0)])
    _window, grid = open_filing(make_window, tmp_path, doc, "SWOOSH_2023_10K")
    rows = {r.label: r for r in grid.model.table.rows}
    assert {label: r.level for label, r in rows.items()} == {
        "Revenues": 0, "Cost of sales": 0, "Gross profit": 0, "Demand creation expense": 0,
        "Operating overhead expense": 0, "Selling and administrative expense": 0, "Income before income taxes": 0, "Foreign": 1}
    assert rows["Gross profit"].is_total and rows["Selling and administrative expense"].is_total
    assert not rows["Foreign"].is_total and not rows["Income before income taxes"].is_total
    shown = [grid.model.index(i, 0).data() for i in range(grid.model.rowCount())]
    assert "Gross profit" in shown and "Selling and administrative expense" in shown


def test_row_levels_with_positions_nest_under_line_items_and_totals_close_their_heading():
    from analyst_app.views.facts_grid import row_levels

    # "Revenue" › "of which services" (printed further right), then "Cost of sales" back at the margin
    assert row_levels([(False, False, 72, False), (False, False, 84, False), (False, False, 72, False)]) == [0, 1, 0]
    # a total printed right of its rows sits at their level and closes the heading: "Property" is at the margin
    assert row_levels([(True, False, 72, False), (False, False, 84, False), (False, False, 84, False),
                       (False, True, 96, False), (False, False, 72, False)]) == [0, 1, 1, 1, 0]
    # nested headings: a total at its heading's margin closes only that heading, not the one around it
    assert row_levels([(True, False, 60, False), (True, False, 72, False), (False, False, 84, False),
                       (False, True, 72, False), (False, False, 72, False), (False, True, 60, False)]) == [
        0, 1, 2, 1, 1, 0]
