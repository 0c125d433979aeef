"""Which part of a total: "which segment had the lowest net revenue", "which region had the worst topline
performance" — a choice among the parts the filing itself prints of a total, computed from the facts.

A table's **parts** of a total row that names the asked amount ("Reportable segment net revenues", "Total net
sales") are either the rows printed just above it under the same heading (a flat table: "Americas", "Europe",
"Asia Pacific") or the totals of the groups above it (a nested table: each segment's lines and its unlabelled
total). They are taken only when they **add up to the total** (within the rounding of printed figures): a
structural check that the rows are its parts, not a list of something else. Of the tables of the company's annual
report for the year that pass, only those whose page names the parts asked are taken ("which region": a page that
says region, geographic, country …; ``resources/reader/parts.toml``); of those, the one whose own headings or total
name them (else name segments), then the one of the largest total (the whole company's, not one segment's lines). The choice is the largest or smallest value, or growth against the year before read
from the same table's comparative column; every part is listed with its value, so the analyst sees the choice.
A yes/no question of the parts' shares ("are there any categories that represent more than 20% of revenue") is
answered with each part's share of the total that its parts add up to, against the bar the question writes.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from engine.answer.from_facts import year_before
from engine.intent.topics import names_a_geography
from engine.pages import cite
from engine.records import AnswerResult, Citation, FactInputRef, MetricPlan, QueryIntent, StoredFact
from engine.settings import RESOURCES_DIR
from engine.store.library import Library
from engine.vocab.sections import vocab as section_vocab
from engine.vocab.concepts import normalise_label
from engine.vocab.lexicon import find_metrics
from engine.wording import format_value

__all__ = ["MixTable", "Part", "PartsPeriod", "PartsTable", "mix_answer", "mix_tables", "parts_answer", "parts_tables"]

_SUM_TOLERANCE = 0.005  # the parts' sum against the total, relative (printed figures are rounded)
_UNLABELLED = " (unlabeled total)"  # the facts reader's label of a group's total line that prints no label
_NOT_AN_AMOUNT = re.compile(r"\b(?:change|growth|increase|decrease|percent|margin|ratio)\b|%", re.IGNORECASE)
_HEAD_CHARS = 360  # how far above a table's first row its headings are looked for
_HEAD_LINES = 6  # and how many lines


@dataclass(frozen=True)
class Part:
    name: str
    now: StoredFact
    before: StoredFact | None  # the same row a year before (the table's comparative column), when printed


@dataclass(frozen=True)
class PartsTable:
    total: StoredFact  # the row that names the amount and that the parts add up to
    parts: tuple[Part, ...]
    head: str = ""  # the lines printed above its parts (its headings)


def _name(s: StoredFact) -> str:
    label = s.fact.label
    return s.fact.parent if label.endswith(_UNLABELLED) or label.lower() in ("total", f"total {s.fact.parent.lower()}") \
        else label


def _adds_up(parts: Sequence[StoredFact], total: StoredFact) -> bool:
    t = total.fact.scaled_value
    return len(parts) >= 2 and abs(sum(p.fact.scaled_value for p in parts) - t) <= _SUM_TOLERANCE * abs(t) + 1e-9


@dataclass(frozen=True)
class PartsPeriod:
    """The period a table's parts are read for: a fiscal year (``year``), or a quarter's three months to the date
    its 10-Q's cover states (``quarter_end``), whose columns are known by that date (a column's year is its calendar
    year: a fiscal quarter may end in the year before its fiscal year)."""

    year: int
    quarter_end: str | None = None
    label: str = ""  # as the answer says it ("FY2022", "2023Q3"); "" : FY<year>

    @property
    def said(self) -> str:
        return self.label or f"FY{self.year}"

    @property
    def before_said(self) -> str:
        return "the same quarter a year before" if self.quarter_end else f"FY{self.year - 1}"

    def months(self) -> tuple[int | None, ...]:
        return (0, 3) if self.quarter_end else (None, 0, 12)  # (0: a balance, at the period's end)

    def now(self, s: StoredFact) -> bool:
        if self.quarter_end:
            return s.fact.period.end == self.quarter_end
        return s.fact.period.fiscal_year == self.year

    def before(self, s: StoredFact) -> bool:
        if self.quarter_end:
            return year_before(s.fact.period.end, self.quarter_end)
        return s.fact.period.fiscal_year == self.year - 1


def parts_tables(facts: Sequence[StoredFact], metric: str, year: int | PartsPeriod,
                 page_text: Callable[[int, int], str] | None = None) -> list[PartsTable]:
    """The totals among ``facts`` (one filing's) of ``metric`` whose parts the table prints, for the fiscal year
    ``year`` or a quarter (see the module's docstring). A total names the metric in its label ("Total net sales") or, a label
    that names no amount ("Total Company"), in the lines printed just above its parts (a column heading "Net
    Sales 2022 2021", read from ``page_text(filing id, page index)``); it is an amount of at least a million
    dollars, not a change or a rate ("Total sales change" is none)."""
    when = year if isinstance(year, PartsPeriod) else PartsPeriod(year)
    tables: dict[tuple[int, int, str], list[StoredFact]] = {}
    for s in facts:
        if s.fact.unit == "USD" and s.fact.period.months in when.months():
            tables.setdefault((s.filing_id, s.fact.page_index, s.fact.title), []).append(s)
    out: list[PartsTable] = []
    for table_rows in tables.values():
        for column in sorted({s.fact.column for s in table_rows if when.now(s)}):
            out += _column_totals(table_rows, column, metric, when, page_text)
    return out


def _column_totals(rows: Sequence[StoredFact], column: int, metric: str, when: PartsPeriod,
                   page_text: Callable[[int, int], str] | None) -> list[PartsTable]:
    """The totals of one column of a table (a table may print several amounts side by side: net sales and PP&E by
    region) with their parts, and the year before from the column beside it."""
    out: list[PartsTable] = []
    now = sorted((s for s in rows if when.now(s) and s.fact.column == column), key=lambda s: s.fact.char_start)
    beside = [[s for s in rows if when.before(s) and s.fact.column == c] for c in (column + 1, column - 1)]
    before = {(s.fact.parent, s.fact.label): s for s in max(beside, key=len)}
    for k, total in enumerate(now):
        label = total.fact.label
        # (a label that prints its sign's alternative names its amount without it: "Segment operating (loss)/profit")
        named = find_metrics(label) or find_metrics(normalise_label(label))
        if _NOT_AN_AMOUNT.search(label) or abs(total.fact.scaled_value) < 1e6 or (named and metric not in named):
            continue
        if not named and not (total.fact.is_total or label.lower().startswith("total")
                              or label.lower().strip(" :") in _parts_data()["totals"]["words"]):
            continue  # ("Worldwide", "Consolidated": the whole of the rows above)
        above = now[:k]
        # a nested table: each group's total above it (its last total line), groups other than the total's own
        groups: dict[str, StoredFact] = {}
        for s in above:
            if s.fact.is_total and s.fact.parent and s.fact.parent != total.fact.parent:
                groups[s.fact.parent] = s
        # a flat table: the rows just above it under its heading, up to a total or another heading
        flat: list[StoredFact] = []
        for s in reversed(above):
            if s.fact.is_total or s.fact.parent != total.fact.parent:
                break
            flat.insert(0, s)
        # a table of both: lines under the total's own heading and groups with their totals ("Total cash and cash
        # equivalents" among the assets), back to the previous total of the total's own heading
        mixed: list[StoredFact] = []
        seen: set[str] = set()
        for s in reversed(above):
            same = s.fact.parent == total.fact.parent
            if same and s.fact.is_total:
                break
            if same:
                mixed.insert(0, s)
            elif s.fact.parent and s.fact.parent not in seen and s.fact.is_total:
                seen.add(s.fact.parent)
                mixed.insert(0, s)
        # a table of blocks, one per part, each printing the same lines under the part's heading ("North America ›
        # Net sales", "International › Net sales", "AWS › Net sales", then "Consolidated › Net sales"): the total's
        # own line under each other heading above it, the part named by its heading
        blocks: dict[str, StoredFact] = {}
        if total.fact.parent.lower().strip(" :") in _parts_data()["totals"]["words"]:
            for s in above:
                if s.fact.parent and s.fact.parent != total.fact.parent and s.fact.parent not in blocks and (
                        s.fact.label.lower() == label.lower() or named and find_metrics(s.fact.label) == named):
                    blocks[s.fact.parent] = s
        for nested, found in ((True, list(groups.values())), (False, flat), (False, mixed),
                              (True, list(blocks.values()))):
            if not _adds_up(found, total):
                continue
            head = ""
            if page_text is not None:  # the lines printed just above the table's first row: its headings (a flat
                # table's first row is its first part: a page may print several tables of one total, segments then
                # products; a nested table's first group prints its lines before its total)
                text = page_text(total.filing_id, total.fact.page_index)
                start = min(now[0].fact.char_start, found[0].fact.char_start) if nested else found[0].fact.char_start
                lines = [x for x in text[max(0, start - _HEAD_CHARS):start].splitlines() if x.strip()]
                head = "\n".join(lines[-_HEAD_LINES:])
            # a total that names no amount: the nearest heading above the table that names one must name it
            nearest = next((m for line in reversed(head.splitlines()) if (m := find_metrics(line))), ())
            if not named and metric not in nearest:
                break
            by_heading = found is not flat and found is not mixed and not any(s.fact.is_total for s in found)
            out.append(PartsTable(total, tuple(
                Part(s.fact.parent if by_heading else _name(s), s, before.get((s.fact.parent, s.fact.label)))
                for s in found), head))
            break
    return out


def _a_place(p: Part) -> bool:
    """Whether a part's name is a place: a geography, or the rest of the world."""
    name = p.name.lower()
    return names_a_geography(p.name) or any(w in name for w in _parts_data()["regions"]["remainder"])


@lru_cache(maxsize=1)
def _parts_data() -> dict:
    return tomllib.loads((RESOURCES_DIR / "reader" / "parts.toml").read_text(encoding="utf-8"))


def _not_a_part() -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, _parts_data()["not_parts"]["words"])) + ")", re.IGNORECASE)


