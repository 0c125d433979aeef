"""Training pairs mined from the library: templated questions, their evidence chunk, and hard negatives.

HiREC §4.1.2 fine-tunes the passage reranker on (question, evidence table) pairs with ``n_neg = 8``
negatives per positive. FilingLens has no labelled questions for a user's corpus, so it writes them:

- **table rows**: a statement row ``Total revenue .... $ 6,776 $ 6,441`` under a column header
  ``2022 2021`` gives "What was total revenue for Harborview Therapeutics Corp. in fiscal 2022?";
  the positive is the chunk holding the row.
- **narrative facts**: a sentence with a metric word (:func:`engine.intent.find_metrics`) and an amount,
  "Net income was $1,308 million", gives a question about that metric in the sentence's period.

- **written by the chat model** (``writer``, ``llm_share``): the model rewords a share of the templated
  questions in an analyst's words ("How much did 3M spend on capital projects in 2018?"); the fact and
  its evidence stay the template's, so a model question is only as right as the mined fact, and one that
  loses the period or gives the answer away is refused (:func:`write_question`).

Every passage is the text the pipeline scores: ``f"{filing_title(filing)}\\n{chunk.indexed_text}"``.

Negatives, hardest first: the same row label or metric in *other* filings (another year, another
company: the near-duplicates a reranker must tell apart by period and issuer), then other pages of the
same filing ranked high by BM25 for the question, then any chunk. A negative is never on the
positive's page and never contains the answer value: the prior-year column of next year's 10-K, or the
MD&A sentence restating a table figure, answers the question too and would be a false negative.

The split is by filing: held-out filings give the evaluation examples, and an example draws its
positive *and* its negatives only from filings of its own split, so evaluation never sees a chunk the
model was trained on. Everything is a pure function of the library, the arguments and ``seed``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.chunking import FOOTNOTE_MARK, is_header_row, parse_row
from engine.errors import EngineError
from engine.intent import find_metrics, metric_named_by, metric_spans
from engine.records import Chunk, Filing
from engine.retrieval.hierarchical import filing_title
from engine.retrieval.postings import FilingLexicon
from engine.settings import PromptSettings, Settings
from engine.store.library import Library
from engine.vocab.numbers import NUMERAL, numerals_in

if TYPE_CHECKING:
    from engine.models.base import ChatMessage, ChatModel

log = logging.getLogger(__name__)

TRAIN, HELDOUT = "train", "heldout"
KIND_TABLE, KIND_NARRATIVE = "table-row", "narrative"
SOURCE_TEMPLATE, SOURCE_LLM = "template", "llm"

# Negative sources, in the order they are filled.
NEG_NEAR_DUPLICATE = "near-duplicate"  # same label/metric, another filing (other year or company)
NEG_SAME_FILING = "same-filing"  # another page of the positive's filing, high BM25 for the question
NEG_BM25 = "bm25"  # high BM25 for the question anywhere in the split
NEG_RANDOM = "random"


@dataclass(frozen=True)
class MinedPassage:
    """A passage as the reranker sees it, with where it comes from."""

    doc_name: str
    filing_id: int
    page: int
    chunk_id: int
    text: str  # filing title, newline, chunk.indexed_text


@dataclass(frozen=True)
class MinedExample:
    """One templated question with its evidence passage and ``n_neg`` hard negatives.

    Attributes:
        query: The question.
        positive: The chunk holding the fact the question asks for.
        negatives: Passages that do not answer it, hardest first.
        negative_sources: Why each negative was chosen (``near-duplicate``, ``same-filing``, ``bm25``,
            ``random``).
        kind: ``table-row`` or ``narrative``.
        answer: The value the question asks for, as printed (e.g. ``"6,776"``).
        split: ``train`` or ``heldout`` (by filing).
    """

    query: str
    positive: MinedPassage
    negatives: tuple[MinedPassage, ...]
    negative_sources: tuple[str, ...]
    kind: str
    answer: str
    split: str
    question_source: str = SOURCE_TEMPLATE  # "template" or "llm" (written by the chat model)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> MinedExample:
        return cls(
            query=d["query"], positive=MinedPassage(**d["positive"]),
            negatives=tuple(MinedPassage(**n) for n in d["negatives"]),
            negative_sources=tuple(d["negative_sources"]), kind=d["kind"], answer=d["answer"],
            split=d["split"], question_source=d.get("question_source", SOURCE_TEMPLATE),
        )


def write_examples(path: Path, examples: Iterable[MinedExample]) -> None:
    """Write examples as JSONL (one example a line)."""
    from engine.files import write_atomic

    data = "".join(json.dumps(e.to_dict(), ensure_ascii=False, sort_keys=True) + "\n" for e in examples)
    write_atomic(path, data.encode("utf-8"))


def read_examples(path: Path) -> list[MinedExample]:
    try:
        with path.open(encoding="utf-8") as fh:
            return [MinedExample.from_dict(json.loads(line)) for line in fh if line.strip()]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EngineError(f"cannot read mined pairs from {path}: {exc}") from exc


def examples_digest(examples: Sequence[MinedExample]) -> str:
    """sha256 of the examples (identifies a training run's data)."""
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps(e.to_dict(), sort_keys=True).encode("utf-8"))
    return h.hexdigest()


