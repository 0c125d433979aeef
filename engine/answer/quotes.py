"""Written answers an analyst can quote: the evidence sentences of the retrieved passages, ranked without a model
call, then one short synthesis that the model may write only from them, checked sentence by sentence.

1. **Quotes.** Every sentence of the passages (a narrative paragraph split at its sentence ends; a table row as a
   row) is a candidate, with its exact characters on the page; running headers, footers and headings are not.
   Candidates are ranked by reciprocal-rank fusion of the question's similarity (the retrieval embedder), BM25 over
   the candidates (the product's tokenizer), the passage's own rank (shared by its sentences), for a question
   that asks of sections, whether the sentence is printed in one of them (the best-fitting kind first: a note headed
   "Legal Proceedings" before the other notes), and for a question that asks why or what drove a change, whether
   the sentence states a cause ("due to", "driven by", "reflecting"); the question's words are what it asks about
   (``QueryIntent.about``: not the words that only chose where to look). The best
   ``answer.quotes`` are kept, at most ``answer.quotes_per_passage`` from one passage, a sentence another filing
   repeats word for word once.
2. **Synthesis.** One model call sees only the numbered quotes (and the metrics the engine computed) and writes at
   most three sentences, each naming the quotes it rests on, under a JSON schema that allows only shown numbers.
3. **Checks** (the engine, not the model): a sentence is refused when it states a figure that no quote it cites
   prints (nor the engine computed), when most of its words are in none of its quotes, when it only restates the
   question ("Yes, X increased its debt": no word of its own), or when it is degenerate (a phrase repeated, mostly
   non-letters, a sentence said twice), or when it states again a metric the engine already answered (a compound
   question's number) with a figure other than the computed one ("invested $2.1 billion in R&D" beside R&D of
   6,844 millions computed from the statements: a figure printed in a quote, but not the amount asked). Refused
   sentences are named in the reason; when none is left the quotes stand alone as the answer.

Quoted text is data: it is fenced in the prompt as the passages are, and nothing in it changes what runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from typing import Any

import numpy as np

from engine.answer.generate import NOT_ANSWERABLE, YEAR, ground_text, passage_numbers, printed_in
from engine.chunking import is_header_row, is_table_row
from engine.intent.issuers import not_names
from engine.intent.keywords import lexical_terms
from engine.intent.periods import dates_in
from engine.intent.shape import core_question, if_any_vocab, is_numeric
from engine.intent.wordlists import states_a_cause, whole_words, word_set
from engine.models.base import ChatMessage, ChatModel, Embedder
from engine.pages import page_number, reader_page
from engine.prompts import prompt
from engine.records import AnswerResult, Citation, LlmCall, Passage, QueryIntent, Quote, period_years
from engine.retrieval.fusion import rrf
from engine.settings import AnswerSettings, PromptSettings
from engine.trace import call_llm
from engine.vocab.catalogue import formula_terms, load_catalogue
from engine.vocab.lexicon import find_metrics
from engine.vocab.numbers import MENTION, NUMBER, SCALE_EXPONENTS, parse_number, scale_word
from engine.vocab.sections import vocab as section_vocab
from engine.vocab.tokens import bm25, chunk_terms, idf, query_terms, term_id, tokenizer

__all__ = ["QuoteAnswer", "Settled", "answer_from_quotes", "candidate_sentences", "check_sentence",
           "content_stems", "select_quotes"]

_END = re.compile(r"(?<=[.!?])[\"”’)\]]*\s+(?=[\"“(\[]?[A-Z0-9$])")
_ABBREV = re.compile(r"(?:\b(?:U\.S|Inc|Corp|Co|Ltd|No|Nos|Mr|Mrs|Ms|Dr|St|vs|approx|etc|e\.g|i\.e|Jan|Feb|Mar|Apr|"
                     r"Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b[A-Z])\.$")
_BULLET = re.compile(r"^\s*[•●▪◦■\-–]\s+")
_MIN_CHARS = 40
_MAX_CHARS = 600
_SUPPORT = 0.5  # share of a sentence's own words its quotes must print
_OWN_CHECKED = 2  # from how many words of its own (content words not in the question) a sentence's are checked
_RRF_K = 60
_HEADLINE_WORDS = 12
_LATIN_END = 0x24F  # the last Latin letter (Latin Extended-B): the scripts of an English filing's words
_COPIED = 0.8  # share of a quote's words a synthesis sentence that only copies it says
_TITLE_SHARE = 0.6  # share of a unit's longer words in capitals that makes it a headline, not a sentence
_FEWEST_QUOTES = 2  # quotes made up with sentences that share no word of the question, when fewer share one
_VERDICT_WORDS = frozenset({"yes", "no", "not", "inde"})  # stems: a verdict's words are not content


@dataclass(frozen=True)
class QuoteAnswer:
    result: AnswerResult
    calls: tuple[LlmCall, ...]


@dataclass(frozen=True)
class Settled:
    """A metric the engine answered beside the written answer (a compound question's number): the lexicon's
    canonical ``metric``, its ``value`` in ``unit`` ("USD millions", "percent"), and ``words`` naming it with its period."""

    metric: str
    value: float
    unit: str
    words: str


# a figure that is a move, not the level: "increased $1.2 billion", "rose by 12%", "up 8%" ("increased to $6.8
# billion" states the level)
_CHANGE_BEFORE = re.compile(r"\b(?:increas|decreas|rise|rising|rose|fell|fall|grew|grow|declin|drop|climb|jump|"
                            r"up|down|higher|lower|more|less|change)\w*\s+(?:by\s+)?(?:(?:approximately|about|"
                            r"nearly|almost|roughly|some|over)\s+)?$", re.IGNORECASE)


def _misstated(text: str, settled: Sequence[Settled]) -> str:
    """Why ``text`` restates a settled metric wrongly ("" when it does not): it names the metric and states a figure
    of its kind (an amount for an amount, a percentage for a rate) that is not the computed value as written
    (rounded to the figure's decimals, at its scale word)."""
    named = set(find_metrics(text))
    for s in settled:
        if s.metric not in named:
            continue
        percent = s.unit.strip() in ("percent", "%")
        if not percent and not s.unit.startswith("USD"):
            continue  # (a ratio, days, a count: no figure of the sentence is surely of its kind)
        unit_scale = next((10.0 ** SCALE_EXPONENTS[w] for w in map(scale_word, s.unit.split()[1:]) if w), 1.0)
        for m in MENTION.finditer(text):
            if bool(m["pct"] or m["pct2"]) != percent or _CHANGE_BEFORE.search(text[:m.start()]):
                continue  # (another kind, or the metric's change: "increased $1.2 billion", "rose by 12%")
            digits = m["num"].replace(",", "")
            if YEAR.match(digits) and not (m["cur0"] or m["cur"] or m["word"] or m["abbr"]):
                continue
            places = len(digits.split(".", 1)[1]) if "." in digits else 0
            said = float(digits)
            if percent:
                forms = [abs(s.value)]
            elif (word := scale_word(m["word"] or m["abbr"] or m["letter"])) is not None:
                forms = [abs(s.value) * unit_scale / 10.0 ** SCALE_EXPONENTS[word]]
            else:  # as the statement prints it, or a thousand times larger or smaller
                forms = [abs(s.value) * f for f in (1, 1000, 0.001)]
            if not any(round(f, places) == round(said, places) for f in forms):
                value = f"{abs(s.value):,.{0 if abs(s.value) >= 100 else 2}f}"
                return f"it states {m[0].strip()} for {s.words}, which the statement facts compute as " \
                       f"{value}{'%' if percent else ' ' + s.unit}"
    return ""


def candidate_sentences(passage: Passage) -> list[tuple[int, int]]:
    """The quotable units of a passage as (start, end) characters of its chunk's text: sentences of its
    paragraphs (a blank line or a bullet starts a new one), a headline paragraph of one short sentence together with
    the sentence that opens the next, and table rows one by one."""
    text = passage.chunk.text
    out: list[tuple[int, int]] = []
    para: list[tuple[int, int]] = []  # line spans of the paragraph being read
    lead: list[tuple[int, int]] = []  # a one-sentence paragraph of few words (a risk factor's headline) waiting

    def flush() -> None:
        if len(para) >= 2 and _heading_line(text[para[0][0]:para[0][1]]):
            para.pop(0)  # a running header or heading printed on the line above ("Table of Contents"): no sentence's
        if not para:
            return
        start, end = para[0][0], para[-1][1]
        cut = start
        found = []
        for m in _END.finditer(text, start, end):
            if _ABBREV.search(text[max(start, m.start() - 6) : m.start()]):
                continue
            found.append((cut, m.start()))
            cut = m.end()
        found.append((cut, end))
        # a sentence that only goes on about the one before ("This represents increases of 3.0% in 2022") is
        # quoted with it: alone it says nothing of what it is about
        k = 1
        while k < len(found):
            if _GOES_ON.match(text, found[k][0]) and found[k][1] - found[k - 1][0] <= _MAX_CHARS:
                found[k - 1:k + 1] = [(found[k - 1][0], found[k][1])]
            else:
                k += 1
        # (a list's item is no headline, nor a heading or running header without a sentence's end, nor the end of a
        # sentence the chunk before holds: "time of its termination." would hide the sentence after it)
        headline = (len(found) == 1 and len(text[found[0][0] : found[0][1]].split()) <= _HEADLINE_WORDS
                    and not _BULLET.match(text[start:end]) and not _heading_line(text[start:end])
                    and not text[start:start + 1].islower())
        if lead and not headline:  # a headline is quoted with the sentence that opens its body
            found[0] = (lead.pop()[0], found[0][1])
        out.extend(lead)
        lead.clear()
        (lead if headline else out).extend(found)
        para.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        s, e = pos, pos + len(line.rstrip("\n"))
        pos += len(line)
        if not line.strip():
            flush()
        elif is_table_row(line):
            flush()
            out.extend(lead)
            lead.clear()
            out.append((s, e))
        else:
            if _BULLET.match(line):
                flush()
            para.append((s, e))
    flush()
    out.extend(lead)
    spans = []
    for s, e in _lists_joined(text, _split_headings(text, out)):
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        unit = text[s:e]
        words = unit.split()
        if unit[:1].islower():
            continue  # the end of a sentence the chunk before holds
        row = is_table_row(unit)
        # a page's running header or footer, or a heading, is no sentence: one line, no sentence end, few words
        if not row and "\n" not in unit and not unit.rstrip("”’\")").endswith((".", "!", "?", ":", ";")) \
                and len(words) < 12:
            continue
        if e - s >= _MIN_CHARS and len(words) >= 6:
            if e - s > _MAX_CHARS:
                e = text.rfind(" ", s, s + _MAX_CHARS) if text.rfind(" ", s, s + _MAX_CHARS) > s else s + _MAX_CHARS
            spans.append((s, e))
    return spans


# a sentence opening with a word that points back at the one before it, then a verb or a noun of change ("This
# represents …", "These increases were …", "Such costs are …")
_GOES_ON = re.compile(r"(?:This|These|That|Those|Such|The latter|The former)\s+(?:[a-z]+\s+){0,2}?"
                      r"(?:represents?|represented|was|were|is|are|reflects?|reflected|includes?|included|"
                      r"compares?|compared|amounts?|amounted|results?|resulted|consists?|consisted)\b")
_POINTER = re.compile(r"^(?:\(?\d{1,2}\)?\s+)?(?:please\s+)?(?:refer\s+to|see)\b|\bfor\s+(?:additional|more|further)\s+"
                      r"(?:information|details|discussion)\b", re.IGNORECASE)
_US = re.compile(r"\bU\.\s?S\.(?:\s?A\.)?|\bUS\b|\bUSA\b")
_HEADING_WORDS = 6  # a heading's words at the most, when it sits on the line above a paragraph


def _heading_line(line: str) -> bool:
    """A short line in title case without a sentence's end ("Table of Contents", "Item 3. Legal Proceedings"): a
    heading or a page's running header, not the first line of a sentence."""
    words = line.split()
    return (0 < len(words) <= _HEADING_WORDS and line.strip()[:1].isupper()
            and not line.rstrip().endswith((".", "!", "?", ",", ";"))
            and all(w[:1].isupper() or w[:1].isdigit() or len(w) < 4 or not w[:1].isalpha() for w in words))


def _split_headings(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A unit that is lines of headings run together, no sentence among them (no sentence's end, and one of its lines
    a heading: "Amcor reports fiscal 2023 results and provides outlook for fiscal 2024 / June 2023 quarter: GAAP
    diluted EPS of 12.3 cps; … / Fiscal 2023 Full Year Highlights", a release's top), line by line: run together, the
    outlook for one year reads as the EPS of another quarter."""
    out: list[tuple[int, int]] = []
    for s, e in units:
        unit = text[s:e]
        lines = [(s + m.start(), s + m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", unit)]
        if len(lines) >= 2 and not unit.rstrip(" ”’\"')").endswith((".", "!", "?")) \
                and any(_heading_line(text[a:b]) for a, b in lines) \
                and not any(is_table_row(text[a:b]) or _BULLET.match(text[a:b]) for a, b in lines):
            out += lines
        else:
            out.append((s, e))
    return out


_OPENS_LIST = re.compile(r":\s*$|:\s*\n\s*[•●▪◦■\-–]\s+[^\n]*$")


def _lists_joined(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A sentence that opens a list ("Cost of products sold increased … driven by:") quoted with its items: the
    bullets after it and a joining line between them ("partially offset by"), or the table rows it introduces ("We
    repurchased the following shares …:"), up to the longest quote."""
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(units):
        s, e = units[k]
        k += 1
        if _OPENS_LIST.search(text[s:e].rstrip(" ")):
            while k < len(units) and units[k][1] - s <= _MAX_CHARS:
                item = text[units[k][0]:units[k][1]]
                joins = item.strip()[:1].islower() and k + 1 < len(units) and _BULLET.match(
                    text[units[k + 1][0]:units[k + 1][1]])
                if not (_BULLET.match(item) or joins or is_table_row(item)):
                    break
                e = units[k][1]
                k += 1
        out.append((s, e))
    return out


# an amount of money as a sentence prints it: "$20 billion", "$400,000,000", "USD 1.2 million"
_AMOUNT = re.compile(r"(?:\$|\bUSD\s?)\s?\d[\d,.]*(?:\s?(?:million|billion|thousand|trillion|bn|mn)\b)?",
                     re.IGNORECASE)


def select_quotes(about: str, passages: Sequence[Passage], embedder: Embedder | None,
                  settings: AnswerSettings, sections: Sequence[str] = (), explain: bool = False,
                  subject: Sequence[re.Pattern[str]] = (), years: Sequence[int] = (),
                  amount: str = "", metrics: Sequence[str] = ()) -> list[Quote]:
    """The evidence sentences of ``passages`` best fit to ``about`` (what the question asks about:
    ``QueryIntent.about``), ranked (see the module's docstring); ``sections``: the section kinds the question asks
    of, best first, whose sentences are one more ranking; ``explain``: the question asks why or what drove a change,
    and the sentences that state a cause (``resources/reader/causal.txt``) are one more ranking, and come first;
    ``subject``: the words that name what is asked (:meth:`~engine.vocab.sections.SectionVocab.subject_words`): the
    sentences naming it come first; ``years``: the fiscal years the question asks of, and the sentences that print
    one are one more ranking (a ten-year growth rate is not the year's growth); ``amount``: the question asks an
    amount no statement prints, "money" (a gain, proceeds, a credit line) or a "figure" of a kind it does not say
    ("how many employees"), and the on-topic sentences that print one come
    first; ``metrics``: the metrics the question names, whose causes come before another's (:func:`_cause_rank`)."""
    units: list[tuple[int, int, int]] = []  # (passage number, start, end)
    for n, p in enumerate(passages, start=1):
        units += [(n, s, e) for s, e in candidate_sentences(p)]
    if not units:
        return []
    texts = [" ".join(passages[n - 1].chunk.text[s:e].split()) for n, s, e in units]
    ids = list(range(len(units)))
    rankings: list[list[int]] = []
    # (the words compared with the United States as one word: the tokenizer keeps no one-letter word, so "U.S."
    # is no term and "US" is the stop word "us")
    table = chunk_terms([_US.sub("USA", t) for t in texts])
    question = _US.sub("USA", _without_titles(about, passages))
    # (each asked word once: a comparison repeats its frame, "US sales growth … international sales growth", and
    # the words it contrasts are said once)
    terms = Counter(set(query_terms(question)))
    df = table.document_frequencies()
    weights = {t: c * idf(df.get(t, 0), len(texts)) for t, c in terms.items() if df.get(t, 0)}
    on_topic = set(ids)  # the sentences sharing a word of what is asked (not only a number: "2023", "30")
    if weights:
        average = float(np.mean(table.lengths)) or 1.0
        lexical = bm25(table, weights, average)
        rankings.append(sorted(ids, key=lambda i: -float(lexical[i])))
        function = word_set("function_words")  # ("from", "which": not in the tokenizer's stop words)
        plain = " ".join(w for w in question.split() if w.strip(".,?!:;'’\"()").lower() not in function)
        stems = tokenizer().tokenize([plain], update_vocab=True, return_as="string", show_progress=False)[0]
        words = {term_id(x) for x in stems if x and any(ch.isalpha() for ch in x)}
        if worded := {t: w for t, w in weights.items() if t in words}:
            shared = bm25(table, worded, average)
            on_topic = {i for i in ids if shared[i] > 0}
    by_words = rankings[0] if rankings else ids
    if embedder is not None:
        vecs = embedder.embed_batch([question, *texts])
        vecs = vecs / (np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12)
        dense = vecs[1:] @ vecs[0]
        rankings.append(sorted(ids, key=lambda i: -float(dense[i])))
    if sections:  # the sentences printed in the sections the question asks of: the best kind first, then the
        # passages' order
        at = {i: section_vocab().rank_of(passages[units[i][0] - 1].chunk.section, sections) for i in ids}
        rankings.append(sorted((i for i in ids if at[i] is not None), key=lambda i: (at[i], i)))
    # a sentence that only points elsewhere ("Please refer to the Glossary for …", "Refer to Note 2 … for additional
    # information") is evidence of nothing: it is quoted only to make up the fewest quotes
    pointers = {i for i in ids if _POINTER.search(texts[i])}
    on_topic -= pointers
    naming = {i for i in ids if any(rx.search(texts[i]) for rx in subject)} - pointers
    if naming:  # the sentences that name what is asked ("we acquired", "lawsuits"), in the words' order: on topic
        rankings.append([i for i in by_words if i in naming])
        on_topic |= naming
    if sections and sections[0] in _SPECIFIC_KINDS:  # a question of litigation or risks: the sentences naming a
        # party, a court, a product or a place (a case, not the boilerplate "The Company is subject to various legal
        # proceedings"), the most named first
        titled = _titled(passages)
        named = {i: n for i in ids if (n := _names_printed(texts[i], titled))}
        rankings.append(sorted(named, key=lambda i: (-named[i], by_words.index(i))))
    if years:  # the sentences that print an asked year, those sharing most of the question's words first
        printed = re.compile(rf"\b(?:{'|'.join(str(y) for y in years)})\b")
        rankings.append([i for i in by_words if printed.search(texts[i])])
    causes: dict[int, int] = {}
    if explain:  # the sentences that state a cause, those sharing most of the question's words first (a
        # disclaimer's "as a result of new information" states a cause of nothing asked)
        causes = {i: rank for i in ids
                  if (rank := _cause_rank(texts[i], metrics, about, _titled(passages), years)) is not None}
        rankings.append([i for i in by_words if i in causes])
    amounts = ({i for i in ids if _AMOUNT.search(texts[i])} if amount == "money" else
               {i for i in ids if _prints_figure(texts[i])} if amount else set())
    fused = dict(rrf(rankings, k=_RRF_K)) if rankings else {i: 0.0 for i in ids}
    for i in ids:  # the passage's own rank: every sentence of a passage shares it
        fused[i] = fused.get(i, 0.0) + 1.0 / (_RRF_K + units[i][0])
    per_passage: Counter[int] = Counter()
    chosen: list[int] = []
    said: set[str] = set()
    # a sentence sharing no word with what is asked is quoted only to make up the fewest quotes: a release's
    # contact line or webinar notice ranks by its passage's rank alone, and a small model then quotes it
    # (a cause of what is asked need not name it: "Given our strong start to the year, we now expect …" is why the
    # guidance was raised; so where the question asks why, the on-topic sentences stating a cause come first, and
    # before a headline that only names the subject)
    # a headline names a topic, and a sentence that introduces what follows it ("We repurchased the following shares
    # …:") with nothing after it in its passage states nothing: both are quoted after the sentences that do
    titles = {i for i in ids if _headline(texts[i]) or texts[i].rstrip().endswith(":")}
    for i in sorted(ids, key=lambda i: (i not in on_topic, bool(amounts) and i not in amounts,
                                        causes.get(i, _NO_CAUSE) if causes else 0,
                                        bool(naming) and i not in naming | causes.keys(), i in titles, -fused[i])):
        if i not in on_topic and len(chosen) >= _FEWEST_QUOTES:
            break
        n, s, e = units[i]
        low = texts[i].lower()
        if per_passage[n] >= settings.quotes_per_passage or any(low in x or x in low for x in said):
            continue  # (the same sentence printed by another filing: a 10-Q repeats the 10-K's risk factors)
        c = passages[n - 1].chunk
        start, end = c.char_start + s, c.char_start + e
        if any(_same_place(units[j], passages, c.doc_name, c.page_index, start, end) for j in chosen):
            continue  # the same sentence printed in two overlapping chunks
        per_passage[n] += 1
        said.add(low)
        chosen.append(i)
        if len(chosen) == settings.quotes:
            break
    out = []
    for k, i in enumerate(chosen, start=1):
        n, s, e = units[i]
        p = passages[n - 1]
        c = p.chunk
        out.append(Quote(k, n, c.id, c.doc_name, c.page_index, c.char_start + s, c.char_start + e, c.text[s:e],
                         title=p.title, section=c.section, printed_folio=c.printed_folio,
                         score=round(fused[i], 6), header=_row_header(c.text, s, c.context)))
    return out


_SPECIFIC_KINDS = frozenset({"legal", "risk"})  # section kinds whose questions rank the sentences that name things
_NO_CAUSE = 3


def _cause_rank(text: str, metrics: Sequence[str], question: str, titled: set[str],
                years: Sequence[int] = ()) -> int | None:
    """Of a sentence stating a cause, how nearly it is a cause of what is asked (None: it states none). What it
    explains is said before its first cause ("The 5 percent increase in net sales in fiscal 2022 reflects …"): 0 when
    that names a metric the question names and no part of the company the question does not ("International",
    "North America Retail": a segment's sales, not the company's), 1 when it names the metric of a part or only
    lines the metric is computed from, 2 when it names none asked ("The $229 million change was primarily due to an
    increase in accounts payable" for a question of net sales), the question names no metric, or the sentence prints
    years and none of ``years`` (the asked ones: "Year ended December 31, 2017 as compared to … 2016 …" is no cause
    of 2018's growth)."""
    cause = whole_words("causal").search(text)
    if cause is None:
        return None
    before = text[:cause.start()]
    printed = period_years([text])
    named = set(find_metrics(before))
    if not metrics or not named or years and printed and not printed & set(years):
        return 2
    if not named & set(metrics):
        # only lines the asked metric is computed from ("Cost of products sold increased as a percent to sales"
        # for a gross margin): a cause of it, after one naming it
        lines = set().union(*(_metric_items(m) for m in metrics))
        return 1 if all(_metric_items(n) and _metric_items(n) <= lines for n in named) else 2
    asked = {w.lower() for w in _WORD.findall(question)}
    return 1 if _names_printed(before, titled | asked) else 0


_A_CAUSE = "states a cause of what is asked"


def _left_out(quotes: Sequence[Quote], grounds: Sequence[Sequence[int]], intent: QueryIntent,
              passages: Sequence[Passage], about: str) -> tuple[Quote, str] | None:
    """The evidence the question asks for, which a small model may pass over for the sentences beside it, when the
    synthesis's sentences cite none of it: of a question of litigation or risks, the best-ranked of the first quotes
    that names a case (a party, a court, a day, an amount: :func:`_names_printed`); of a question why something moved,
    the best-ranked of the first quotes that states a cause of it (sharing words of what is asked; naming the asked
    metric before its cause, when the question names one), and the first quote so even when the synthesis cited a
    lesser cause; of a question asking how much, the best-ranked of the first on-topic quotes that prints a figure.
    With what it is."""
    titled = _titled(passages)
    asked = content_stems(_without_titles(about, passages))
    kinds: list[tuple[str, Callable[[Quote], bool]]] = []
    if intent.sections and intent.sections[0] in _SPECIFIC_KINDS:
        kinds.append(("names a case", lambda q: bool(_names_printed(q.text, titled))))
    if intent.relation == "explanation":
        kinds.append((_A_CAUSE, lambda q: states_a_cause(q.text)
                      and len(asked & content_stems(q.text)) >= _FEWEST_QUOTES
                      and (not intent.metrics
                           or (_cause_rank(q.text, intent.metrics, about, titled, intent.fiscal_years) or 0) < 2)))
    if is_numeric(core_question(" ".join(intent.question.split())), False):  # "what EPS guidance did it give"
        kinds.append(("prints a figure of what is asked", lambda q: _prints_figure(q.text)
                      and bool(asked & content_stems(q.text))))
    by_number = {q.number: q for q in quotes}
    cited = [by_number[n] for nums in grounds for n in nums if n in by_number]
    for what, fits in kinds:
        best = next((q for q in quotes[:_FEWEST_QUOTES + 1] if fits(q)), None)
        if best is None or best in cited:
            continue
        # (of a why question, the best-ranked cause of the move leads even beside a lesser one the synthesis chose:
        # "one basis point due to increased 2% rewards" is a cause of Costco's margin, not the one that moved it)
        if not any(fits(q) for q in cited) or what == _A_CAUSE and best is quotes[0]:
            return best, what
    return None



def _prints_figure(text: str) -> bool:
    """Whether ``text`` prints a figure (a number that is no year): what a question asking how much is answered by,
    where "Amcor's guidance contemplates a range of factors …" answers nothing."""
    return any(parse_number(t.strip()) is not None and not YEAR.match(re.sub(r"[^\d]", "", t))
               for t in NUMBER.findall(text))


_CAPITALISED = re.compile(r"(?<![\w’'])[A-Z][A-Za-z&’'.-]*[A-Za-z]")


def _names_printed(text: str, titled: set[str]) -> int:
    """How many names ``text`` prints (capitalised words past its first that are no filing's, period's or
    accounting word — resources/companies/not_names.txt — nor the filer's own name), plus one for a day or an
    amount: what makes a sentence about one case rather than any."""
    generic = not_names() | word_set("function_words") | _BOILERPLATE | section_vocab().title_words
    words = _CAPITALISED.findall(text)[1:]
    names = {w.lower().removesuffix("’s").removesuffix("'s").rstrip(".") for w in words}
    found = len({w for w in names if w not in generic and w not in titled})
    return found + bool(_DAY.search(text)) + bool(_AMOUNT.search(text)) if found else 0


_BOILERPLATE = frozenset({"company", "companies", "we", "our", "us", "directors", "court"})
_DAY = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)"
                  r"\s+\d{1,2},\s+\d{4}")


def _headline(text: str) -> bool:
    """Whether a unit is a headline ("PepsiCo Reports First-Quarter 2023 Results; Raises Full-Year Guidance", "MARY
    N. DILLON APPOINTED AS CEO"): no sentence's end, and most of its longer words capitalised (a sentence naming
    companies, "we acquired Current Health Ltd. and Two Peaks, LLC d/b/a Yardbird Furniture.", ends as one). It names
    a topic and states no evidence of it, so it is quoted after the sentences that do."""
    if text.rstrip(" ”’\"')").endswith((".", "!", "?")):
        return False
    words = [w for w in _WORD.findall(text) if len(w) >= 4]
    return len(words) >= 4 and sum(w[0].isupper() for w in words) >= _TITLE_SHARE * len(words)


def _titled(passages: Sequence[Passage]) -> set[str]:
    """The words of the passages' filers' names, forms and years, lower case: no name of a case, nothing asked."""
    return {w.lower() for p in passages for w in _WORD.findall(f"{p.title} {p.chunk.doc_name}")}


def _without_titles(question: str, passages: Sequence[Passage]) -> str:
    """``question`` without the filer's name, form and year: in every sentence's filing, they rank nothing."""
    titled = _titled(passages)
    return " ".join(w for w in question.split() if w.strip(".,?!:;'’\"()").lower() not in titled
                    and not w.strip(".,?!:;'’\"()").lower().removesuffix("'s").removesuffix("’s") in titled)


def _row_header(text: str, start: int, context: str) -> str:
    """A table row's column headings: the last header row above it in its chunk, else the header the chunk
    repeats from the page (its context); "" for a sentence."""
    line_end = text.find("\n", start)
    if not is_table_row(text[start : line_end if line_end >= 0 else len(text)]):
        return ""
    above = [ln.strip() for ln in text[:start].splitlines() if ln.strip()]
    for line in reversed(above):
        if is_header_row(line) and not is_table_row(line.replace("  ", " ")):
            return " ".join(line.split())
    return " ".join(context.split(" | ")[-1].split()) if context else ""


def _same_place(unit: tuple[int, int, int], passages: Sequence[Passage], doc: str, page: int, start: int,
                end: int) -> bool:
    n, s, e = unit
    c = passages[n - 1].chunk
    a, b = c.char_start + s, c.char_start + e
    return c.doc_name == doc and c.page_index == page and a < end and start < b


def render_quotes(quotes: Sequence[Quote]) -> str:
    blocks = []
    for q in quotes:
        where = f"{q.title}, page {page_number(q.page_index, q.printed_folio)}" + (f", {q.section}" if q.section else "")
        text = " ".join(q.text.split()).replace("<<<", "< < <").replace(">>>", "> > >")
        if q.header:  # a table row: its columns' headings, fenced with it (filing text too)
            text = f"(table columns: {' '.join(q.header.split())}) {text}".replace("<<<", "< < <").replace(">>>", "> > >")
        blocks.append(f"[{q.number}] {where}\n<<<\n{text}\n>>>")
    return "\n\n".join(blocks)


def synthesis_schema(n_quotes: int, yes_no: bool) -> dict[str, Any]:
    numbers = {"type": "array", "items": {"type": "integer", "enum": list(range(1, n_quotes + 1)) or [1]},
               "minItems": 1, "maxItems": 3}
    props: dict[str, Any] = {
        "sentences": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
            "type": "object", "properties": {"text": {"type": "string", "maxLength": 240}, "quotes": numbers},
            "required": ["text", "quotes"], "additionalProperties": False}},
        "insufficient": {"type": "boolean"},
    }
    if yes_no:
        props = {"verdict": {"type": "string", "enum": ["yes", "no", "not stated"]}, **props}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")
