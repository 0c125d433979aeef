"""A statement row's us-gaap concept from its printed label: "Merchandise inventories" -> ``InventoryNet``.

The same mechanism runs over every filing of every company, so it is a normaliser and a synonym table, never a
rule about one issuer:

- :func:`normalise_label` reduces a printed label to one canonical phrasing: lowercase; quotes, dashes and
  "&" unified; footnote marks ("(1)", "(a)", "(Note 12)") and amount clauses ("net of $53 ... of non-cash
  ...", "(5 shares at December 26, 2020)") dropped; sign alternatives dropped ("income/(loss)" -> "income",
  "provided by (used in)" -> "provided by"); a valuation qualifier ("less allowances ...", "net of accumulated
  depreciation ...", ", net", "— net") written as a trailing "net"; "property, plant and equipment",
  "property and equipment", "PP&E" written "ppe"; "shareholders'"/"shareowners'" written "stockholders".
- :data:`SYNONYMS` lists, per concept, the normalised phrasings real 10-K/10-Q statements print. A phrase
  may hold optional parts ``[...]`` and alternatives ``{a|b}``; every expanded phrase belongs to one concept
  (checked at import).
- the context disambiguates only where the label cannot: a per-share row (unit ``USD/share``, or a parent
  heading such as "Diluted earnings per share") maps only to per-share concepts, a share-count row only to
  share counts, "Basic"/"Diluted" and a bare "Total" read their parent heading, and each concept sits on the
  statements it can belong to (:data:`STATEMENTS_OF`): "Inventories" in a cash-flow statement is a change in
  inventories, not ``InventoryNet``.

Precision matters more than recall: a label that does not match a phrase exactly, or whose concept its context
contradicts, gets None. Labels whose tagging differs between filers for the same wording ("Total equity",
"Additional paid-in capital", "Deferred revenue") are left out on purpose.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

__all__ = ["CONCEPTS_VERSION", "STATEMENTS_OF", "SYNONYMS", "concept_for", "concept_of_query", "is_instant",
           "known_concepts", "names_the_parent", "normalise_label", "printed_negated"]

# --- the synonym table --------------------------------------------------------------------------------------
# Phrases are in normalise_label()'s output form: lowercase, no punctuation, "ppe" for property (plant) and
# equipment, "stockholders" for shareholders/stockholders, a valuation qualifier as a trailing " net".

_INCOME: dict[str, tuple[str, ...]] = {
    "Revenues": ("[total ]{revenue|revenues}", "[total ]net {revenue|revenues}", "total net revenue[s]",
                 "{revenues|revenue} net", "[total ]operating revenues",
                 # a card issuer's or bank's revenue: its interest income less interest expense with its fees
                 "[total ]{revenues|revenue} net of interest expense"),
    "RevenueFromContractWithCustomerExcludingAssessedTax": (
        "[total ]net sales", "[total ]sales", "[total ]{revenue|revenues} from contracts with customers",
        "[total ]sales to customers"),
    "CostOfRevenue": ("[total ]cost of {revenue|revenues}", "[total ]costs of {revenue|revenues}"),
    "CostOfGoodsAndServicesSold": (
        "[total ]cost[s] of sales", "[total ]cost[s] of goods sold", "cost of goods and services sold",
        "cost of products sold", "cost of merchandise sold", "merchandise cost[s]"),
    # a cost of sales printed in two lines ("Cost of products", "Cost of services"): its parts
    "CostOfGoodsSold": ("cost[s] of products", "cost[s] of product[s] revenue[s]", "cost[s] of product sales",
                        "cost[s] of goods"),
    "CostOfServices": ("cost[s] of services", "cost[s] of service[s] revenue[s]", "cost[s] of services sold"),
    "GrossProfit": ("gross profit", "gross margin", "total gross profit", "total gross margin"),
    "ResearchAndDevelopmentExpense": (
        "research and development", "research and development {expense|expenses|costs}",
        "research development and related expenses", "research development and engineering expenses"),
    "SellingGeneralAndAdministrativeExpense": (
        "selling general and administrative", "selling general and administrative {expense|expenses|costs}",
        "marketing general and administrative", "marketing general and administrative expenses",
        "[total ]selling and administrative {expense|expenses}",
        "selling informational and administrative {expense|expenses}",
        "operating selling general and administrative {expense|expenses}"),
    "GeneralAndAdministrativeExpense": ("general and administrative[ expense| expenses]",),
    "SellingAndMarketingExpense": ("{sales|selling} and marketing[ expense| expenses]",),
    "OperatingExpenses": ("total operating expenses",),
    "CostsAndExpenses": ("total costs and expenses", "total operating costs and expenses"),
    "OperatingIncomeLoss": (
        "operating income", "operating loss", "operating profit", "total operating income",
        "{income|loss|earnings} from operations", "operating earnings"),
    "InterestExpense": ("interest expense", "total interest expense", "interest and debt expense"),
    "InterestIncomeExpenseNet": ("net interest income",),
    "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest": (
        "{income|earnings|loss}[ from continuing operations] before[ provision for] income tax[es]",
        "{income|earnings|loss}[ from continuing operations] before income tax {expense|provision}",
        "{income|earnings|loss}[ from continuing operations] before {taxes|taxes on income}",
        "{income|earnings|loss}[ from continuing operations] before provision for taxes on income",
        "{pretax|pre tax} {income|earnings|loss}", "{income|earnings} before provision for income taxes"),
    "IncomeTaxExpenseBenefit": (
        "[total ]{provision for|benefit from} income taxes", "[total ]income tax {expense|provision}",
        "provision for taxes on income", "taxes on income", "income taxes", "income tax",
        # the benefit printed as the positive sense, the expense as its alternative ("(Provision for) benefit from
        # taxes", "Benefit (provision) for income taxes", "Income tax benefit/(expense)"): see printed_negated
        "{provision for|benefit from} taxes", "benefit for income taxes", "income tax benefit"),
    "IncomeLossFromContinuingOperations": (
        "[net ]{income|earnings|loss} from continuing operations",),
    "ProfitLoss": (
        "net {income|earnings|loss} including noncontrolling interest[s]",
        "net {income|earnings|loss} before allocation to noncontrolling interest[s]",
        "net {income|earnings|loss} including minority interest[s]",
        "consolidated net {income|earnings|loss}"),
    "NetIncomeLoss": ("net income", "net earnings", "net loss", "net profit"),
    "NetIncomeLossAttributableToNoncontrollingInterest": (
        "net {income|earnings|loss} attributable to {noncontrolling|minority} interest[s]",
        "net {income|earnings|loss} attributable to redeemable noncontrolling interest[s]"),
    "NetIncomeLossAvailableToCommonStockholdersBasic": (
        "net {income|earnings|loss} available to common stockholders",),
    "RestructuringCharges": ("restructuring charges", "restructuring costs", "restructuring charges net",
                             "restructuring expense[s]"),
    "RestructuringSettlementAndImpairmentProvisions": (
        "restructuring and {impairment|asset impairment|other} charges", "restructuring, impairment and other charges",
        "restructuring and impairment[ costs]"),
    "GoodwillImpairmentLoss": ("goodwill impairment[ charge[s]| loss| losses]", "impairment of goodwill"),
    "AmortizationOfIntangibleAssets": (
        "amortization of[ acquired| purchased| acquisition related| definite lived| other] {intangible assets|intangibles}",),
    "ComprehensiveIncomeNetOfTax": ("[total ]comprehensive {income|loss}",),
    "OtherComprehensiveIncomeLossNetOfTax": (
        "total other comprehensive {income|loss}[ net of tax]",
        "other comprehensive {income|loss} net of tax"),
}

_BALANCE: dict[str, tuple[str, ...]] = {
    "CashAndCashEquivalentsAtCarryingValue": ("[total ]cash and cash equivalents",),
    "CashCashEquivalentsAndShortTermInvestments": (
        "[total ]cash cash equivalents and short term investments",
        "[total ]cash and cash equivalents and short term investments"),
    "ShortTermInvestments": ("short term investments",),
    "AccountsReceivableNetCurrent": (
        "[trade ]accounts receivable[ net]", "accounts receivable trade[ net]", "trade receivables[ net]",
        "accounts receivable less allowance[s] net", "receivables net", "[total ]receivables"),
    "InventoryNet": ("[total ]{inventories|inventory}[ net]", "merchandise {inventories|inventory}[ net]"),
    "PrepaidExpenseAndOtherAssetsCurrent": ("prepaid expenses and other current assets",),
    "OtherAssetsCurrent": ("other current assets",),
    "AssetsCurrent": ("total current assets",),  # a bare "Current assets" row is also a lease or pension line
    "PropertyPlantAndEquipmentNet": ("ppe net", "net ppe", "total ppe net", "ppe at cost net"),
    "PropertyPlantAndEquipmentGross": ("gross ppe", "ppe gross", "total ppe gross"),
    "Goodwill": ("goodwill", "goodwill net"),
    "IntangibleAssetsNetExcludingGoodwill": (
        "[other ]intangible assets net", "net intangible assets", "acquisition related intangible assets net",
        "identifiable intangible assets net", "intangible assets net excluding goodwill",
        "intangibles net", "other intangibles net"),
    "OtherAssetsNoncurrent": ("other noncurrent assets", "other long term assets"),
    "AssetsNoncurrent": ("total noncurrent assets", "total long term assets"),
    "Assets": ("total assets",),
    "AccountsPayableCurrent": ("[trade ]accounts payable", "accounts payable trade", "trade payables"),
    "AccountsPayableAndAccruedLiabilitiesCurrent": ("accounts payable and accrued {liabilities|expenses}",),
    # (not "commercial paper": a note's table of investments prints it as an asset, Microsoft's and 3M's)
    "ShortTermBorrowings": ("short term borrowings", "short term debt[ obligations]", "loans and notes payable",
                            "short term {debt|borrowings} and current portion of long term debt"),
    "LongTermDebtCurrent": (
        "current {portion|maturities} of long term debt", "long term debt current {portion|maturities}",
        "long term debt due within one year", "current portion of long term debt net", "debt maturing within one year"),
    "OtherLiabilitiesCurrent": ("other current liabilities",),
    "LiabilitiesCurrent": ("total current liabilities",),
    "LongTermDebtNoncurrent": (
        "long term debt", "long term debt net",
        "long term debt {net of|less|excluding|excluding the} current {portion|maturities}",
        "long term debt {net of|less|excluding} current {portion|maturities} net",
        "long term debt due after one year", "long term debt noncurrent", "long term debt obligations",
        "long term borrowings"),
    "OtherLiabilitiesNoncurrent": ("other {noncurrent|long term} liabilities",),
    "LiabilitiesNoncurrent": ("total {noncurrent|long term} liabilities",),
    "Liabilities": ("total liabilities",),
    "RetainedEarningsAccumulatedDeficit": (
        "retained earnings", "accumulated deficit", "retained earnings accumulated deficit",
        "retained earnings deficit", "reinvested earnings", "accumulated earnings"),
    "AccumulatedOtherComprehensiveIncomeLossNetOfTax": ("accumulated other comprehensive {income|loss}",),
    "TreasuryStockValue": (
        "treasury stock[ at cost]", "common stock {in|held in} treasury[ at cost]",
        "cost of common stock in treasury"),
    "StockholdersEquity": ("total stockholders equity", "total stockholders deficit",
                           "total common stockholders equity"),
    "MinorityInterest": ("noncontrolling interest[s]", "minority interest[s]"),
    "LiabilitiesAndStockholdersEquity": (
        "total liabilities and {stockholders equity|equity|stockholders deficit|deficit}",),
}

_CF_WORDS = "[net ][total ]cash from"
_RESTRICTED = "cash cash equivalents and restricted cash[ and restricted cash equivalents]"
_CASH_FLOWS: dict[str, tuple[str, ...]] = {
    "NetCashProvidedByUsedInOperatingActivities": (f"{_CF_WORDS} operating activities",),
    "NetCashProvidedByUsedInInvestingActivities": (f"{_CF_WORDS} investing activities",),
    "NetCashProvidedByUsedInFinancingActivities": (f"{_CF_WORDS} financing activities",),
    "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations": (
        f"{_CF_WORDS} operating activities {{from|of}} continuing operations",),
    "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations": (
        f"{_CF_WORDS} investing activities {{from|of}} continuing operations",),
    "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations": (
        f"{_CF_WORDS} financing activities {{from|of}} continuing operations",),
    "PaymentsToAcquirePropertyPlantAndEquipment": (
        "{purchase|acquisition|addition|payment|expenditure|investment}[s] {of|to|for|in} ppe",
        "{payment|purchase}[s] for[ the] acquisition[s] of ppe",
        "payments to acquire ppe", "capital expenditures", "capital spending", "capital expenditures ppe"),
    "ProceedsFromSaleOfPropertyPlantAndEquipment": (
        "proceeds from[ the] {sale|sales|disposal|disposals|disposition|dispositions} of ppe",
        "proceeds from ppe {sale|sales|disposals}"),
    "PaymentsToAcquireBusinessesNetOfCashAcquired": (
        "{acquisition|business acquisition|business combination}[s][ of business[es]] net of cash acquired",
        "{payments to acquire|payments for|purchases of} business[es] net of cash acquired",
        "cash paid for acquisitions net of cash acquired"),
    "PaymentsOfDividends": (
        "[cash ]dividends paid", "[cash ]dividends paid to {stockholders|common stockholders}",
        "[cash ]dividends paid on common stock", "payment[s] of dividends", "payment[s] of cash dividends",
        "dividends paid to stockholders of common stock",
        # as Apple, Costco, Johnson & Johnson, Microsoft, Nike and Coca-Cola print them in their financing activities
        "payments for dividends and dividend equivalents", "cash dividend payments", "dividends to stockholders",
        "common stock cash dividends paid", "dividends common and preferred", "dividends"),
    "PaymentsForRepurchaseOfCommonStock": (
        "{repurchase|repurchases|purchase|purchases} of common stock[ for treasury]",
        "{purchase|purchases} of treasury stock", "common stock repurchased", "repurchases of common stock",
        "payment[s] for repurchase[s] of common stock", "repurchase[s] of common stock for treasury",
        "{share|stock} repurchases", "repurchase[s] of shares of common stock"),
    "ProceedsFromIssuanceOfCommonStock": ("proceeds from[ the] issuance of common stock",),
    "ProceedsFromStockOptionsExercised": ("proceeds from[ the] exercise of stock options",
                                         "proceeds from stock options exercised"),
    "ShareBasedCompensation": (
        "{stock|share|equity} based compensation[ expense]", "stock compensation expense",
        "{stock|share|equity} based compensation cost[s]"),
    "DeferredIncomeTaxExpenseBenefit": (
        "deferred income taxes", "deferred taxes", "deferred income tax {provision|expense|benefit}",
        "deferred tax provision", "deferred income tax expense benefit", "deferred tax expense"),
    "DepreciationDepletionAndAmortization": (
        "depreciation and amortization", "depreciation depletion and amortization",
        "depreciation amortization and depletion", "depreciation and amortization expense",
        "depreciation and amortization of ppe",
        "depreciation and amortization of property[ plant] equipment and intangible{s| assets}",
        # a retailer's one line of depreciation and the amortization of what it capitalizes (Amazon)
        ("depreciation of ppe[ including internal use software and website development] and other amortization "
         "including capitalized content costs"),
        "depreciation and amortization of ppe and capitalized content costs operating lease assets and other"),
    "Depreciation": ("depreciation", "depreciation expense"),
    "RepaymentsOfLongTermDebt": (
        "[principal ]{repayment|payment|retirement}[s] {of|on} long term debt",),
    "ProceedsFromIssuanceOfLongTermDebt": (
        "proceeds from[ the] issuance[s] of long term debt[ net]", "proceeds from long term debt",
        "proceeds from long term borrowings", "issuance of long term debt"),
    "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents": (
        f"[total ]{_RESTRICTED}[ {{at |}}{{beginning|end}} of {{period|year|the period|the year}}]",),
    "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalentsPeriodIncreaseDecreaseIncludingExchangeRateEffect":
        (f"[net ]{{increase|decrease|change}} in {_RESTRICTED}",),
    "IncomeTaxesPaidNet": ("[cash paid for ]income taxes[ paid] net of refunds", "income taxes paid net"),
}

SYNONYMS: dict[str, tuple[str, ...]] = {**_INCOME, **_BALANCE, **_CASH_FLOWS}
"""concept -> the normalised label phrasings that mean it (``[...]`` optional, ``{a|b}`` alternatives)."""

_IS, _BS, _CF, _EQ, _TABLE = "income statement", "balance sheet", "cash flows", "equity", "table"
_DURATION = frozenset({_IS, _CF, _EQ, _TABLE})  # a flow may print in any statement but a balance sheet
_INSTANT = frozenset({_BS, _EQ, _TABLE})  # a balance printed in a cash-flow statement is a change in it
_CASH_STATEMENT = frozenset({_CF, _TABLE})
STATEMENTS_OF: dict[str, frozenset[str]] = {
    **{c: _DURATION for c in _INCOME},
    **{c: _INSTANT for c in _BALANCE},
    **{c: _CASH_STATEMENT for c in _CASH_FLOWS},
    # cash balances are printed at the foot of the cash-flow statement and in its reconciliation table
    "CashAndCashEquivalentsAtCarryingValue": _INSTANT | {_CF},
    "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents": _INSTANT | {_CF},
    # "Income taxes" in a cash-flow statement: the cash paid or a change in the payable
    "IncomeTaxExpenseBenefit": frozenset({_IS, _TABLE}),
    # "Noncontrolling interests" outside a balance sheet: their share of income, or a change in equity
    "MinorityInterest": frozenset({_BS}),
    # in notes: an allocated expense, by line or net of tax
    "ShareBasedCompensation": frozenset({_CF}),
    # outside a cash-flow statement "Deferred income taxes" is an asset or a liability
    "DeferredIncomeTaxExpenseBenefit": frozenset({_CF}),
}
"""concept -> the statement kinds (:attr:`~engine.records.StatementFact.statement`) a row of it sits on."""

# phrases narrower than their concept: where the bare wording means something else ("Long-term debt" in a
# debt note may include the current portion; "Income taxes" in notes is often the cash paid)
_PHRASE_STATEMENTS: dict[str, frozenset[str]] = {
    "income taxes": frozenset({_IS}),
    "income tax": frozenset({_IS}),
    "long term debt": frozenset({_BS, _TABLE}),
    "sales": frozenset({_IS}),
    "depreciation": frozenset({_CF}),
    "gross margin": frozenset({_IS}),
    "dividends": frozenset({_CF}),  # (a bare "Dividends" of the equity statement or a note is declared, not paid)
}

# concepts a bare "Total" row of a statement takes from its heading ("Current assets:" ... "Total"); not
# "Assets" or "Liabilities", which head the parts of many a note ("Assets: Prepaid expenses, Other assets,
# Total")
_TOTAL_OF_HEADING = frozenset({
    "AssetsCurrent", "LiabilitiesCurrent", "Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax",
    "CostsAndExpenses", "OperatingExpenses", "CostOfRevenue"})


# --- phrase expansion ---------------------------------------------------------------------------------------


def _expand(pattern: str) -> list[str]:
    """Every phrase a pattern spells: ``[x]`` optional, ``{a|b}`` alternatives (nestable)."""

    def seq(s: str, i: int, stop: str) -> tuple[list[str], int]:
        outs = [""]
        while i < len(s) and s[i] not in stop:
            ch = s[i]
            if ch in "[{":
                close = "]" if ch == "[" else "}"
                alts: list[str] = []
                i += 1
                while True:
                    part, i = seq(s, i, "|" + close)
                    alts += part
                    if s[i] == close:
                        break
                    i += 1  # past "|"
                i += 1  # past the closing bracket
                if ch == "[":
                    alts.append("")
                outs = [o + a for o in outs for a in alts]
            else:
                outs = [o + ch for o in outs]
                i += 1
        return outs, i

    phrases, _ = seq(pattern, 0, "")
    return [" ".join(p.split()) for p in phrases]


def _phrase_index(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    index: dict[str, str] = {}
    for concept, patterns in table.items():
        for pattern in patterns:
            for phrase in _expand(pattern):
                other = index.setdefault(phrase, concept)
                if other != concept:
                    raise ValueError(f"label phrase {phrase!r} is listed for both {other} and {concept}")
    return index


_PHRASES = _phrase_index(SYNONYMS)


def _singular(phrase: str) -> str:
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in phrase.split())


def _singular_index() -> dict[str, str]:
    """The phrases with every word singular, for what an analyst types ("capital expenditure"); a singular phrase
    two concepts share is left out."""
    index: dict[str, str | None] = {}
    for phrase, concept in _PHRASES.items():
        key = _singular(phrase)
        index[key] = concept if index.get(key, concept) == concept else None
    return {k: c for k, c in index.items() if c is not None}


_SINGULAR_PHRASES = _singular_index()


def is_instant(concept: str) -> bool:
    """Whether the concept is a balance, measured at an instant (XBRL's periodType "instant"), not over a period."""
    return concept in _BALANCE


def known_concepts() -> tuple[str, ...]:
    """Every concept a label can map to (the synonym table's and the per-share and share-count ones)."""
    return tuple(sorted({*SYNONYMS, *_PER_SHARE_CONCEPTS.values(), *_SHARE_COUNT_CONCEPTS.values()}))


# --- normalisation ------------------------------------------------------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "′": "'", "“": '"', "”": '"', "″": '"'})
_DASHES = re.compile(r"[‐‑‒–—―−]")
_FOOTNOTE = re.compile(
    r"\((?:see\s+)?notes?\b[^)]*\)|\(\s*(?:\d{1,2}|[a-z]|[ivx]{1,4})\s*\)|[*†‡§]+|\(in [^)]*\)"
    r"|(?<=[a-z]{3})\d{1,2}$")
# a valuation qualifier: what the amount is net of ("less allowances: 2021—$492", "net of accumulated
# depreciation of $X", "(net of allowances of $42 and $46)", "net of inventory reserves - $201") -> " net"
_VALUATION = re.compile(
    r"[,;:]?\s*\(?\b(?:net\s+of|less|after)\s+(?:the\s+)?(?:an?\s+)?(?:[a-z]+\s+){0,2}?(?:allowances?|reserves?|"
    r"accumulated|doubtful|provisions?\s+for\s+doubtful|estimated\s+uncollectible)\b[^)]*\)?")
# an amount clause: "net of $53, $123 and $48, respectively, of non-cash capital expenditures"
_AMOUNT_CLAUSE = re.compile(r"[,;]?\s*\(?\bnet\s+of\s+\$.*$")
# sign alternatives printed beside a word: "income/(loss)", "(loss) income", "provided by (used in)"
_SIGN = (r"(?:losses|loss|deficit|benefit\s+from|benefit|income|expense|earnings|gains|gain|credit|charges?|"
         r"increase|decrease|used\s+in|used\s+for|used\s+by|used|provided\s+by|provided|recovery|provision\s+for|"
         r"provision)")
_SIGN_ALT = re.compile(rf"\s*/\s*\(?{_SIGN}\)?(?![a-z])|\s*\({_SIGN}\)")
_LEADING = re.compile(r"^(?:less|add|plus|deduct)\s*:?\s+")
_PPE = re.compile(r"\b(?:property,?\s+plant,?\s+and\s+equipment|property\s+and\s+equipment|"
                  r"premises\s+and\s+equipment|plant\s+and\s+equipment|fixed\s+assets|pp\s*and\s*e|ppe)\b")
_HOLDERS = re.compile(r"\b(?:stock|share)(?:holder|owner)s?'?s?'?(?=\s|$)|\bshare\s+owners'?")
# "cash provided by (used in) operating activities" in all its printings -> "cash from operating activities";
# "cash provided by operations" is the operating activities' total too
_CASH_FROM = re.compile(
    r"\bcash\s+(?:flows?\s+)?(?:(?:provided|used|generated|realized|received)(?:\s+(?:by|in|for|from))?|from|by|in)"
    r"(?:\s+(?:and\s+)?(?:provided|used|generated)(?:\s+(?:by|in|for|from))?)?\s+"
    r"(?:(operating|investing|financing)\s+activities|(operations))\b")


@lru_cache(maxsize=8192)  # a filing repeats its labels in every period column and statement
def normalise_label(label: str) -> str:
    """The canonical phrasing of a printed label (see the module docstring); "" for a label with no words."""
    s = unicodedata.normalize("NFKC", label).translate(_QUOTES).lower().strip()
    s = _DASHES.sub(" - ", s)
    s = re.sub(r"\bpp\s*&\s*e\b", "ppe", s)
    s = re.sub(r"\bsg\s*&\s*a\b", "selling general and administrative", s)
    s = re.sub(r"\br\s*&\s*d\b", "research and development", s)
    s = s.replace("&", " and ")
    s = _FOOTNOTE.sub(" ", s)
    s = _VALUATION.sub(" net ", s)
    s = _AMOUNT_CLAUSE.sub("", s)
    s = re.sub(r";.*$", "", s)  # "treasury stock, at cost; shares held: 970 million": the rest is a count
    s = re.sub(r"\([^)]*\d[^)]*\)", " ", s)  # parentheses with figures or dates: counts and amounts
    s = _SIGN_ALT.sub(" ", s)
    s = _LEADING.sub("", s.strip(" :"))
    s = re.sub(r"\bnon\s*-?\s*(?=[a-z])", "non", s)  # non-current, non current -> noncurrent
    s = _HOLDERS.sub("stockholders", s)
    s = re.sub(r"\bequity holders\b", "stockholders", s)
    s = _PPE.sub("ppe", s)
    s = re.sub(r"\(ppe\)", " ", s)
    s = re.sub(r"\bcash and equivalents\b", "cash and cash equivalents", s)
    s = re.sub(r"[,.:;$\"'()\[\]/+-]", " ", s)
    s = " ".join(s.split())
    s = _CASH_FROM.sub(lambda m: f"cash from {m[1] or 'operating'} activities", s)  # "by operations": operating
    return s


# --- context: per-share and share-count rows ----------------------------------------------------------------

_PER_SHARE_WORDS = re.compile(r"\bper\s+(?:basic\s+|diluted\s+)?(?:common\s+|ordinary\s+)?share\b|\beps\b")
_SHARE_COUNT_HEADING = re.compile(
    r"\bshares\b.*\b(?:outstanding|used|weighted|average|computation|computing|calculation|calculating|"
    r"denominator)\b|\b(?:weighted|average|number)\b.*\bshares\b")
_UNLABELED_TOTAL = re.compile(r"^(.*?)\s*\(unlabeled total\)$", re.IGNORECASE)
_DILUTION_ONLY = re.compile(r"^(?:basic|diluted|basic and diluted|assuming dilution)$")
_UNIT_IN_LABEL = re.compile(r"\(in (?:(?:us )?dollars )?per share\)|\(in shares\)")
_BASIC = re.compile(r"\bbasic\b")
_DILUTED = re.compile(r"\bdiluted\b|\bassuming dilution\b")
# headings under which a familiar label is a part of something else: "Cash and cash equivalents" among pension
# plan assets, "Current portion of long-term debt" of finance leases, "Cost of sales" of hedging gains
_NOT_CONSOLIDATED = re.compile(r"\bfair value\b|\blevel [123]\b|\bplan assets\b|\bpension|\bpostretirement\b|"
                               r"\bleases?\b|\bhedging\b|\bnoncash\b|\bdeferred tax")
# a heading that names the company's own measure ("Adjusted earnings before provision for taxes and net earnings",
# "Adjusted Net Income Per Share"): its "Net earnings", "Diluted" are that measure's, not the statement's. A
# reconciliation ("Adjusted EBITDA Reconciliation") starts from the statement's own lines, which stay theirs.
_COMPANY_MEASURE = re.compile(r"^(?:adjusted|non\s?-?\s?gaap)\b(?!.*\breconcil)")

# what is left of a per-share label once its per-share and basic/diluted words are gone -> the concept family
_PER_SHARE_REST = {
    **dict.fromkeys(_expand("{|total|net|[net ]{income|earnings|loss}}"), "eps"),
    **dict.fromkeys(_expand("{[[net ]{income|earnings} ]from |}continuing operations"), "continuing"),
    **dict.fromkeys(_expand("[cash ]dividends declared"), "dividends"),
}
_PER_SHARE_CONCEPTS = {
    ("eps", "basic"): "EarningsPerShareBasic", ("eps", "diluted"): "EarningsPerShareDiluted",
    ("eps", "both"): "EarningsPerShareBasicAndDiluted",
    ("continuing", "basic"): "IncomeLossFromContinuingOperationsPerBasicShare",
    ("continuing", "diluted"): "IncomeLossFromContinuingOperationsPerDilutedShare",
    ("continuing", "both"): "IncomeLossFromContinuingOperationsPerBasicAndDilutedShare",
    ("dividends", "none"): "CommonStockDividendsPerShareDeclared",
}
_SHARE_COUNT_CONCEPTS = {
    "basic": "WeightedAverageNumberOfSharesOutstandingBasic",
    "diluted": "WeightedAverageNumberOfDilutedSharesOutstanding",
    "both": "WeightedAverageNumberOfShareOutstandingBasicAndDiluted",
}
# words a share-count row's label may carry besides basic/diluted ("Weighted-average shares used in computing
# earnings per share — diluted"); any other word (a dollar amount, "treasury", "issued") says it is not one
_SHARE_COUNT_WORDS = frozenset((
    "weighted", "average", "number", "of", "common", "ordinary", "class", "a", "b", "shares", "share",
    "outstanding", "used", "in", "computing", "computation", "calculation", "calculating", "the", "per",
    "net", "income", "earnings", "loss", "amounts", "for", "and", "units", "stock", "capital"))


def _dilution(*texts: str) -> str | None:
    """'basic', 'diluted', 'both' from the first text that names either, else None."""
    for text in texts:
        basic, diluted = bool(_BASIC.search(text)), bool(_DILUTED.search(text))
        if basic or diluted:
            return "both" if basic and diluted else "basic" if basic else "diluted"
    return None


def _per_share_concept(label: str, parent: str) -> str | None:
    rest = re.sub(r"\battributable to\b.*$", "", label)
    rest = _PER_SHARE_WORDS.sub(" ", rest)
    rest = re.sub(r"\b(?:basic|diluted|assuming dilution|and|common stockholders|stockholders|amounts?|"
                  r"data)\b", " ", rest)
    family = _PER_SHARE_REST.get(" ".join(rest.split()))
    if family is None:
        return None
    if family == "dividends":
        return _PER_SHARE_CONCEPTS[(family, "none")]
    dilution = _dilution(label, parent)
    return _PER_SHARE_CONCEPTS.get((family, dilution)) if dilution else None


def _share_count_concept(label: str, parent: str) -> str | None:
    if set(label.split()) - _SHARE_COUNT_WORDS - {"basic", "diluted", "dilution", "assuming"}:
        return None
    dilution = _dilution(label, parent)
    return _SHARE_COUNT_CONCEPTS[dilution] if dilution else None


# --- the mapping --------------------------------------------------------------------------------------------

_ATTRIBUTABLE = re.compile(r"^net (?:income|earnings|loss) attributable to (?P<who>.+)$")
_NOT_PARENT_HOLDERS = re.compile(r"noncontrolling|minority|redeemable|participating|preferred|affiliat|"
                                 r"equity method|investee|joint venture|unconsolidated")
_INCLUDING_NCI = re.compile(r"^net (?:income|earnings|loss) including .*\b(?:noncontrolling|minority) "
                            r"interests?$")
_NAMED_EQUITY = re.compile(r"^total (?P<who>.+) stockholders (?:equity|deficit)$")
_NOT_PARENT_EQUITY = re.compile(r"\b(?:liabilities|and|noncontrolling|minority|preferred|other|redeemable)\b")
_ACTIVITIES = re.compile(r"^(operating|investing|financing) activities$")
_CASH_HEADING = re.compile(r"\bcash\b.*\b(?:provided|used|from|flows?)\b")


def names_the_parent(label: str) -> bool:
    """Whether a row's label says it is the company's own share, not the total with noncontrolling interests: "Net
    income attributable to <the company>", "Total <Company> shareholders' equity" (the readings :func:`_lookup`
    maps to the parent's concepts)."""
    text = normalise_label(label)
    if m := _ATTRIBUTABLE.match(text):
        return not _NOT_PARENT_HOLDERS.search(m["who"])
    return bool((m := _NAMED_EQUITY.match(text)) and not _NOT_PARENT_EQUITY.search(m["who"]))


# a payment netted of a non-cash part ("net of construction payable", "net of cash acquired"); netted of receipts
# ("net of proceeds from sales") it is another amount
_NET_OF_TAIL = re.compile(r"(.+?) net of (?!.*\b(?:proceeds|sales?|disposals?|dispositions?)\b).+$")


def _lookup(label: str, statement: str) -> str | None:
    concept = _PHRASES.get(label)
    if concept is None:
        m = _ATTRIBUTABLE.match(label)
        if m and not _NOT_PARENT_HOLDERS.search(m["who"]):
            concept = "NetIncomeLoss"  # "Net income attributable to <the company or its common stockholders>"
        if _INCLUDING_NCI.match(label):
            concept = "ProfitLoss"  # "Net earnings, including earnings attributable to redeemable and NCI"
        m = _NAMED_EQUITY.match(label)
        if m and not _NOT_PARENT_EQUITY.search(m["who"]):
            concept = "StockholdersEquity"  # "Total <Company> shareholders' equity"
    if concept is None and statement == "cash flows" and (m := _NET_OF_TAIL.match(label)):
        return _lookup(m[1], statement)  # "capital expenditures, net of construction payable": the payment, netted
    if concept is None:
        return None
    allowed = _PHRASE_STATEMENTS.get(label, STATEMENTS_OF[concept])
    return concept if statement in allowed else None


# concepts whose rows may print their opposite as the positive sense: (the concept's own sense, its opposite)
_SENSES = {"IncomeTaxExpenseBenefit": (re.compile(r"\b(?:expense|provision|charge)\b"),
                                       re.compile(r"\b(?:benefit|credit)\b"))}
_ALTERNATIVE = re.compile(r"\([^)\d]*[a-z][^)\d]*\)|/")


def _opposite_first(label: str, concept: str | None) -> bool:
    """Whether a label's positive sense (its words without the alternatives it prints in parentheses) is its
    concept's opposite ("Income tax (expense)/benefit": a benefit)."""
    senses = _SENSES.get(concept or "")
    if senses is None:
        return False
    own, opposite = senses
    positive = re.sub(r"\([^)]*\)", " ", label.lower())
    return bool(opposite.search(positive)) and not own.search(positive)


def printed_negated(label: str, concept: str | None) -> bool:
    """Whether a row's printed amounts are its concept's with the sign turned: the label prints the opposite of
    the concept as its positive sense and the concept's own sense as the alternative in parentheses ("Income tax
    (expense)/benefit", "(Provision for) benefit from taxes": a benefit positive, an expense in parentheses)."""
    return bool(_ALTERNATIVE.search(label.lower())) and _opposite_first(label, concept)


def concept_of_query(text: str) -> str | None:
    """The concept a searched phrase names, as a row label would or with its words in another number
    ("capital expenditure", "inventory")."""
    return concept_for(text) or _SINGULAR_PHRASES.get(_singular(normalise_label(text)))


def concept_for(label: str, parent: str = "", statement: str = "table", unit: str = "USD") -> str | None:
    """The us-gaap concept (local name, no prefix) a statement row's label means, or None when it does not map
    to one unambiguously.

    Args:
        label: The row label as printed ("Merchandise inventories", "Diluted").
        parent: The heading the row sits under ("Current assets", "Earnings per share"), or "".
        statement: ``income statement``, ``balance sheet``, ``cash flows``, ``equity`` or ``table`` (not a
            primary statement; any concept may sit there).
        unit: ``USD``, ``USD/share``, ``shares`` or ``%``.

    Returns:
        A concept such as ``"InventoryNet"``, or None.
    """
    if unit == "%":
        return None
    unlabeled = _UNLABELED_TOTAL.match(label)
    if unlabeled:  # a row of values under a heading, no label of its own: the heading's total
        label, parent = "Total", unlabeled[1]
    text, heading = normalise_label(label), normalise_label(parent)
    if not text or _NOT_CONSOLIDATED.search(heading) or _COMPANY_MEASURE.search(heading):
        return None
    # What the row counts: its own words decide, then its heading, then the unit (which a reader may have
    # taken from the heading: "Shares used in computing earnings per share" › "Basic" is a count, not
    # dollars a share). "Diluted (in dollars per share)", "Basic (in shares)" print their unit.
    printed_unit = _UNIT_IN_LABEL.search(label.lower())
    if _PER_SHARE_WORDS.search(text) or printed_unit and "per share" in printed_unit[0]:
        measure = "per share"
    elif (re.search(r"\bshares\b|\bshare count\b", text) or printed_unit and "shares" in printed_unit[0]
          or _SHARE_COUNT_HEADING.search(heading)):
        measure = "shares"
    elif _PER_SHARE_WORDS.search(heading) or unit == "USD/share":
        measure = "per share"
    elif unit == "shares":
        measure = "shares"
    elif _DILUTION_ONLY.match(text):
        return None  # "Basic" under a heading that says neither per share nor shares
    else:
        measure = "amount"
    if measure == "per share":
        concept = _per_share_concept(text, heading)
        return concept if concept and statement in (_IS, _TABLE) else None
    if measure == "shares":
        concept = _share_count_concept(text, heading)
        if concept is not None:
            return concept if statement in (_IS, _TABLE) else None
        # not a count after all where the equity section prints share counts in its captions: "Treasury stock,
        # at cost (5 shares ...)", the rows under "1,224 shares issued and 1,221 shares outstanding"
        concept = _lookup(text, statement)
        return concept if concept in _BALANCE and "shares" not in text else None
    if text == "total":
        if not heading:
            return None
        concept = _lookup(f"total {heading}", statement)
        return concept if concept in _TOTAL_OF_HEADING and statement in (_IS, _BS) else None
    m = _ACTIVITIES.match(text)
    if m:  # "Cash provided by (used in): Operating activities"
        if not _CASH_HEADING.search(heading):
            return None
        return _lookup(f"net cash from {m[1]} activities", statement)
    concept = _lookup(text, statement)
    if _opposite_first(label, concept) and not _ALTERNATIVE.search(label.lower()):
        return None  # "Income tax benefit" alone: whether a benefit prints positive or in parentheses is not said
    return concept


# The mapping's version: the code's tag and a digest of its tables (concepts-3: a row under a heading naming an adjusted
# measure maps to no concept). A library whose facts were mapped under another
# has them mapped again from their stored labels (engine.ingest.runner.refresh_concepts); no file is read again.
CONCEPTS_VERSION = "concepts-3:" + hashlib.sha256(repr((
    sorted(SYNONYMS.items()), sorted((k, sorted(v)) for k, v in STATEMENTS_OF.items()),
    sorted((k, sorted(v)) for k, v in _PHRASE_STATEMENTS.items()), sorted(_TOTAL_OF_HEADING),
)).encode()).hexdigest()[:12]