def excluded_docs_from_questions(path: Path, library: Library | None = None) -> frozenset[str]:
    """Every filing named by an evaluation question file (its gold documents), to keep out of training.

    Args:
        path: A question file :func:`engine.eval.questions.load_questions` reads.
        library: When given, its doc names resolve Docugami-style document globs.
    """
    from engine.eval.questions import load_questions

    doc_names = [f.identity.doc_name for f in library.filings()] if library is not None else None
    questions = load_questions(Path(path), doc_names=doc_names)
    return frozenset(d for q in questions for d in q.gold_docs)


def split_filings(filings: Sequence[Filing], holdout: float, seed: int) -> frozenset[int]:
    """Ids of the held-out filings: ``round(holdout * n)`` of them (at least one when ``holdout > 0`` and
    there are two or more filings), chosen by ``seed`` from the filings sorted by doc name."""
    if not 0.0 <= holdout < 1.0:
        raise EngineError(f"holdout must be in [0, 1), got {holdout}")
    ordered = sorted(filings, key=lambda f: (f.identity.doc_name, f.id))
    n = round(holdout * len(ordered))
    if holdout > 0 and n == 0 and len(ordered) >= 2:
        n = 1
    n = min(n, max(0, len(ordered) - 1))
    random.Random(f"split:{seed}").shuffle(ordered)
    return frozenset(f.id for f in ordered[:n])


# --- facts ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Fact:
    chunk: Chunk
    kind: str
    metric: str  # what the question names (a row label or a metric name)
    anchor: str  # text that finds near-duplicates in other filings (the row label / metric)
    period: str  # "in fiscal 2022", "for the three months ended June 30, 2022", ...
    answer: str
    statement: str | None = None  # "consolidated statements of operations", for table rows


_YEAR = re.compile(r"\b((?:19|20)\d\d)\b")
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_DATE = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})\b", re.I)
_MONTHS_ENDED = re.compile(
    rf"\b(three|six|nine|twelve|thirteen|\d+)\s+(?:months|weeks)\s+end(?:ed|ing)\s+({_MONTH}\s+\d{{1,2}})",
    re.I)
