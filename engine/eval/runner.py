"""`filinglens eval`: pipelines side by side on one library, paper metrics, resumable results."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from engine.errors import Cancelled, EngineError
from engine.eval.metrics import (
    EvidenceSpan,
    Page,
    answer_matches,
    average_precision_at_k,
    chunk_grade,
    document_recall_at_k,
    gold_is_numeric,
    key_entities_found,
    key_figures_found,
    locate_span,
    mrr_at_k,
    ndcg_at_k,
    page_precision,
    page_recall_at_k,
    yes_no,
)
from engine.eval.questions import EvalQuestion
from engine.indexing import OpenIndexes
from engine.intent import lexical_query, parse_intent
from engine.models.base import ChatMessage
from engine.pipeline import HirecPipeline, Models, build_pipeline
from engine.records import (
    AnswerPayload,
    AnswerResult,
    Chunk,
    DocumentsPayload,
    FactsPayload,
    Passage,
    PassagesPayload,
    StageTrace,
)
from engine.rerank.stage import PassageReranker
from engine.retrieval.hierarchical import filing_title
from engine.retrieval.search import Searcher
from engine.settings import Settings
from engine.store.library import Library, RunStore

log = logging.getLogger(__name__)

# Within-filing chunk ranking (the FinCards setting): the candidates are every chunk of the question's gold
# filing(s), so the ranking step alone is measured. pipeline -> the passage scorer.
WITHIN_FILING = {"wf-bm25": "bm25", "wf-fused": "fused", "wf-ce": "cross-encoder", "wf-cards": "cards",
                 "wf-cards+intent": "cards+intent", "wf-tournament-s2": "tournament-s2",
                 "wf-tournament": "tournament", "wf-multiagent": "multiagent"}
PIPELINES = ("bm25", "dense", "hybrid", "hirec-retrieval", "hirec-retrieval+ce", "hirec-retrieval+ce-only",
             "hirec-retrieval+untrained", "hirec-retrieval+cards", "hirec-retrieval+tournament", "hirec",
             "hirec-model", "dense-answer", *WITHIN_FILING)
# One sentence per pipeline, for an analyst choosing what to evaluate (the Evaluate tab shows it beside the name).
PIPELINE_DESCRIPTIONS = {
    "bm25": "Keyword search (BM25) over the whole library: the ten passages sharing the most rare words with the "
            "question; no model.",
    "dense": "Meaning search over the whole library: the ten passages whose embedding is closest to the question's.",
    "hybrid": "Keyword and meaning search over the whole library, their rankings fused into one.",
    "hirec-retrieval": "FilingLens's retrieval as Ask runs it (find the filings first, then rank their passages by "
                       "keywords, meaning and filing score), stopped before the answer.",
    "hirec-retrieval+ce": "That retrieval with the reranker you trained (train-reranker) added to the passage "
                          "ranking.",
    "hirec-retrieval+ce-only": "That retrieval with passages ordered by the trained reranker's score alone.",
    "hirec-retrieval+untrained": "That retrieval with an untrained reranker added, the baseline that shows what "
                                 "training bought.",
    "hirec-retrieval+cards": "That retrieval with passages ranked by how well their evidence cards match the question "
                             "(company, metric, period, figures), without a model call.",
    "hirec-retrieval+tournament": "That retrieval with passages ranked by the chat model in screening and listwise "
                                  "rounds (FinCards tournament).",
    "hirec": "The whole Ask pipeline: retrieve, gather evidence and answer; the answers are scored against the gold "
             "ones.",
    "hirec-model": "The whole Ask pipeline with numeric answers written by the model from passages instead of "
                   "computed from the statement facts (the earlier path, for comparison).",
    "dense-answer": "The ten passages of meaning search handed straight to the answer step: a simple answering "
                    "baseline.",
    "wf-bm25": "Inside the question's own filing: every passage ranked by keywords (BM25), to measure ranking alone.",
    "wf-fused": "Inside the question's own filing: passages ranked by keywords and meaning fused, as Ask ranks them.",
    "wf-ce": "Inside the question's own filing: passages ranked by the trained reranker alone.",
    "wf-cards": "Inside the question's own filing: passages ranked by evidence-card matching, without a model call.",
    "wf-cards+intent": "Inside the question's own filing: card matching after a model pass that reads what the "
                       "question implies.",
    "wf-tournament-s2": "Inside the question's own filing: the tournament's first two stages (keyword cut, then the "
                        "model screens groups).",
    "wf-tournament": "Inside the question's own filing: the full FinCards tournament, the model ordering passages "
                     "over bootstrap rounds.",
    "wf-multiagent": "Inside the question's own filing: several model roles (batch picker, judge, pairwise referee "
                     "with Elo) rank passages together.",
}
# Passage stage per retrieval-only HiREC variant, so fused, trained, untrained and card scorers run side by side.
# pipeline -> (reranker, how its scores are used: None = the settings' reranker_mode, card mode)
RERANKER_VARIANTS = {"hirec-retrieval": ("none", None, "off"), "hirec-retrieval+ce": ("trained", None, "off"),
                     "hirec-retrieval+ce-only": ("trained", "replace", "off"),
                     "hirec-retrieval+untrained": ("untrained", None, "off"),
                     "hirec-retrieval+cards": ("none", None, "cards"),
                     "hirec-retrieval+tournament": ("none", None, "tournament")}
ANSWERING = {"hirec", "hirec-model", "dense-answer"}
NEEDS_CHAT = ANSWERING | {"hirec-retrieval+tournament", "wf-cards+intent", "wf-tournament-s2", "wf-tournament",
                          "wf-multiagent"}


@dataclass
class Prediction:
    # (doc, 0-based page index) of the final evidence, best first
    page_indexes: list[tuple[str, int]] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)
    ranked_chunks: list[int] = field(default_factory=list)  # for nDCG/MAP/MRR
    answer: str = ""
    status: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0  # of tokens_in, prompt tokens the model took from its prefix cache
    curation_tokens_in: int = 0  # the evidence-curation calls alone (HiREC reports these)
    curation_tokens_out: int = 0
    llm_calls: int = 0
    seconds: float = 0.0
    retrieval_seconds: float = 0.0
    run_id: str = ""
    note: str = ""
    rank_variance: float | None = None  # a bootstrap's (FinCards Stage 3)
    # a card ranker's model calls by purpose ("rerank: screen"): [calls, tokens in, cached, tokens out, seconds]
    stages: dict[str, list[float]] = field(default_factory=dict)


class Evaluator:
    """Runs the pipelines on questions and scores them; every HiREC variant is :func:`build_pipeline`'s
    pipeline (retrieval-only ones stop after the first passage stage), sharing the indexes loaded once."""

    def __init__(self, library: Library, settings: Settings, models: Models, indexes: OpenIndexes) -> None:
        self.library, self.settings, self.models = library, settings, models
        self.embedder, self.chat = models.embedder, models.chat
        self.searcher = Searcher(library, settings, models.embedder, indexes)
        self._pipelines: dict[tuple[str, str, bool, str], HirecPipeline] = {}
        self._reranker: PassageReranker | None = None
        self._cross: dict[str, object] = {}  # one loaded cross-encoder per reranker, shared by its modes
        if models.cross is not None:
            self._cross[settings.retrieval.reranker] = models.cross
        self._filing_by_doc = {f.identity.doc_name: f for f in library.filings()}

    @property
    def hirec(self) -> HirecPipeline:
        return self.pipeline(self.settings.retrieval.reranker)

    def pipeline(self, reranker: str, mode: str | None = None, rerank: str | None = None, *,
                 from_facts: bool = True) -> HirecPipeline:
        """The HiREC pipeline whose passage scorer is ``reranker`` (none | trained | untrained | folder), its
        scores fused with the others or used alone (``mode``; default: the settings'), or the card-based ranking
        ``rerank`` (engine.rerank; default: the settings'). The answering pipeline and the retrieval-only one of
        the same scorer are one pipeline (one retriever, one set of caches); a retrieval-only run stops after the
        passage stage and is not stored. ``from_facts=False``: numeric answers written by the model from passages
        (``hirec-model``, the path before statement facts)."""
        key = (reranker, mode or self.settings.retrieval.reranker_mode, from_facts, rerank or self.settings.rerank.mode)
        if key not in self._pipelines:
            from engine.models.registry import load_cross_scorer

            s = self.settings.with_overrides(retrieval={"reranker": key[0], "reranker_mode": key[1]},
                                             answer={"from_facts": from_facts}, rerank={"mode": key[3]})
            if self._cross.get(key[0]) is None and key[0] != "none":
                self._cross[key[0]] = load_cross_scorer(s, s.library_home())
            models = Models(self.embedder, self.chat, self._cross.get(key[0]),  # type: ignore[arg-type]
                            self.models.chat_error)
            self._pipelines[key] = build_pipeline(s, self.library, models, self.searcher)
        return self._pipelines[key]

    def predict(self, pipeline: str, q: EvalQuestion, evaluation: str = "") -> Prediction:
        """One pipeline's prediction for one question; a run it stores names ``evaluation`` (the results folder)."""
        t = time.perf_counter()
        if pipeline in ("bm25", "dense", "hybrid", "dense-answer"):
            res = self.searcher.search(q.question, 10)
            hits = {"bm25": res.bm25, "dense": res.dense, "hybrid": res.fused, "dense-answer": res.dense}[pipeline]
            chunks = [h.chunk for h in hits]
            pred = self._from_chunks(chunks)
            pred.retrieval_seconds = time.perf_counter() - t
            pred.note = f"dense from {res.dense_source}" if "dense" in pipeline or pipeline == "hybrid" else ""
            if pipeline == "dense-answer":
                self._answer(q, chunks, pred)
        elif pipeline in RERANKER_VARIANTS:
            run = self.pipeline(*RERANKER_VARIANTS[pipeline]).run(q.question, stop_after="passages", store=False)
            passages = [t.payload for t in run.traces if isinstance(t.payload, PassagesPayload)]
            documents = [t.payload for t in run.traces if isinstance(t.payload, DocumentsPayload)]
            kept = passages[0].kept if passages else ()
            pred = Prediction(page_indexes=list(dict.fromkeys((c.doc_name, c.page_index) for c in kept)),
                              docs=[d.doc_name for d in documents[0].kept] if documents else [],
                              ranked_chunks=[c.chunk_id for c in passages[0].candidates] if passages else [])
            pred.retrieval_seconds = time.perf_counter() - t
            if run.status != "stopped":
                pred.status, pred.note = run.status, run.answer.reason
        elif pipeline in WITHIN_FILING:
            pred = self._within_filing(WITHIN_FILING[pipeline], q)
        elif pipeline in ("hirec", "hirec-model"):
            run = (self.hirec if pipeline == "hirec" else self.pipeline(self.settings.retrieval.reranker,
                                                                        from_facts=False)).run(
                q.question, evaluation=evaluation)
            docs, pages = answer_evidence(run.answer, run.traces)
            pred = Prediction(page_indexes=pages, docs=docs)
            first = next((t.payload for t in run.traces if isinstance(t.payload, PassagesPayload)), None)
            pred.ranked_chunks = [c.chunk_id for c in first.candidates] if first else []
            pred.answer, pred.status, pred.run_id = run.answer.text, run.status, run.id
            pred.note = run.answer.reason
            pred.tokens_in, pred.tokens_out, pred.llm_calls = run.tokens_in, run.tokens_out, run.llm_calls
            pred.tokens_cached = run.tokens_cached
            curation = run.stages("curation")
            pred.curation_tokens_in = sum(tr.tokens_in for tr in curation)
            pred.curation_tokens_out = sum(tr.tokens_out for tr in curation)
            pred.retrieval_seconds = run.retrieval_seconds
        else:
            raise ValueError(f"unknown pipeline {pipeline!r} (known: {', '.join(PIPELINES)})")
        pred.seconds = time.perf_counter() - t
        if pipeline in WITHIN_FILING:
            pred.retrieval_seconds = pred.seconds
        return pred

    def _within_filing(self, scorer: str, q: EvalQuestion) -> Prediction:
        """Rank every chunk of the question's gold filing(s) with one scorer; the ranking covers them all (the
        scorer's candidates first, the rest after them in BM25 order), so nDCG's ideal is the filing's."""
        filings = [self._filing_by_doc[d] for d in sorted(q.gold_docs) if d in self._filing_by_doc]
        if not filings:
            return Prediction(status="skipped", note="the gold filing is not in the library")
        hirec = self.pipeline("none", rerank="off")
        intent = parse_intent(q.question, list(hirec.refs.values()))
        lq = lexical_query(intent, q.question)
        if self._reranker is None:
            self._reranker = PassageReranker(self.library, self.settings, hirec.retriever, self.chat)
        bm25 = [c for c, _ in self._reranker.bm25_order(lq, filings)]
        pred = Prediction(docs=[f.identity.doc_name for f in filings])
        if scorer == "bm25":
            head: list[int] = []
        elif scorer in ("fused", "cross-encoder"):
            p = hirec if scorer == "fused" else self.pipeline("trained", "replace", rerank="off")
            _, payload = p.retriever.passages(q.question, lq, filings, intent)
            head = [c.chunk_id for c in payload.candidates]
            pred.note = payload.scorer
        else:
            mode, _, extra = scorer.partition("+")  # "cards+intent": cards with the model intent pass
            # one prefix-cache session per question, as the question path has: the groups share its prefix
            with self.chat.prefix_session() if self.chat is not None else contextlib.nullcontext():
                got = self._reranker.passages(q.question, lq, filings, intent, mode=mode,
                                              model_intent=extra == "intent")
            head = [r.chunk_id for r in got.rerank.rows]
            pred.tokens_in = sum(c.tokens_in for c in got.calls)
            pred.tokens_out = sum(c.tokens_out for c in got.calls)
            pred.tokens_cached = sum(c.cached_tokens for c in got.calls)
            pred.llm_calls = len(got.calls)
            for c in got.calls:
                row = pred.stages.setdefault(c.purpose, [0, 0, 0, 0, 0.0])
                for n, v in enumerate((1, c.tokens_in, c.cached_tokens, c.tokens_out, c.seconds)):
                    row[n] += v
            pred.rank_variance = got.rerank.rank_variance
            pred.note = "; ".join((got.payload.scorer, f"cards: {got.rerank.cards}", *got.rerank.fallbacks[:3],
                                   *got.rerank.intent_pass))
        taken = set(head)
        pred.ranked_chunks = head + [c for c in bm25 if c not in taken]
        chunks = {c.id: c for c in self.library.chunks(pred.ranked_chunks[:10])}
        pred.page_indexes = list(dict.fromkeys((chunks[i].doc_name, chunks[i].page_index)
                                               for i in pred.ranked_chunks[:10] if i in chunks))
        return pred

    def _from_chunks(self, chunks: Sequence[Chunk]) -> Prediction:
        return Prediction(page_indexes=list(dict.fromkeys((c.doc_name, c.page_index) for c in chunks)),
                          docs=list(dict.fromkeys(c.doc_name for c in chunks)), ranked_chunks=[c.id for c in chunks])

    def _answer(self, q: EvalQuestion, chunks: Sequence[Chunk], pred: Prediction) -> None:
        from engine.answer.respond import answer_question

        if self.chat is None:
            pred.status, pred.note = "failed", "no chat model"
            return
        intent = parse_intent(q.question, list(self.hirec.refs.values()))
        passages = [Passage(c, filing_title(self._filing_by_doc[c.doc_name])) for c in chunks]
        result, calls = answer_question(q.question, intent, passages, self.library, self.chat, self.settings.answer,
                                        self.settings.prompts)
        pred.answer, pred.status = result.text, result.status
        pred.note = "; ".join(x for x in (pred.note, result.reason) if x)
        pred.tokens_in = sum(c.tokens_in for c in calls)
        pred.tokens_out = sum(c.tokens_out for c in calls)
        pred.llm_calls = len(calls)

    # -- scoring --------------------------------------------------------------------------------
    def grades(self, q: EvalQuestion, chunk_ids: Sequence[int]) -> list[int]:
        spans = []
        for doc, page_index, text in q.evidence:
            f = self._filing_by_doc.get(doc)
            if f is None or page_index >= f.n_pages:
                continue
            loc = locate_span(self.library.page_text(f.id, page_index), text) if text else None
            spans.append(EvidenceSpan(doc, page_index, *(loc or (0, 0))))
        spans += [EvidenceSpan(d, p, 0, 0) for d, p in q.gold_pages
                  if not any(s.doc_name == d and s.page_index == p for s in spans)]
        chunks = {c.id: c for c in self.library.chunks(list(chunk_ids))}
        return [chunk_grade(c.doc_name, c.page_index, c.char_start, c.char_end, spans)
                if (c := chunks.get(i)) else 0
                for i in chunk_ids]

    def score(self, pipeline: str, q: EvalQuestion, pred: Prediction) -> dict:
        row = {"qid": q.qid, "pipeline": pipeline, "question": q.question, "qtype": q.qtype, "reasoning": q.reasoning,
               "has_evidence": q.has_evidence, **asdict(pred)}
        if q.gold_docs:
            row["doc_recall@5"] = document_recall_at_k(pred.docs, q.gold_docs, 5)
        if q.gold_pages and pred.status != "skipped":
            row["page_recall@5"] = page_recall_at_k(pred.page_indexes, q.gold_pages, 5)
            row["page_recall@10"] = page_recall_at_k(pred.page_indexes, q.gold_pages, 10)
            row["page_precision"] = page_precision(pred.page_indexes[:5], q.gold_pages)
            grades = self.grades(q, pred.ranked_chunks)
            for k in (5, 10):
                row[f"ndcg@{k}"] = ndcg_at_k(grades, grades, k) if any(grades) else 0.0
                row[f"map@{k}"] = average_precision_at_k(grades, k)
                row[f"mrr@{k}"] = mrr_at_k(grades, k)
        if pipeline in ANSWERING and q.answer:
            row["answer_kind"] = "numeric" if gold_is_numeric(q.answer) else "textual"
            row["correct"], row["judged_by"] = self.verdict(q, pred.answer, pred.status)
            row.update(number_verdict(q.answer, pred.answer, pred.status, row["correct"]))
        return row

    def verdict(self, q: EvalQuestion, answer: str, status: str) -> tuple[bool | None, str]:
        """``(correct, judged_by)`` of one answer, by the first test that decides it: the numeric matcher when
        the gold is a number; the side a yes/no answer takes against the gold's ("yes/no"); a written answer that
        states every figure of a prose gold, within its rounding or 1 % ("figures"); one that names every key
        entity of a prose gold without figures (the segment, region or product its point is: "entities"); only
        then the judge model ("model"), whose verdicts the report counts apart (a small model accepts wrong
        answers)."""
        if status != "answered":
            return False, "not answered"
        m = answer_matches(answer, q.answer)
        if m.correct is not None:
            return bool(m.correct), "numeric"
        side, gold_side = yes_no(answer), yes_no(q.answer)
        if side is not None and gold_side is not None:
            return side == gold_side, "yes/no"
        found, wanted = key_figures_found(answer, q.answer)
        if wanted and found == wanted:
            return True, "figures"
        named, names = key_entities_found(answer, q.answer, q.question)
        if names and not wanted and named == names:
            return True, "entities"
        return self.judge(q, answer), "model"

    def judge(self, q: EvalQuestion, answer: str) -> bool | None:
        """Textual answers: the local model compares with the gold answer and evidence (marked model-judged)."""
        if self.chat is None:
            return None
        from engine.prompts import prompt
        from engine.trace import call_llm

        evidence = "\n".join(t for _, _, t in q.evidence)[:2500]
        # The reason comes first: the grammar writes properties in order, so the verdict follows the comparison.
        schema = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 200}, "correct": {"type": "boolean"}},
                  "required": ["reason", "correct"], "additionalProperties": False}
        msgs: list[ChatMessage] = [
                {"role": "system", "content": prompt("judge", self.settings.prompts)},
                {"role": "user", "content": f"Question: {q.question}\nGold answer: {q.answer}\nEvidence: {evidence}\n"
                 f"Answer to grade: {answer}"}]
        res, _ = call_llm(self.chat, "judge", msgs, schema, 96)
        return None if res is None else bool(res.data["correct"])


