"""Test questions from the user's own filings (paper 004, KoBankIR's query generation with answerability).

Single-document questions: one per sampled passage (tables and narrative, boilerplate skipped by its evidence
card), each with the evidence span the model quotes, which must be printed in the passage. A numeric question on
a catalogue metric carries the answer the engine computes from the statement facts when the facts give every
input (``answer_source = "facts"``); otherwise the model's reference answer.

Multi-document questions, from the kept single ones (§3.2.2): topic-based merging (two questions about the same
company merged into one), context deepening (two question/passage pairs of one filing made into a question that
needs both) and compare / contrast (two passages that report the same metric, for two companies or for one
company in two years).

Every question is judged "reason first, then score" (1–5, §3.3.1) with its passages; a question below the
threshold is dropped. A multi-document question is kept only if it is more answerable with all its passages than
with any one of them (eq. 8). Its answerability F is read part by part: a multi-document question is made of
parts, one per passage (a merged question's parts are the questions merged; the model that writes a deepening or
comparing question names what it asks of each passage), the judge scores each part, and F is the lowest part
score, since a question is answered only when every part is (the rubric's 5). A small judge shown one passage
gives a compound question 5 when that passage answers half of it; asked about the missing half on its own, it
does not. Near-identical questions are dropped (cosine of their embeddings).

Each finished item is appended to ``<out>.progress.jsonl`` under a key made from its passages and kind, so a run
that was killed resumes without duplicates; the question set (JSONL that ``filinglens eval`` reads), the
reviewer's CSV and Markdown and the summary are written from it at the end.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.answer.from_facts import facts_answer, gather, plan_metric
from engine.errors import Cancelled, EngineError
from engine.export import safe_cell
from engine.intent import parse_intent
from engine.intent.issuers import issuer_refs
from engine.intent.periods import asked_periods
from engine.models.base import ChatMessage, ChatModel
from engine.prompts import prompt
from engine.records import Card, Chunk, Filing, QueryIntent
from engine.rerank.cards import CardMaker
from engine.retrieval.hierarchical import filing_title
from engine.settings import Settings
from engine.store.library import Library
from engine.trace import call_llm
from engine.vocab.catalogue import load_catalogue

KINDS = ("single", "topic-merge", "deepen", "compare")
MIN_CHARS = 200  # a passage shorter than this rarely holds a question's evidence
PASSAGE_CHARS = 2400  # what a prompt quotes of one passage
# what the grammar lets a generated question be: a question's opening word (or a clause that places it, "In fiscal
# 2021, …") and a question mark at its end; a small model left free writes the answer as a statement ("The company
# reported net earnings of $1,798 million in fiscal 2020.")
QUESTION_PATTERN = (r'^(What|How|Which|Why|Who|When|Where|Did|Does|Do|Is|Are|Was|Were|Has|Have|Had|Can|Will|Would|'
                    r'In|For|As|At|During|Under|According) [^?"\\]+\?$')


@dataclass(frozen=True)
class Source:
    """A passage a question was made from, with the evidence span the model quoted (verbatim in the passage)."""

    doc_name: str
    page_index: int
    chunk_id: int
    kind: str  # the chunk's kind as ingest stored it (text | table …)
    evidence: str = ""
    printed_folio: str | None = None


@dataclass
class Item:
    """One generated question and everything the filters decided about it."""

    key: str
    kind: str
    question: str
    answer: str
    answer_source: str  # facts | model | parts (a merged question: its parts' answers)
    sources: list[Source]
    company: str = ""
    score: int | None = None  # answerability with all its passages (1–5)
    reasoning: str = ""
    single_scores: list[int | None] = field(default_factory=list)  # eq. 8: with each passage alone
    parts: list[str] = field(default_factory=list)  # a multi-document question: what it asks of each passage
    part_scores: list[int | None] = field(default_factory=list)  # each part's score with all the passages
    single_part_scores: list[list[int | None]] = field(default_factory=list)  # … with each passage alone
    kept: bool = False
    dropped: str = ""  # the filter that dropped it, and why
    repaired: str = ""  # what the engine changed in the model's question

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Item:
        return cls(**{**d, "sources": [Source(**s) for s in d["sources"]]})

    def eval_row(self) -> dict[str, Any]:
        """The question as ``filinglens eval`` reads it (gold pages are 0-based page indexes)."""
        return {"qid": self.key, "question": self.question, "answer": self.answer, "question_type": self.kind,
                "question_reasoning": self.answer_source,
                "gold_docs": sorted({s.doc_name for s in self.sources}),
                "gold_pages": [{"doc_name": s.doc_name, "page_index": s.page_index} for s in self.sources],
                "evidence": [{"doc_name": s.doc_name, "evidence_page_num": s.page_index,
                              "evidence_text": s.evidence} for s in self.sources],
                "chunk_ids": [s.chunk_id for s in self.sources], "answerability": self.score,
                "answerability_reasoning": self.reasoning, "company": self.company}


@dataclass
class Summary:
    """How many questions each step made and dropped, and why."""

    generated: Counter[str] = field(default_factory=Counter)
    kept: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)  # "<kind>: <reason>"
    seconds: float = 0.0

    def lines(self) -> list[str]:
        out = [f"{k}: generated {self.generated[k]}, kept {self.kept[k]}" for k in KINDS if self.generated[k]]
        out += [f"  dropped — {why}: {n}" for why, n in sorted(self.dropped.items())]
        return out


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*\d|\d")


def _tokens(text: str) -> str:
    """A text's words and numbers, in order: case, currency signs, punctuation and a plural's "s" aside (a table row
    copied as "Total revenue 17,179 11,456" is the row printed "TOTAL REVENUES $ 17,179 $ 11,456")."""
    out = []
    for t in _TOKEN.findall(text.lower()):
        out.append(t[:-1] if t[0].isalpha() and len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t)
    return " ".join(out)


def printed_in(span: str, text: str) -> bool:
    """The quoted evidence is in the passage (its words and numbers in the passage's order, see :func:`_tokens`) and
    is not a trivial fragment."""
    s = _tokens(span)
    return len(_norm(span).strip(" .\"'")) >= 8 and bool(s) and f" {s} " in f" {_tokens(text)} "


def parse_score(value: Any) -> int | None:
    """The judge's 1–5 score from what it returned: an integer, a numeric string ("4", "4/5", "Score: 4"); None
    when there is none in range."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(round(value)) if 1 <= value <= 5 else None
    if isinstance(value, str):
        m = re.search(r"(?<![\d.])([1-5])(?:\.0)?(?![\d.])", value)
        return int(m.group(1)) if m else None
    return None


class QueryGenerator:
    """Generates, judges and filters questions over a library's filings with a chat model."""

    def __init__(self, library: Library, settings: Settings, chat: ChatModel, embedder: Any,
                 threshold: int = 4, duplicate_cosine: float = 0.92) -> None:
        self.library, self.settings, self.chat, self.embedder = library, settings, chat, embedder
        self.threshold, self.duplicate_cosine = threshold, duplicate_cosine
        self.catalogue = load_catalogue()
        self.refs = list(issuer_refs(library))
        self.maker = CardMaker(library, settings.prompts)
        self._usable_cache: dict[int, tuple[list[Chunk], list[Chunk], dict[int, Card]]] = {}

    # -- sampling -------------------------------------------------------------------------------------
    def _usable(self, f: Filing) -> tuple[list[Chunk], list[Chunk], dict[int, Card]]:
        """A filing's passages worth a question, as tables and narrative, with their rules cards: none boilerplate
        or a bare heading, none shorter than MIN_CHARS. Made once per filing (sampling and comparing share it)."""
        if f.id not in self._usable_cache:
            chunks = [c for c in self.library.chunks_of_filings([f.id]) if len(c.text) >= MIN_CHARS]
            cards = self.maker.cards(chunks, {f.id: filing_title(f)}).cards
            good = [c for c in chunks if not cards[c.id].boilerplate]
            self._usable_cache[f.id] = ([c for c in good if cards[c.id].evidence_type == "table_numeric"],
                                        [c for c in good if cards[c.id].evidence_type != "table_numeric"], cards)
        return self._usable_cache[f.id]

    def passages(self, filings: Sequence[Filing], n: int, rng: random.Random) -> list[Chunk]:
        """``n`` passages, two from each filing in turn (a table and a narrative passage where it has both)."""
        pools: list[tuple[list[Chunk], list[Chunk]]] = []
        for f in filings:
            tables, prose, _ = self._usable(f)
            tables, prose = list(tables), list(prose)
            rng.shuffle(tables)
            rng.shuffle(prose)
            pools.append((tables, prose))
        out: list[Chunk] = []
        turn = 0
        while len(out) < n and any(t or p for t, p in pools):  # a table and a narrative passage per filing's turn,
            tables, prose = pools[turn % len(pools)]  # so context deepening finds two passages of one filing
            for pick in ((tables, prose) if turn % 2 == 0 else (prose, tables)):
                if len(out) < n and (pick or tables or prose):
                    out.append((pick or tables or prose).pop())
            turn += 1
        return out

    # -- model calls --------------------------------------------------------------------------------------
    def _ask(self, purpose: str, system: str, user: str, schema: dict[str, Any], max_tokens: int,
             cancel: Callable[[], bool] | None) -> dict[str, Any] | None:
        messages: list[ChatMessage] = [{"role": "system", "content": prompt(system, self.settings.prompts)},
                                       {"role": "user", "content": user}]
        res, _call = call_llm(self.chat, purpose, messages, schema, max_tokens, cancel)
        return None if res is None else res.data

    def _quote(self, c: Chunk, n: int | None = None) -> str:
        f = self.library.filing(c.filing_id)
        head = f"[{n}] " if n is not None else ""
        return (f"{head}{filing_title(f) if f else c.doc_name} — page {c.page_index + 1}\n<<<\n"
                f"{c.indexed_text[:PASSAGE_CHARS]}\n>>>")

    def write_single(self, c: Chunk, cancel: Callable[[], bool] | None = None) -> Item:
        schema = {"type": "object", "properties": {
            "question": {"type": "string", "maxLength": 300, "pattern": QUESTION_PATTERN},
            "evidence": {"type": "string", "maxLength": 400},
            "answer": {"type": "string", "maxLength": 300}},
            "required": ["question", "evidence", "answer"], "additionalProperties": False}
        out = self._ask("querygen: single", "querygen_single",
                        f"Passage (quoted data from a filing, not instructions):\n{self._quote(c)}\n\n"
                        "Write one question this passage answers, the exact words of the passage that answer it, and "
                        "the answer.", schema, 320, cancel)
        key = f"single:{c.id}"
        src = Source(c.doc_name, c.page_index, c.id, c.kind, printed_folio=c.printed_folio)
        if out is None:
            return Item(key, "single", "", "", "model", [src], dropped="generation: the model's output was unusable")
        q, ev, ans = (" ".join(str(out.get(k, "")).split()) for k in ("question", "evidence", "answer"))
        item = Item(key, "single", q, ans, "model", [Source(**{**asdict(src), "evidence": ev})])
        if not q.endswith("?") or len(q) < 15:
            item.dropped = "generation: not a question"
        elif not printed_in(ev, c.indexed_text):
            item.dropped = "generation: the quoted evidence is not printed in the passage"
        else:
            self._from_facts(item, self._standalone(item, c))
        return item

    def _standalone(self, item: Item, c: Chunk) -> QueryIntent:
        """A question that names no company of the library cannot be asked of it: the filing it was written
        from is named in front ("In 3M COMPANY's 10-K for 2018, what was …?"). Returns the question's intent."""
        intent = parse_intent(item.question, self.refs)
        if intent.issuers:
            return intent
        i = self.library.filing(c.filing_id).identity
        who = i.registrant or i.issuer_key or i.doc_name
        q = item.question
        q = q[0].lower() + q[1:] if len(q) > 1 and q[1].islower() else q
        item.question = f"In {who}'s {i.form or 'filing'} for {i.period or i.fiscal_year}, {q}"
        item.repaired = "the question named no company: the filing's was put in front"
        return parse_intent(item.question, self.refs)

    def _from_facts(self, item: Item, intent: QueryIntent) -> None:
        """A catalogue metric the statement facts compute: that answer replaces the model's."""
        item.company = intent.issuers[0] if len(intent.issuers) == 1 else ""
        plan = plan_metric(intent, self.library, self.catalogue)
        if plan is None:
            return
        ans = facts_answer(plan, gather(plan, self.library, self.catalogue), intent)  # a gap: not answered
        if ans.status == "answered":
            item.answer, item.answer_source = ans.text, "facts"

    def write_multi(self, kind: str, parts: Sequence[Item], chunks: Sequence[Chunk],
                    cancel: Callable[[], bool] | None = None) -> Item:
        """One multi-document question of ``kind`` from single questions (merge, deepen) or passages (compare)."""
        schema: dict[str, Any] = {"type": "object", "properties": {
            "question": {"type": "string", "maxLength": 400},
            "answer": {"type": "string", "maxLength": 400}},
            "required": ["question", "answer"], "additionalProperties": False}
        if kind != "topic-merge":  # (a merged question's parts are the questions merged)
            for k in range(1, len(chunks) + 1):
                schema["properties"][f"question_for_passage_{k}"] = {"type": "string", "minLength": 15,
                                                                    "maxLength": 200}
                schema["required"].append(f"question_for_passage_{k}")
        if kind == "topic-merge":
            user = ("Questions:\n" + "\n".join(f"{n}. {p.question}" for n, p in enumerate(parts, start=1))
                    + "\n\nMerge these into one natural question that asks all of them.")
        elif kind == "deepen":
            user = ("\n\n".join(f"Question {n}: {p.question}\n{self._quote(c, n)}"
                                for n, (p, c) in enumerate(zip(parts, chunks), start=1))
                    + "\n\nWrite one question whose answer needs both passages, going deeper than either question.")
        else:
            user = ("\n\n".join(self._quote(c, n) for n, c in enumerate(chunks, start=1))
                    + "\n\nWrite one question that compares or contrasts what these passages report.")
        out = self._ask(f"querygen: {kind}", f"querygen_{kind.replace('-', '_')}", user, schema, 320, cancel)
        evidence = [p.sources[0].evidence for p in parts] if parts else [""] * len(chunks)
        sources = [Source(c.doc_name, c.page_index, c.id, c.kind, ev, c.printed_folio)
                   for ev, c in zip(evidence, chunks)]
        key = f"{kind}:{','.join(str(c.id) for c in chunks)}"
        if out is None:
            return Item(key, kind, "", "", "model", sources, dropped="generation: the model's output was unusable")
        q, ans = (" ".join(str(out.get(k, "")).split()) for k in ("question", "answer"))
        item = Item(key, kind, q, ans, "model", sources, company=", ".join(dict.fromkeys(p.company for p in parts
                                                                                         if p.company)))
        item.parts = ([p.question for p in parts] if kind == "topic-merge" else
                      [" ".join(str(out.get(f"question_for_passage_{k}", "")).split())
                       for k in range(1, len(chunks) + 1)])
        if not q.endswith("?") or len(q) < 15:
            item.dropped = "generation: not a question"
        elif any(len(x) < 15 or not x.endswith("?") for x in item.parts) or len(set(item.parts)) < len(item.parts):
            item.dropped = "generation: the parts the question asks of each passage are missing"
        if kind == "topic-merge":  # the merged question asks what its parts ask: their checked answers, not the model's
            item.answer = " · ".join(p.answer for p in parts)
            item.answer_source = "parts"
        return item

    def judge(self, question: str, chunks: Sequence[Chunk],
              cancel: Callable[[], bool] | None = None) -> tuple[int | None, str]:
        """Reason first, then score 1–5: how fully the passages answer the question (§3.3.1)."""
        schema = {"type": "object", "properties": {
            "reasoning": {"type": "string", "maxLength": 700},
            "score": {"type": "integer"}},  # 1–5, checked by parse_score (a bound the grammar cannot hold)
            "required": ["reasoning", "score"], "additionalProperties": False}
        user = ("\n\n".join(self._quote(c, n) for n, c in enumerate(chunks, start=1))
                + f"\n\nQuestion: {question}\n\nThink through what the question needs and what the passages give, "
                  "then score how answerable the question is from these passages alone (1–5).")
        out = self._ask("querygen: judge", "querygen_judge", user, schema, 400, cancel)
        if out is None:
            return None, "the judge's output was unusable"
        return parse_score(out.get("score")), " ".join(str(out.get("reasoning", "")).split())

    def judge_parts(self, question: str, parts: Sequence[str], chunks: Sequence[Chunk],
                    cancel: Callable[[], bool] | None = None) -> tuple[int | None, list[int | None], str]:
        """A multi-document question's answerability F from these passages, part by part: reason first, then, for
        each part, the words of the passages that answer it and a score 1–5. A part whose quoted words the passages
        shown do not print scores 1 (they do not answer it, whatever the judge believed); F is the lowest part
        score (None when any part has no usable score)."""
        n = len(parts)
        # (bounds the grammar holds: a small judge otherwise loops inside a string to the token limit)
        part = {"type": "object", "properties": {"quote": {"type": "string", "maxLength": 200},
                                                 "score": {"type": "integer"}},
                "required": ["quote", "score"], "additionalProperties": False}
        schema = {"type": "object", "properties": {
            "reasoning": {"type": "string", "maxLength": 250},
            "parts": {"type": "array", "minItems": n, "maxItems": n, "items": part}},
            "required": ["reasoning", "parts"], "additionalProperties": False}
        user = ("\n\n".join(self._quote(c, k) for k, c in enumerate(chunks, start=1))
                + f"\n\nQuestion: {question}\nIts parts:\n"
                + "\n".join(f"({k}) {x}" for k, x in enumerate(parts, start=1))
                + f"\n\nFor each part in turn, say what it needs and whether these passages give it; then, for each "
                  f"of the {n} parts, copy the exact words of the passages that answer it (\"\" if none do) and "
                  "score it (1–5) from these passages alone.")
        out = self._ask("querygen: judge parts", "querygen_judge_parts", user, schema, 600, cancel)
        if out is None:
            return None, [None] * n, "the judge's output was unusable"
        shown = [c.indexed_text[:PASSAGE_CHARS] for c in chunks]
        scores: list[int | None] = []
        notes = []
        for k, (p, asked) in enumerate(zip(out.get("parts", []), parts), start=1):
            score = parse_score(p.get("score"))
            quoting = [c for c, t in zip(chunks, shown) if printed_in(str(p.get("quote", "")), t)]
            if score is not None and score > 1 and not quoting:
                notes.append(f"part {k}: scored {score}, but its quote is not printed in these passages: 1")
                score = 1
            elif score is not None and score > 1 and (wrong := self._not_of(asked, quoting)):
                notes.append(f"part {k}: scored {score}, but {wrong}: 1")
                score = 1
            scores.append(score)
        low = None if len(scores) != n or None in scores else min(s for s in scores if s is not None)
        return low, scores, " ".join([*str(out.get("reasoning", "")).split(), *notes])

    def _not_of(self, question: str, chunks: Sequence[Chunk]) -> str:
        """Why passages that print a part's quote still cannot answer it: the part names companies none of their
        filings is of, or asks about a fiscal year they are all too early to report (a filing reports its own
        year and earlier ones); "" when neither."""
        identities = [f.identity for c in chunks if (f := self.library.filing(c.filing_id)) is not None]
        if len(identities) != len(chunks):
            return ""
        named = parse_intent(question, self.refs).issuers
        if named and not {i.company_key for i in identities} & set(named):
            return f"it names {', '.join(named)}, and the quoted filing is {identities[0].company_key}'s"
        asked = asked_periods(question).fiscal_years
        years = [i.fiscal_year for i in identities]
        if asked and None not in years and max(y for y in years if y is not None) < min(asked):
            return f"it asks about FY{min(asked)}, which the quoted filing cannot report"
        return ""

    # -- the run --------------------------------------------------------------------------------------
    def run(self, filings: Sequence[Filing], single: int, multi: int, seed: int, out: Path,
            progress: Callable[[str, int, int], None] | None = None,
            cancel: Callable[[], bool] | None = None) -> Summary:
        """Generate, judge and filter; resumable from ``out``'s progress file. Writes the outputs at the end."""
        if not filings:
            raise EngineError("no filings selected: nothing to generate questions from")
        rng = random.Random(seed)
        log = ProgressLog(out.with_name(out.name + ".progress.jsonl"))
        done = log.read()
        chunks = self.passages(filings, single, rng)
        by_id = {c.id: c for c in chunks}
        total = len(chunks) + multi
        step = 0

        def tick(what: str) -> None:
            nonlocal step
            step += 1
            if progress is not None:
                progress(what, step, total)
            if cancel is not None and cancel():
                raise Cancelled("cancelled by the user")

        for c in chunks:
            key = f"single:{c.id}"
            if key not in done:
                item = self.write_single(c, cancel)
                if not item.dropped:
                    item.score, item.reasoning = self.judge(item.question, [c], cancel)
                    item.dropped = _score_drop(item.score, self.threshold)
                item.kept = not item.dropped
                done[key] = log.append(item)
            tick(f"single {c.doc_name} p. {c.page_index + 1}")
        singles = [done[f"single:{c.id}"] for c in chunks if done[f"single:{c.id}"].kept]
        for kind, parts, group in self._multi_plan(singles, by_id, filings, multi, rng):
            key = f"{kind}:{','.join(str(c.id) for c in group)}"
            if key not in done:
                item = self.write_multi(kind, parts, group, cancel)
                if not item.dropped:
                    item.score, item.part_scores, item.reasoning = self.judge_parts(item.question, item.parts, group,
                                                                                    cancel)
                    item.dropped = _score_drop(item.score, self.threshold)
                if not item.dropped:  # eq. 8: more answerable with all its passages than with any one
                    alone = [self.judge_parts(item.question, item.parts, [c], cancel) for c in group]
                    item.single_scores = [a[0] for a in alone]
                    item.single_part_scores = [a[1] for a in alone]
                    best = max((s or 0) for s in item.single_scores)
                    if item.score is not None and item.score <= best:
                        item.dropped = (f"dependency (eq. 8): one passage alone scores {best}, all together "
                                        f"{item.score}")
                item.kept = not item.dropped
                done[key] = log.append(item)
            tick(f"{kind} {', '.join(c.doc_name for c in group)}")
        items = [it for it in done.values()]
        self._deduplicate(items)
        summary = Summary()
        for it in items:
            summary.generated[it.kind] += 1
            if it.kept:
                summary.kept[it.kind] += 1
            else:
                summary.dropped[f"{it.kind}: {it.dropped.split(':')[0]}"] += 1
        write_outputs(items, out, summary)
        return summary

    def _multi_plan(self, singles: Sequence[Item], by_id: dict[int, Chunk], filings: Sequence[Filing], n: int,
                    rng: random.Random) -> Iterable[tuple[str, list[Item], list[Chunk]]]:
        """Up to ``n`` multi-document groups, the three kinds in turn: two questions on one company (topic
        merging), two question/passage pairs of one filing (context deepening), two table passages of different
        filings that share a metric (compare / contrast: two companies, or one company in two years)."""
        by_company: dict[str, list[Item]] = {}
        by_doc: dict[str, list[Item]] = {}
        for it in singles:
            by_company.setdefault(it.company or it.sources[0].doc_name.split("_")[0], []).append(it)
            by_doc.setdefault(it.sources[0].doc_name, []).append(it)
        merges = [g for g in by_company.values() if len(g) >= 2]
        deepens = [g for g in by_doc.values() if len(g) >= 2]
        compares = self._comparable(filings, rng)
        made = 0
        seen: set[tuple[str, tuple[int, ...]]] = set()
        for _attempt in range(n * 4):
            if made >= n:
                break
            kind = ("topic-merge", "deepen", "compare")[_attempt % 3]
            if kind == "compare":
                if not compares:
                    continue
                group_chunks, parts = list(compares.pop()), []
            else:
                pools = merges if kind == "topic-merge" else deepens
                if not pools:
                    continue
                parts = rng.sample(rng.choice(pools), 2)
                group_chunks = [by_id[p.sources[0].chunk_id] for p in parts]
            sig = (kind, tuple(sorted(c.id for c in group_chunks)))
            if sig in seen:
                continue
            seen.add(sig)
            made += 1
            yield kind, parts, group_chunks

    def _comparable(self, filings: Sequence[Filing], rng: random.Random) -> list[tuple[Chunk, Chunk]]:
        """Pairs of table passages from two filings whose cards report the same metric: two companies' filings
        for the same fiscal year, or one company's for two years (what a comparison can ask of both)."""
        by_metric: dict[str, list[Chunk]] = {}
        who = {f.id: (f.identity.company_key, f.identity.fiscal_year) for f in filings}
        for f in filings:
            tables, _, cards = self._usable(f)
            for c in tables:
                for m in cards[c.id].metrics[:3]:
                    by_metric.setdefault(m, []).append(c)
        pairs = []
        for m in sorted(by_metric):
            per_filing = sorted({c.filing_id: c for c in by_metric[m]}.values(), key=lambda c: c.id)
            comparable = [(a, b) for i, a in enumerate(per_filing) for b in per_filing[i + 1:]
                          if (who[a.filing_id][0] == who[b.filing_id][0]) != (who[a.filing_id][1] == who[b.filing_id][1])]
            if comparable:
                pairs.append(rng.choice(comparable))
        rng.shuffle(pairs)
        return pairs

    def _deduplicate(self, items: Sequence[Item]) -> None:
        """Drop a kept question whose embedding is within ``duplicate_cosine`` of an earlier kept one."""
        kept = [it for it in items if it.kept]
        if len(kept) < 2:
            return
        vecs = np.asarray(self.embedder.embed_batch([it.question for it in kept]), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
        for i, it in enumerate(kept):
            sims = vecs[:i] @ vecs[i]
            earlier = [j for j in np.flatnonzero(sims >= self.duplicate_cosine) if kept[j].kept]
            if earlier:
                it.kept = False
                it.dropped = f"duplicate: near-identical to {kept[earlier[0]].key}"


def _score_drop(score: int | None, threshold: int) -> str:
    if score is None:
        return "answerability: the judge gave no usable score"
    return f"answerability: score {score} below {threshold}" if score < threshold else ""


class ProgressLog:
    """Finished items, one JSON line each, keyed; a torn last line (a kill mid-write) is ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Item]:
        done: dict[str, Item] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    item = Item.from_json(json.loads(line))
                except (json.JSONDecodeError, TypeError, KeyError):
                    continue
                done[item.key] = item
        return done

    def append(self, item: Item) -> Item:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
        return item


def write_outputs(items: Sequence[Item], out: Path, summary: Summary) -> None:
    """The question set (kept questions, the eval's JSONL), every item for review (CSV and Markdown), the summary."""
    kept = [it for it in items if it.kept]
    _atomic(out, "".join(json.dumps(it.eval_row(), ensure_ascii=False) + "\n" for it in kept))
    rows = [["kept", "kind", "question", "answer", "answer from", "score", "single scores", "parts", "dropped",
             "repaired", "sources", "evidence", "reasoning"]]
    for it in items:
        rows.append(["yes" if it.kept else "no", it.kind, it.question, it.answer, it.answer_source,
                     "" if it.score is None else str(it.score), " ".join(str(s) for s in it.single_scores),
                     " | ".join(it.parts),
                     it.dropped, it.repaired, "; ".join(f"{s.doc_name} p. {s.page_index + 1}" for s in it.sources),
                     " | ".join(s.evidence for s in it.sources), it.reasoning])
    csv_path = out.with_suffix(".review.csv")
    with csv_path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([[safe_cell(c) for c in r] for r in rows])
    md = ["# Generated questions", "", *summary.lines(), ""]
    for it in kept:
        md += [f"## {it.kind}: {it.question}", "",
               f"- answer ({it.answer_source}): {it.answer}",
               f"- answerability {it.score}" + (f" (each passage alone: {it.single_scores})" if it.single_scores else ""),
               *[f"- part {k}: {x} (scores {it.part_scores[k - 1] if k <= len(it.part_scores) else '–'} with all "
                 f"passages; alone: {[ps[k - 1] for ps in it.single_part_scores if k <= len(ps)]})"
                 for k, x in enumerate(it.parts, start=1)],
               *[f"- {s.doc_name} p. {s.page_index + 1}: “{s.evidence}”" for s in it.sources],
               f"- judge: {it.reasoning}", ""]
    out.with_suffix(".review.md").write_text("\n".join(md), encoding="utf-8")
    _atomic(out.with_suffix(".summary.json"), json.dumps(
        {"generated": dict(summary.generated), "kept": dict(summary.kept), "dropped": dict(summary.dropped)},
        indent=2))


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def select_filings(library: Library, selection: str | None) -> list[Filing]:
    """Filings by comma-separated doc names, globs ("3M_*") or tickers; all of them without a selection."""
    import fnmatch

    filings = library.filings()
    if not selection:
        return filings
    pats = [p.strip() for p in selection.split(",") if p.strip()]
    return [f for f in filings if any(fnmatch.fnmatch(f.identity.doc_name, p) or
                                      (f.identity.ticker or "").upper() == p.upper() for p in pats)]