def _growth(p: Part) -> float | None:
    if p.before is None or p.before.fact.scaled_value == 0:
        return None
    return (p.now.fact.scaled_value / p.before.fact.scaled_value - 1) * 100


def _ref(name: str, s: StoredFact) -> FactInputRef:
    f = s.fact
    return FactInputRef(name, f.label, s.id, s.doc_name, f.page_index, s.chunk_id, f.row, f.period.label, f.printed,
                        f.scale, f.scaled_value, "a part of the total it adds up to", s.printed_folio)


def parts_answer(plan: MetricPlan, intent: QueryIntent, library: Library, annual: dict[int, int],
                 year: int | PartsPeriod) -> AnswerResult | None:
    """The answer to a choice among a total's parts (``plan.status == "parts"``) from the company's annual report
    for ``year`` (``annual``: filing id -> fiscal year of its 10-Ks), or from a quarter's 10-Q (``annual``: its id
    -> the quarter's year, ``year`` the quarter's :class:`PartsPeriod`), or None when it prints no table of the asked
    amount's parts (the written answer reads the filing instead)."""
    when = year if isinstance(year, PartsPeriod) else PartsPeriod(year)
    year = when.year
    metric = plan.tree.name if plan.tree is not None else ""
    filing_ids = [fid for fid, fy in annual.items() if fy == year]
    if not metric or not filing_ids:
        return None
    page_text = lru_cache(maxsize=None)(library.page_text)  # (each page read once: tables share pages)
    tables = parts_tables(library.facts(filing_ids=filing_ids, trailing=False), metric, when, page_text)
    growth = plan.measure == "growth"

    def usable(t: PartsTable) -> bool:
        return not growth or all(_growth(p) is not None for p in t.parts)

    words = tuple(w for kind in plan.part_kinds for w in _parts_data()["kinds"][kind])  # (the reader's kinds)

    sections = library.chunk_sections(filing_ids)
    kinds_in = {k for kind in plan.part_kinds for k in _parts_data()["sections"].get(kind, ())}

    def in_their_section(t: PartsTable) -> bool:  # printed in a section of their kind (the segment note)
        section = sections.get(t.total.chunk_id or -1, ("",))[0]
        return bool(kinds_in & set(section_vocab().kinds_of(section)))

    regions = "region" in plan.part_kinds

    def placed(t: PartsTable) -> bool:  # regions asked: parts named by geography ("Americas", "MGM China")
        return regions and any(names_a_geography(p.name) for p in t.parts)

    def named(t: PartsTable) -> bool:  # the page names the parts asked ("segment", "region", "geographic")
        text = page_text(t.total.filing_id, t.total.fact.page_index)
        return bool(words) and re.search(r"\b(?:" + "|".join(map(re.escape, words)) + ")", text,
                                         re.IGNORECASE) is not None or in_their_section(t) or placed(t)

    tables = [t for t in tables if usable(t) and named(t)]
    if not tables:
        return None

    def own(t: PartsTable) -> int:
        """The table itself (its total, headings) names the parts asked (2), or segments, or it is printed in a
        section of their kind (the segment note) (1); 0: nothing of it says what its rows are."""
        if placed(t):
            return 2
        lead = _lead_in(t.head)
        others = [w for kind, stems in _parts_data()["kinds"].items() if kind not in plan.part_kinds for w in stems]
        if all(_says(p.name, others) and not _says(p.name, words) for p in t.parts):
            return 0  # its rows are named as parts of another kind ("Domestic", "International" for categories)
        if lead and not _says(lead, words) and not _says(lead, ("segment",)) and _says(lead, others):
            return 0  # its lead-in says its rows are parts of another kind ("by groups of similar products")
        text = " ".join([t.total.fact.label, lead or t.head, *(p.now.fact.parent for p in t.parts)])
        for score, said in ((2, words), (1, ("segment",))):
            if re.search(r"\b(?:" + "|".join(map(re.escape, said)) + ")", text, re.IGNORECASE):
                return score
        return 1 if in_their_section(t) else 0

    # a table that says nothing of what its rows are (no heading or total naming them, no segment, no geography)
    # is not taken for them because its page names them elsewhere: "Discount revenue, Net card fees" on a page that
    # speaks of international card members are no regions
    if plan.choice == "named":  # the tables that print the part named as one of their rows (the name the question
        # gives says what the rows are, where the table says nothing of them)
        tables = [t for t in tables if (_named(t.parts, plan.included) if len(plan.included) == 1
                                        else _each_named(t.parts, plan.included)) is not None]
    else:
        tables = [t for t in tables if own(t) > 0]
    if not tables:
        return None
    # the table that names them, of the largest total (the whole company's, not one segment's lines), most parts
    table = max(tables, key=lambda t: (own(t), abs(t.total.fact.scaled_value), len(t.parts),
                                       -t.total.fact.page_index))
    excluded = [e.lower() for e in plan.excluded]
    parts = [p for p in table.parts if not any(e in p.name.lower() for e in excluded)
             and not _not_a_part().search(p.name)]
    placeless: list[str] = []
    if regions and plan.choice in ("largest", "smallest") and sum(map(_a_place, parts)) * 2 > len(parts):
        # a region chosen from a table whose rows are mostly places: a row that names none and calls itself a part of
        # another kind ("Global Brand Divisions") is no region to choose (it stays in the sum the parts are checked
        # against); a row that only names no place the reader knows ("Russia") stays one
        others = [w for kind, stems in _parts_data()["kinds"].items() if kind != "region" for w in stems]
        placeless = [p.name for p in parts if not _a_place(p) and _says(p.name, others)]
        parts = [p for p in parts if p.name not in placeless]
    if len(parts) < 2:
        return None
    if plan.measure == "share":
        return _shares_answer(plan, table, parts, when)
    if plan.choice == "all":
        return _every_part(plan, table, parts, when, metric, intent.decimals)
    if plan.choice == "named" and len(plan.included) > 1:
        return _several_named(plan, table, parts, when, metric, intent.decimals)
    if plan.choice == "named":
        return _named_answer(plan, table, parts, when, metric, intent.decimals)
    value = {p.name: (_growth(p) if growth else p.now.fact.scaled_value / 1e6) or 0.0 for p in parts}
    pick = (max if plan.choice == "largest" else min)(parts, key=lambda p: value[p.name])

    def said(p: Part) -> str:
        if not growth:
            return format_value(value[p.name], "USD millions", intent.decimals)
        assert p.before is not None
        return (f"{value[p.name]:+.2f}% ({format_value(p.before.fact.scaled_value / 1e6, 'USD millions', None)} in "
                f"{when.before_said} to {format_value(p.now.fact.scaled_value / 1e6, 'USD millions', None)} in {when.said})")

    t = table.total
    # a measure the catalogue does not compute (a company's own, "Adjusted Property EBITDAR", or a note's, backlog) is
    # named as its table prints it, and said to be read from it
    outside = plan.tree is not None and not plan.tree.args
    name = re.sub(r"^(?:total|reportable segments?|consolidated)\s+", "", t.fact.label, flags=re.IGNORECASE) \
        if outside else metric
    what = f"{name} growth against the year before" if growth else name
    end = "highest" if plan.choice == "largest" else "lowest"
    left = f"; left out as asked: {', '.join(plan.excluded)}" if plan.excluded else ""
    among = f"{len(parts)} parts"
    if placeless:  # (the regions alone do not add up to the total: the rows that name no place with them)
        among = f"{len(parts)} regions among the parts"
        left += f" with {', '.join(placeless)} (no place named: not chosen among)"
    lead = f"{what} {said(pick)}" if growth else f"{said(pick)} of {what}"
    text = (f"{pick.name}: {lead}, the {end} of the {among} of "
            f"'{t.fact.label}' ({cite(t.doc_name, t.fact.page_index, t.printed_folio)}, {when.said}), which they add "
            f"up to{left}. "
            + "; ".join(f"{p.name}: {said(p)}" for p in parts) + ".")
    refs = tuple(_ref(p.name, s) for p in parts for s in (p.now, p.before) if s is not None) + (_ref("total", t),)
    cited = _total_cited(t)
    unit = "percent" if growth else "USD millions"
    return AnswerResult("answered", text, value[pick.name], unit, method="facts", citations=cited, inputs=refs,
                        reason=f"{name} is read from the filing's table as printed (an amount the catalogue "
                               "does not compute from the statements: a company's own measure, or a note's)"
                               if outside else "",
                        reasoning=f"the {plan.parts or 'parts'} read as the {len(table.parts)} parts of "
                                  f"'{t.fact.label}' that add up to it; {plan.words}, computed from "
                                  f"{'the filing’s table' if outside else 'statement facts'} without a model call")


