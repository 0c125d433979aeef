"""The metric catalogue (``resources/metrics.toml``): analyst metrics as formulas over statement line items.

A :class:`LineItem` names the us-gaap concepts a company's statement facts carry for it, whether it is a flow
over the fiscal year or a balance at its end, and how filings print it. A :class:`Metric` is one or more
formulas over items; in a formula ``avg(x)`` is the average of balance ``x`` at the period's end and the end
before, ``prior(x)`` is ``x`` a fiscal year earlier. :func:`formula_terms` reads a formula into the (item,
years back) values it needs, so the sufficiency check can list what is missing before anything is computed.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.errors import EngineError
from engine.settings import RESOURCES_DIR
from engine.vocab.concepts import known_concepts

__all__ = ["Catalogue", "LineItem", "Metric", "Term", "formula_terms", "load_catalogue",
           "python_formula", "variable"]

UNITS = ("USD", "percent", "ratio", "days", "USD/share", "shares")
ITEM_UNITS = ("USD", "USD/share", "shares")  # what a line item's facts are printed in


@dataclass(frozen=True)
class LineItem:
    name: str
    concepts: tuple[str, ...]
    kind: str  # duration | instant
    statement: str
    words: str
    magnitude: bool = False  # printed as an outflow "(1,577)": the formula takes its size
    optional: bool = False  # a balance sheet without the row has none (0)
    # every printing of the line's label matches it; a read statement with no such row does not report the line
    printed_as: re.Pattern[str] | None = None
    unit: str = "USD"  # the unit its facts are printed in: "USD", "USD/share" (earnings per share), "shares"


@dataclass(frozen=True)
class Metric:
    name: str  # the intent lexicon's canonical metric
    formulas: tuple[str, ...]  # over line items only (another metric's ``{name}`` written out)
    unit: str
    words: str
    source: tuple[str, ...] = ()  # the formulas as the catalogue writes them, ``{name}`` references kept
    in_days: str = ""  # a turnover's measure in days ("how many days did it take to sell its inventory")


@dataclass(frozen=True)
class Term:
    """One value a formula needs: an item, ``back`` fiscal years before the asked one."""

    item: str
    back: int = 0


@dataclass(frozen=True)
class Catalogue:
    items: dict[str, LineItem]
    metrics: dict[str, Metric]

    def metrics_of(self, item: str) -> tuple[str, ...]:
        """The metrics that are the line item itself ("capital expenditures" for ``capital_expenditures``): the
        names the intent lexicon gives it."""
        return tuple(m.name for m in self.metrics.values() if m.formulas[0] == item)

    def metric_for(self, names: tuple[str, ...], *, relative: bool, margin: bool = False) -> Metric | None:
        """The catalogue metric a question names (``names``: the intent's lexicon metrics, in order of mention).

        - the metric whose formula holds the most of the others named wins ("operating income + depreciation and
          amortization (unadjusted EBITDA)": EBITDA), the first named on a tie;
        - a question that asks for a percentage (``relative``) of an amount composes one: the first amount named
          as a percentage of the second ("capex as a % of revenue"), or of revenue for a ``margin`` ("D&A
          margin"); a catalogue metric that is itself a percentage or ratio is taken as it is.
        """
        named = [self.metrics[n] for n in dict.fromkeys(names) if n in self.metrics]
        if not named:
            return None
        items = {m.name: {t.item for f in m.formulas for t in formula_terms(f)} for m in named}
        simple = {m.name: items[m.name] for m in named if len(m.formulas) == 1 and len(items[m.name]) == 1}
        best = max(named, key=lambda m: sum(1 for n, its in simple.items() if n != m.name and its <= items[m.name]))
        if not relative or best.unit != "USD":
            return best
        amounts = [m for m in named if m.unit == "USD" and not any(
            o is not m and items[m.name] < items[o.name] for o in named)]
        if len(amounts) >= 2:
            part, whole = amounts[0], amounts[1]
        elif margin and amounts and "revenue" in self.metrics and amounts[0].name != "revenue":
            part, whole = amounts[0], self.metrics["revenue"]
        else:
            return None
        return Metric(f"{part.name} as a % of {whole.name}",
                      (f"({part.formulas[0]}) / ({whole.formulas[0]}) * 100",), "percent",
                      f"{part.words} as a percentage of {whole.words}")


_AVG = re.compile(r"\bavg\(\s*([a-z_]+)\s*\)")
_PRIOR = re.compile(r"\bprior\(\s*([a-z_]+)\s*\)")


def variable(term: Term) -> str:
    """The program variable holding a term's value: ``inventory`` or ``inventory_1`` (a year before)."""
    return term.item if term.back == 0 else f"{term.item}_{term.back}"


def python_formula(formula: str, back: int = 0) -> str:
    """The formula as an expression over :func:`variable` names, computed ``back`` fiscal years before the asked
    one: ``avg(x)`` -> ``((x + x_1) / 2)``; with ``back=1``, ``((x_1 + x_2) / 2)``."""
    text = _PRIOR.sub(lambda m: f"{m[1]}_1", _AVG.sub(lambda m: f"(({m[1]} + {m[1]}_1) / 2)", formula))
    if not back:
        return text
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            term = _term(node.id)
            node.id = variable(Term(term.item, term.back + back))
    return ast.unparse(tree)


def _term(name: str) -> Term:
    m = re.fullmatch(r"([a-z_]+?)(?:_(\d+))?", name)
    if m is None:
        raise SyntaxError(f"not a line item: {name!r}")
    return Term(m[1], int(m[2] or 0))


def formula_terms(formula: str, back: int = 0) -> tuple[Term, ...]:
    """Every (item, years back) a formula needs (see :func:`python_formula`), each once."""
    names = [n.id for n in ast.walk(ast.parse(python_formula(formula, back), mode="eval")) if isinstance(n, ast.Name)]
    return tuple(dict.fromkeys(_term(n) for n in names))


REFERENCE = re.compile(r"\{([^{}]+)\}")


def _written_out(formula: str, specs: dict, seen: tuple[str, ...]) -> tuple[str, ...]:
    """A formula with each ``{metric}`` reference replaced by that metric's formulas, parenthesised: one formula per
    combination of the referenced metrics' formulas, in their order.

    Raises:
        KeyError: a reference to no metric, or a metric that refers back to itself.
    """
    m = REFERENCE.search(formula)
    if m is None:
        return (formula,)
    name = m[1].strip()
    if name in seen:
        raise KeyError(f"{name!r} (a circular reference)")
    out: list[str] = []
    for inner in (x for f in specs[name]["formulas"] for x in _written_out(f, specs, (*seen, name))):
        out += _written_out(formula[:m.start()] + f"({inner})" + formula[m.end():], specs, seen)
    return tuple(dict.fromkeys(out))


def load_catalogue(path: Path | None = None) -> Catalogue:
    """Read and check the catalogue; :class:`EngineError` names what is wrong with it."""
    return _load(str(path or RESOURCES_DIR / "metrics.toml"))


@lru_cache(maxsize=4)
def _load(path: str) -> Catalogue:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EngineError(f"metric catalogue {path}: {exc}") from exc
    known = set(known_concepts())
    items: dict[str, LineItem] = {}
    for name, spec in data.get("items", {}).items():
        item = LineItem(name, tuple(spec["concepts"]), spec["kind"], spec["statement"], spec["words"],
                        bool(spec.get("magnitude", False)), bool(spec.get("optional", False)),
                        re.compile(spec["printed_as"], re.IGNORECASE) if "printed_as" in spec else None,
                        spec.get("unit", "USD"))
        unknown = [c for c in item.concepts if c not in known]
        if item.kind not in ("duration", "instant") or unknown or not item.concepts or item.unit not in ITEM_UNITS:
            raise EngineError(f"metric catalogue: item {name!r}: kind {item.kind!r}, unit {item.unit!r}, "
                              f"unknown concepts {unknown}")
        items[name] = item
    metrics: dict[str, Metric] = {}
    specs = data.get("metrics", {})
    for name, spec in specs.items():
        try:
            formulas = tuple(x for f in spec["formulas"] for x in _written_out(f, specs, (name,)))
        except KeyError as exc:
            raise EngineError(f"metric catalogue: metric {name!r} refers to {exc}, not a metric") from exc
        metric = Metric(name, formulas, spec["unit"], spec["words"], tuple(spec["formulas"]), spec.get("in_days", ""))
        if metric.unit not in UNITS or not metric.formulas:
            raise EngineError(f"metric catalogue: metric {name!r}: unit {metric.unit!r}")
        if metric.in_days and specs.get(metric.in_days, {}).get("unit") != "days":
            raise EngineError(f"metric catalogue: metric {name!r}: in_days {metric.in_days!r} is no metric in days")
        for formula in metric.formulas:
            try:
                missing = [t.item for t in formula_terms(formula) if t.item not in items]
            except SyntaxError as exc:
                raise EngineError(f"metric catalogue: metric {name!r}: formula {formula!r}: {exc}") from exc
            if missing:
                raise EngineError(f"metric catalogue: metric {name!r}: formula {formula!r} names no item {missing}")
        metrics[name] = metric
    return Catalogue(items, metrics)
