"""Typed records passed between stages (frozen dataclasses, no dicts-of-dicts)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, ClassVar

from engine.pages import cite
from engine.vocab.numbers import SCALE_FACTORS
from engine.vocab.tokens import ChunkTerms


@dataclass(frozen=True)
class FilingIdentity:
    """Who filed what for which period, from the cover page and the file name."""

    doc_name: str
    issuer_key: str | None = None  # folder or file-name issuer token, e.g. "3M", "AMZN"
    registrant: str | None = None  # exact name from the cover page
    ticker: str | None = None
    form: str | None = None  # "10-K", "10-Q", "8-K", "EARNINGS"
    period: str | None = None  # "2022", "2023Q2", or a date for 8-Ks
    period_end: str | None = None  # ISO date of the fiscal period end when the cover page states it
    fiscal_year: int | None = None
    cik: str | None = None  # SEC Central Index Key, ten digits ("0000066740"), where the filing states it
    fiscal_year_end: str | None = None  # month and day the fiscal year ends, XBRL style: "--12-31"
    cik_source: str | None = None  # where the CIK was read (engine.ingest.identity.FROM_COVER, FROM_LINKS, …)
    fiscal_year_end_source: str | None = None  # where the fiscal-year end was read

    @property
    def company_key(self) -> str:
        """The key a company's filings share (an :class:`IssuerRef`'s key): issuer token, else ticker."""
        return self.issuer_key or self.ticker or self.doc_name

    def reports_through(self) -> date | None:
        """The last day the filing reports on: its period's end as the cover states it; else, for a period
        labelled "2023Q1" or "2023", the calendar end of that quarter or year (a fiscal quarter ends near it:
        within a month for the fiscal calendars that name a quarter by the year it ends in or starts in); an 8-K's
        date; None when the filing states neither (an 8-K known only by its year)."""
        for stated in (self.period_end, self.period):  # (an 8-K's period is its date)
            try:
                return date.fromisoformat(stated or "")
            except ValueError:
                pass
        m = re.fullmatch(r"((?:19|20)\d\d)(?:Q([1-4]))?", self.period or "")
        if m is None or self.form == "8-K":
            return None
        year, month = int(m[1]), 3 * int(m[2] or 4)
        return date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)


@dataclass(frozen=True)
class ChunkSpan:
    """A page-bounded chunk before it is stored: text == page_text[char_start:char_end]."""

    page_index: int  # 0-based, as the file numbers its pages (people read :func:`engine.pages.page_label`)
    seq: int
    char_start: int
    char_end: int
    kind: str  # "text" | "table"
    text: str
    context: str = ""  # table header rows repeated for a chunk that starts inside a table
    section: str = ""  # the filing's section it is printed in ("Item 1A Risk Factors"; engine.ingest.sections)


@dataclass(frozen=True)
class ParsedFiling:
    """Everything a worker extracted from one file; stored in one transaction."""

    path: str
    sha256: str
    bytes: int
    identity: FilingIdentity
    pages: tuple[str, ...]
    image_only_pages: tuple[int, ...]  # page indexes (0-based)
    chunks: tuple[ChunkSpan, ...]
    summary: str
    parser_version: str
    lofin_summary: str | None = None
    facts: tuple[StatementFact, ...] = ()  # every table cell read as a fact (engine.facts)
    facts_version: str = ""  # the fact reader that read them
    printed_folios: tuple[str | None, ...] = ()  # per page: the number it prints ("46"), None: none read
    folio_version: str = ""  # the folio reader that read them (engine.ingest.folio)
    identity_version: str = ""  # the identity reader that read its CIK and fiscal-year end (engine.ingest.identity)
    section_version: str = ""  # the section reader that read the chunks' sections (engine.ingest.sections)
    notes: tuple[str, ...] = ()  # what the user should know about how the file was read (a repaired PDF)
    terms: ChunkTerms | None = None  # the chunks' BM25 terms (engine.vocab.tokens), made where the file was read


@dataclass(frozen=True)
class Filing:
    """A stored filing. Its identity is the registrant-level one: a ticker, CIK or fiscal-year end its own cover
    lacks is its registrant's (see :mod:`engine.store.registrants`), and ``inherited`` says which and from where."""

    id: int
    sha256: str
    path: str
    identity: FilingIdentity
    n_pages: int
    n_chunks: int
    summary: str
    image_only_pages: tuple[int, ...] = field(default_factory=tuple)  # page indexes (0-based)
    inherited: tuple[tuple[str, str], ...] = ()  # (identity field, doc name of the filing that states it)

    def inherited_from(self, name: str) -> str | None:
        """The doc name of the filing this one's ``name`` field ("ticker") was taken from; None: its own."""
        return next((doc for field_name, doc in self.inherited if field_name == name), None)


