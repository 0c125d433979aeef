"""`filinglens eval` pieces: question loaders, an end-to-end evaluation over the demo corpus, resume."""

from __future__ import annotations

import json

from engine.eval.questions import load_questions
from engine.eval.report import write_report
from engine.eval.runner import PIPELINE_DESCRIPTIONS, PIPELINES, Evaluator, evaluation_name, rejudge, run_eval
from engine.indexing import open_indexes
from engine.pipeline import Models
from engine.records import (
    AnswerPayload,
    AnswerResult,
    DocumentCandidate,
    DocumentsPayload,
    FactInputRef,
    StageTrace,
)
from engine.store.library import RunStore
from tests.engine.scripted import ScriptedChat, figure_id, pick
from tests.engine.test_pipeline import shown


def test_loaders_financebench_docugami_and_own_format(tmp_path):
    fb = tmp_path / "fb.jsonl"
    fb.write_text(json.dumps({
        "financebench_id": "fb1", "question": "Q?", "answer": "$1,577", "question_type": "metrics-generated",
        "question_reasoning": "Information extraction", "doc_name": "3M_2018_10K",
        "evidence": [{"doc_name": "3M_2018_10K", "evidence_page_num": 59, "evidence_text": "PP&E (1,577)"}],
        "gold_pages": [{"doc_name": "3M_2018_10K", "page": 59}], "corpus_has_evidence": True}) + "\n")
    q = load_questions(fb)[0]
    assert q.gold_pages == {("3M_2018_10K", 59)} and q.gold_docs == {"3M_2018_10K"} and q.evidence[0][1] == 59
    dg = tmp_path / "dg.jsonl"
    dg.write_text("\n".join(json.dumps({"qid": f"d{i}", "question": "Q?", "answer": "A", "source_docs_glob": g,
                                        "question_type": "Multi-Doc RAG"}) for i, g in enumerate(["*2023 Q3 AAPL*", "*MSFT*"])))
    docs = ["AAPL_2023Q3_10Q", "AAPL_2023Q2_10Q", "MSFT_2023Q3_10Q", "AAPL_2023-02-02_8K"]
    a, b = load_questions(dg, doc_names=docs)
    assert a.gold_docs == {"AAPL_2023Q3_10Q"} and b.gold_docs == {"MSFT_2023Q3_10Q"}
    titles = tmp_path / "documents.jsonl"
    titles.write_text(json.dumps({"doc_name": "AAPL_2023Q3_10Q", "title": "2023 Q3 AAPL.pdf"}) + "\n")
    assert load_questions(dg, documents=titles)[0].gold_docs == {"AAPL_2023Q3_10Q"}
    own = tmp_path / "own.jsonl"
    own.write_text(json.dumps({"question": "Why?"}) + "\n")
    assert load_questions(own)[0].qid == "q0000"


