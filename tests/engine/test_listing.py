"""What a cover page registers under Section 12(b) (engine.facts.registrations) and the answers read from it
(engine.answer.listing): "which debt securities are registered to trade under X's name", "does X have notes listed",
"what is X's ticker" — read from the cover's table on generated filings, without a model, each row quoted as
printed; "none" only where the whole table was read."""

from __future__ import annotations

import pytest

from engine.facts.registrations import read_listing
from engine.vocab.securities import asked_classes, class_of

# A cover as printed PDFs lay it out (cells apart by runs of spaces), with the wraps they make: a second exchange
# on its own line, an exchange's tail, a title's second line, a dash for no symbol.
COVER = """FORM 10-K
Securities registered pursuant to Section 12(b) of the Act:
Title of each class  Trading Symbol(s)  Name of each exchange on which registered
Common Stock, Par Value $.01 Per Share  RVR  New York Stock Exchange, Inc.
RVR  Chicago Stock Exchange, Inc.
Floating Rate Notes due 2027  —  New York Stock Exchange, Inc.
York Stock Exchange, Inc.
2.125% Notes due 2031  RVR31  New York Stock Exchange, Inc.
Depositary Shares, each representing a one-thousandth interest in a share of 5.25%  RVR PR A  New York Stock Exchange, Inc.
Non-Cumulative Preferred Stock, Series A

Securities registered pursuant to Section 12(g) of the Act: None
Indicate by check mark if the registrant is a well-known seasoned issuer. Yes ☒ No ☐
If securities are registered pursuant to Section 12(b) of the Act, indicate by check mark whether …"""


def test_a_cover_table_is_read_row_by_row_through_its_wraps():
    listing = read_listing(COVER)
    assert listing is not None and not listing.none_stated and not listing.continues
    got = [(r.kind, r.title, r.symbols, r.exchanges) for r in listing.rows]
    assert got == [
        ("common", "Common Stock, Par Value $.01 Per Share", ("RVR",),
         ("New York Stock Exchange, Inc.", "Chicago Stock Exchange, Inc.")),
        ("debt", "Floating Rate Notes due 2027", (), ("New York Stock Exchange, Inc.",)),
        ("debt", "2.125% Notes due 2031", ("RVR31",), ("New York Stock Exchange, Inc.",)),
        ("preferred", ("Depositary Shares, each representing a one-thousandth interest in a share of 5.25% "
                       "Non-Cumulative Preferred Stock, Series A"), ("RVR PR A",), ("New York Stock Exchange, Inc.",)),
    ]
    for r in listing.rows:  # each row's characters are its lines as printed
        assert COVER[r.char_start:r.char_end].startswith(r.title.split(" Non-")[0])


def test_a_cover_that_registers_nothing_says_none_and_a_page_without_the_table_reads_as_none():
    none = read_listing("Commission file number 1-1\nSecurities registered pursuant to Section 12(b) of the Act: None\n"
                        "Securities registered pursuant to Section 12(g) of the Act: Common Stock")
    assert none is not None and none.none_stated and none.rows == ()
    assert read_listing("NEWS RELEASE\nRiverbend reports record sales; its notes due 2031 were redeemed.") is None
    # the check box that names Section 12(b) later on the cover is no table
    assert read_listing("If securities are registered pursuant to Section 12(b) of the Act, indicate by check "
                        "mark whether the financial statements …") is None


def test_a_table_that_runs_to_the_page_end_is_marked_continued():
    listing = read_listing("Securities registered pursuant to Section 12(b) of the Act:\n"
                           "Common Stock  RVR  Nasdaq Global Select Market\n1.000% Notes due 2030  RVR30  "
                           "Nasdaq Global Select Market")
    assert listing is not None and listing.continues and len(listing.rows) == 2


@pytest.mark.parametrize(("title", "kind"), [
    ("1.125% Guaranteed Senior Notes Due 2027", "debt"), ("Ordinary Shares, par value $0.01 per share", "common"),
    ("Class A Common Stock, $0.0001 par value", "common"), ("Warrants, each exercisable for one share", "warrants"),
    ("Exchange-traded notes due May 24, 2024", "debt"), ("Series B Preference Shares", "preferred"),
])
def test_a_registered_title_is_of_the_first_class_that_names_it(title: str, kind: str):
    assert class_of(title) == kind