@dataclass(frozen=True)
class Registrant:
    """One company of the library: the filings it filed and the identity they share.

    Filings belong to one registrant when they state the same CIK, share a company key (issuer token, else
    ticker) or state the same exact registrant name; two different CIKs are never one registrant.
    """

    key: str  # its CIK when a filing states one, else the company key of its most recent filing
    filing_ids: tuple[int, ...]
    company_keys: tuple[str, ...]
    names: tuple[str, ...] = ()  # exact names its covers state, most recent first
    ticker: str | None = None  # each shared value: the one its most recent filing stating one states
    cik: str | None = None
    fiscal_year_end: str | None = None
    sources: tuple[tuple[str, str], ...] = ()  # (field, doc name of the filing the shared value comes from)
    conflicts: tuple[str, ...] = ()  # "ticker: FB (FB_2018_10K), META (META_2022_10K)"; each filing keeps its own


def indexed_text(context: str, text: str) -> str:
    """What lexical and dense indexes see of a chunk: the table header context, then the chunk."""
    return f"{context}\n{text}" if context else text


@dataclass(frozen=True)
class Chunk:
    id: int
    filing_id: int
    doc_name: str
    page_index: int  # 0-based
    char_start: int
    char_end: int
    kind: str
    text: str
    context: str = ""
    printed_folio: str | None = None  # the number its page prints, when one was read (engine.ingest.folio)
    section: str = ""  # the filing's section it is printed in ("Item 1A Risk Factors"; engine.ingest.sections)

    @property
    def indexed_text(self) -> str:
        return indexed_text(self.context, self.text)


@dataclass(frozen=True)
class SearchHit:
    chunk: Chunk
    score: float
    rank: int
    scores: dict[str, float] = field(default_factory=dict)  # per-scorer scores for the trace


@dataclass(frozen=True)
class IssuerRef:
    """One company known to the library: its key and the names, tickers and aliases it goes by."""

    key: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanNode:
    """One node of a metric plan's expression tree (:class:`MetricPlan`).

    kind:
      item      a catalogue line item (``name``)
      metric    a catalogue metric (``name``); ``args`` are its formulas, tried in order (the first whose inputs
                are all found is used), or the one definition the question writes for it
      number    a number the question writes (``value``)
      add, sub, mul, div   arithmetic over ``args``
      percent   ``args[0]`` times 100
      at        ``args[0]`` at ``backs[0]`` fiscal years before
      average   the mean of ``args[0]`` at each of ``backs``
      change    ``args[0]`` at ``backs[0]`` less at ``backs[1]`` (percentage points for a percentage)
      growth    the change as a percentage of the earlier value
      cagr      the compound annual growth from ``backs[1]`` to ``backs[0]``
    """

    kind: str
    name: str = ""
    args: tuple[PlanNode, ...] = ()
    value: float = 0.0
    backs: tuple[int, ...] = ()