_JSON_TAIL = re.compile(r"[\s,]*[{}][\s{}\[\],\"']*$")


def content_stems(text: str) -> set[str]:
    """The stems of the content words of ``text`` (no digits, no function word: resources/reader/function_words.txt)."""
    words = " ".join(w for w in _WORD.findall(text) if w.lower() not in word_set("function_words"))
    return {s for s in tokenizer().tokenize([words], update_vocab=True, return_as="string",
                                            show_progress=False)[0] if s and not s[0].isdigit()}


def degenerate(text: str) -> str:
    """Why a model-written sentence is degenerate ("" when it is not): a phrase repeated, a word said four times
    in a row, mostly non-letters."""
    words = [w.lower() for w in text.split()]
    grams = Counter(tuple(words[i : i + 4]) for i in range(len(words) - 3))
    if grams and grams.most_common(1)[0][1] > 1:
        return "it repeats a phrase"
    if any(len(set(words[i : i + 4])) == 1 for i in range(len(words) - 3)):
        return "it repeats a word"
    letters = sum(ch.isalpha() for ch in text)
    if not text.strip() or letters < 0.5 * len(text.replace(" ", "")):
        return "it is mostly not words"
    return ""


@lru_cache(maxsize=1)
def _saying_stems() -> frozenset[str]:
    return frozenset(content_stems(" ".join(sorted(word_set("saying")))))