_ANNUAL = re.compile(r"\b(?:years?\s+end(?:ed|ing)|fiscal\s+(?:years?)?|twelve\s+months|annual)\b", re.I)
# A statement's title line ("CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions)"), not a sentence that
# mentions one ("... outflow on the consolidated statements of cash flows."): the name must open the line.
_STATEMENT = re.compile(
    r"^\W*(?:the\s+)?((?:condensed\s+)?(?:consolidated\s+)?(?:statements?\s+of\s+(?:consolidated\s+)?"
    r"(?:cash\s+flows|income|operations|earnings|comprehensive\s+(?:income|loss)|financial\s+position|"
    r"(?:changes\s+in\s+)?(?:shareholders|stockholders)['’]?\s+(?:equity|deficit))|balance\s+sheets?|"
    r"income\s+statements?))\b", re.I)


def statement_title(line: str) -> str | None:
    """The statement a title line names, lower-cased ("consolidated statements of cash flows"), else None."""
    s = line.strip()
    if len(s) > 120 or s.endswith("."):
        return None
    m = _STATEMENT.match(s)
    return " ".join(m.group(1).lower().split()) if m else None



# Narrative sentences.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_AMOUNT = re.compile(rf"\$\s?{NUMERAL.pattern}(?:\s(?:million|billion|thousand))?")
_FULL_DATE = rf"{_MONTH}\s+\d{{1,2}},\s+\d{{4}}"
_NARR_MONTHS = re.compile(
    rf"\b(?:for\s+)?the\s+(three|six|nine|twelve)\s+months\s+ended\s+({_FULL_DATE})", re.I)
_NARR_YEAR_ENDED = re.compile(rf"\b(?:for\s+)?the\s+(?:fiscal\s+)?year\s+ended\s+({_FULL_DATE})", re.I)
_NARR_AS_OF = re.compile(rf"\bas\s+of\s+({_FULL_DATE})", re.I)
_COPULA = re.compile(r"[\s,:]*(?:(?:was|were|is|are|of|totaled|totalled|totaling|amounted\s+to|reached)\s+)?"
                     r"(?:approximately\s+|about\s+)?", re.I)
_SUBJECT = re.compile(r"(?:(?:in|during|for|as\s+of|at)\b[^,;:]{0,60},\s*)?(?:(?:our|the|total|consolidated|"
                      r"company['’]s|its)\s+)*", re.I)
_NARR_IN_YEAR = re.compile(  # "$6,776 million in 2022": the year right after the amount
    r"^\W*(?:million|billion|thousand)?\s*(?:in|for|during)\s+(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)\b",
    re.I)


def _cap_date(text: str) -> str:
    return " ".join(w.capitalize() if w.isalpha() else w for w in text.split())


def _is_header(line: str) -> bool:
    """A column header as chunking finds them (:func:`engine.chunking.is_header_row`) that is mostly years
    and period words, not a statement row or a sentence that mentions a period."""
    if not is_header_row(line) or parse_row(line) is not None:
        return False
    years = _YEAR.findall(line)
    periodic = bool(_DATE.search(line) or _ANNUAL.search(line))
    return len(years) >= 2 or (len(_YEAR.sub("", line).split()) <= 8 and periodic)


def _period_phrase(phrase: str, years: list[str], j: int, form: str | None) -> str:
    year = years[j]
    dates = [f"{mo} {d}" for mo, d in _DATE.findall(phrase)]
    date = (dates[j] if len(dates) == len(years) else dates[0]) if dates else None
    m = _MONTHS_ENDED.search(phrase)
    if m:
        return f"for the {m.group(1).lower()} months ended {_cap_date(date or m.group(2))}, {year}"
    if _ANNUAL.search(phrase):
        return f"in fiscal {year}"
    if date:
        return f"as of {_cap_date(date)}, {year}"
    return f"in fiscal {year}" if form == "10-K" else f"in {year}"