@dataclass(frozen=True)
class MetricPlan:
    """What a numeric question asks to be computed, as the question reader read it (:mod:`engine.intent.reader`).

    ``status``: "complete" (every word of the asked metric is read: the engine computes ``tree``), "unread"
    (words the reader could not place: no number is given, ``unread`` names them), "scope" (part of the company or
    its own measure: a segment, "adjusted": no statement fact answers it), "parts" (which of the parts of a total
    the filing prints, its segments or regions, has the largest or smallest amount or growth: ``parts``),
    "outside" (a metric the catalogue does not compute from the statements), or "none" (the question names no
    metric).
    """

    status: str
    tree: PlanNode | None = None
    unit: str = ""  # by dimensional analysis: USD | ratio | percent | days
    words: str = ""  # the plan in words
    read: tuple[str, ...] = ()  # what was read: "phrase: meaning"
    unread: tuple[str, ...] = ()  # words of the asked metric not accounted for
    scope: tuple[str, ...] = ()  # words that ask for a part of the company or a company-defined measure
    definitions: tuple[str, ...] = ()  # definitions the question writes, as read
    reader: str = "grammar"  # grammar | model
    choice: str = ""  # "largest" | "smallest": which of the amounts in ``tree.args`` is asked for; "all": every part;
    # "named": the part the question names (``included``)
    flow_months: int = 0  # a quarter's year to date asked ("H1": 6, "nine months": 9); 0: not stated
    suggestions: tuple[str, ...] = ()  # the closest catalogue metrics, for an answer that could not be read
    # the metrics the asked words name that a model's plan must keep (catalogue metrics, status "unread") or a
    # formula over the figures listed must use (line items the catalogue does not compute, status "outside")
    named: tuple[str, ...] = ()
    note: str = ""  # why the reading stopped, or what it changed (an asked unit the expression cannot have)
    # a yes/no question's judgement of the metric: "up" / "down" (``tree`` is its change from the year before),
    # ">=", "<=", ">", "<" (its value against ``bar``); ``criterion`` says the test in words, as the answer states it
    judge: str = ""
    bar: float | None = None
    criterion: str = ""
    # status "parts": a choice among the parts of a total the filing prints ("which segment had the highest
    # revenue"): the part's noun as written ("segment", "region"), the kinds it names (resources/reader/parts.toml),
    # "value" or "growth" (against the year before), and the parts the question leaves out ("excluding Embedded")
    parts: str = ""
    part_kinds: tuple[str, ...] = ()
    measure: str = ""
    excluded: tuple[str, ...] = ()
    included: tuple[str, ...] = ()  # choice "named": the part the question names ("Personal Computing", "Americas")
    # choice "all" of several amounts ("net sales and operating expenses of each segment"): the catalogue amounts asked
    # beside the tree's, each read from the table of its own parts (none printed: said)
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryIntent:
    """What a question demands of the evidence (see :mod:`engine.intent.periods` for the period rules)."""

    question: str
    issuers: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()
    fiscal_years: tuple[int, ...] = ()
    quarters: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    numeric: bool = False
    comparison: bool = False
    needs_calculation: bool = False
    unit_hint: str | None = None
    decimals: int | None = None
    keywords: tuple[str, ...] = ()
    annual_years: tuple[int, ...] | None = None  # None: derive from fiscal_years minus quarter years
    # FinCards' intent fields (Fig. 4) beyond the above, matched against evidence cards (engine.rerank)
    topic: str = "Other"  # one of engine.intent.topics.TOPICS
    relation: str = "lookup"  # lookup | trend | comparison | explanation | definition | policy
    temporal: tuple[str, ...] = ()  # normalised periods: "FY2022", "2023Q2", "latest year", "latest quarter"
    entities: tuple[str, ...] = ()  # named segments, geographies and products (companies are ``issuers``)
    statements: tuple[str, ...] = ()  # primary statements the question names: income statement | balance sheet | ...
    plan: MetricPlan | None = None  # the metric plan (engine.intent.reader), read once the catalogue is at hand
    # How the question asks its number (engine.intent.units), read once: the answer step never rereads the text
    dimension: str | None = None  # "ratio" | "amount": the kind of number its words ask; None: they do not say
    one_figure: bool = False  # one amount as a filing reports it, no computation asked
    as_percentage: bool = False  # a ratio asked as a percentage (a share, a margin, a growth rate)
    share: bool = False  # a share of something ("as a % of", "what percent", "as a portion of")
    margin: bool = False  # a margin ("D&A margin": an amount as a share of revenue)
    as_of: str | None = None  # ISO day the question asks about ("as of August 30, 2023")
    ytd_months: int = 0  # a quarter's year to date asked ("H1": 6, "nine months", "YTD Q3": 9); 0: not asked
    # several quarters asked without naming them (engine.intent.periods.quarter_run): how many of the latest ("the
    # last four quarters": 4), -1 every one loaded ("these quarters", "each quarter"), 0 none; the company check
    # names them from the library's 10-Qs (engine.retrieval.companies.resolve_latest)
    quarter_run: int = 0
    # several whole years asked as a run (engine.intent.periods.year_run): how many of the latest ("each of the last
    # three fiscal years": 3), -1 those named or the latest held ("each year from 2020 to 2022"), 0 none; the company
    # check names them from the company's latest loaded 10-K (engine.retrieval.companies.resolve_latest)
    year_run: int = 0
    since: int = 0  # the year a run "since FY2021" starts in (engine.intent.periods.since_year); 0: not asked
    # the fiscal year of an annual report the question names ("in its FY2023 10-K, what was net income in FY2021"):
    # its figures are the ones read (engine.intent.periods.named_report_year); 0: none named
    report_year: int = 0
    item_words: tuple[str, ...] = ()  # its words that may name a line item (engine.intent.wordlists.item_words)
    yes_no: bool = False  # a yes/no question ("does …", "is …", "has …"): it may ask a judgement of a metric
    sections: tuple[str, ...] = ()  # the section kinds its words ask of, best first (engine.vocab.sections); the
    # passage stage ranks their passages for a written question
    # what a written answer's sentences are ranked by: the asked question without the words that only say where to
    # look ("risks", "what drove") nor the directions it offers; "" where not read (the question is used)
    about: str = ""
    offered: str = ""  # the directions it offers as its answer, as written ("increase or decrease"); "" for none
    looks_ahead: bool = False  # it asks what is expected, planned or guided (a year no filing reports yet)
    revised: str = ""  # it asks by how much a figure was revised: the words of what was, "" when it asks none
    # it asks whether there was any of something ("were there any acquisitions or divestitures"): the words it names
    # that with (engine.intent.shape.asked_if_any); () when it asks no such thing
    any_of: tuple[str, ...] = ()