def check_sentence(text: str, cited: Sequence[Quote], question: str, known: Sequence[float] = ()) -> str:
    """Why a synthesis sentence is refused ("" when it stands): a figure no quote it cites prints (nor the engine
    computed), words its quotes do not say, or degenerate text."""
    why = degenerate(text)
    if why:
        return why
    # a letter of a script its quotes and the question do not print (a small model's stray "접근" in an English
    # sentence): the sentence is no reading of them
    shown = "".join(q.text for q in cited) + question
    stray = sorted({c for c in text if c.isalpha() and ord(c) > _LATIN_END and c not in shown})
    if stray:
        return f"it prints letters no quote it cites prints ({''.join(stray[:8])})"
    printed: set[float] = set()
    for q in cited:
        printed |= passage_numbers(q.text)
    asked = passage_numbers(question)
    figures = 0  # the figures it states that the question does not (each printed in a quote or computed)
    for token in NUMBER.findall(text):
        value = parse_number(token.strip())
        digits = re.sub(r"[^\d]", "", token)
        if value is None or YEAR.match(digits) or abs(value) in asked:
            continue
        figures += 1
        places = len(token.split(".", 1)[1].rstrip("%").strip()) if "." in token else 0
        if printed_in(value, {0: printed}):  # as printed, or written in thousands/billions (ground_text's rule)
            continue
        if any(round(abs(k), places) == round(abs(value), places) for k in known):
            continue
        return f"it states {token.strip()}, which no quote it cites prints"
    # (a verb that only says where something is said, "the 10-Q indicates …", adds nothing: resources/reader/saying.txt)
    # (a figure the question asks and a quote prints is no restatement: "73% of its 2022 sales were from the U.S.
    # Government" answers "how much of its sales came from the U.S. Government" in the question's words)
    own = content_stems(text) - content_stems(question) - _VERDICT_WORDS
    if not own - _saying_stems() and not figures:
        return "it restates the question and adds nothing a quote prints"
    # its own words are content words (no function word counts), so even two must be in its quotes: "The
    # discussion provides information about the rate" says nothing its quotes print (one word of its own beside the
    # question's and a figure — "the margin moved to 22.4%" — is the figure's sentence; the figure is checked above)
    if len(own) >= _OWN_CHECKED:
        quoted: set[str] = set()
        for q in cited:
            quoted |= content_stems(q.text)
        if len(own & quoted) < _SUPPORT * len(own):
            return "most of its words are in none of the quotes it cites"
    return ""