def _table_facts(chunk: Chunk, form: str | None) -> list[_Fact]:
    facts: list[_Fact] = []
    header: tuple[list[str], str] | None = None  # (years, phrase) of the nearest header above
    statement: str | None = None
    section: str | None = None  # "Net sales:" above "Products  96,458  96,388" qualifies the row
    ctx_parts = [p.strip() for p in chunk.context.split(" | ")] if chunk.context else []
    if ctx_parts and _YEAR.search(ctx_parts[-1]):
        header = (_YEAR.findall(ctx_parts[-1]), " ".join(ctx_parts))
        statement = next((t for p in ctx_parts if (t := statement_title(p))), None)
    prev = ""
    for line in chunk.text.splitlines():
        s = line.strip()
        if not s:
            section = None
            continue
        if parse_row(s) is None and (title := statement_title(s)):
            statement = title
        if _is_header(s):
            header, section = (_YEAR.findall(s), f"{prev} {s}"), None
            prev = s
            continue
        row = parse_row(s)
        if row is None:
            if s.endswith(":") and len(s) <= 80:
                section = FOOTNOTE_MARK.sub("", s.rstrip(":").strip())
            prev = s
            continue
        label, values = row
        if header is None or len(values) != len(header[0]) or len(set(header[0])) != len(header[0]):
            continue  # unaligned, or several column groups with the same years (ambiguous)
        if _DATE.search(label) or _YEAR.search(label):
            continue  # a maturity schedule ("December 31, 2017  9,993"), not a metric
        if section and section.lower() not in label.lower():
            metric = f"{section} - {label}"
        elif len(label.split()) == 1 and not find_metrics(label):
            continue  # "Diluted", "Current": meaningless without their section
        else:
            metric = label
        years, phrase = header
        for j, value in enumerate(values):
            answer = value.strip("()%-")
            if not re.search(r"[1-9]", answer):
                continue  # dashes and zeros answer nothing
            period = _period_phrase(phrase, years, j, form)
            facts.append(_Fact(chunk, KIND_TABLE, metric, label, period, answer, statement))
    return facts


def _filing_period(f: Filing) -> str | None:
    i = f.identity
    if i.form == "10-K" and i.fiscal_year:
        return f"in fiscal {i.fiscal_year}"
    if i.period and re.fullmatch(r"\d{4}Q[1-4]", i.period):
        ordinal = ("first", "second", "third", "fourth")[int(i.period[-1]) - 1]
        return f"in the {ordinal} quarter of {i.period[:4]}"
    if i.fiscal_year:
        return f"in {i.fiscal_year}"
    return None


def _narrative_facts(chunk: Chunk, filing: Filing) -> list[_Fact]:
    text = " ".join(chunk.text.split())
    facts: list[_Fact] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        if len(sentence) > 600 or not find_metrics(sentence):
            continue
        amounts = list(_AMOUNT.finditer(sentence))
        if len(amounts) > 4 or any(re.fullmatch(r"[\s()$\d,.%—–-]*", sentence[a.end() : b.start()])
                                   for a, b in zip(amounts, amounts[1:])):
            continue  # table cells run together, not prose
        seen: set[str] = set()
        for k, m in enumerate(amounts):
            # The amount must be the metric's value: "Net income was $1,308", not "an increase in net
            # income of $12", "deferred revenue of $1,070" or "the dividend from $0.22 to $0.24".
            start = amounts[k - 1].end() if k else 0
            spans = metric_spans(sentence[start : m.start()])
            if not spans or spans[-1][0] in seen:
                continue
            metric, m_start, m_end = spans[-1]
            if not _COPULA.fullmatch(sentence[start + m_end : m.start()]):
                continue
            # ... and the company's own figure, the metric being what the sentence is about ("During fiscal
            # 2021, cash provided by operations was $2,983 million"), not "Sam's Club had net sales",
            # "the Business segment's revenues", "Fios service revenue" or "we expect restructuring charges".
            if not _SUBJECT.fullmatch(sentence[: start + m_start]):
                continue
            seen.add(metric)
            after = sentence[m.end() : amounts[k + 1].start() if k + 1 < len(amounts) else len(sentence)]
            period = None
            y = _NARR_IN_YEAR.search(after)
            if y:
                period = f"in {y.group(1)}"
            else:
                for probe in (after, sentence):
                    if (mm := _NARR_MONTHS.search(probe)):
                        period = f"for the {mm.group(1).lower()} months ended {_cap_date(mm.group(2))}"
                    elif (mm := _NARR_YEAR_ENDED.search(probe)):
                        period = f"for the fiscal year ended {_cap_date(mm.group(1))}"
                    elif (mm := _NARR_AS_OF.search(probe)):
                        period = f"as of {_cap_date(mm.group(1))}"
                    if period:
                        break
            period = period or _filing_period(filing)
            if period is None:
                continue
            answer = NUMERAL.search(m.group(0))
            if answer and re.search(r"[1-9]", answer.group(0)):
                facts.append(_Fact(chunk, KIND_NARRATIVE, metric, metric, period, answer.group(0)))
    return facts