def answer_evidence(answer: AnswerResult | None, traces: Sequence[StageTrace]) -> tuple[list[str], list[Page]]:
    """The filings and (filing, 0-based page) pairs a run's answer is scored on, best first: first those of the
    statement facts the answer was computed from (such an answer retrieves no passage, so without them its
    document recall reads 0 on questions whose pages are right), then the passages given to the answer step, the
    facts its sufficiency checks found and the filings the document stage kept."""
    used = [(i.doc_name, i.page_index) for i in (answer.inputs if answer is not None else ())
            if i.fact_id is not None]
    given = [(p.doc_name, p.page_index) for t in traces if isinstance(t.payload, AnswerPayload)
             for p in t.payload.passages]
    found = [(i.doc_name, i.page_index) for t in traces if isinstance(t.payload, FactsPayload)
             for i in t.payload.inputs if i.fact_id is not None]
    pages = list(dict.fromkeys(used + given + found))
    kept = [c.doc_name for t in traces if isinstance(t.payload, DocumentsPayload) for c in t.payload.kept]
    return list(dict.fromkeys([d for d, _ in used] + kept)), pages


def number_verdict(gold: str, answer: str, status: str, correct: bool | None) -> dict[str, bool | None]:
    """How an answer to a numeric gold scores beyond the strict verdict ``correct`` (``{}`` for a textual gold):
    ``correct_tolerant``, right with the gold's rounding forgiven (within 1 %: 8.74 for "$8.70"); ``number_given``,
    the answer states a number; ``wrong_number``, it states one that is wrong even so: a confident wrong figure,
    which an abstention (no answer, or an answer without a number) is not. Where the judge decided (a sign stated
    in words), its verdict stands for both."""
    if not gold_is_numeric(gold):
        return {}
    if status != "answered":
        return {"correct_tolerant": False, "number_given": False, "wrong_number": False}
    m = answer_matches(answer, gold)
    near = m.near if m.near is not None else correct
    given = m.predicted_number is not None
    return {"correct_tolerant": near, "number_given": given, "wrong_number": None if near is None else
            given and not near}