def answer_from_quotes(question: str, intent: QueryIntent, passages: Sequence[Passage], embedder: Embedder | None,
                       chat: ChatModel, settings: AnswerSettings, prompts: PromptSettings, *, computed: str = "",
                       known: Sequence[float] = (), searched: str = "", verdict: bool = True,
                       settled: Sequence[Settled] = (), since: date | None = None,
                       cancel: Callable[[], bool] | None = None,
                       decided: Callable[[Sequence[Quote]], AnswerResult | None] | None = None) -> QuoteAnswer:
    """A written answer from ``passages``: the quotes, and the synthesis the checks let stand (module docstring).
    ``searched`` says where the evidence was looked for (named when the quotes do not answer). ``verdict`` False:
    a judgement the engine reads as a computation and could not compute; the synthesis gives no yes or no (a
    sentence that does is refused), only what the quotes say. ``settled``: metrics the engine answered beside this
    answer (a compound question's number); a sentence stating one with another figure is refused. ``since``: the
    first day of the period the question asks whether there was any of something in (its filing's quarter or
    year); a sentence that names one only as dated before it ("completed its acquisition of Nuance on March 4,
    2022" for the quarter to December 31, 2022) tells of an earlier period and is refused. ``decided``: what the
    engine computes from the quotes (a revision's size: :mod:`engine.answer.revisions`); its answer, when it has
    one, is given without a model call."""
    about = intent.about or question
    # (a sentence may name the asked metric by its lines: "cost of products sold as a percent to sales")
    amount = ("" if not intent.numeric or intent.as_percentage or intent.dimension not in (None, "amount") else
              "money" if intent.dimension == "amount" else "figure")
    quotes = select_quotes(f"{about} {lexical_terms(intent)}".strip(), passages, embedder, settings, intent.sections,
                           intent.relation == "explanation", section_vocab().subject_words(question),
                           intent.fiscal_years, amount, intent.metrics)
    if not quotes:
        return QuoteAnswer(AnswerResult("not_answerable", NOT_ANSWERABLE, method="quotes",
                                        reason="the passages found print no sentence to quote"
                                        + (f"; searched {searched}" if searched else "")), ())
    if decided is not None and (engine := decided(quotes)) is not None:
        return QuoteAnswer(engine, ())
    named, any_of = _asked_if_any(intent)
    if any_of is not None and not any(any_of.search(p.chunk.text[a:b]) for p in passages
                                       for a, b in candidate_sentences(p)):
        # "were there any acquisitions": no sentence of the passages searched names one; the answer says so rather
        # than quote what is near ("the program does not obligate the Company to acquire shares")
        where = f"; searched {searched}" if searched else ""
        return QuoteAnswer(AnswerResult(
            "answered", f"The passages searched mention no {named}: none of their sentences names one "
            f"({_places(passages)}).", method="quotes",
            reason=f"the question asks whether there were any {named}; no sentence of the {len(passages)} "
                   f"passages searched names them{where}"), ())
    if intent.yes_no and verdict and any_of is not None and if_any_vocab().material.search(question) \
            and (immaterial := _immaterial_only(quotes, any_of)) is not None:
        # "any materially important legal battles": the filing says they will not have a material effect and names
        # none in particular: no, on its words (no model call)
        alone = _quotes_alone(quotes, passages, f"the question asks whether any {named} matter; the filing says they "
                              "do not, and no quote tells of one in particular (a date, an amount, an agency)", [immaterial])
        return QuoteAnswer(replace(alone, text=f"No. {alone.text}"), ())
    body = render_quotes(quotes) + (f"\n\n{computed}" if computed else "")
    messages: list[ChatMessage] = [{"role": "system", "content": prompt("evidence_system", prompts)},
                {"role": "user", "content": f"Quotes:\n\n{body}\n\n{prompt('answer_quotes', prompts)}\n\n"
                                            f"Question: {question}"}]
    yes_no = intent.yes_no and verdict
    res, call = call_llm(chat, "answer (synthesis from quotes)", messages, synthesis_schema(len(quotes), yes_no),
                         settings.synthesis_max_tokens, cancel)
    by_number = {q.number: q for q in quotes}
    if res is None:
        return QuoteAnswer(_quotes_alone(quotes, passages, f"the synthesis failed ({call.error})"), (call,))
    data = res.data
    if data["insufficient"]:
        missing = " ".join(s["text"].strip() for s in data["sentences"] if s["text"].strip())
        reason = "the quoted evidence does not answer it" + (f": {missing}" if missing else "")
        asked = content_stems(_without_titles(about, passages))
        causes = [q for q in quotes[:_FEWEST_QUOTES + 1] if intent.relation == "explanation"
                  and states_a_cause(q.text) and len(asked & content_stems(q.text)) >= _FEWEST_QUOTES]
        if len(causes) >= _FEWEST_QUOTES:  # why it moved, as the filing states it of what is asked: the quotes
            # stand (a small model's "insufficient" is no reading of them), the synthesis's doubt said
            return QuoteAnswer(_quotes_alone(quotes, passages, f"the synthesis said {reason}; these quotes state "
                                                               "causes of what is asked", causes[:_FEWEST_QUOTES]),
                               (call,))
        return QuoteAnswer(AnswerResult("not_answerable", NOT_ANSWERABLE, method="quotes", quotes=tuple(quotes),
                                        reason=reason + (f"; searched {searched}" if searched else "")), (call,))
    # "did it increase or decrease": a sentence that says which has a word of its own
    unasked = question.replace(intent.offered, " ") if intent.offered else question
    kept: list[str] = []
    grounds: list[list[int]] = []  # the quotes each kept sentence cites
    refused: list[str] = []
    seen: list[set[str]] = []  # the words of the sentences read (their stems, no figures or years)
    moved: list[str] = []  # the sentences cited to another quote than the model's
    for s in data["sentences"]:
        # (a small model may close its JSON inside the string: "… said the CEO.}, {" ends at the sentence)
        text = _JSON_TAIL.sub("", " ".join(s["text"].split()))
        nums = [n for n in dict.fromkeys(s["quotes"]) if n in by_number]
        words = content_stems(text) - {"yes", "no", "also"}
        # a sentence whose words an earlier one already says, but for a year or a figure ("… in 2022. … in 2021.")
        why = "it says the same as an earlier sentence" if any(words <= w for w in seen) else \
            "it gives a yes or no that the statement facts could not compute" if not verdict and re.match(
                r"(?:yes|no)\b", text, re.IGNORECASE) else _misstated(text, settled)
        if not why and any_of is not None and not any_of.search(text):
            why = f"it does not speak of {named}, which the question asks whether there were any of"
        if not why and any_of is not None and since is not None:
            why = _before_the_period(text, [by_number[n] for n in nums], any_of, named, since)
        if not why and intent.relation == "explanation" and intent.metrics:
            why = _causes_of_another(text, intent.metrics)
        if not why and (why := check_sentence(text, [by_number[n] for n in nums], unasked, known)) \
                and not degenerate(text):
            # a small model cites by position: a sentence its cited quotes do not bear out is cited to the quote
            # that does (its figures printed there, most of its words too), the best ranked first; none: refused
            # (a sentence that only copies a quote, a release's headline, is no reading of it: refused as before)
            bearing = [q.number for q in quotes if not check_sentence(text, [q], unasked, known)
                       and not _copies(text, q.text)]
            if bearing:
                moved.append(f"“{text[:60]}” cited [{bearing[0]}], which bears it out, not "
                             f"[{', '.join(str(n) for n in nums)}]")
                nums, why = bearing[:1], ""
        seen.append(words)
        if why or not nums:
            refused.append(f"“{text[:80]}” ({why or 'it cites no quote'})")
            continue
        kept.append(f"{text.rstrip()} [{', '.join(str(n) for n in nums)}]")
        grounds.append(nums)
    side = data.get("verdict", "not stated") if yes_no else "not stated"
    note = "; ".join(x for x in (f"refused: {'; '.join(refused)}" if refused else "",
                                  f"re-cited: {'; '.join(moved)}" if moved else "") if x)
    if not kept:  # (asked whether there was any: the quotes that name it)
        top = [q for q in quotes if any_of.search(q.text)][:2] if any_of is not None else []
        alone = _quotes_alone(quotes, passages, note or "no sentence of the synthesis stood", top)
        # the model's yes stands where the quotes bear it out: one names what is asked, as done (no "may", no plan),
        # and, a period asked, dated in it (an undated mention, "growth from the Nuance and Xandr acquisitions", may
        # tell of an earlier one; one done in the period is enough); its sentences restated the question ("Yes, X
        # has partaken in …") or were refused
        done = [q for q in top if not whole_words("maybe").search(q.text) and not whole_words("forward").search(q.text)
                and (since is None or max(dates_in(q.text, events=True), default=date.min) >= since)]
        if yes_no and side == "yes" and done:
            alone = replace(alone, text=f"Yes. {alone.text}", reason=f"{alone.reason}; the synthesis's yes stands: "
                            f"the quotes name {named}, as done"
                            + (" and in the period asked" if since is not None else ""))
        return QuoteAnswer(alone, (call,))
    said_side = re.match(r"^(yes|no)\b[\s,.;:—-]*", kept[0], flags=re.IGNORECASE)
    if side in ("yes", "no") or said_side:
        # a side must rest on quotes about what the question asks: its first sentence's quotes share a word of it
        subject = content_stems(_without_titles(about, passages)) - _VERDICT_WORDS
        quoted = set().union(*(content_stems(by_number[n].text) for n in grounds[0]))
        if subject and not subject & quoted:
            said = side if side != "not stated" else said_side.group(1).lower() if said_side else ""
            why = f"the verdict ({said}) rests on quotes that share no word with what the question asks about"
            note = "; ".join(x for x in (note, why) if x)
            side = "not stated"
            if said_side:  # the sentence without its yes or no, if anything is left of it
                rest = kept[0][said_side.end():]
                kept[0] = rest[:1].upper() + rest[1:]
                said_side = None
                if not re.search(r"[A-Za-z]{3}", kept[0]):
                    kept.pop(0)
                    grounds.pop(0)
                    if not kept:
                        return QuoteAnswer(_quotes_alone(quotes, passages, note), (call,))
    if said_side and side in ("yes", "no"):
        if said_side.group(1).lower() == side:  # the verdict is said once, first
            kept[0] = kept[0][said_side.end():][:1].upper() + kept[0][said_side.end() + 1:]
        else:  # the synthesis says the other side than its verdict: neither is put first
            note = "; ".join(x for x in (note, f"the synthesis's verdict ({side}) and its first sentence disagree")
                             if x)
            side = "not stated"
    if (left := _left_out(quotes, grounds, intent, passages, about)) is not None:
        # the case the question asks of ("what specific legal proceedings"), or the cause of the move it asks why of,
        # which the synthesis passed over for the sentences around it: its quote comes first
        case, what = left
        kept.insert(0, f"“{' '.join(case.text.split())}” [{case.number}]")
        grounds.insert(0, [case.number])
        note = "; ".join(x for x in (note, f"quote [{case.number}] {what}, which the synthesis left out: put first") if x)
    lead = {"yes": "Yes. ", "no": "No. "}.get(side, "")
    text = lead + " ".join(kept)
    cited = [by_number[n].passage_id for nums in grounds for n in nums]
    cites = tuple(Citation.of(n, passages[n - 1]) for n in dict.fromkeys(cited))
    grounding = tuple(ground_text(text, question, passages, list(dict.fromkeys(cited)), known))
    return QuoteAnswer(AnswerResult("answered", text, method="quotes", citations=cites, grounding=grounding,
                                    reason=note, quotes=tuple(quotes)), (call,))