# --- questions --------------------------------------------------------------------------------------

_TEMPLATES = (
    "What was {metric} for {who} {period}?",
    "What was {whose} {metric} {period}?",
    "How much did {who} report as {metric} {period}?",
    "{Period}, what was the {metric} of {who}?",
    "{who}: {metric} {period}?",
)
_STATEMENT_TEMPLATE = "According to its {statement}, what was {whose} {metric} {period}?"
_SUFFIX = re.compile(
    r"[,\s&]+(?:inc\.?|incorporated|corp\.?|corporation|co\.?|company|plc|ltd\.?|llc|n\.v\.|s\.a\.)$", re.I)


def _who(filing: Filing, rng: random.Random) -> str:
    i = filing.identity
    names = [n for n in (i.registrant, i.registrant, _SUFFIX.sub("", i.registrant or "") or None, i.ticker,
                         i.issuer_key) if n]
    return rng.choice(names) if names else i.doc_name


def _question(fact: _Fact, filing: Filing, rng: random.Random) -> str:
    metric = fact.metric
    if fact.kind == KIND_TABLE:
        canonical = metric_named_by(metric)
        if canonical and rng.random() < 0.3:
            metric = canonical  # a synonym, so questions do not always repeat the row label verbatim
        elif not (metric.isupper() and len(metric) <= 5):
            metric = metric.lower()
    who = _who(filing, rng)
    whose = f"{who}'" if who.endswith("s") else f"{who}'s"
    if fact.statement and rng.random() < 0.2:
        template = _STATEMENT_TEMPLATE
    else:
        template = rng.choice(_TEMPLATES)
    return template.format(metric=metric, who=who, whose=whose, period=fact.period,
                           Period=fact.period[:1].upper() + fact.period[1:], statement=fact.statement)


_QUESTION_SCHEMA = {"type": "object", "properties": {"question": {"type": "string", "maxLength": 220}},
                    "required": ["question"], "additionalProperties": False}


def write_question(fact_metric: str, period: str, answer: str, who: str, passage: str,
                   chat: ChatModel, prompts: PromptSettings | None = None) -> tuple[str | None, str]:
    """A question the chat model writes for a fact, or None with the reason it was refused.

    The model rewords the templated question in an analyst's words; the fact (and so the label) stays the
    one the template mined. A question is kept only when it asks about the fact: it ends with "?", names
    the period's year(s), and does not give the answer away.
    """
    from engine.prompts import prompt
    from engine.trace import call_llm

    messages: list[ChatMessage] = [
        {"role": "system", "content": prompt("mining_question", prompts)},
        {"role": "user", "content": f"Passage:\n<<<\n{passage[:1400]}\n>>>\n\nCompany: {who}\n"
                                    f"Line item: {fact_metric}\nPeriod: {period}"},
    ]
    res, call = call_llm(chat, "mining question", messages, _QUESTION_SCHEMA, 64)
    if res is None:
        return None, call.error
    q = " ".join(res.data["question"].split())
    years = set(_YEAR.findall(period))
    if not q.endswith("?") or len(q) < 15:
        return None, f"not a question: {q!r}"
    if not years <= set(_YEAR.findall(q)):
        return None, f"the period {period!r} is not in {q!r}"
    if answer.replace(",", "") in numerals_in(q):
        return None, f"gives the answer away: {q!r}"
    if not _names_company(q, who):
        return None, f"does not name {who!r}: {q!r}"
    wanted = set(find_metrics(fact_metric))
    words = {w for w in re.findall(r"[a-z]{4,}", fact_metric.lower())}
    if (wanted and not wanted & set(find_metrics(q))) or (not wanted and not words & set(re.findall(r"[a-z]{4,}", q.lower()))):
        return None, f"does not ask for {fact_metric!r}: {q!r}"
    return q, ""