def run_eval(evaluator: Evaluator, questions: Sequence[EvalQuestion], pipelines: Sequence[str], out_dir: Path,
             progress: Callable[[int, int, str], None] | None = None,
             cancel: Callable[[], bool] | None = None) -> list[dict]:
    """Evaluate; rows are appended to ``results.jsonl`` as they finish, so an interrupted or cancelled run resumes.

    Raises:
        Cancelled: ``cancel`` returned true between two questions (what finished is kept).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.jsonl"
    evaluation = evaluation_name(out_dir)
    done: dict[tuple[str, str], dict] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                done[(row["pipeline"], row["qid"])] = row
            except (json.JSONDecodeError, KeyError):
                continue  # a line torn by a crash is simply redone
    total, n = len(questions) * len(pipelines), 0
    with path.open("a", encoding="utf-8") as fh:
        for q in questions:
            for p in pipelines:
                n += 1
                if (p, q.qid) not in done:
                    if cancel is not None and cancel():
                        raise Cancelled("evaluation cancelled: a re-run with the same output folder resumes")
                    row = evaluator.score(p, q, evaluator.predict(p, q, evaluation))
                    fh.write(json.dumps(row, default=str) + "\n")
                    fh.flush()
                    done[(p, q.qid)] = row
                if progress:
                    progress(n, total, p)
    # runs this evaluation stored before runs named their evaluation: linked now, so History groups them too
    RunStore(evaluator.library).link_evaluation([str(r.get("run_id") or "") for r in done.values()], evaluation)
    wanted = {q.qid for q in questions}
    return [r for (p, qid), r in done.items() if p in pipelines and qid in wanted]


def evaluation_name(out_dir: Path) -> str:
    """What an evaluation's runs record as their evaluation: its results folder (a re-run resumes into it)."""
    return str(out_dir.expanduser().resolve())