def test_end_to_end_eval_on_the_demo_corpus(ingested_demo, demo_truth, embedder, tmp_path, monkeypatch):
    library, settings, _ = ingested_demo
    from engine.demo_corpus import format_amount

    facts = [f for f in demo_truth if f["form"] == "10-K" and f["metric"] in ("Total revenue", "Net income")
             and f["fiscal_year_column"] == f["period"]][:3]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps({
        "qid": f"demo{i}", "question": f"What was {f['company']}'s {f['metric'].lower()} in fiscal {f['period']}?",
        "answer": format_amount(f["value"]), "gold_pages": [{"doc_name": f["doc_name"], "page_index": f["page_index"]}],
        "question_type": f["metric"]}) for i, f in enumerate(facts)))
    questions = load_questions(qfile)

    def script(purpose, messages, n):  # noqa: ANN001
        asked = messages[-1]["content"].split("Question:")[-1]
        fact = next(f for f in facts if f["company"] in asked and f["metric"].lower() in asked and f["period"] in asked)
        value = format_amount(fact["value"])
        if purpose == "curation":
            ids = [i for i, _t, _p, body in shown(messages) if value in body]
            return {"relevant_ids": ids[:1], "answerable": bool(ids), "missing_information": "",
                    "complementary_question": "" if ids else f"{fact['metric']} {fact['period']}"}
        return pick(purpose, figure_id(messages[-1]["content"], value, words=fact["metric"]))

    evaluator = Evaluator(library, settings, Models(embedder, ScriptedChat(script)), open_indexes(library, settings, embedder))
    pipelines = ["bm25", "hybrid", "hirec-retrieval", "hirec", "hirec-model"]
    rows = run_eval(evaluator, questions, pipelines, tmp_path / "out")
    assert len(rows) == len(questions) * len(pipelines)
    hirec = [r for r in rows if r["pipeline"] in ("hirec", "hirec-model")]
    assert all(r["correct"] and r["judged_by"] == "numeric" for r in hirec)
    # side by side: the statement facts answer without a model and cite the gold page; the model path writes it
    # ... and are scored on the filings and pages of the facts used: no passage is retrieved for them
    assert all(r["llm_calls"] == 0 and r["page_recall@5"] == 1.0 and r["doc_recall@5"] == 1.0
               for r in rows if r["pipeline"] == "hirec")
    assert all(r["page_recall@5"] == 1.0 for r in rows if r["pipeline"] == "hirec-retrieval")
    assert all(0.0 <= r["ndcg@10"] <= 1.0 for r in rows)
    summary = write_report(tmp_path / "out", rows, pipelines, "demo")
    by = {s["pipeline"]: s for s in summary}
    assert by["hirec"]["accuracy_numeric"] == 1.0 and by["hirec"]["tokens_in"] == 0
    assert by["hirec-model"]["accuracy_numeric"] == 1.0 and by["hirec-model"]["tokens_in"] > 0
    assert "| hirec-retrieval |" in (tmp_path / "out" / "report.md").read_text()

    # the runs the answering pipelines stored name this evaluation, so History keeps them apart from the analyst's
    store = RunStore(library)
    evaluation = evaluation_name(tmp_path / "out")
    run_ids = {r["run_id"] for r in hirec}
    assert len(run_ids) == len(hirec) and "" not in run_ids
    assert {r["id"] for r in store.list(10_000, evaluation=evaluation)} == run_ids
    assert not run_ids & {r["id"] for r in store.list(10_000, evaluation="")}
    assert (evaluation, len(run_ids)) in [(e, n) for e, n, _ in store.evaluations()]

    # runs stored before runs named their evaluation are linked when it resumes
    library.conn.execute(f"UPDATE runs SET evaluation = '' WHERE id IN ({','.join('?' * len(run_ids))})",
                         sorted(run_ids))
    calls = []
    monkeypatch.setattr(evaluator, "predict", lambda p, q, evaluation="": calls.append((p, q.qid)))
    again = run_eval(evaluator, questions, pipelines, tmp_path / "out")
    assert calls == [] and len(again) == len(rows)  # resumed: nothing recomputed
    assert {r["id"] for r in store.list(10_000, evaluation=evaluation)} == run_ids
    assert all(r["answer_kind"] == "numeric" for r in hirec)

    # --rejudge scores stored answers again without running a pipeline: a stored answer edited to a wrong
    # figure turns wrong, the others keep their verdicts.
    path = tmp_path / "out" / "results.jsonl"
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    edited = next(r for r in stored if r["pipeline"] == "hirec")
    edited["answer"] = "1 USD millions"
    path.write_text("".join(json.dumps(r) + "\n" for r in stored))
    assert rejudge(evaluator, questions, tmp_path / "out") == 1
    after = {(r["pipeline"], r["qid"]): r for r in map(json.loads, path.read_text().splitlines())}
    assert after[("hirec", edited["qid"])]["correct"] is False
    assert after[("hirec", edited["qid"])]["wrong_number"] is True  # a number given, and wrong
    assert sum(r["correct"] for r in after.values() if r["pipeline"] == "hirec") == len(questions) - 1
    assert calls == []


def test_verdicts_numeric_yes_no_side_figures_and_judge(tmp_path):
    """Each answer is decided by the first test that can: numeric golds never reach the judge; a yes/no answer is
    right on the gold's side and wrong on the other, without asking the model; a written answer stating every
    figure of a prose gold is right; only the rest is judged by the model, with the reason before the verdict."""
    from engine.eval.questions import EvalQuestion

    asked: list[list] = []

    def script(purpose, messages, n):  # noqa: ANN001
        asked.append(messages)
        return {"reason": "same conclusion", "correct": True}

    from engine.settings import Settings

    evaluator = Evaluator.__new__(Evaluator)  # verdicts need no library
    evaluator.chat, evaluator.settings = ScriptedChat(script), Settings()

    def q(answer: str) -> EvalQuestion:
        return EvalQuestion("q", "Is Acme capital-intensive?", answer, frozenset(), frozenset())

    assert evaluator.verdict(q("$1577.00"), "1,577 USD millions", "answered") == (True, "numeric")
    assert evaluator.verdict(q("$1577.00"), "", "not_answerable") == (False, "not answered")
    assert evaluator.verdict(q("No, capex is 5% of revenue."), "Yes, it is capital-intensive.", "answered") == (
        False, "yes/no")
    assert evaluator.verdict(q("No, capex is 5% of revenue."), "No. Capex was 5.1% of revenue.", "answered") == (
        True, "yes/no")
    gold = q("The restructuring liability rose to $104 million from $87 million, on severance in Europe.")
    assert evaluator.verdict(gold, "It was 104 USD millions at year end (87 USD millions a year before).",
                             "answered") == (True, "figures")
    assert asked == []
    assert evaluator.verdict(gold, "It was 104 USD millions at year end.", "answered") == (True, "model")  # 1 of 2
    assert len(asked) == 1 and "Gold answer: The restructuring" in asked[0][-1]["content"]
    # a choice: the gold's names that the question does not hold decide it when the answer names them all
    region = EvalQuestion("q", "Which region had the worst topline performance for Acme during FY2022?",
                          "Acme Asia Pacific had the worst performance; the other regions grew.", frozenset(),
                          frozenset())
    assert evaluator.verdict(region, "Asia Pacific: its net revenues fell the most.", "answered") == (True, "entities")
    assert evaluator.verdict(region, "The Americas, which fell 3%.", "answered") == (True, "model")  # left to it
    assert len(asked) == 2