def _names_company(question: str, who: str) -> bool:
    q = question.lower()
    core = _SUFFIX.sub("", who).strip().lower()
    return bool(core) and (core in q or core.split()[0] in q.split() or core.split()[0] + "'s" in q)


# --- negatives --------------------------------------------------------------------------------------


class _Pool:
    """The chunks of one split, with BM25 restricted to them."""

    def __init__(self, chunks: list[Chunk], filings: dict[int, Filing], lexical: FilingLexicon) -> None:
        self.chunks = chunks
        self.by_id = {c.id: c for c in chunks}
        self.filing_ids = sorted({c.filing_id for c in chunks})
        self.filings = filings
        self.lexical = lexical
        self._numbers: dict[int, set[str]] = {}

    def numbers(self, chunk: Chunk) -> set[str]:
        if chunk.id not in self._numbers:
            self._numbers[chunk.id] = numerals_in(passage_text(chunk, self.filings[chunk.filing_id]))
        return self._numbers[chunk.id]

    def search(self, query: str, k: int, filing_ids: Sequence[int]) -> list[Chunk]:
        if not filing_ids:
            return []
        hits = self.lexical.top(query, k, filing_ids)
        return [self.by_id[cid] for cid, _ in hits if cid in self.by_id]


def passage_text(chunk: Chunk, filing: Filing) -> str:
    """The text the pipeline's reranker scores for a chunk: the filing title, then the indexed text."""
    return f"{filing_title(filing)}\n{chunk.indexed_text}"


def _passage(chunk: Chunk, filing: Filing) -> MinedPassage:
    return MinedPassage(filing.identity.doc_name, filing.id, chunk.page_index, chunk.id,
                        passage_text(chunk, filing))


