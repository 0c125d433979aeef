"""The company check: the asked company or no answer. Every company mention is resolved (a library company by any
name, ticker or the well-known issuer's it is; a well-known issuer the library does not hold; a name nobody answers
to) or refused; a question naming none is answered for a one-company library or asks which; a year the company's
filings do not report is named as missing; a name only one company's filings print is that company's."""

from __future__ import annotations

import shutil

import pytest

from engine.intent import parse_intent
from engine.intent.issuers import company_mentions, known_issuers, unlisted_companies, with_known
from engine.records import DocumentsPayload, IssuerRef

REFS = [IssuerRef("3M", ("3M Company", "MMM")), IssuerRef("AMERICANEXPRESS", ("American Express Company", "AXP"))]


@pytest.mark.parametrize(("question", "names"), [
    ("What is Tesla's FY2022 revenue?", ("Tesla",)),
    ("Does Rivian Automotive have positive working capital based on FY2022 data?", ("Rivian Automotive",)),
    ("What was the capital expenditure of Lucid Group Inc in FY2021?", ("Lucid Group",)),
    ("What is the FY2019 fixed asset turnover ratio for Nvidia?", ("Nvidia",)),
    ("How much has the effective tax rate of Walt Disney changed between FY2021 and FY2022?", ("Walt Disney",)),
    # names of loaded companies, periods, filings and line items are no unknown company
    ("What is 3M's FY2018 capital expenditure (in USD millions) according to its Form 10-K?", ()),
    ("Does American Express have positive working capital based on FY2022 data?", ()),
    ("What is the FY2023Q1 Total Revenue in the Cash Flow Statement?", ()),
    ("Based on the balance sheet, what is the quick ratio for FY2022?", ()),
    ("Here's the statement of cash flows. What is the free cash flow for FY2021?", ()),
])
def test_names_standing_for_a_company_that_no_loaded_company_answers_to(question: str, names: tuple) -> None:
    assert unlisted_companies(question, REFS) == names


def test_a_question_about_a_company_not_loaded_says_so_instead_of_answering(ingested_demo, embedder) -> None:
    from engine.pipeline import Models, build_pipeline

    library, settings, _ = ingested_demo
    pipeline = build_pipeline(settings, library, Models(embedder))  # the check runs before any model
    run = pipeline.run("What was Tesla's revenue in FY2023 (in USD millions)?", store=False)
    assert run.status == "not_answerable" and run.answer.text.startswith("Tesla, Inc. is not in the library")
    assert run.llm_calls == 0 and not run.stages("passages") and not run.stages("facts")
    documents = run.stages("documents")[0].payload
    assert isinstance(documents, DocumentsPayload) and not documents.candidates
    assert "'Tesla' is Tesla, Inc. (not in the library)" in documents.company_check


def test_a_name_only_one_companys_filings_print_is_taken_for_that_company(ingested_demo) -> None:
    from engine.pipeline import issuer_refs
    from engine.retrieval.companies import ALIAS_MIN_CHUNKS, check_companies

    library, _, _ = ingested_demo
    refs = issuer_refs(library)
    # a word of one company's own passages that none of its names is: the company's product or nickname
    key = refs[0].key
    mentions = {}
    for chunk in library.chunks_of_filings([f.id for f in library.filings() if f.identity.company_key == key]):
        for word in set(chunk.text.split()):
            if word.isalpha() and word.istitle() and len(word) > 6:
                mentions[word] = mentions.get(word, 0) + 1
    word = next(w for w, n in sorted(mentions.items(), key=lambda x: -x[1])
                if n >= ALIAS_MIN_CHUNKS and set(library.word_mentions(w)) == {key}
                and not parse_intent(f"Does {w} pay a dividend?", refs).issuers)
    check = check_companies(parse_intent(f"Does {word} pay a dividend?", refs), library, refs)
    assert check.intent.issuers == (key,) and not check.missing and not check.refusal
    assert f"{word!r} taken for {key}" in check.note


# --- resolving every mention --------------------------------------------------------------------------------