def test_key_entities_are_the_names_the_question_does_not_hold():
    from engine.eval.metrics import key_entities, key_entities_found

    gold = "United States, EMEA, APAC, and LACC"
    question = "What are the geographies that American Express primarily operates in as of 2022?"
    assert key_entities(gold, question) == ["United States", "EMEA", "APAC", "LACC"]
    assert key_entities_found("It operates in the United States, EMEA, APAC and LACC.", gold, question) == (4, 4)
    assert key_entities_found("Mainly the United States and EMEA.", gold, question) == (2, 4)
    assert key_entities("Yes. The company's revenue grew in FY2022.", "Did revenue grow?") == []


def _input(variable: str, doc_name: str, page_index: int, row: str) -> FactInputRef:
    return FactInputRef(variable, row.lower(), 1, doc_name, page_index, 1, row, "FY2023", "1,000", "millions", 1e9)


def test_numbers_scored_strictly_with_the_golds_rounding_and_wrong_ones_counted(tmp_path):
    """Hand-built answers to numeric golds: 8.74 for "$8.70" is a strict miss but right within 1 %; a wrong figure
    is counted as a wrong number, an abstention is not; an answer computed from statement facts is scored on the
    filings and pages of the facts it used (it retrieves no passage), then on the filings the document stage kept.
    The report prints the three counts, and --rejudge writes them again."""
    from engine.eval.questions import EvalQuestion
    from engine.eval.runner import Prediction, answer_evidence
    from engine.settings import Settings
    from engine.store import Library

    evaluator = Evaluator.__new__(Evaluator)  # scoring needs a library only for chunk grades: an empty one
    evaluator.library, evaluator._filing_by_doc = Library(tmp_path / "lib"), {}
    evaluator.chat, evaluator.settings = None, Settings()
    gold_pages = frozenset({("ACME_2023_10K", 46), ("ACME_2022_10K", 51)})
    facts = AnswerResult("answered", "8.74", 8.74, "ratio", method="facts", inputs=(
        _input("cost_of_revenue", "ACME_2023_10K", 45, "Cost of sales"),
        _input("inventory", "ACME_2023_10K", 46, "Inventories"),
        _input("inventory_1", "ACME_2022_10K", 51, "Inventories"),
        FactInputRef("other_assets", "other assets", None)))  # not printed, taken as 0: no page
    kept = DocumentCandidate(9, "OTHER_2023_10K", "", 0.5, 1, 0.5, 1, True, "kept")
    traces = [StageTrace(1, DocumentsPayload("q", "dense", "none", 10, 5, (kept,), 1), 0.1),
              StageTrace(0, AnswerPayload(facts), 0.0)]
    docs, pages = answer_evidence(facts, traces)
    assert docs == ["ACME_2023_10K", "ACME_2022_10K", "OTHER_2023_10K"]
    assert pages == [("ACME_2023_10K", 45), ("ACME_2023_10K", 46), ("ACME_2022_10K", 51)]

    cases = {"rounded": ("$8.70", "8.74", "answered"), "exact": ("8.74", "8.74", "answered"),
             "wrong": ("1.02", "2,912.85 USD millions", "answered"),
             "abstained": ("1.02", "not answerable: missing ACME FY2022 inventories", "not_answerable")}
    rows = []
    for qid, (gold, answer, status) in cases.items():
        q = EvalQuestion(qid, "What is Acme's FY2023 inventory turnover?", gold,
                         frozenset(d for d, _ in gold_pages), gold_pages)
        rows.append(evaluator.score("hirec", q, Prediction(pages, docs, answer=answer, status=status)))
    by = {r["qid"]: r for r in rows}
    assert by["rounded"]["doc_recall@5"] == 1.0 and by["rounded"]["page_recall@5"] == 1.0
    assert [(by[k]["correct"], by[k]["correct_tolerant"], by[k]["number_given"], by[k]["wrong_number"])
            for k in cases] == [(False, True, True, False), (True, True, True, False), (False, False, True, True),
                                (False, False, False, False)]

    out = tmp_path / "out"
    out.mkdir()
    (summary,) = write_report(out, rows, ["hirec"], "hand-built")
    assert (summary["accuracy_numeric"], summary["accuracy_numeric_tolerant"]) == (0.25, 0.5)
    assert (summary["numbers_given"], summary["wrong_numbers"], summary["numeric_abstentions"]) == (3, 1, 1)
    report = (out / "report.md").read_text()
    assert ("- hirec: numeric answers right 1/4 strictly, 2/4 within 1 % of the gold; 1 wrong number(s) among 3 "
            "given; 1 abstention(s)") in report
    assert "| accuracy_numeric | accuracy_numeric_tolerant | n_numeric | numbers_given | wrong_numbers |" in report

    # --rejudge: rows stored before these fields existed get them
    (out / "results.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k not in (
        "correct_tolerant", "number_given", "wrong_number")}) + "\n" for r in rows))
    questions = [EvalQuestion(qid, "Q?", gold, frozenset(), frozenset()) for qid, (gold, _, _) in cases.items()]
    assert rejudge(evaluator, questions, out) == 0  # the strict verdicts stand
    again = {r["qid"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert [again[k]["wrong_number"] for k in cases] == [False, False, True, False]
    assert again["rounded"]["correct_tolerant"] is True


def test_reranker_variants_run_side_by_side(ingested_demo, demo_truth, embedder, tmp_path):
    library, settings, _ = ingested_demo
    fact = next(f for f in demo_truth if f["form"] == "10-K" and f["metric"] == "Total revenue")
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"question": f"What was {fact['company']}'s total revenue in fiscal {fact['period']}?",
                                 "gold_pages": [{"doc_name": fact["doc_name"], "page_index": fact["page_index"]}]}))
    evaluator = Evaluator(library, settings, Models(embedder), open_indexes(library, settings, embedder))
    rows = run_eval(evaluator, load_questions(qfile), ["hirec-retrieval", "hirec-retrieval+untrained"], tmp_path / "o")
    assert {r["pipeline"] for r in rows} == {"hirec-retrieval", "hirec-retrieval+untrained"}
    assert evaluator.pipeline("untrained").retriever.cross is not None
    assert evaluator.pipeline("none").retriever.cross is None
    filing = library.filings()[:1]
    _, fused = evaluator.pipeline("untrained").retriever.passages("total revenue", "total revenue", filing)
    assert fused.scorer.startswith("rrf(bm25, dense, filing rank, cross-encoder") and fused.scorer.endswith("on cpu)")
    _, alone = evaluator.pipeline("untrained", "replace").retriever.passages("total revenue", "total revenue", filing)
    assert alone.scorer.startswith("cross-encoder") and alone.scorer.endswith("on cpu")
    # loaded once
    assert evaluator.pipeline("untrained").retriever.cross is evaluator.pipeline("untrained", "replace").retriever.cross
    # replace: ranked by the cross-encoder's score alone; fuse: by the fusion that includes its ranking
    cross = [c.cross for c in alone.candidates]
    # (final is stored to 6 decimals, cross to 4: equal up to the coarser rounding, not by rounding twice)
    assert cross == sorted(cross, reverse=True) and all(abs(c.final - c.cross) <= 5e-5 + 1e-6
                                                        for c in alone.candidates)
    assert {c.chunk_id: c.cross for c in fused.candidates} == {c.chunk_id: c.cross for c in alone.candidates}
    finals = [c.final for c in fused.candidates]
    assert finals == sorted(finals, reverse=True)
    by_ce = sorted(fused.candidates, key=lambda c: -c.cross)  # the cross-encoder is the 4th RRF voter
    k = settings.retrieval.rrf_k
    assert all(abs(c.final - c.rrf - 1 / (k + rank)) < 1e-5 for rank, c in enumerate(by_ce, start=1))