def _negatives(fact: _Fact, query: str, pool: _Pool, n_neg: int,
               rng: random.Random) -> list[tuple[Chunk, str]]:
    pos = fact.chunk
    answer = fact.answer.replace(",", "")
    chosen: list[tuple[Chunk, str]] = []
    taken = {pos.id}

    def ok(c: Chunk) -> bool:
        return c.id not in taken and not (c.filing_id == pos.filing_id and c.page_index == pos.page_index) \
            and answer not in pool.numbers(c)

    def take(cands: Iterable[Chunk], source: str, limit: int, top: int) -> None:
        good = list({c.id: c for c in cands if ok(c)}.values())[:top]
        rng.shuffle(good)
        added = 0
        for c in good:
            if len(chosen) >= n_neg or added >= limit:
                return
            if ok(c):
                chosen.append((c, source))
                taken.add(c.id)
                added += 1

    others = [f for f in pool.filing_ids if f != pos.filing_id]
    n_dup = max(1, (3 * n_neg) // 8)
    anchor = " ".join(fact.anchor.lower().split())

    def mentions(c: Chunk) -> bool:
        if fact.kind == KIND_NARRATIVE:
            return fact.anchor in find_metrics(c.indexed_text)
        return anchor in " ".join(c.indexed_text.lower().split())

    near = [c for c in pool.search(query, 40, others) if mentions(c)]
    near += [c for c in pool.search(fact.anchor, 40, others) if mentions(c)]
    # Prefer one near-duplicate per filing: other years and other companies, not one filing's pages.
    by_filing: dict[int, Chunk] = {}
    for c in near:
        if ok(c):
            by_filing.setdefault(c.filing_id, c)
    take(list(by_filing.values()) + near, NEG_NEAR_DUPLICATE, n_dup, 3 * n_dup)
    take(pool.search(query, 30, [pos.filing_id]), NEG_SAME_FILING, max(1, (3 * n_neg) // 8), 8)
    take(pool.search(query, 60, pool.filing_ids), NEG_BM25, n_neg - len(chosen), 2 * n_neg)
    tries = 0
    while len(chosen) < n_neg and tries < 20 * n_neg:
        tries += 1
        c = rng.choice(pool.chunks)
        if ok(c):
            chosen.append((c, NEG_RANDOM))
            taken.add(c.id)
    return chosen


# --- mining -----------------------------------------------------------------------------------------

Progress = Callable[[int, int], None]


def mine_pairs(
    library: Library,
    settings: Settings,
    *,
    n_pairs: int,
    n_neg: int = 8,
    seed: int = 0,
    exclude_docs: Iterable[str] = (),
    holdout: float = 0.1,
    table_share: float = 0.7,
    writer: ChatModel | None = None,
    llm_share: float = 0.0,
    progress: Progress | None = None,
) -> list[MinedExample]:
    """Mine up to ``n_pairs`` examples (question, positive, ``n_neg`` negatives) from the library.

    Args:
        library: The library to mine (its BM25 index is built first when stale).
        settings: Settings (the chunking identity of the BM25 index).
        n_pairs: Examples to mine, train and held-out together (fewer when the library runs out of facts).
        n_neg: Negatives per positive (HiREC: 8). An example that cannot get that many is dropped.
        seed: Everything random (split, sampling, templates) derives from it.
        exclude_docs: Doc names that contribute neither positives nor negatives (e.g. the gold filings
            of an evaluation question file, see :func:`excluded_docs_from_questions`).
        holdout: Fraction of filings held out for evaluation (``MinedExample.split == "heldout"``).
        table_share: Target fraction of table-row questions; narrative facts fill the rest.
        writer: A chat model that rewords questions in an analyst's words (see :func:`write_question`).
        llm_share: Fraction of examples whose question the ``writer`` writes (a refused one keeps the
            template's); 0 without a writer.
        progress: ``progress(done, total)`` while negatives are mined.

    Returns:
        Examples in a seed-determined order.
    """
    if n_pairs < 0 or n_neg < 1:
        raise EngineError(f"n_pairs must be >= 0 and n_neg >= 1 (got {n_pairs}, {n_neg})")
    if not 0.0 <= llm_share <= 1.0:
        raise EngineError(f"llm_share must be in [0, 1], got {llm_share}")
    writer_share = llm_share if writer is not None else 0.0
    excluded = set(exclude_docs)
    filings = {f.id: f for f in library.filings() if f.identity.doc_name not in excluded}
    if not filings:
        return []
    lex = FilingLexicon(library)  # BM25 inside a split's filings, from the terms stored with them
    heldout = split_filings(list(filings.values()), holdout, seed)
    # In document order, not id order: the same corpus ingested in another order mines the same examples.
    all_chunks = sorted(library.chunks_of_filings(sorted(filings)),
                        key=lambda c: (c.doc_name, c.page_index, c.char_start, c.id))
    pools = {
        split: _Pool([c for c in all_chunks if (c.filing_id in heldout) == (split == HELDOUT)], filings, lex)
        for split in (TRAIN, HELDOUT)
    }

    # Facts, grouped by chunk; chunks in a seeded order so a large library is only scanned as far as needed.
    rng = random.Random(f"mine:{seed}")
    order = list(all_chunks)
    rng.shuffle(order)
    groups: dict[str, list[list[_Fact]]] = {KIND_TABLE: [], KIND_NARRATIVE: []}
    want = {KIND_TABLE: round(n_pairs * table_share), KIND_NARRATIVE: n_pairs - round(n_pairs * table_share)}
    counts: defaultdict[str, int] = defaultdict(int)
    for chunk in order:
        if all(counts[k] >= 3 * max(want[k], 1) + 20 for k in groups):
            break
        f = filings[chunk.filing_id]
        facts = _table_facts(chunk, f.identity.form)
        if not facts:
            facts = _narrative_facts(chunk, f)
        for kind in groups:
            mine = [x for x in facts if x.kind == kind]
            if mine:
                rng.shuffle(mine)
                groups[kind].append(mine)
                counts[kind] += len(mine)

    # Round-robin over chunks (one fact per chunk per round) so examples spread over the library.
    def round_robin(chunks_facts: list[list[_Fact]]) -> list[_Fact]:
        out: list[_Fact] = []
        depth = 0
        while True:
            layer = [fs[depth] for fs in chunks_facts if depth < len(fs)]
            if not layer:
                return out
            out.extend(layer)
            depth += 1

    queues = {k: deque(round_robin(v)) for k, v in groups.items()}
    examples: list[MinedExample] = []
    seen_queries: set[str] = set()
    quota = dict(want)
    for kind in (KIND_TABLE, KIND_NARRATIVE):
        other = KIND_NARRATIVE if kind == KIND_TABLE else KIND_TABLE
        made = _make(queues[kind], quota[kind], filings, heldout, pools, n_neg, rng, seen_queries, examples,
                     progress, n_pairs, writer, writer_share, settings.prompts)
        quota[other] += quota[kind] - made  # a shortfall of one kind is filled by the other
    if len(examples) < n_pairs and queues[KIND_TABLE]:
        _make(queues[KIND_TABLE], n_pairs - len(examples), filings, heldout, pools, n_neg, rng, seen_queries,
              examples, progress, n_pairs, writer, writer_share, settings.prompts)
    rng.shuffle(examples)
    log.info("mined %d examples (%d held out, %d questions written by the model) from %d filings", len(examples),
             sum(e.split == HELDOUT for e in examples), sum(e.question_source == SOURCE_LLM for e in examples),
             len(filings))
    return examples


def _make(queue: deque[_Fact], quota: int, filings: dict[int, Filing], heldout: frozenset[int],
          pools: dict[str, _Pool], n_neg: int, rng: random.Random, seen: set[str], out: list[MinedExample],
          progress: Progress | None, total: int, writer: ChatModel | None, writer_share: float,
          prompts: PromptSettings) -> int:
    made = 0
    while queue and made < quota:
        fact = queue.popleft()
        filing = filings[fact.chunk.filing_id]
        query = _question(fact, filing, rng)
        if query.lower() in seen:
            continue
        split = HELDOUT if filing.id in heldout else TRAIN
        negs = _negatives(fact, query, pools[split], n_neg, rng)
        if len(negs) < n_neg:
            continue
        seen.add(query.lower())
        source = SOURCE_TEMPLATE
        # Its own random stream, so a writer changes the wording of questions and nothing else mined.
        wrng = random.Random(f"write:{query}")
        if writer is not None and wrng.random() < writer_share:
            written, why = write_question(fact.metric, fact.period, fact.answer, _who(filing, wrng),
                                          fact.chunk.indexed_text, writer, prompts)
            if written is not None and written.lower() not in seen:
                query, source = written, SOURCE_LLM
                seen.add(query.lower())
            else:
                log.info("kept the template question %r: %s", query, why or "a duplicate")
        out.append(MinedExample(
            query=query, positive=_passage(fact.chunk, filing),
            negatives=tuple(_passage(c, filings[c.filing_id]) for c, _ in negs),
            negative_sources=tuple(s for _, s in negs), kind=fact.kind, answer=fact.answer, split=split,
            question_source=source,
        ))
        made += 1
        if progress:
            progress(len(out), total)
    return made