# library companies as their covers and file names name them (the shared corpus's registrants)
LIBRARY = [IssuerRef("3M", ("3M COMPANY", "MMM", "3M")), IssuerRef("BLOCK", ("SQUARE, INC.", "BLOCK", "SQ")),
           IssuerRef("COCACOLA", ("COCACOLA",)), IssuerRef("JOHNSON", ("JOHNSON & JOHNSON", "JNJ")),
           IssuerRef("COSTCO", ("Costco Wholesale Corporation", "COSTCO", "COST")),
           IssuerRef("AMERICANEXPRESS", ("American Express Company", "AXP")),
           IssuerRef("PERLA", ("PERLA HOLDINGS INC",))]
REFS_KNOWN = list(with_known(tuple(LIBRARY))[0])


@pytest.mark.parametrize(("question", "expected"), [
    # tickers, legal and short names, possessives and abbreviations of library companies
    ("MMM FY2018 capital expenditure?", [("MMM", "3M", None)]),
    ("What was 3M Co.'s revenue in 2018?", [("3M", "3M", None)]),
    ("KO 2017 revenue", [("KO", "COCACOLA", None)]),  # the well-known issuer's ticker, linked by name
    # nicknames (resources/companies/nicknames.tsv): of a library company, and of one the library does not hold
    ("What was Coke's net income in 2018?", [("Coke", "COCACOLA", None)]),
    ("What was AmEx's revenue in 2022?", [("AmEx", "AMERICANEXPRESS", None)]),
    ("What did Google earn in 2022?", [("Google", None, "Alphabet Inc.")]),
    ("Did the company sell any coke in 2022?", []),  # (not capitalised: a product, no company)
    ("What was Coca-Cola Company's net income in 2017?", [("Coca-Cola Company", "COCACOLA", None)]),
    ("Did Square's gross profit grow in 2020?", [("Square", "BLOCK", None)]),  # a former name on its cover
    ("How did Block Inc fund its acquisitions?", [("Block Inc", "BLOCK", None)]),
    # a name with the words its cover writes after it ("Holdings"): one mention, no part of the company left over
    ("How much did Perla Holdings earn per share in 2023?", [("Perla Holdings", "PERLA", None)]),
    ("XYZ's 2022 revenue?", [("XYZ", "BLOCK", None)]),  # the well-known issuer's current ticker
    ("J&J FY2022 revenue", [("J&J", "JOHNSON", None)]),
    ("Costco's membership fee revenue in FY2022", [("Costco", "COSTCO", None)]),
    # well-known issuers the library does not hold: by ticker, name, possessive, legal suffix
    ("AES 2022 return on assets, using net income over the average of 2021 and 2022 total assets?",
     [("AES", None, "AES Corporation")]),
    ("What is Tesla Inc's FY2022 revenue?", [("Tesla Inc", None, "Tesla, Inc.")]),
    ("Does Paypal have positive working capital based on FY2022 data?", [("Paypal", None, "PayPal")]),
    ("Johnson Controls FY2022 revenue", [("Johnson Controls", None, "Johnson Controls")]),  # not J&J's first word
    ("Estee Lauder 2022 revenue", [("Estee Lauder", None, "The Estée Lauder Companies")]),
    # names nobody answers to
    ("What is XYZQ's 2022 revenue?", [("XYZQ", None, None)]),
    ("Does Zorblax Dynamics Inc pay a dividend?", [("Zorblax Dynamics", None, None)]),
    # words that are no company: acronyms, abbreviations written after what they stand for, shouting
    ("What was 3M's EBITDA, FCF and ROIC in FY2022?", [("3M", "3M", None)]),
    ("What is the cash conversion cycle (CCC) and the IT spending of Costco in 2022?", [("Costco", "COSTCO", None)]),
    ("WHAT WAS MMM CAPEX IN 2018", [("MMM", "3M", None)]),
    ("What was total revenue in 2022?", []),
])
def test_every_company_mention_is_resolved(question: str, expected: list) -> None:
    assert [(m.text, m.key, m.known) for m in company_mentions(question, LIBRARY)] == expected
    assert company_mentions(question, REFS_KNOWN) == company_mentions(question, LIBRARY)  # linking is idempotent