@pytest.mark.parametrize(("question", "classes"), [
    ("Which debt securities are registered to trade under Riverbend's name?", ("debt",)),
    ("Does Riverbend have any bonds listed?", ("debt",)),
    ("Is Riverbend's preferred stock traded on the NYSE?", ("preferred",)),
    ("What is Riverbend's ticker?", ()),
    ("On which stock exchange are Riverbend's securities listed?", ()),
])
def test_a_question_names_the_classes_it_asks_of(question: str, classes: tuple[str, ...]):
    assert asked_classes(question) == classes


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, embedder):
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library
    from tests.engine.test_identity import write_cover_pdf

    tmp = tmp_path_factory.mktemp("listing")
    notes = [("0.750% Notes due 2026", "RVR26", "New York Stock Exchange"),
             ("2.125% Notes due 2031", "RVR31", "New York Stock Exchange")]
    write_cover_pdf(tmp / "f" / "RIVERBEND_2023_10K.pdf", name="RIVERBEND HOLDINGS INC", form="10-K",
                    period_text="December 31, 2023", ticker="RVR", listed=notes)
    write_cover_pdf(tmp / "f" / "RIVERBEND_2021_10K.pdf", name="RIVERBEND HOLDINGS INC", form="10-K",
                    period_text="December 31, 2021", ticker="RVR", listed=notes[:1])
    write_cover_pdf(tmp / "f" / "LAKESIDE_2023_10K.pdf", name="LAKESIDE FOODS CORP", form="10-K",
                    period_text="December 31, 2023", ticker="LKF")
    settings = Settings(home=tmp / "lib", ingest={"workers": 1})
    library = Library(settings.home)
    ingest(library, [tmp / "f"], settings)
    sync_indexes(library, settings, embedder)
    return build_pipeline(settings, library, Models(embedder))  # no chat model: the cover's table answers


def _answer(pipeline, question: str):
    answer = pipeline.run(question).answer
    assert answer.status == "answered" and answer.method == "cover", (question, answer)
    text = pipeline.library.page_text(pipeline.library.filing_by_doc_name(answer.citations[0].doc_name).id, 0)
    for q in answer.quotes:  # every quote is the cover's row as printed
        assert text[q.char_start:q.char_end] == q.text and q.page_index == 0
    return answer


@pytest.mark.parametrize("question", [
    ("Which debt securities are registered to trade on a national securities exchange under Lakeside Foods' name "
     "as of FY2023?"),
    "Does Lakeside Foods have any notes listed on a stock exchange?",
    "Is any Lakeside Foods debt listed on the NYSE?",
])
def test_no_registered_debt_is_said_as_none_with_what_the_cover_does_register(pipeline, question: str):
    answer = _answer(pipeline, question)
    assert answer.text.startswith(("None:", "No:")), answer.text
    assert "no debt securities" in answer.text and "Common Stock, Par Value $.01 Per Share (LKF" in answer.text
    assert answer.citations[0].doc_name == "LAKESIDE_2023_10K" and [q.text.split("  ")[1] for q in answer.quotes] \
        == ["LKF"]


@pytest.mark.parametrize(("question", "year", "titles"), [
    ("Which debt securities are registered to trade under Riverbend Holdings' name as of FY2023?", 2023,
     ["0.750% Notes due 2026", "2.125% Notes due 2031"]),
    ("Does Riverbend Holdings have notes listed on an exchange as of FY2021?", 2021, ["0.750% Notes due 2026"]),
    ("What bonds does Riverbend Holdings list on the New York Stock Exchange?", 2023,  # no year: the latest cover
     ["0.750% Notes due 2026", "2.125% Notes due 2031"]),
])
def test_registered_debt_is_listed_with_symbols_from_the_asked_years_cover(pipeline, question: str, year: int,
                                                                           titles: list[str]):
    answer = _answer(pipeline, question)
    assert answer.citations[0].doc_name == f"RIVERBEND_{year}_10K"
    assert f"{len(titles)} class{'es' if len(titles) > 1 else ''} of debt securities" in answer.text
    assert [q.text.split("  ")[0] for q in answer.quotes] == titles
    assert ("Yes: " in answer.text) == question.startswith("Does"), answer.text
    assert "Common Stock" not in answer.text


def test_a_ticker_question_lists_every_class_from_the_latest_cover(pipeline):
    answer = _answer(pipeline, "What is Riverbend Holdings' trading symbol?")
    assert answer.citations[0].doc_name == "RIVERBEND_2023_10K"
    assert "Common Stock, Par Value $.01 Per Share (RVR, New York Stock Exchange, Inc.)" in answer.text
    assert "3 classes of securities" in answer.text