def _says(text: str, stems: Sequence[str]) -> bool:
    return bool(stems) and re.search(r"\b(?:" + "|".join(map(re.escape, stems)) + ")", text, re.IGNORECASE) is not None


_INTRO = re.compile(r"(?:^|[.;]\s)([^.;]*?):\s*$", re.MULTILINE | re.DOTALL)


def _lead_in(head: str) -> str:
    """The sentence that introduces a table, as its headings end ("Segment revenue and operating income were as
    follows during the periods presented:"; "Revenue, classified by significant product and service offerings, was
    as follows:"), back to the sentence before it: the words that say what the table's rows are. The lines above
    it belong to other text ("… the nature of these businesses …"); a line of column headings prints years. ""
    when no sentence ends in a colon."""
    found = [m for m in _INTRO.finditer(head) if len(m.group(1).split()) >= 3
             and not re.search(r"\b(?:19|20)\d\d\b", m.group(1))]  # (a column heading prints years)
    return found[-1].group(1) if found else ""


def _shares_answer(plan: MetricPlan, table: PartsTable, parts: Sequence[Part], when: PartsPeriod) -> AnswerResult:
    """Which parts have a share of the total above (below) the bar the question writes: yes, naming each with its
    share, or no, naming the nearest; every part's share is listed."""
    t = table.total
    share = {p.name: p.now.fact.scaled_value / t.fact.scaled_value * 100 for p in parts}
    assert plan.bar is not None
    meets = [p for p in sorted(parts, key=lambda p: -share[p.name])
             if (share[p.name] >= plan.bar if plan.judge == ">=" else share[p.name] <= plan.bar)]
    where = f"'{t.fact.label}' ({cite(t.doc_name, t.fact.page_index, t.printed_folio)}, {when.said})"

    def said(p: Part) -> str:
        return f"{p.name} {share[p.name]:.1f}% ({format_value(p.now.fact.scaled_value / 1e6, 'USD millions', None)})"

    if meets:
        lead = f"Yes: {'; '.join(said(p) for p in meets)} of {where}"
    else:
        near = (max if plan.judge == ">=" else min)(parts, key=lambda p: share[p.name])
        lead = f"No: the {'largest' if plan.judge == '>=' else 'smallest'}, {said(near)} of {where}"
    rest = [p for p in parts if p not in meets]
    text = (f"{lead}; the test: {plan.criterion}, among the {len(parts)} parts that add up to it"
            + (f". The others: {'; '.join(said(p) for p in rest)}" if rest and meets else "") + ".")
    refs = tuple(_ref(p.name, p.now) for p in parts) + (_ref("total", t),)
    cited = _total_cited(t)
    top = max(parts, key=lambda p: share[p.name])
    return AnswerResult("answered", text, share[top.name], "percent", method="facts", citations=cited, inputs=refs,
                        reasoning=f"the {plan.parts or 'parts'} read as the {len(table.parts)} parts of "
                                  f"'{t.fact.label}' that add up to it; {plan.words}, each part's share computed "
                                  "from statement facts without a model call")