def _causes_of_another(text: str, asked: Sequence[str]) -> str:
    """Why ``text`` gives the causes of another metric than those asked ("" when it does not): the words before its
    first cause ("The growth in R&D expense … was driven primarily by …") name a metric of the lexicon and none
    asked (a cause that is itself a metric, "… due to lower revenue", comes after the marker and stands)."""
    cause = whole_words("causal").search(text)
    if cause is None:
        return ""
    named = [m for m in find_metrics(text[:cause.start()]) if m]
    inputs = set().union(*(_metric_items(m) for m in asked))
    # (only a metric of several lines is checked, and only against metrics that enter none of them: the causes of a
    # line a margin is computed from are its causes too; a line's own causes, "revenue fell due to …" for net income,
    # cannot be told apart so, and stand)
    if not named or set(named) & set(asked) or not all(len(_metric_items(m)) > 1 for m in asked) \
            or any(_metric_items(m) & inputs or not _metric_items(m) for m in named):
        return ""
    return f"it gives the causes of {' and '.join(named)}, not of {' and '.join(asked)}"


@lru_cache(maxsize=256)
def _metric_items(name: str) -> frozenset[str]:
    """The line items a catalogue metric is computed from (none for a metric the catalogue does not hold)."""
    metric = load_catalogue().metrics.get(name)
    return frozenset(t.item for f in metric.formulas for t in formula_terms(f)) if metric else frozenset()