def test_within_filing_ranking_modes_rank_every_chunk_of_the_gold_filing(ingested_demo, demo_truth, embedder, tmp_path):
    """The FinCards setting: the candidates are the gold filing's chunks; each mode's ranking covers all of them,
    so nDCG's ideal is the filing's; a question whose filing is not loaded gets no ranking figures."""
    library, settings, _ = ingested_demo
    fact = next(f for f in demo_truth if f["form"] == "10-K" and f["metric"] == "Total revenue")
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in (
        {"qid": "in", "question": f"What was {fact['company']}'s total revenue in fiscal {fact['period']}?",
         "gold_pages": [{"doc_name": fact["doc_name"], "page_index": fact["page_index"]}]},
        {"qid": "out", "question": "What was Nowhere Inc's revenue in FY2020?",
         "gold_pages": [{"doc_name": "NOWHERE_2020_10K", "page_index": 3}]})))
    evaluator = Evaluator(library, settings, Models(embedder), open_indexes(library, settings, embedder))
    rows = run_eval(evaluator, load_questions(qfile), ["wf-bm25", "wf-fused", "wf-cards"], tmp_path / "o")
    filing = next(f for f in library.filings() if f.identity.doc_name == fact["doc_name"])
    n_chunks = len(library.chunks_of_filings([filing.id]))
    for r in rows:
        if r["qid"] == "out":
            assert r["status"] == "skipped" and "ndcg@10" not in r
            continue
        assert sorted(r["ranked_chunks"]) == sorted(c.id for c in library.chunks_of_filings([filing.id]))
        assert len(r["ranked_chunks"]) == n_chunks and 0.0 < r["ndcg@10"] <= 1.0
    cards = next(r for r in rows if r["pipeline"] == "wf-cards" and r["qid"] == "in")
    assert cards["llm_calls"] == 0 and cards["note"].startswith("cards:")
    assert cards["page_recall@5"] == 1.0  # the income statement's page: the line items, the statement, the year