def _words(name: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", name.lower())) - {"the", "of", "and", "segment", "segments", "region"}


def _named(parts: Sequence[Part], names: Sequence[str]) -> Part | None:
    """The one part whose name holds every word of a name the question gives ("Personal Computing": "More Personal
    Computing"), or None when no part or more than one does."""
    found = {p.name: p for name in names if (words := _words(name)) for p in parts if words <= _words(p.name)}
    return next(iter(found.values())) if len(found) == 1 else None


def _each_named(parts: Sequence[Part], names: Sequence[str]) -> list[Part] | None:
    """The part each name the question gives is (its words all in the part's name, one part only), in the order
    named; None when a name is no part's or several parts'."""
    out: list[Part] = []
    for name in names:
        words = _words(name)
        found = [p for p in parts if words and words <= _words(p.name)]
        if len(found) != 1:
            return None
        out += [found[0]] if found[0] not in out else []
    return out or None


def _several_named(plan: MetricPlan, table: PartsTable, parts: Sequence[Part], when: PartsPeriod, metric: str,
                   decimals: int | None) -> AnswerResult | None:
    """The parts the question names side by side ("US sales growth compared to international"): each one's amount
    and share of the total, or, a change asked, its growth against the year before with both amounts; None when a
    name is no row's, or a growth asked lacks the year before's figure."""
    chosen = _each_named(parts, plan.included)
    growth = plan.measure == "growth"
    if chosen is None or len(chosen) < 2 or growth and any(_growth(p) is None for p in chosen):
        return None
    t = table.total
    total = t.fact.scaled_value

    def said(p: Part) -> str:
        now = format_value(p.now.fact.scaled_value / 1e6, "USD millions", decimals)
        if growth:
            assert p.before is not None
            then = format_value(p.before.fact.scaled_value / 1e6, "USD millions", decimals)
            return f"{p.name}: {_growth(p):+.2f}% ({then} in {when.before_said} to {now} in {when.said})"
        share = p.now.fact.scaled_value / total * 100 if total else 0.0
        return f"{p.name}: {now} ({share:.1f}% of the total)"

    what = f"{metric} growth against the year before" if growth else f"{metric} in {when.said}"
    noun = plan.parts if plan.parts.endswith("s") else f"{plan.parts}s"
    text = (f"{what.capitalize()} — " + "; ".join(said(p) for p in chosen) + f": rows of '{t.fact.label}' "
            f"({cite(t.doc_name, t.fact.page_index, t.printed_folio)}, {when.said}), which its {len(parts)} {noun} add "
            "up to.")
    refs = tuple(_ref(p.name, s) for p in chosen for s in (p.now, p.before) if s is not None) + (_ref("total", t),)
    return AnswerResult("answered", text, method="facts", citations=_total_cited(t), inputs=refs,
                        reasoning=f"'{' / '.join(plan.included)}' read as the rows "
                                  f"{', '.join(f'“{p.name}”' for p in chosen)} of the {len(table.parts)} parts of "
                                  f"'{t.fact.label}' that add up to it; {plan.words}, from statement facts without a "
                                  "model call")


def _named_answer(plan: MetricPlan, table: PartsTable, parts: Sequence[Part], when: PartsPeriod, metric: str,
                  decimals: int | None) -> AnswerResult | None:
    """The amount of the part the question names, as the table of the total's parts prints it, with its share of
    the total they add up to and the year before's where the table prints it."""
    part = _named(parts, plan.included)
    if part is None:
        return None
    t = table.total
    now = part.now.fact.scaled_value / 1e6
    share = part.now.fact.scaled_value / t.fact.scaled_value * 100 if t.fact.scaled_value else 0.0
    before = ""
    if part.before is not None:
        then = part.before.fact.scaled_value / 1e6
        before = (f"; {format_value(then, 'USD millions', decimals)} in {when.before_said}"
                  + (f" ({(now / then - 1) * 100:+.1f}%)" if then else ""))
    what = plan.parts if plan.parts.endswith("s") else f"{plan.parts}s"
    text = (f"{part.name}: {format_value(now, 'USD millions', decimals)} of {metric} in {when.said}, {share:.1f}% of "
            f"'{t.fact.label}' ({cite(t.doc_name, t.fact.page_index, t.printed_folio)}), which its {len(parts)} "
            f"{what} add up to{before}. The others: "
            + "; ".join(f"{p.name} {format_value(p.now.fact.scaled_value / 1e6, 'USD millions', decimals)}"
                        for p in parts if p is not part) + ".")
    refs = tuple(_ref(part.name, s) for s in (part.now, part.before) if s is not None) + (_ref("total", t),)
    return AnswerResult("answered", text, now, "USD millions", method="facts", citations=_total_cited(t),
                        inputs=refs, reasoning=f"'{' / '.join(plan.included)}' read as the row “{part.name}” of the "
                                               f"{len(table.parts)} parts of '{t.fact.label}' that add up to it; "
                                               f"{plan.words}, from statement facts without a model call")


def _every_part(plan: MetricPlan, table: PartsTable, parts: Sequence[Part], when: PartsPeriod, metric: str,
                decimals: int | None) -> AnswerResult:
    """Every part the table prints of the total ("what are its geographies"), largest first, each with its amount
    and share of the total they add up to."""
    t = table.total
    total = t.fact.scaled_value
    ranked = sorted(parts, key=lambda p: -p.now.fact.scaled_value)

    def said(p: Part) -> str:
        share = p.now.fact.scaled_value / total * 100 if total else 0.0
        return f"{p.name} ({format_value(p.now.fact.scaled_value / 1e6, 'USD millions', decimals)}, {share:.1f}%)"

    what = plan.parts or "parts"
    what = what if what.endswith("s") else f"{what}s"  # ("revenue by segment": 3 segments)
    text = (f"{len(ranked)} {what}, by {metric}: {'; '.join(said(p) for p in ranked)} — the parts of "
            f"'{t.fact.label}' ({cite(t.doc_name, t.fact.page_index, t.printed_folio)}, {when.said}), which they add up "
            "to.")
    refs = tuple(_ref(p.name, p.now) for p in ranked) + (_ref("total", t),)
    return AnswerResult("answered", text, method="facts", citations=_total_cited(t), inputs=refs,
                        reasoning=f"the {what} read as the {len(table.parts)} parts of '{t.fact.label}' that add up "
                                  f"to it; {plan.words}, from statement facts without a model call")


@dataclass(frozen=True)
class MixPart:
    name: str
    share: StoredFact  # its share of the total, in percent
    change: StoredFact | None  # its change over the period a year before, from the table's change column


@dataclass(frozen=True)
class MixTable:
    total: StoredFact  # the share column's total row (100%)
    parts: tuple[MixPart, ...]
    change_heading: str  # the change column's heading ("Comparable Sales"), "" when the table prints none


def _heading_has(heading: str, words: Sequence[str]) -> bool:
    return any(re.search(r"(?<![\w%])" + re.escape(w), heading, re.IGNORECASE) for w in words)


def mix_tables(facts: Sequence[StoredFact], months: int, period_end: str) -> list[MixTable]:
    """The tables among ``facts`` (one filing's) that print the parts' shares of a total for the period of
    ``months`` ending ``period_end``: a percent column whose heading names a share ([mix] share), whose rows above
    its total row add up to it, and the total is 100; with each part's change from the column of the same period
    whose heading names a change ([mix] change), when the table prints one."""
    data = _parts_data()["mix"]
    cells: dict[tuple[int, int, str], list[StoredFact]] = {}
    for s in facts:
        if s.fact.unit == "%" and s.fact.period.months == months and s.fact.period.end == period_end:
            cells.setdefault((s.filing_id, s.fact.page_index, s.fact.title), []).append(s)
    out: list[MixTable] = []
    for rows in cells.values():
        by_column: dict[int, list[StoredFact]] = {}
        for s in sorted(rows, key=lambda s: s.fact.char_start):
            by_column.setdefault(s.fact.column, []).append(s)
        changes = {c: col for c, col in by_column.items() if _heading_has(col[0].fact.period.group, data["change"])}
        for col in by_column.values():
            if not _heading_has(col[0].fact.period.group, data["share"]):
                continue
            total = next((s for s in col if s.fact.is_total or s.fact.label.lower().strip(" :") == "total"), None)
            if total is None or abs(total.fact.value - 100) > 0.5:
                continue
            parts = [s for s in col if s.fact.char_start < total.fact.char_start and s is not total]
            if len(parts) < 2 or abs(sum(p.fact.value for p in parts) - 100) > max(1.0, 0.5 * len(parts)):
                continue  # (shares printed as whole percents: each off by up to half a point)
            change_col = next(iter(changes.values()), [])
            change = {s.fact.label: s for s in change_col}
            out.append(MixTable(total, tuple(MixPart(p.fact.label, p, change.get(p.fact.label)) for p in parts),
                                change_col[0].fact.period.group if change_col else ""))
    return out


def mix_answer(plan: MetricPlan, library: Library, filing_ids: Sequence[int], months: int,
               period_label: str, keywords: Sequence[str] = ()) -> AnswerResult | None:
    """A choice among the parts of a share table (:func:`mix_tables`) of the asked filings' latest period of
    ``months``: the largest or smallest change (the question asks a growth, a performance) or share; every part is
    listed with its share and change. None when no such table names the asked amount and the parts asked.
    ``keywords``: the question's words as the reader read them (``QueryIntent.keywords``); of two tables, the one
    whose heading prints more of them ("Domestic", "International")."""
    metric = plan.tree.name if plan.tree is not None else ""
    if not metric or not filing_ids:
        return None
    facts = [s for s in library.facts(filing_ids=list(filing_ids), trailing=False)
             if s.fact.period.months == months and s.fact.period.end]
    if not facts:
        return None
    latest = max(str(s.fact.period.end) for s in facts)
    words = tuple(w for kind in plan.part_kinds for w in _parts_data()["kinds"][kind])
    page_text = lru_cache(maxsize=None)(library.page_text)

    def fits(t: MixTable) -> bool:  # the share column names the asked amount; its page, the parts asked
        heading = f"{t.total.fact.period.group} {t.change_heading}"
        text = page_text(t.total.filing_id, t.total.fact.page_index)
        return metric in find_metrics(heading) and bool(words) and re.search(
            r"\b(?:" + "|".join(map(re.escape, words)) + ")", text, re.IGNORECASE) is not None

    growth = plan.measure == "growth"
    tables = [t for t in mix_tables(facts, months, latest) if fits(t)
              and (not growth or all(p.change is not None for p in t.parts))]
    if not tables:
        return None
    # (the company's own name is printed everywhere and says nothing of which table: "Best Buy")
    named = {w for fid in filing_ids for w in re.findall(r"[a-z]{4,}", (library.filing(fid).identity.registrant
                                                                         or "").lower())}
    asked = {w for w in keywords if len(w) >= 4} - named

    def heading_says(t: MixTable) -> int:  # the lines above the table name what the question does ("Domestic")
        text = page_text(t.total.filing_id, t.total.fact.page_index)
        start = min(p.share.fact.char_start for p in t.parts)
        return len(asked & set(re.findall(r"[a-z]{4,}", text[max(0, start - _HEAD_CHARS):start].lower())))

    table = max(tables, key=lambda t: (heading_says(t), len(t.parts), -t.total.fact.page_index))
    excluded = [e.lower() for e in plan.excluded]
    parts = [p for p in table.parts if not any(e in p.name.lower() for e in excluded)
             and not _not_a_part().search(p.name)]
    if len(parts) < 2:
        return None

    def value(p: MixPart) -> float:
        return p.change.fact.value if growth and p.change is not None else p.share.fact.value

    pick = (max if plan.choice == "largest" else min)(parts, key=value)
    t = table.total

    def said(p: MixPart) -> str:
        change = f", {table.change_heading.lower()} {p.change.fact.value:+.1f}%" if p.change is not None else ""
        return f"{p.name}: {p.share.fact.value:g}% of {metric}{change}"

    end = "highest" if plan.choice == "largest" else "lowest"
    what = f"{table.change_heading.lower()} change" if growth else f"share of {metric}"
    text = (f"{pick.name}: {what} {value(pick):+.1f}%" if growth else f"{pick.name}: {what} {value(pick):g}%") + (
        f", the {end} of the {len(parts)} parts of the {t.fact.period.group.lower()} table "
        f"({cite(t.doc_name, t.fact.page_index, t.printed_folio)}, {period_label}, {months} months to "
        f"{t.fact.period.end}), whose shares add up to its total. " + "; ".join(said(p) for p in parts) + ".")
    refs = tuple(_ref(p.name, s) for p in parts for s in (p.share, p.change) if s is not None) + (_ref("total", t),)
    return AnswerResult("answered", text, value(pick), "percent", method="facts", citations=_total_cited(t),
                        inputs=refs, reasoning=f"the {plan.parts or 'parts'} read as the {len(table.parts)} rows of a "
                                               f"share table adding up to 100%; {plan.words}, from the table's "
                                               "printed figures without a model call")


def _total_cited(t: StoredFact) -> tuple[Citation, ...]:
    """The citation of a parts answer: the total's row, on its page."""
    return (Citation(1, t.chunk_id, t.doc_name, t.fact.page_index, t.fact.row, t.printed_folio),) \
        if t.chunk_id is not None else ()


def joined_parts(plan: MetricPlan, first: AnswerResult, others: Sequence[tuple[str, AnswerResult | None]]
                 ) -> AnswerResult:
    """Several amounts asked of every part ("net sales and operating expenses of each segment"): ``first`` (the
    parts of the plan's tree) and each other amount's answer, in the order asked; an amount the filing prints no
    table of parts for is said so, as are the question's words read as no amount (``plan.unread``), so that no
    amount stands for the whole question; how a word was read as an amount (``plan.note``: "'costs' read as
    operating expenses") leads."""
    noun = plan.parts or "part"
    texts, cited, inputs, reasoning = [first.text], list(first.citations), list(first.inputs), [first.reasoning]
    if plan.note:  # (how a word of the question was read: "'costs' read as operating expenses")
        texts.insert(0, f"{plan.note[0].upper()}{plan.note[1:]}.")
    missing: list[str] = []
    for metric, got in others:
        if got is None:
            missing.append(metric)
            continue
        texts.append(got.text)
        cited += [c for c in got.citations if c not in cited]
        inputs += got.inputs
        reasoning.append(got.reasoning)
    if missing:
        texts.append(f"The filing prints no table of {' nor of '.join(missing)} by {noun} whose rows add up to its "
                     "total: not given by part.")
    if plan.unread:
        texts.append(f"Not read as an amount: '{' '.join(plan.unread)}' (no line of the statements is named so); "
                     f"ask for it by the line the filing prints to have it by {noun}.")
    reason = "; ".join(x for x in (
        f"no table of {', '.join(missing)} by {noun}" if missing else "",
        f"'{' '.join(plan.unread)}' read as no amount" if plan.unread else "") if x)
    cited = [replace(c, passage_id=n) for n, c in enumerate(cited, start=1)]  # (each answer numbers its own from 1)
    return AnswerResult("answered", " ".join(texts), method="facts", citations=tuple(cited), inputs=tuple(inputs),
                        reason=reason, reasoning="; ".join(r for r in reasoning if r))