def test_the_well_known_issuers_link_by_name_and_never_by_a_ticker_alone() -> None:
    known = (IssuerRef("The Coca-Cola Company", ("The Coca-Cola Company", "KO")),
             IssuerRef("Costco", ("Costco", "COST")), IssuerRef("Nordic Holdings", ("Nordic Holdings", "NWHR")))
    library = (IssuerRef("COCACOLA", ("COCACOLA",)), IssuerRef("COSTCO", ("Costco Wholesale Corporation", "COST")),
               IssuerRef("NWHR", ("Northwind Housewares Inc.", "NWHR")))  # a fictional company on a real symbol
    linked, absent = with_known(library, known)
    assert linked[0].names == ("COCACOLA", "The Coca-Cola Company", "KO")
    assert "Costco" in linked[1].names and linked[2] == library[2]
    assert [r.key for r in absent] == ["Nordic Holdings"]
    # the shipped list: generated, large, with US tickers
    shipped = known_issuers()
    assert len(shipped) > 1500 and sum(any(n.isupper() and len(n) <= 5 for n in r.names) for r in shipped) > 1000


def _check(question: str, library, refs):
    from engine.retrieval.companies import check_companies

    return check_companies(parse_intent(question, refs), library, refs)


def test_refusals_say_which_company_and_why(ingested_demo) -> None:
    from engine.pipeline import issuer_refs

    library, _, _ = ingested_demo
    refs = issuer_refs(library)
    loaded = refs[0].names[0]
    absent = _check("AES 2022 return on assets, using net income over average total assets?", library, refs)
    assert absent.refusal == "AES Corporation is not in the library: load its filings first"
    assert not absent.intent.issuers and absent.missing == ("AES Corporation",)
    made_up = _check("What was XYZQ's revenue in 2023?", library, refs)
    assert made_up.refusal.startswith("Could not tell which company 'XYZQ' is")
    assert all(_name_in(r, made_up.refusal) for r in refs)  # and lists the loaded companies
    which = _check("What was total revenue in 2023?", library, refs)
    assert which.refusal.startswith("Which company? The question names none") and not which.intent.issuers
    assert all(_name_in(r, which.refusal) for r in refs)
    # a comparison naming one loaded and one absent company: no half answer
    both = _check(f"Compare {loaded}'s and Tesla's revenue in 2023", library, refs)
    assert both.intent.issuers == (refs[0].key,) and "Tesla, Inc. is not in the library" in both.refusal
    assert both.refusal.endswith("the comparison needs every company it names")
    # a loaded company named beside an absent one, outside a comparison: answered for the loaded one
    aside = _check(f"Does {loaded} sell to Tesla? What was its revenue in 2023?", library, refs)
    assert aside.intent.issuers == (refs[0].key,) and not aside.refusal and "Tesla" in aside.note


def _name_in(ref: IssuerRef, text: str) -> bool:
    return any(n in text for n in ref.names)


def test_a_year_no_loaded_filing_reports_is_named_as_missing(ingested_demo, demo_truth) -> None:
    from engine.pipeline import issuer_refs
    from engine.retrieval.companies import covered_periods

    library, _, _ = ingested_demo
    refs = issuer_refs(library)
    fact = demo_truth[0]
    key = next(r.key for r in refs if fact["ticker"] in r.names)
    years, _ = covered_periods(library.filings_of_companies((key,)))
    later = max(years) + 2
    gap = _check(f"What was {fact['company']}'s total revenue in FY{later}?", library, refs)
    assert gap.intent.issuers == (key,) and f"FY{later} is reported by none of its loaded filings" in gap.refusal
    assert fact["doc_name"].split("_")[1] in gap.refusal  # it lists what is loaded
    assert not _check(f"What was {fact['company']}'s total revenue in FY{max(years)}?", library, refs).refusal
    # a question that looks ahead names a year no filing reports yet
    assert not _check(f"What revenue does {fact['company']} expect in FY{later}?", library, refs).refusal


