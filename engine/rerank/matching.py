"""A question's intent against a chunk's card: which fields match, the alignment score (paper 002 eq. 8), the
cards-only score, and the compact line a model reads a card as (:func:`compact_line`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.intent.topics import topic_of
from engine.records import Card, QueryIntent, period_years
from engine.rerank.algorithms import AlignTerms, AlignWeights, alignment
from engine.settings import RerankSettings
from engine.vocab.catalogue import Catalogue
from engine.vocab.lexicon import line_item_metrics

_NUMERIC_TYPES = ("table_numeric", "narrative_numeric")
_EXPLAINING = ("qualitative_explanation", "policy_text", "guidance")


@dataclass(frozen=True)
class Demand:
    """The intent as cards are matched against it: entities (companies' names, segments, geographies), metrics,
    years the periods must touch, the line items whose rows hold the figures and the statements they are printed
    on (named in the question, or the catalogue's statement of each line item), and the rest of the FinCards
    intent."""

    entities: tuple[str, ...]
    metrics: tuple[str, ...]
    years: frozenset[int]
    latest: bool  # "latest year/quarter": the filing's own period
    numeric: bool
    relation: str
    topic: str
    items: tuple[str, ...] = ()  # line-item metrics (a ratio's components)
    statements: tuple[str, ...] = ()
    annual: bool = False  # whole fiscal years asked (no quarter): an interim period does not match them
    model: tuple[str, ...] = ()  # the values the model intent pass added (engine.rerank.intent_pass)

    @classmethod
    def of(cls, intent: QueryIntent, catalogue: Catalogue | None = None) -> Demand:
        items = line_item_metrics(intent.metrics)
        statements = list(intent.statements)
        if catalogue is not None and intent.numeric:
            where = {name: it.statement for it in catalogue.items.values() for name in catalogue.metrics_of(it.name)}
            statements += [where[m] for m in items if m in where]
        return cls(tuple(intent.entities), tuple(intent.metrics),
                   frozenset(intent.fiscal_years), any(t.startswith("latest") for t in intent.temporal),
                   intent.numeric, intent.relation, intent.topic, items, tuple(dict.fromkeys(statements)),
                   bool(intent.annual_years) and not intent.quarters)

    @property
    def card_matching(self) -> bool:
        """Whether the cards can tell this question's evidence from the rest: it asks for a metric, a line item
        or a statement, which cards carry as fields. A question that asks for none ("what inventory risks does
        the filing name?") would be matched on what every candidate of its filing shares — the asked year,
        printed figures, a topic or a role — which says nothing about the passage it needs, and as a bonus of
        up to several times the whole fused ranking's spread it would bury the passage that the question's
        words and meaning found."""
        return bool(self.metrics or self.items or self.statements)

    def fields(self) -> tuple[str, ...]:
        """The intent as the trace lists it."""
        out = [f"topic: {self.topic}", f"relation: {self.relation}",
               f"numeric evidence: {'required' if self.numeric else 'not required'}"]
        if self.metrics:
            out.append("metrics: " + ", ".join(self.metrics))
        if self.items and self.items != self.metrics:
            out.append("line items: " + ", ".join(self.items))
        if self.statements:
            out.append("statements: " + ", ".join(self.statements))
        if self.years:
            out.append("years: " + ", ".join(str(y) for y in sorted(self.years)))
        if self.latest:
            out.append("period: the latest reported")
        if self.entities:
            out.append("entities: " + ", ".join(self.entities))
        if self.model:
            out.append("added by the model: " + "; ".join(self.model))
        return tuple(out)


_INTERIM = re.compile(r"^(?:[1-9]|1[01])M\b|^Q[1-4]\b|\d{4}Q[1-4]")


def _eligible(card: Card, demand: Demand) -> list[str]:
    """The card's periods that can answer the question: no interim period where whole years are asked."""
    return [p for p in card.periods if not (demand.annual and _INTERIM.search(p))]


def period_match(card: Card, demand: Demand, filing_year: int | None) -> bool:
    """PeriodMatch(P_c, Θ_q): the card's periods touch an asked year ("3M to 2023-09-30" is not fiscal 2023 when
    the question asks for whole years); "latest" asks for the filing's own year; a question that names no period
    matches no card."""
    years = period_years(_eligible(card, demand))
    if demand.years:
        return bool(years & demand.years)
    if demand.latest and filing_year is not None:
        return filing_year in years
    return False


def matched_fields(card: Card, demand: Demand, filing_year: int | None) -> tuple[str, ...]:
    """The card fields that satisfy the intent, as the trace and the Cards view name them."""
    out = [f"metric: {m}" for m in card.metrics if m in demand.metrics or m in demand.items]
    if card.statement and card.statement in demand.statements:
        out.append(f"statement: {card.statement}")
    low = {e.lower() for e in card.entities}
    out += [f"entity: {e}" for e in demand.entities if e.lower() in low]
    if period_match(card, demand, filing_year):
        touching = [p for p in _eligible(card, demand) if any(str(y) in p for y in (demand.years or {filing_year}))]
        out.append("period: " + ", ".join(touching[:4]))  # whole periods (the Cards view marks each)
    if demand.numeric and card.numbers:
        out.append(f"numbers: {len(card.numbers)}")
    if demand.numeric and card.evidence_type in _NUMERIC_TYPES:
        out.append(f"type: {card.evidence_type}")
    if not demand.numeric and card.evidence_type in _EXPLAINING:
        out.append(f"type: {card.evidence_type}")
    return tuple(out)


def align(card: Card, demand: Demand, filing_year: int | None, s: RerankSettings) -> AlignTerms:
    """Eq. 8 for one card."""
    w = AlignWeights(s.align_entity, s.align_metric, s.align_period, s.align_numeric)
    return alignment(card.entities, card.metrics, period_match(card, demand, filing_year), bool(card.numbers),
                     demand.entities, demand.metrics, demand.numeric, w)


def terms_text(t: AlignTerms) -> str:
    return (f"entity {t.entity:.2f} · metric {t.metric:.2f} · period {'✓' if t.period else '✗'} · "
            f"numbers {'✓' if t.numeric else '✗'}")


def coverage(card: Card, demand: Demand) -> float:
    """The share of the asked line items the card names (eq. 8's metric Jaccard divides by the card's metrics
    too, so a whole statement, which names every line item, would lose to a one-row table)."""
    return sum(m in card.metrics for m in demand.items) / len(demand.items) if demand.items else 0.0


def card_fit(card: Card, demand: Demand) -> float:
    """Field matching beyond eq. 8: the share of the asked line items the card names; a table read from the
    statement the question names or its line items are printed on; the evidence type the relation calls for
    (a table or printed figures for a numeric lookup, explanatory text for a why or a policy); boilerplate and
    bare headings pushed down."""
    fit = coverage(card, demand)
    if card.statement and card.statement in demand.statements:
        fit += 1.0
    if demand.numeric:
        fit += 0.5 if card.evidence_type == "table_numeric" else 0.25 if card.evidence_type == "narrative_numeric" else 0
    elif demand.relation in ("explanation", "definition", "policy"):
        fit += 0.5 if card.evidence_type in _EXPLAINING or card.claim_role == "definition" else 0
    if card.claim_role == "primary_evidence":
        fit += 0.25
    if card.boilerplate:
        fit -= 1.0
    if demand.topic != "Other" and card.topic == demand.topic:
        fit += 0.25
    if demand.topic != "Other" and card.section and topic_of(card.section) == demand.topic:
        fit += 0.25  # the section's heading names the asked topic ("Legal Proceedings", "Risk Factors")
    return fit


_KIND = {"table_numeric": "table", "narrative_numeric": "figures", "qualitative_explanation": "explanation",
         "policy_text": "policy", "guidance": "guidance", "none": "heading"}
_ROLE_SAID = ("boilerplate", "structural_heading", "definition", "caveat")
_DAY = re.compile(r"\b((?:19|20)\d\d-\d\d)-\d\d$")  # the day ending a period label (records.Period.label)


def _period(label: str) -> str:
    """A period label in fewer tokens (the model's tokenizer reads each digit apart): a balance's day and a
    period's end day to their month ("as of 2019-12-31" → "at 2019-12", "3M to 2023-06-30" → "3M to 2023-06")."""
    month = _DAY.sub(r"\1", label)
    return f"at {month[6:]}" if month.startswith("as of ") else month


def _where(card: Card, words: int = 5) -> str:
    """Where the passage is, in a few words: the statement its table is read as (a filing often prints its
    statements under an item heading that says nothing of them: "Item 16 Form 10-K Summary"), else its section."""
    where = card.statement.capitalize() if card.statement else card.section or "section unknown"
    cut = where.split()
    return " ".join(cut[:words]) + ("…" if len(cut) > words else "")


def compact_line(number: int, card: Card, chars: int = 100) -> str:
    """A card as a small model on a CPU reads it in a tournament prompt, about thirty tokens: where it is
    (statement or section), the kind of evidence (and a role worth knowing: boilerplate, heading, definition,
    caveat; a scope or basis other than the company's reported one), two periods, three metrics and its key
    phrases (a table's rows) as many whole as fit in ``chars``. Printed figures are left out: the screening rubric judges
    metric, period, scope and kind, and a figure costs a token a digit."""
    head = [f"[{number}] {_where(card)}",
            _KIND.get(card.evidence_type, card.evidence_type)
            + (f", {card.claim_role.replace('_', ' ')}" if card.claim_role in _ROLE_SAID else "")]
    if card.scope not in ("company", "unknown"):
        head[-1] += f", {card.scope}"
    if card.basis in ("non-GAAP", "adjusted"):
        head[-1] += f", {card.basis}"
    if card.periods:
        head.append(" ".join(_period(p) for p in card.periods[:2]))
    about = [p for p in card.phrases[:3] if p] or [" ".join(card.summary.split()[:10])]
    # three metrics where the first phrase fits beside them, else two (the rows say the rest)
    for k in (3, 2, 1):
        line = " | ".join([*head, ", ".join(card.metrics[:k])] if card.metrics else head)
        if len(line) + 3 + len(about[0]) <= chars:
            break
    for n, phrase in enumerate(p for p in about if p):  # whole phrases while they fit; the first cut at worst
        more = f"{line}{' | ' if n == 0 else '; '}{phrase}"
        if len(more) > chars and n > 0:
            break
        line = more
    return line if len(line) <= chars else line[: chars - 1].rstrip() + "…"