# --- statement facts ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnPeriod:
    """What one column of a statement table measures, as its headers print it."""

    header: str  # the column's own header cell: "2018", "February 2, 2019"
    fiscal_year: int
    end: str | None  # ISO date of the period's end (or the instant) when the headers print month and day
    months: int | None  # duration: 3, 6, 9 or 12; 0 for an instant (a balance sheet date); None: not stated
    group: str = ""  # the column group printed over it when periods repeat ("Pension", "Unbillable"), or ""
    trailing: bool = False  # twelve months ending at a quarter's end (a 10-Q's TTM column), not a fiscal year

    @property
    def label(self) -> str:
        """"FY2018", "3M to 2023-06-30", "TTM to 2022-09-30", "as of 2019-02-02" (an instant), "2018 (period not
        stated)"; a column group leads: "Pension · FY2018"."""
        if self.trailing:
            when = f"TTM to {self.end}"
        elif self.months == 0:
            when = f"as of {self.end}" if self.end else f"FY{self.fiscal_year} end"
        elif self.months == 12:
            when = f"FY{self.fiscal_year}"
        elif self.months is None:
            when = f"{self.fiscal_year} (period not stated)"
        else:
            when = f"{self.months}M to {self.end}" if self.end else f"{self.months}M of {self.fiscal_year}"
        return f"{self.group} · {when}" if self.group else when


@dataclass(frozen=True)
class StatementFact:
    """One printed value of a statement table: row × column, with its period, scale and where it is printed."""

    page_index: int  # 0-based
    statement: str  # income statement | balance sheet | cash flows | equity | table
    title: str  # the table's title line as printed
    label: str  # the row label ("Inventories")
    parent: str  # the heading the row sits under ("Current assets"), or ""
    is_total: bool
    column: int
    period: ColumnPeriod
    printed: str  # the cell as printed: "(1,577)", "—"
    value: float  # the number, sign applied (parentheses negative, a dash zero), before scaling
    scale: str | None  # thousands | millions | billions as the table prints its amounts; None: as printed
    unit: str  # USD | USD/share | shares | count | % | ratio | years
    char_start: int  # the cell's characters in the page text
    char_end: int
    confidence: str = "high"  # "low": the column's period is not stated by its headers
    source: str = "table"  # table: read from the page's text layout | xbrl: an inline XBRL tag (exact)
    concept: str | None = None  # us-gaap concept ("InventoryNet"): tagged (xbrl) or mapped from the label
    box: tuple[float, float, float, float] | None = None  # the cell on the PDF page (x0, y0, x1, y1), points

    @property
    def row(self) -> str:
        """The row as an analyst names it: "Current assets › Inventories"."""
        return f"{self.parent} › {self.label}" if self.parent else self.label

    @property
    def scaled_value(self) -> float:
        return self.value * SCALE_FACTORS[self.scale] if self.scale else self.value


@dataclass(frozen=True)
class StoredFact:
    """A statement fact as the library keeps it: with its filing and the chunk its cell is printed in."""

    id: int
    filing_id: int
    doc_name: str
    chunk_id: int | None
    fact: StatementFact
    score: float = 0.0  # a search's relevance (higher is better); 0 when listed, not searched
    printed_folio: str | None = None  # the number the fact's page prints, when one was read


# --- evidence cards (engine.rerank.cards) --------------------------------------------------------------------


@dataclass(frozen=True)
class CardSpan:
    """Where a card's field value is printed: characters of the chunk's indexed text (header context, then text)."""

    field: str  # entities | metrics | numbers | periods
    value: str
    start: int
    end: int


@dataclass(frozen=True)
class Card:
    """What a chunk can serve as evidence for (FinCards Fig. 3): the fields a question's intent is matched against.

    Every listed entity, number and period is printed in the chunk (``spans`` says where); a field a model
    proposed that the chunk does not print is dropped and named in ``dropped``."""

    chunk_id: int
    topic: str  # engine.intent.topics.TOPICS
    section: str  # "Item 7 MD&A", "income statement", or ""
    entities: tuple[str, ...]
    metrics: tuple[str, ...]  # canonical metric names (engine.vocab.lexicon)
    numbers: tuple[str, ...]  # verbatim
    periods: tuple[str, ...]  # normalised: "FY2022", "2022-12" (a month-end), "3M to 2023-06-30"
    evidence_type: str  # table_numeric | narrative_numeric | qualitative_explanation | policy_text | guidance | none
    claim_role: str  # primary_evidence | supporting_context | definition | caveat | boilerplate | structural_heading
    scope: str  # company | segment | geography | product | unknown
    basis: str  # GAAP | non-GAAP | adjusted | reported | unknown
    summary: str
    spans: tuple[CardSpan, ...] = ()
    source: str = "rules"  # rules | facts (a table's fields from its statement facts) | model (plus a model pass)
    dropped: tuple[str, ...] = ()
    statement: str = ""  # the primary statement its facts are read from (income statement | balance sheet | ...)
    phrases: tuple[str, ...] = ()  # its key phrases as printed (a narrative's), or its rows' labels (a table's)

    @property
    def boilerplate(self) -> bool:
        return self.claim_role in ("boilerplate", "structural_heading")

    @property
    def years(self) -> set[int]:
        return period_years(self.periods)