def test_every_pipeline_is_explained_in_one_sentence():
    assert list(PIPELINE_DESCRIPTIONS) == list(PIPELINES)
    for name, sentence in PIPELINE_DESCRIPTIONS.items():
        assert sentence[0].isupper() and sentence.endswith(".") and ". " not in sentence, name
        assert name not in sentence and len(sentence) <= 160, name


def _old_evaluation(tmp_path):
    """A library whose evaluation stored three runs before runs named their evaluation (evaluation = ''), its
    results folder naming them (one row with no run, one cut short by a cancel), and one question of the analyst's."""
    from engine.store import Library

    library = Library(tmp_path / "lib")
    store = RunStore(library)
    for rid in ("e1", "e2", "e3", "mine"):
        store.create(rid, "hirec", f"question {rid}", "{}")
        store.finish(rid, "answered", {})
    out = tmp_path / "evals" / "financebench"
    out.mkdir(parents=True)
    rows = [{"pipeline": "hirec", "qid": f"q{i}", "run_id": rid} for i, rid in enumerate(("e1", "e2", "e3"))]
    rows.append({"pipeline": "bm25", "qid": "q0", "run_id": ""})
    (out / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + '\n{"pipeline": "hirec", "run_id": "mi',
                                       encoding="utf-8")
    return library, store, out


def test_an_older_evaluations_runs_are_filed_under_it_from_its_results_folder(tmp_path):
    from engine.eval.runner import link_results

    library, store, out = _old_evaluation(tmp_path)
    assert {r["id"] for r in store.list(evaluation="")} == {"e1", "e2", "e3", "mine"}  # all "your questions"
    assert link_results(library, out) == 3
    assert {r["id"] for r in store.list(evaluation="")} == {"mine"}
    assert {r["id"] for r in store.list(evaluation=evaluation_name(out))} == {"e1", "e2", "e3"}
    assert link_results(library, out) == 0  # idempotent: nothing written again
    assert link_results(library, tmp_path / "evals" / "never-run") == 0  # no results: nothing to link


def test_the_cli_files_an_evaluations_runs_under_it(tmp_path, capsys):
    from engine.cli import main

    library, _store, out = _old_evaluation(tmp_path)
    home = library.home
    library.close()
    assert main(["--home", str(home), "runs", "link-evaluation", str(out)]) == 0
    assert "3 run(s) filed under this evaluation" in capsys.readouterr().out
    assert main(["--home", str(home), "runs", "link-evaluation", str(out)]) == 0
    assert "already filed" in capsys.readouterr().out
    assert main(["--home", str(home), "runs", "link-evaluation", str(tmp_path)]) == 2  # not a results folder
    assert "has no results.jsonl" in capsys.readouterr().err
    from engine.store import Library

    with Library(home) as again:
        assert {r["id"] for r in RunStore(again).list(evaluation="")} == {"mine"}
