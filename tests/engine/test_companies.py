"""The company check: a question about a company the library does not hold is not answered from another's
filings; a name the library's companies do not list is still theirs when only their filings print it."""

from __future__ import annotations

import pytest

from engine.intent import parse_intent
from engine.intent.issuers import unlisted_companies
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
    assert run.status == "not_answerable" and run.answer.text.startswith("Tesla is not in the library")
    assert run.llm_calls == 0 and not run.stages("passages") and not run.stages("facts")
    documents = run.stages("documents")[0].payload
    assert isinstance(documents, DocumentsPayload) and not documents.candidates
    assert "'Tesla' is no loaded company" in documents.company_check


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