_YEAR_IN = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")


def annual_reports(filings: Sequence[Filing]) -> dict[int, int]:
    """Filing id -> fiscal year of the 10-Ks among ``filings`` (a year's figures as first reported)."""
    return {f.id: f.identity.fiscal_year for f in filings
            if f.identity.fiscal_year and (f.identity.form or "").upper().replace("-", "") == "10K"}


def period_years(periods: Sequence[str]) -> set[int]:
    """The years normalised period labels name ("FY2022", "3M to 2023-06-30", "as of 2022-12-31")."""
    return {int(m) for p in periods for m in _YEAR_IN.findall(p)}


# --- the question path's records -------------------------------------------------------------------------
# Everything a stage hands to the next one, and every stage's trace payload. Payloads are serialised and
# read back in one place, :mod:`engine.trace`; readers (CLI, export, eval, the app) consume these types.


@dataclass(frozen=True)
class PassageCandidate:
    """One passage the passage stage ranked, with every scorer's score (a row of the Passages table)."""

    chunk_id: int
    doc_name: str
    page_index: int  # 0-based
    kept: bool
    rank: int
    final: float
    rrf: float
    bm25: float
    bm25_rank: int  # 0: outside the BM25 ranking of the chosen filings
    dense: float
    dense_rank: int
    snippet: str = ""
    line_item_rank: int | None = None  # rank among the table chunks whose rows print the asked line items
    line_items: tuple[str, ...] = ()  # those rows' labels
    cross: float | None = None  # the cross-encoder's score, when one ran
    printed_folio: str | None = None  # the number its page prints, when one was read
    section: str = ""  # the filing's section it is printed in
    section_rank: int | None = None  # rank among the narrative passages of the sections the question asks of


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk with the title the models see; ``candidate`` holds how it was ranked."""

    chunk: Chunk
    title: str
    candidate: PassageCandidate | None = None

    def prompt_text(self) -> str:
        return self.chunk.indexed_text


@dataclass(frozen=True)
class PassageRef:
    """A passage as a prompt numbered it (``id`` from 1) and where it sits."""

    id: int
    chunk_id: int
    doc_name: str
    page_index: int  # 0-based
    title: str = ""
    printed_folio: str | None = None  # the number its page prints, when one was read

    @classmethod
    def of(cls, number: int, passage: Passage) -> PassageRef:
        c = passage.chunk
        return cls(number, c.id, c.doc_name, c.page_index, passage.title, c.printed_folio)


@dataclass(frozen=True)
class DocumentCandidate:
    """One filing the document stage ranked (a row of the Documents table)."""

    filing_id: int
    doc_name: str
    title: str
    dense: float
    dense_rank: int
    score: float
    rank: int
    kept: bool
    why: str


@dataclass(frozen=True)
class ProgramVariable:
    """A figure the model put into its program: its name, value, the passage it was read from and the label
    (row) the model says it sits on."""

    name: str
    value: float
    passage_id: int
    label: str = ""


@dataclass(frozen=True)
class Grounding:
    """Where a figure of a model-written answer is printed: in the passage(s) it cites."""

    variable: str
    value: float
    cited: tuple[int, ...]  # passage numbers the figure is attributed to
    verified: bool  # printed in a cited passage
    found_in: tuple[int, ...]  # every passage that prints it
    label: str = ""
    on_row: bool | None = None  # the row check of runs before numbers came from facts (read back, never set)


@dataclass(frozen=True)
class ScaleConversion:
    """An amount converted from the scale its passages print to the one asked (runs before numbers came from
    facts: read back, never set now)."""

    printed: str
    asked: str
    factor: float
    before: float


@dataclass(frozen=True)
class Computation:
    """What the restricted evaluator computed from the model's program."""

    value: float
    variables: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    scale: ScaleConversion | None = None


@dataclass(frozen=True)
class Citation:
    """A page an answer cites; people read it as :func:`engine.pages.cite` writes it: "p. 47 (printed 46)"."""

    passage_id: int
    chunk_id: int
    doc_name: str
    page_index: int  # 0-based
    title: str
    printed_folio: str | None = None  # the number the page prints, when one was read

    @classmethod
    def of(cls, passage_id: int, passage: Passage) -> Citation:
        c = passage.chunk
        return cls(passage_id, c.id, c.doc_name, c.page_index, passage.title, c.printed_folio)