def test_a_question_naming_no_company_on_a_one_company_library_is_answered_for_it_and_says_so(
        tmp_path, demo_dir, demo_truth, embedder) -> None:
    from engine.indexing import sync_indexes
    from engine.ingest import ingest
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library

    fact = next(f for f in demo_truth if f["metric"] == "Total revenue" and f["form"] == "10-K"
                and f["fiscal_year_column"] == f["period"])
    shutil.copytree(demo_dir / fact["ticker"], tmp_path / "corpus" / fact["ticker"])
    settings = Settings(home=tmp_path / "lib")
    library = Library(settings.library_home())
    ingest(library, [tmp_path / "corpus"], settings)
    sync_indexes(library, settings, embedder)
    run = build_pipeline(settings, library, Models(embedder)).run(
        f"What was total revenue in fiscal {fact['period']}, in USD millions?", store=False)
    assert run.status == "answered" and run.answer.value == pytest.approx(fact["value"])
    assert run.answer.reason.startswith("The question names no company; the library holds one, ")
    assert fact["company"].split()[0] in run.answer.reason


def test_a_complementary_question_stays_with_the_asked_company() -> None:
    from engine.pipeline import _follow_up_intent

    original = parse_intent("What was 3M's revenue in 2018?", LIBRARY)
    follow = _follow_up_intent("What did Costco report as revenue in 2018?", original, LIBRARY)
    assert original.issuers == ("3M",) and follow.issuers == ("3M",)


def test_a_refusal_that_asks_which_company_offers_the_loaded_ones(ingested_demo) -> None:
    from engine.pipeline import issuer_refs

    library, _, _ = ingested_demo
    refs = issuer_refs(library)
    which = _check("What was total revenue in 2023?", library, refs)
    assert len(which.choices) == len(refs) and all(_name_in(r, " ".join(which.choices)) for r in refs)
    assert _check("What was XYZQ's revenue in 2023?", library, refs).choices == which.choices
    assert not _check("What was Tesla's revenue in 2023?", library, refs).choices  # it named a company


def test_a_named_filing_that_is_not_loaded_is_said_first(ingested_demo, demo_truth) -> None:
    """"In its FY… 10-K" when that 10-K is not loaded: answered from the filings that report the period (a later
    10-K's comparative column) with the missing filing said; refused, naming the filing, when none reports it."""
    from engine.pipeline import issuer_refs

    library, _, _ = ingested_demo
    refs = issuer_refs(library)
    fact = demo_truth[0]
    key = next(r.key for r in refs if fact["ticker"] in r.names)
    filings = library.filings_of_companies((key,))
    annual = sorted(f.identity.fiscal_year for f in filings if f.identity.form == "10-K")
    earlier = annual[0] - 1  # the first 10-K's comparative column reports it; no 10-K of that year is loaded
    said = _check(f"What was {fact['company']}'s total revenue in FY{earlier} according to its 10-K?", library, refs)
    assert not said.refusal and said.intent.issuers == (key,)
    assert said.lacking.startswith(f"{_name(refs, key)}'s FY{earlier} 10-K is not in the library (loaded: ")
    assert f"10-K {annual[0]}" in said.lacking and "answered from the loaded filings" in said.lacking
    # the filing is loaded, or no form is named: nothing to say
    assert not _check(f"What was {fact['company']}'s total revenue in FY{annual[0]} according to its 10-K?", library,
                      refs).lacking
    assert not _check(f"What was {fact['company']}'s total revenue in FY{earlier}?", library, refs).lacking
    # no loaded filing reports the year: refused, naming the filing asked
    gone = _check(f"What risks did {fact['company']} name in its FY{annual[0] - 3} 10-K?", library, refs)
    assert gone.refusal.startswith(f"{_name(refs, key)}'s FY{annual[0] - 3} 10-K is not in the library, and none of "
                                   "its loaded filings reports that period")


def _name(refs, key):  # noqa: ANN001, ANN202
    from engine.retrieval.companies import _name as name

    return name({r.key: r for r in refs}, key)


def test_a_company_is_named_by_its_nickname_but_never_shown_by_it() -> None:
    from engine.intent.issuers import issuer_spans
    from engine.retrieval.companies import _name

    ref = with_known((IssuerRef("AMERICANEXPRESS", ("American Express Company", "AXP")),))[0][0]
    assert "Amex" in ref.names and issuer_spans("What was Amex's revenue in 2022?", [ref])
    assert _name({ref.key: ref}, ref.key) == "American Express"