def link_results(library: Library, out_dir: Path) -> int:
    """Mark the runs the evaluation of results folder ``out_dir`` stored as its runs (``results.jsonl`` names each
    row's run): an evaluation run before runs named their evaluation is then listed under it in History, not among
    the analyst's questions. Idempotent (a linked run is not written again); a folder without results links nothing.
    Returns how many runs changed."""
    path = out_dir / "results.jsonl"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise EngineError(f"cannot read the evaluation results {path}: {exc}") from exc
    run_ids = []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # a row cut short by a cancel: the resume writes it again
            continue
        if isinstance(row, dict) and row.get("run_id"):
            run_ids.append(str(row["run_id"]))
    return RunStore(library).link_evaluation(run_ids, evaluation_name(out_dir))


def rejudge(evaluator: Evaluator, questions: Sequence[EvalQuestion], out_dir: Path,
            progress: Callable[[int, int, str], None] | None = None) -> int:
    """Score the stored answers of ``out_dir`` again (numeric matcher, yes/no side, judge model) without
    running the pipelines; ``results.jsonl`` is rewritten. Returns how many verdicts changed."""
    path = out_dir / "results.jsonl"
    by_qid = {q.qid: q for q in questions}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    todo = [r for r in rows if r["pipeline"] in ANSWERING and r["qid"] in by_qid and by_qid[r["qid"]].answer]
    changed = 0
    for i, r in enumerate(todo, start=1):
        verdict = evaluator.verdict(by_qid[r["qid"]], r.get("answer", ""), r.get("status", ""))
        changed += (r.get("correct"), r.get("judged_by")) != verdict
        r["correct"], r["judged_by"] = verdict
        r.update(number_verdict(by_qid[r["qid"]].answer, r.get("answer", ""), r.get("status", ""), verdict[0]))
        r["answer_kind"] = "numeric" if gold_is_numeric(by_qid[r["qid"]].answer) else "textual"
        if progress:
            progress(i, len(todo), r["pipeline"])
    tmp = path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(path)
    return changed