@dataclass(frozen=True)
class Quote:
    """A sentence a written answer quotes, as printed: ``text == page_text[char_start:char_end]``."""

    number: int  # [n] in the answer's synthesis
    passage_id: int  # the passage it is printed in (the answer stage's refs)
    chunk_id: int
    doc_name: str
    page_index: int  # 0-based
    char_start: int
    char_end: int
    text: str
    title: str = ""  # the filing's title
    section: str = ""  # the filing's section it is printed in
    printed_folio: str | None = None
    score: float = 0.0  # its rank fusion score among the sentences of the passages (higher is better)
    header: str = ""  # a table row's column headings (the table's header row above it), "" for a sentence


@dataclass(frozen=True)
class FactInputRef:
    """One input of a metric computed from statement facts, as the trace and the answer show it."""

    variable: str  # the program's name for it ("inventory_1": a year before)
    item: str  # the line item in words
    fact_id: int | None  # None: an optional row the statement does not print, taken as 0
    doc_name: str = ""
    page_index: int = 0  # 0-based
    chunk_id: int | None = None
    row: str = ""  # "Current assets › Inventories"
    period: str = ""  # "as of 2018-12-31"
    printed: str = ""
    scale: str | None = None
    value: float = 0.0  # in USD, as the formula takes it
    found_by: str = ""  # "": the only value of its concept; else how it was chosen ("the model's choice of 3 rows")
    printed_folio: str | None = None  # the number its page prints, when one was read
    why: str = ""  # why this printing over the others of the line ("the balance sheet itself; also printed on …")

    def chosen(self) -> str:
        """How and why this cell was taken, as the inputs tables say it."""
        if self.fact_id is None:
            return "not printed on the statement, taken as 0"
        return "; ".join(x for x in (self.found_by, self.why) if x) or "the only printing of the line for the period"

    def describe(self) -> str:
        """Where the input was read, as the answer states it (the page as people cite it: engine.pages)."""
        if self.fact_id is None:
            return "not printed on the statement, taken as 0"
        scale = f" {self.scale}" if self.scale else ""
        how = f" ({self.found_by})" if self.found_by else ""
        where = cite(self.doc_name, self.page_index, self.printed_folio)
        return f"{self.row} | {self.period} | {self.printed}{scale} | {where}{how}"


@dataclass(frozen=True)
class AnswerResult:
    status: str  # answered | not_answerable | failed
    text: str
    value: float | None = None
    unit: str | None = None
    method: str = ""  # pot | cot
    citations: tuple[Citation, ...] = ()
    program: str = ""
    variables: tuple[ProgramVariable, ...] = ()
    computed: Computation | None = None
    reasoning: str = ""
    grounding: tuple[Grounding, ...] = ()
    reason: str = ""
    inputs: tuple[FactInputRef, ...] = ()  # the statement facts a computed answer used, each with its cell
    choices: tuple[str, ...] = ()  # the loaded companies to pick from, when the question named none the check took
    quotes: tuple[Quote, ...] = ()  # a written answer's evidence sentences, ranked; its synthesis cites them


@dataclass(frozen=True)
class LlmCall:
    """One model call as the audit trail shows it: prompt, raw output(s), tokens, time."""

    purpose: str
    model_id: str
    messages: tuple[dict[str, str], ...]
    raw: str
    raw_attempts: tuple[str, ...]
    tokens_in: int
    tokens_out: int
    seconds: float
    attempts: int
    error: str = ""
    cached_tokens: int = 0  # of tokens_in, how many the model took from its prefix cache
    load_seconds: float = 0.0  # loading the model before this call (its first, in a process), apart from ``seconds``


# --- stage payloads: one per stage; ``STAGE`` is the stage's name in the trace ------------------------


@dataclass(frozen=True)
class IntentPayload:
    STAGE: ClassVar[str] = "intent"
    intent: QueryIntent


@dataclass(frozen=True)
class RewritePayload:
    STAGE: ClassVar[str] = "rewrite"
    question: str
    rewritten: str


@dataclass(frozen=True)
class DocumentsPayload:
    STAGE: ClassVar[str] = "documents"
    query: str
    scorer: str
    filter: str  # the metadata restriction applied, or "none"
    k_candidates: int
    k_keep: int
    candidates: tuple[DocumentCandidate, ...]  # the best ones, not all: see n_candidates
    n_candidates: int
    company_check: str = ""  # which loaded companies the question names (engine.retrieval.companies)
    loaded: str = ""  # what the stage loaded first and how long it took (the first question that retrieves)

    @property
    def kept(self) -> tuple[DocumentCandidate, ...]:
        return tuple(c for c in self.candidates if c.kept)


@dataclass(frozen=True)
class PassagesPayload:
    STAGE: ClassVar[str] = "passages"
    query: str
    lexical_query: str
    scorer: str
    filings: tuple[str, ...]
    prefilter: int
    line_item_hits: int
    dense_vectors: str
    k_keep: int
    candidates: tuple[PassageCandidate, ...]
    sections: tuple[str, ...] = ()  # the section kinds a written question asks of (their passages ranked first)

    @property
    def kept(self) -> tuple[PassageCandidate, ...]:
        return tuple(c for c in self.candidates if c.kept)