_PROSE = re.compile(r"\b[a-z]{2,}\s+[a-z]{2,}\s+[a-z]{2,}\b")  # three words of a sentence in a row
_PARTICULAR = re.compile(r"\$\s?\d|\b\d[\d,.]*\s*(?:million|billion|%)|\b[A-Z]{2,}\b")


def _immaterial_only(quotes: Sequence[Quote], any_of: re.Pattern[str]) -> Quote | None:
    """The quote that says what is asked does not matter ("the final outcome … will not have a material adverse
    effect"), where no other quote naming it tells of one matter in particular: a date, an amount, an agency's or a
    program's initials (Boeing's "lawsuits over the October 29, 2018 accident of Lion Air Flight 610" is one)."""
    naming = [q for q in quotes if any_of.search(q.text) and _PROSE.search(q.text)]  # (not a signature block's
    # "Legal Director … Date: December 9, 2022")
    said = next((q for q in naming if if_any_vocab().immaterial.search(q.text)), None)
    if said is None or any(dates_in(q.text, events=True) or _PARTICULAR.search(q.text) for q in naming
                           if q is not said):
        return None
    return said


def _asked_if_any(intent: QueryIntent) -> tuple[str, re.Pattern[str] | None]:
    """What ``intent``'s question asks whether there was any of, in its own words ("acquisitions or divestitures"),
    and the pattern of a sentence that names it: a word's stem, or a word of its group (resources/reader/if_any.toml);
    ("", None) when it asks no such thing."""
    words = intent.any_of
    if not words:
        return "", None
    starts = {next(iter(content_stems(w)), w) for w in words}  # (the stem: "acquisitions" -> "acquisit")
    starts |= {x for g in if_any_vocab().same
               if any(w.startswith(m.split()[0]) or m.startswith(w[:5]) for w in words for m in g) for x in g}
    body = "|".join(re.escape(x).replace(r"\ ", r"[\s-]+") for x in sorted(starts, key=len, reverse=True))
    return " or ".join(words), re.compile(rf"\b(?:{body})", re.IGNORECASE)