@dataclass
class EvalOutcome:
    """A finished evaluation: the report's summary table, the rows, the plots and where they were written."""

    out: Path
    title: str
    summary: list[dict]
    rows: list[dict]
    plots: list[Path]
    missing: dict[str, list[str]]  # qid -> its gold filings the library does not hold


def evaluate(evaluator: Evaluator, questions: Sequence[EvalQuestion], pipelines: Sequence[str], out: Path,
             source: str, progress: Callable[[int, int, str], None] | None = None,
             cancel: Callable[[], bool] | None = None) -> EvalOutcome:
    """Run the pipelines (resuming from ``out``), then write the report and the plots: what ``filinglens eval``
    and the app's Evaluate tab both do. ``source`` names the question file in the report's title."""
    from engine.eval.plots import gold_pages, write_plots
    from engine.eval.report import write_report

    library = evaluator.library
    rows = run_eval(evaluator, questions, pipelines, out, progress, cancel)
    title = f"FilingLens eval: {source} ({len(questions)} questions, {library.count('filings')} filings)"
    in_library = {f.identity.doc_name for f in library.filings()}
    missing = {q.qid: absent for q in questions if (absent := [d for d in q.gold_docs if d not in in_library])}
    summary = write_report(out, rows, pipelines, title, missing)
    plots = write_plots(out, rows, pipelines, gold=gold_pages(questions))
    return EvalOutcome(out, title, summary, rows, list(plots), missing)