@dataclass(frozen=True)
class CurationPayload:
    STAGE: ClassVar[str] = "curation"
    shown: tuple[PassageRef, ...]
    kept: tuple[int, ...]  # chunk ids
    dropped: tuple[int, ...]
    answerable: bool
    missing_information: str
    complementary_question: str
    model_output_usable: bool
    held: tuple[int, ...] = ()  # of ``kept``: dropped by the curator but holding a fact the question needs

    def verdict(self, chunk_id: int) -> str:
        if chunk_id in self.held:
            return "kept (holds a needed fact; the curator dropped it)"
        return "kept" if chunk_id in self.kept else "dropped" if chunk_id in self.dropped else "not judged"


@dataclass(frozen=True)
class CurationStopPayload:
    STAGE: ClassVar[str] = "curation-stop"
    reason: str


@dataclass(frozen=True)
class FactsPayload:
    """The sufficiency check of a numeric question over the statement facts: the metric and its formula, the
    fact that fills each input, and the inputs still missing (each named as the analyst would)."""

    STAGE: ClassVar[str] = "facts"
    company: str
    fiscal_year: int
    metric: str
    mode: str  # value | growth | cagr | average
    formula: str  # in words
    inputs: tuple[FactInputRef, ...] = ()
    gaps: tuple[str, ...] = ()
    query: str = ""  # a complementary round's question, built from the gaps of the round before


@dataclass(frozen=True)
class RerankGroup:
    """One model call of a tournament: the candidates it was shown and what it returned."""

    stage: str  # screen (FinCards Stage 2) | bootstrap (Stage 3) | pick (batch picker) | judge (listwise judge)
    round: int  # the bootstrap round (from 1); 0 for the other stages
    group: int
    members: tuple[int, ...]  # chunk ids, in the order shown
    order: tuple[int, ...]  # the picks (screen, pick) or the complete ranking (bootstrap, judge), best first
    reasons: tuple[str, ...] = ()  # one per ``order`` entry where the model gave one
    scores: tuple[int, ...] = ()  # relevance 1–5 per pick (screen; 0–100 in runs stored before 2026-11-27)
    fallback: str = ""  # what the engine did where the output was unusable or incomplete


@dataclass(frozen=True)
class EloMatch:
    """One head-to-head of the pairwise referee and the two ratings after it (eq. 6)."""

    a: int
    b: int
    winner: int | None  # None: no usable verdict (the ratings are unchanged)
    rating_a: float
    rating_b: float
    fallback: str = ""


@dataclass(frozen=True)
class RerankRow:
    """One Stage 1 candidate and every term that placed it."""

    chunk_id: int
    doc_name: str
    page_index: int
    stage1_rank: int  # BM25 rank within the chosen filings
    bm25: float
    finalist: bool  # passed the screen (FinCards Stage 2, the batch picker); every candidate in cards mode
    screen_score: int | None = None  # the screen's relevance (1–5; 0–100 in older runs)
    borda: float | None = None  # Stage 3: normalised Borda scores summed over rounds
    round_ranks: tuple[int, ...] = ()  # Stage 3: its place in its group, round by round (1 = best)
    listwise_rank: int | None = None  # the listwise judge's rank
    elo: float | None = None  # the referee's final rating
    rrf: float | None = None  # fusion of the listwise and pairwise orders (eq. 7)
    align: float = 0.0  # eq. 8
    align_terms: str = ""  # "entity 0.50 · metric 1.00 · period ✓ · numbers ✓"
    matched: tuple[str, ...] = ()  # the card fields that match the intent: "metric: revenue", "period: FY2022"
    final: float = 0.0
    rank: int = 0
    kept: bool = False
    moved: str = ""  # why diversity moved it down
    printed_folio: str | None = None
    card: Card | None = None  # the card it was matched as (its spans left out: they point into the chunk's text)


@dataclass(frozen=True)
class RerankPayload:
    """How a card-based reranker ordered the chosen filings' passages (engine.rerank): its stages, each model
    call's group and answer, Borda scores per round, Elo ratings per match, fusion and alignment terms."""

    STAGE: ClassVar[str] = "rerank"
    mode: str  # cards | tournament | tournament-s2 | multiagent
    seed: int
    intent_fields: tuple[str, ...]  # the intent as matched: "topic: Revenue", "metrics: revenue", ...
    n_chunks: int  # L: the chosen filings' chunks
    stage1: int  # N: kept by BM25 (FinCards eq. 5)
    finalists: int  # kept by the screen
    groups: tuple[RerankGroup, ...] = ()
    matches: tuple[EloMatch, ...] = ()
    rounds: int = 0  # bootstrap rounds run
    stop: str = ""  # why the bootstrap stopped
    rank_variance: float | None = None
    cards: str = ""  # where the cards came from: "rules 120 · facts 25 · model 5 (2 fields dropped)"
    rows: tuple[RerankRow, ...] = ()  # best first
    fallbacks: tuple[str, ...] = ()
    jaccards: tuple[float, ...] = ()  # Stage 3: the top-k Jaccard of each round with the one before (from round 2)
    intent_pass: tuple[str, ...] = ()  # the model intent pass: what it added and what was dropped, and why

    @property
    def kept(self) -> tuple[RerankRow, ...]:
        return tuple(r for r in self.rows if r.kept)