def _before_the_period(text: str, cited: Sequence[Quote], any_of: re.Pattern[str], named: str, since: date) -> str:
    """Why a sentence about what the question asks whether there was any of tells of an earlier period ("" when
    it does not): the days it names, or else those of its cited quotes that name it, all fall before ``since``; or
    one thing it names beside others ("including MGM Holdings and One Medical") is dated only before it."""
    days = dates_in(text, events=True) or [d for q in cited if any_of.search(q.text)
                                           for d in dates_in(q.text, events=True)]
    if days and max(days) < since:
        return (f"the {named} it tells of are dated {max(days):%B} {max(days).day}, {max(days).year}, before the "
                f"period asked (from {since:%B} {since.day}, {since.year})")
    names = list(dict.fromkeys(m[0] for m in _NAME.finditer(text) if m.start() or " " in m[0]))
    for name in names:
        # its days: those written after it in a quote (up to the next thing named), or, of a quote that names
        # nothing else of the sentence, the quote's
        telling = [_days_after(name, q.text) or ([] if any(o in q.text for o in names if o != name)
                                                 else dates_in(q.text, events=True))
                   for q in cited if name in q.text and any_of.search(q.text)]
        if telling and all(telling) and (last := max(max(d) for d in telling)) < since:
            return (f"{name} is dated no later than {last:%B} {last.day}, {last.year}, before the period asked "
                    f"(from {since:%B} {since.day}, {since.year})")
    return ""