@dataclass(frozen=True)
class AnswerPayload:
    STAGE: ClassVar[str] = "answer"
    answer: AnswerResult
    passages: tuple[PassageRef, ...] = ()  # what the answer step read


StagePayload = (IntentPayload | RewritePayload | DocumentsPayload | PassagesPayload | CurationPayload
                | CurationStopPayload | FactsPayload | RerankPayload | AnswerPayload)
PAYLOAD_TYPES: dict[str, type[StagePayload]] = {
    t.STAGE: t for t in (IntentPayload, RewritePayload, DocumentsPayload, PassagesPayload, CurationPayload,
                         CurationStopPayload, FactsPayload, RerankPayload, AnswerPayload)
}


@dataclass(frozen=True)
class StageTrace:
    """One stage of one run: its typed payload, the model calls it made, its time; ``seq`` orders a run's
    stages (set when the runner records it)."""

    round: int
    payload: StagePayload
    seconds: float
    llm_calls: tuple[LlmCall, ...] = ()
    seq: int = 0

    @property
    def stage(self) -> str:
        return self.payload.STAGE

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.llm_calls)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.llm_calls)

    @property
    def tokens_cached(self) -> int:
        return sum(c.cached_tokens for c in self.llm_calls)


@dataclass(frozen=True)
class RunCost:
    seconds: float = 0.0  # wall clock from the ask (the click) to the answer, setup included
    retrieval_seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    llm_calls: int = 0
    setup_seconds: float = 0.0  # before the first stage: building the question path (the first question after start
    # or a settings change) and waiting for the worker
    model_load_seconds: float = 0.0  # loading the chat model at the run's first model call (the first after start)


@dataclass(frozen=True)
class StoredRun:
    """A run as the library keeps it: what was asked, how it ended, its cost and its stages."""

    id: str
    kind: str
    question: str
    status: str  # running | answered | not_answerable | failed | cancelled | interrupted
    started_at: str
    finished_at: str | None
    error: str
    answer: AnswerResult | None
    cost: RunCost | None
    traces: tuple[StageTrace, ...]
    settings_json: str = ""

    def stages(self, name: str) -> list[StageTrace]:
        return [t for t in self.traces if t.stage == name]


# --- an HTML filing as read (engine.ingest.html writes it, engine.facts.xbrl reads its tags) ---------------------


@dataclass(frozen=True)
class TaggedValue:
    """One ``ix:nonFraction`` as printed: ``page_text[char_start:char_end] == printed``.

    Attributes are the tag's own (``scale`` 0 when absent, ``sign`` "-" or "", ``fmt`` the ``format``
    QName such as "ixt:num-dot-decimal"); interpreting them is :mod:`engine.facts.xbrl`'s job.
    """

    page_index: int  # 0-based
    char_start: int
    char_end: int
    concept: str  # "us-gaap:InventoryNet"
    context: str  # the contextref
    unit: str  # the unitref
    scale: int
    sign: str
    fmt: str
    printed: str
    decimals: str = ""


@dataclass(frozen=True)
class XbrlContext:
    """An ``xbrli:context``: its period (dates as written, ``YYYY-MM-DD``) and dimension members.

    ``members`` holds one "dimension=member" string per ``xbrldi:explicitMember`` (QNames as written, e.g.
    "us-gaap:StatementBusinessSegmentsAxis=acme:AmericasMember"), or "dimension=value" for a typed member.
    """

    id: str
    start: str | None
    end: str | None
    instant: str | None
    members: tuple[str, ...] = ()


@dataclass(frozen=True)
class HtmlDocument:
    """An HTML filing's page texts and its inline XBRL: tagged values, contexts by id, unit measures by id
    ("iso4217:USD", "iso4217:USD/xbrli:shares")."""

    pages: tuple[str, ...]
    tagged: tuple[TaggedValue, ...] = ()
    contexts: dict[str, XbrlContext] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    dei: dict[str, str] = field(default_factory=dict)  # "dei:EntityCentralIndexKey" → "0000066740" (first of each)
    entity_cik: str | None = None  # the CIK of the contexts' entity identifier (scheme http://www.sec.gov/CIK)