def _days_after(name: str, text: str) -> list[date]:
    """The days the words after ``name`` in a quote give it, up to the next thing named ("the acquisitions of MGM
    Holdings Inc. in 2022 and One Medical in 2023": MGM's is 2022's last day): a day written, a quarter's or a
    year's last day ("in 2022")."""
    at = text.index(name) + len(name)
    end = _NEXT_THING.search(text, at)
    segment = text[at:end.start() if end else len(text)]
    return dates_in(segment, events=True) + [date(int(y), 12, 31) for y in _IN_YEAR.findall(segment)]


_NEXT_THING = re.compile(r"(?<!\bInc)(?<!\bCorp)(?<!\bCo)(?<!\bLtd)(?<!\b[A-Z])[;.](?:\s|$)|,?\s+and\s+(?=[A-Z])|"
                         r",\s+(?=[A-Z])")
_IN_YEAR = re.compile(r"\b(?:in|during)\s+(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d\d)\b(?!\s*(?:and|to|through|-)\s)")


# a proper name a sentence tells of: capitalised words in a run ("MGM Holdings Inc.", "One Medical")
_NAME = re.compile(r"\b[A-Z][\w&'’-]+(?:\s+(?:[A-Z][\w&'’.-]*|of))*(?<![\s.])")


def _places(passages: Sequence[Passage]) -> str:
    """The filings and pages of ``passages``, each filing once ("AAPL_2023Q2_10Q pp. 14, 17, 22")."""
    pages: dict[str, set[int]] = {}
    for p in passages:
        pages.setdefault(p.chunk.doc_name, set()).add(reader_page(p.chunk.page_index))
    return "; ".join(f"{doc} p{'p' if len(ns) > 1 else ''}. {', '.join(map(str, sorted(ns)))}"
                     for doc, ns in pages.items())


def _copies(sentence: str, quote: str) -> bool:
    """Whether ``sentence`` says nothing but ``quote`` does: its words are the quote's, and most of them."""
    own, quoted = content_stems(sentence), content_stems(quote)
    return bool(own) and own <= quoted and len(own) >= _COPIED * len(quoted)


def _quotes_alone(quotes: Sequence[Quote], passages: Sequence[Passage], why: str,
                  top: Sequence[Quote] = ()) -> AnswerResult:
    """The best quotes (``top``, else the first two) as the answer, when no synthesis stands: the filings' own
    words, with their pages."""
    top = list(top) or list(quotes[:2])
    text = " ".join(f"“{' '.join(q.text.split())}” [{q.number}]" for q in top)
    cites = tuple(Citation.of(n, passages[n - 1]) for n in dict.fromkeys(q.passage_id for q in top))
    return AnswerResult("answered", text, method="quotes", citations=cites, quotes=tuple(quotes),
                        reason=f"the quotes stand alone: {why}")
