"""Label -> us-gaap concept: the demo corpus rows (which its HTML filings tag in inline XBRL), the phrasings
real 10-K statements print, the traps a loose match falls into, labels that must stay unmapped, and known rows
of the real shared corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.records import StatementFact
from engine.vocab.concepts import STATEMENTS_OF, SYNONYMS, concept_for, known_concepts, normalise_label
from tests.conftest import needs_shared

IS, BS, CF = "income statement", "balance sheet", "cash flows"
CAPEX = "PaymentsToAcquirePropertyPlantAndEquipment"
PRETAX = "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest"

# the demo corpus: label -> (statement it prints on, concept its inline XBRL tag names)
DEMO = {
    "Total revenue": (IS, "Revenues"),
    "Cost of revenue": (IS, "CostOfRevenue"),
    "Gross profit": (IS, "GrossProfit"),
    "Research and development": (IS, "ResearchAndDevelopmentExpense"),
    "Selling general and administrative": (IS, "SellingGeneralAndAdministrativeExpense"),
    "Operating income": (IS, "OperatingIncomeLoss"),
    "Interest expense": (IS, "InterestExpense"),
    "Income before income taxes": (
        IS, PRETAX),
    "Provision for income taxes": (IS, "IncomeTaxExpenseBenefit"),
    "Net income": (IS, "NetIncomeLoss"),
    "Diluted EPS": (IS, "EarningsPerShareDiluted"),
    "Cash and cash equivalents": (BS, "CashAndCashEquivalentsAtCarryingValue"),
    "Accounts receivable": (BS, "AccountsReceivableNetCurrent"),
    "Inventories": (BS, "InventoryNet"),
    "Total current assets": (BS, "AssetsCurrent"),
    "Property plant and equipment net": (BS, "PropertyPlantAndEquipmentNet"),
    "Total assets": (BS, "Assets"),
    "Total current liabilities": (BS, "LiabilitiesCurrent"),
    "Long-term debt": (BS, "LongTermDebtNoncurrent"),
    "Total liabilities": (BS, "Liabilities"),
    "Total shareholders' equity": (BS, "StockholdersEquity"),
    "Net cash provided by operating activities": (CF, "NetCashProvidedByUsedInOperatingActivities"),
    "Capital expenditures": (CF, CAPEX),
    "Depreciation and amortization": (CF, "DepreciationDepletionAndAmortization"),
    "Dividends paid": (CF, "PaymentsOfDividends"),
    "Net cash used in investing activities": (CF, "NetCashProvidedByUsedInInvestingActivities"),
}


@pytest.mark.parametrize("label", sorted(DEMO))
def test_demo_corpus_labels_map_to_their_tags(label: str) -> None:
    statement, concept = DEMO[label]
    unit = "USD/share" if "EPS" in label else "USD"
    assert concept_for(label, "", statement, unit) == concept
    assert concept_for(label, unit=unit) == concept  # a table of unknown kind: the label alone decides


def test_demo_corpus_tags_agree_with_the_label_mapping() -> None:
    """The concepts the demo HTML filings tag in inline XBRL are the ones their printed labels map to."""
    import engine.demo_corpus as demo

    tags: dict[str, str] | None = getattr(demo, "DEMO_CONCEPTS", None)
    if tags is None:
        pytest.skip("the demo corpus tags no concepts")
    kinds = {"income_statement": IS, "balance_sheet": BS, "cash_flows": CF}
    statement_of = {label: kinds[s] for s, labels in demo.STATEMENTS.items() for label in labels}
    mapped = {label: concept_for(label, "", statement_of[label], "USD/share" if "EPS" in label else "USD")
              for label in tags}
    assert mapped == tags


def test_demo_pdf_rows_map_with_the_context_the_reader_gives_them(tmp_path: Path) -> None:
    """Every row of a generated demo 10-K, read back from the PDF, maps with the reader's own statement,
    parent and unit, in every period column."""
    from engine.demo_corpus import plan_corpus, write_pdf_filing
    from engine.facts.tables import extract_page_facts
    from engine.ingest.pdf import read_pdf_pages

    spec = next(s for s in plan_corpus(4, seed=3) if s.form == "10-K")
    write_pdf_filing(spec, tmp_path / "demo.pdf")
    pages, _ = read_pdf_pages(str(tmp_path / "demo.pdf"))
    facts = [f for no, text in enumerate(pages) for f in extract_page_facts(text, no) if f.label in DEMO]
    assert {f.label for f in facts} == set(DEMO)
    wrong = {(f.label, f.parent, f.statement, f.unit): concept_for(f.label, f.parent, f.statement, f.unit)
             for f in facts if concept_for(f.label, f.parent, f.statement, f.unit) != DEMO[f.label][1]}
    assert wrong == {}


# (label, parent, statement, unit, concept) as real 10-K/10-Q statements print them
REAL = [
    # income statement
    ("Total net sales", "", IS, "USD", "RevenueFromContractWithCustomerExcludingAssessedTax"),
    ("Net sales", "", IS, "USD", "RevenueFromContractWithCustomerExcludingAssessedTax"),
    ("Revenues", "", IS, "USD", "Revenues"),
    ("Total net revenues", "Net revenues", IS, "USD", "Revenues"),
    ("Cost of sales", "", IS, "USD", "CostOfGoodsAndServicesSold"),
    # a cost of sales printed in two lines (an industrial's products and services)
    ("Cost of products", "", IS, "USD", "CostOfGoodsSold"),
    ("Cost of services", "", IS, "USD", "CostOfServices"),
    ("Cost of products sold", "", IS, "USD", "CostOfGoodsAndServicesSold"),
    ("Cost of goods sold", "", IS, "USD", "CostOfGoodsAndServicesSold"),
    ("Merchandise costs", "", IS, "USD", "CostOfGoodsAndServicesSold"),
    ("Total cost of revenue", "Cost of revenue", IS, "USD", "CostOfRevenue"),
    ("Gross margin", "", IS, "USD", "GrossProfit"),
    ("Research, development and related expenses", "", IS, "USD", "ResearchAndDevelopmentExpense"),
    ("Selling, general, and administrative expenses", "", IS, "USD",
     "SellingGeneralAndAdministrativeExpense"),
    ("SG&A", "", IS, "USD", "SellingGeneralAndAdministrativeExpense"),
    ("Marketing, general and administrative", "", IS, "USD", "SellingGeneralAndAdministrativeExpense"),
    ("Total selling and administrative expense", "", IS, "USD", "SellingGeneralAndAdministrativeExpense"),
    ("Total operating expenses", "Operating expenses", IS, "USD", "OperatingExpenses"),
    ("Total costs and expenses", "", IS, "USD", "CostsAndExpenses"),
    ("Operating income (loss)", "", IS, "USD", "OperatingIncomeLoss"),
    ("Operating income/(loss)", "", IS, "USD", "OperatingIncomeLoss"),
    ("Income (loss) from operations", "", IS, "USD", "OperatingIncomeLoss"),
    ("Income/(loss) before income taxes", "", IS, "USD",
     PRETAX),
    ("Earnings from continuing operations before income tax expense", "", IS, "USD",
     PRETAX),
    ("Income from continuing operations before provision/(benefit) for taxes on income", "", IS, "USD",
     PRETAX),
    ("Pretax income", "", IS, "USD",
     PRETAX),
    ("Provision for/(benefit from) income taxes", "", IS, "USD", "IncomeTaxExpenseBenefit"),
    ("(Provision for) benefit from taxes", "", IS, "USD", "IncomeTaxExpenseBenefit"),  # Intel
    ("Income tax (expense)/benefit", "", IS, "USD", "IncomeTaxExpenseBenefit"),  # Boeing
    ("Benefit (provision) for income taxes", "", IS, "USD", "IncomeTaxExpenseBenefit"),
    # a benefit alone: whether it prints positive or in parentheses is not said
    ("Income tax benefit", "", IS, "USD", None),
    ("Income tax expense (benefit)", "", IS, "USD", "IncomeTaxExpenseBenefit"),
    ("Provision for taxes on income (Note 8)", "", IS, "USD", "IncomeTaxExpenseBenefit"),
    ("Net earnings", "", IS, "USD", "NetIncomeLoss"),
    ("Net (loss) income", "", IS, "USD", "NetIncomeLoss"),
    ("NET INCOME", "", IS, "USD", "NetIncomeLoss"),
    ("Net income attributable to Corning Incorporated", "", IS, "USD", "NetIncomeLoss"),
    ("Net income/(loss) attributable to common shareholders", "", IS, "USD", "NetIncomeLoss"),
    ("Less: Net income attributable to noncontrolling interests", "", IS, "USD",
     "NetIncomeLossAttributableToNoncontrollingInterest"),
    ("Net (income) loss attributable to noncontrolling interests", "", IS, "USD",
     "NetIncomeLossAttributableToNoncontrollingInterest"),
    ("Net income including noncontrolling interest", "", CF, "USD", "ProfitLoss"),
    ("Net income before allocation to noncontrolling interests", "", IS, "USD", "ProfitLoss"),
    ("Net earnings from continuing operations", "", IS, "USD", "IncomeLossFromContinuingOperations"),
    # per share and share counts: the label, else its heading, says which
    ("Diluted earnings per share", "", IS, "USD/share", "EarningsPerShareDiluted"),
    ("Basic net income per share", "", IS, "USD/share", "EarningsPerShareBasic"),
    ("Net income per share - diluted", "", IS, "USD/share", "EarningsPerShareDiluted"),
    ("Basic and diluted net loss per share", "", IS, "USD/share", "EarningsPerShareBasicAndDiluted"),
    ("Diluted", "Earnings per share", IS, "USD/share", "EarningsPerShareDiluted"),
    ("Diluted (Note 18)", "Earnings per common share attributable to Corning Incorporated", IS, "USD",
     "EarningsPerShareDiluted"),
    ("Diluted (in dollars per share)", "", IS, "USD", "EarningsPerShareDiluted"),
    ("Basic earnings/(loss)", "Per share data applicable to common shareholders", IS, "USD",
     "EarningsPerShareBasic"),
    ("Net income attributable to CVS Health", "Diluted earnings per share", IS, "USD/share",
     "EarningsPerShareDiluted"),
    ("Continuing operations", "Basic earnings per share", IS, "USD",
     "IncomeLossFromContinuingOperationsPerBasicShare"),
    ("Dividends declared per share", "", IS, "USD/share", "CommonStockDividendsPerShareDeclared"),
    ("Basic", "Weighted-average common shares outstanding", IS, "shares",
     "WeightedAverageNumberOfSharesOutstandingBasic"),
    # the reader took "USD/share" from the heading; the heading says the row counts shares
    ("Diluted", "Shares used in computing earnings per share", IS, "USD/share",
     "WeightedAverageNumberOfDilutedSharesOutstanding"),
    ("Weighted-average shares––diluted", "Earnings per common share––diluted", IS, "shares",
     "WeightedAverageNumberOfDilutedSharesOutstanding"),
    ("Weighted average basic shares outstanding", "", IS, "shares",
     "WeightedAverageNumberOfSharesOutstandingBasic"),
    # balance sheet
    ("Cash and equivalents", "Current assets", BS, "USD", "CashAndCashEquivalentsAtCarryingValue"),
    ("Short-term investments", "Current assets", BS, "USD", "ShortTermInvestments"),
    ("Accounts receivable, net of allowance for doubtful accounts of $650 and $633", "Current assets", BS,
     "USD", "AccountsReceivableNetCurrent"),
    ("Trade accounts receivable, less allowance for doubtful accounts: 2021—$492; 2020—$508", "", BS, "USD",
     "AccountsReceivableNetCurrent"),
    ("Trade receivables (net of allowances of $48 and $33)", "", BS, "USD", "AccountsReceivableNetCurrent"),
    ("Merchandise inventories", "Current assets", BS, "USD", "InventoryNet"),
    ("Inventories, net (Note 6)", "Current assets", BS, "USD", "InventoryNet"),
    ("Inventories, net of inventory reserves - $201 and $182 (Note 3)", "Current assets", BS, "USD", "InventoryNet"),
    ("Accounts receivable, less allowance for credit losses of $5 and $7", "Current assets", BS, "USD",
     "AccountsReceivableNetCurrent"),
    ("TOTAL CURRENT ASSETS", "CURRENT ASSETS", BS, "USD", "AssetsCurrent"),
    ("Total", "Current assets", BS, "USD", "AssetsCurrent"),
    ("Property, plant and equipment — net", "", BS, "USD", "PropertyPlantAndEquipmentNet"),
    ("Property and equipment, net", "", BS, "USD", "PropertyPlantAndEquipmentNet"),
    ("Net property and equipment", "Property and equipment", BS, "USD", "PropertyPlantAndEquipmentNet"),
    ("Property, plant and equipment, net of accumulated depreciation of $5,000 and $4,500", "", BS, "USD",
     "PropertyPlantAndEquipmentNet"),
    ("Goodwill", "", BS, "USD", "Goodwill"),
    ("Intangible assets, net", "", BS, "USD", "IntangibleAssetsNetExcludingGoodwill"),
    ("Other intangible assets, net (Note 10)", "", BS, "USD", "IntangibleAssetsNetExcludingGoodwill"),
    ("Total Assets", "", BS, "USD", "Assets"),
    ("Trade payables", "Current liabilities", BS, "USD", "AccountsPayableCurrent"),
    ("Current maturities of long-term debt", "Current liabilities", BS, "USD", "LongTermDebtCurrent"),
    ("Current portion of long-term debt", "Current liabilities", BS, "USD", "LongTermDebtCurrent"),
    ("Long-term debt, net of current portion", "", BS, "USD", "LongTermDebtNoncurrent"),
    ("Long-term debt (Note 12)", "", BS, "USD", "LongTermDebtNoncurrent"),
    ("TOTAL LIABILITIES", "", BS, "USD", "Liabilities"),
    ("Total stockholders’ equity (deficit)", "", BS, "USD", "StockholdersEquity"),
    ("Total CVS Health shareholders’ equity", "", BS, "USD", "StockholdersEquity"),
    ("Total liabilities and shareholders’ equity", "", BS, "USD", "LiabilitiesAndStockholdersEquity"),
    ("TOTAL LIABILITIES AND EQUITY", "", BS, "USD", "LiabilitiesAndStockholdersEquity"),
    ("Retained earnings/(deficit)", "", BS, "USD", "RetainedEarningsAccumulatedDeficit"),
    ("Accumulated deficit", "", BS, "USD", "RetainedEarningsAccumulatedDeficit"),
    ("Treasury stock, at cost", "", BS, "USD", "TreasuryStockValue"),
    ("Treasury stock, at cost (5 shares at December 26, 2020 and 3 shares at December 28, 2019)", "", BS,
     "shares", "TreasuryStockValue"),
    ("Accumulated other comprehensive income (loss)", "", BS, "USD",
     "AccumulatedOtherComprehensiveIncomeLossNetOfTax"),
    # cash flows
    ("Net cash (used in) provided by operating activities", "", CF, "USD",
     "NetCashProvidedByUsedInOperatingActivities"),
    ("Net cash provided by/(used for) operating activities", "", CF, "USD",
     "NetCashProvidedByUsedInOperatingActivities"),
    ("Cash provided (used) by financing activities", "", CF, "USD",
     "NetCashProvidedByUsedInFinancingActivities"),
    ("Net cash provided by (used in) investing activities", "", CF, "USD",
     "NetCashProvidedByUsedInInvestingActivities"),
    ("Total cash used in financing activities", "", CF, "USD", "NetCashProvidedByUsedInFinancingActivities"),
    ("Operating activities", "Total cash provided by (used in)", CF, "USD",
     "NetCashProvidedByUsedInOperatingActivities"),
    ("Net cash provided by operating activities from continuing operations", "", CF, "USD",
     "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations"),
    ("Purchases of property and equipment", "Investing activities", CF, "USD",
     CAPEX),
    ("Purchases of property, plant and equipment (PP&E)", "", CF, "USD",
     CAPEX),
    ("Capital expenditures", "", CF, "USD", CAPEX),
    # a cash-flow payment printed net of a qualifier is still the payment
    ("Capital expenditures, net of construction payable", "Cash flows from investing activities", CF, "USD", CAPEX),
    ("Additions to property, plant and equipment", "", CF, "USD", CAPEX),
    (("Additions to property and equipment, net of $53, $123 and $48, respectively, of non-cash capital "
      "expenditures"), "", CF, "USD", CAPEX),
    ("Payments for property and equipment", "", CF, "USD", CAPEX),
    ("Proceeds from sale of property, plant and equipment", "", CF, "USD",
     "ProceedsFromSaleOfPropertyPlantAndEquipment"),
    ("Acquisitions, net of cash acquired", "", CF, "USD", "PaymentsToAcquireBusinessesNetOfCashAcquired"),
    ("Dividends paid to shareholders", "", CF, "USD", "PaymentsOfDividends"),
    ("Cash dividends paid", "", CF, "USD", "PaymentsOfDividends"),
    ("Payments for dividends and dividend equivalents", "Financing activities", CF, "USD", "PaymentsOfDividends"),
    ("Dividends — common and preferred", "Cash used by financing activities", CF, "USD", "PaymentsOfDividends"),
    ("Dividends to shareholders", "", CF, "USD", "PaymentsOfDividends"),
    ("Dividends", "FINANCING ACTIVITIES", CF, "USD", "PaymentsOfDividends"),
    ("Dividends", "", "table", "USD", None),  # (a note's or the equity statement's: declared, not paid)
    ("Dividends declared and not paid", "Cash used by financing activities", CF, "USD", None),
    ("Receivables, net", "Current assets", BS, "USD", "AccountsReceivableNetCurrent"),
    ("Other receivables", "Current assets", BS, "USD", None),
    ("Purchases of treasury stock", "", CF, "USD", "PaymentsForRepurchaseOfCommonStock"),
    ("Repurchase of common stock", "", CF, "USD", "PaymentsForRepurchaseOfCommonStock"),
    ("Stock-based compensation expense", "", CF, "USD", "ShareBasedCompensation"),
    ("Share-based compensation", "", CF, "USD", "ShareBasedCompensation"),
    ("Deferred income taxes", "Adjustments to reconcile net income", CF, "USD",
     "DeferredIncomeTaxExpenseBenefit"),
    ("Repayments of long-term debt", "", CF, "USD", "RepaymentsOfLongTermDebt"),
    ("Principal payments on long-term debt", "", CF, "USD", "RepaymentsOfLongTermDebt"),
    ("Proceeds from issuance of long-term debt", "", CF, "USD", "ProceedsFromIssuanceOfLongTermDebt"),
    ("Cash, cash equivalents and restricted cash at end of period", "", CF, "USD",
     "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"),
    ("Sales to customers", "", IS, "USD", "RevenueFromContractWithCustomerExcludingAssessedTax"),  # J&J
    ("Depreciation and amortization of property, equipment and intangibles", "", CF, "USD",
     "DepreciationDepletionAndAmortization"),  # Netflix
    # a restructuring program's own line, its impairments included (an add-back in operating activities)
    ("Restructuring and impairment charges", "Operating Activities", CF, "USD",
     "RestructuringSettlementAndImpairmentProvisions"),
    ("Restructuring and other charges", "", IS, "USD", "RestructuringSettlementAndImpairmentProvisions"),
    ("Restructuring charges", "", IS, "USD", "RestructuringCharges"),
]


@pytest.mark.parametrize(("label", "parent", "statement", "unit", "concept"), REAL)
def test_real_world_phrasings(label: str, parent: str, statement: str, unit: str, concept: str) -> None:
    assert concept_for(label, parent, statement, unit) == concept


# labels that look like a concept but are another thing (or nothing definite): never the tempting concept
TRAPS = [
    ("Proceeds from sale of property, plant and equipment", "", CF, "USD",
     "ProceedsFromSaleOfPropertyPlantAndEquipment"),
    ("Proceeds from sale of PP&E and other assets", "", CF, "USD", None),
    ("Proceeds from property and equipment sales and incentives", "", CF, "USD", None),
    ("Purchases of property and equipment, net of proceeds from sales and incentives", "", CF, "USD", None),
    ("Total liabilities and shareholders' equity", "", BS, "USD", "LiabilitiesAndStockholdersEquity"),
    ("Total liabilities and equity", "", BS, "USD", "LiabilitiesAndStockholdersEquity"),
    # a reconciliation to an adjusted measure starts from the statement's own lines
    ("Net income", "Adjusted EBITDA Reconciliation (unaudited)", "table", "USD", "NetIncomeLoss"),
    # working-capital changes in a cash-flow statement are not balances
    ("Inventories", "Changes in operating assets and liabilities", CF, "USD", None),
    ("Merchandise inventories", "", CF, "USD", None),
    ("Accounts receivable", "", CF, "USD", None),
    ("Accounts payable", "", CF, "USD", None),
    # a per-share or share-count row is never an amount
    ("Net income", "", IS, "USD/share", None),
    ("Net income", "", IS, "shares", None),
    ("Net income", "Diluted earnings per share", IS, "USD", "EarningsPerShareDiluted"),
    ("Basic", "", IS, "USD", None),
    ("Diluted", "Total", IS, "USD", None),
    # parts of something else, whatever the label says
    ("Cash and cash equivalents", "Asset Category Total Fair Value (Level 1)", CF, "USD", None),
    ("Current portion of long-term debt", "Finance Leases", BS, "USD", None),
    ("Cost of sales", "Contracts designated as cash flow hedging instruments", IS, "USD", None),
    ("Total", "Assets", BS, "USD", None),  # "Assets: Prepaid expenses, Other assets, Total" in a note
    ("Total", "Liabilities", BS, "USD", None),
    ("Net income", "", BS, "USD", None),  # an investee's summarised results beside its balance sheet
    # the rows of the company's own measure, not the statement's (a release's adjusted block under its statement)
    ("Net earnings", "Adjusted earnings before provision for taxes and net earnings (1)", IS, "USD", None),
    ("Diluted", "Adjusted Net Income (Loss) Per Share", "table", "USD/share", None),
    ("Net earnings", "Non-GAAP net earnings", IS, "USD", None),
    # a deferred tax table lists temporary differences, not the statements' lines
    ("Depreciation and amortization", "Deferred tax assets (liabilities)", "table", "USD", None),
    ("Deferred income taxes", "", BS, "USD", None),  # an asset or a liability
    # wording whose tag differs between filers: left unmapped rather than guessed
    ("Interest expense, net", "", IS, "USD", None),
    ("Total equity", "", BS, "USD", None),
    ("Property, plant and equipment", "", BS, "USD", None),
    ("Cash and cash equivalents at end of year", "", CF, "USD", None),
    ("Net income attributable to noncontrolling interests", "", IS, "USD",
     "NetIncomeLossAttributableToNoncontrollingInterest"),
    ("Comprehensive income attributable to noncontrolling interests", "", IS, "USD", None),
    ("Total stock-based compensation expense, net of tax of $0", "", IS, "USD", None),
    ("Gross margin", "", IS, "%", None),
    ("Net cash provided by/(used in) operating activities from discontinued operations", "", CF, "USD", None),
    ("Dividends paid to noncontrolling interests", "", CF, "USD", None),
    ("Repayments of long-term debt and capital lease obligations", "", CF, "USD", None),
]


@pytest.mark.parametrize(("label", "parent", "statement", "unit", "concept"), TRAPS)
def test_traps(label: str, parent: str, statement: str, unit: str, concept: str | None) -> None:
    assert concept_for(label, parent, statement, unit) == concept


@pytest.mark.parametrize("label", [
    "Other", "Total", "Other, net", "Other — net", "", "—", "(1)", "Other assets", "Other liabilities",
    "Adjustments", "Balance at end of year",
    ("Revenue recognized during the year that was included in the contract liability balance at the "
     "beginning of the year, as discussed in Note 3."),
    "Total cash, cash equivalents and marketable securities held by our foreign subsidiaries",
])
@pytest.mark.parametrize("statement", [IS, BS, CF, "table"])
def test_unmappable_labels(label: str, statement: str) -> None:
    assert concept_for(label, "", statement) is None


@pytest.mark.parametrize(("printed", "normal"), [
    ("Property, plant and equipment — net", "ppe net"),
    ("Purchases of property, plant and equipment (PP&E)", "purchases of ppe"),
    ("Total stockholders’ equity (deficit)", "total stockholders equity"),
    ("Income/(loss) before income taxes:", "income before income taxes"),
    ("Net cash (used in) provided by operating activities", "net cash from operating activities"),
    ("Cash provided (used) by operations", "cash from operating activities"),
    ("Net cash used in discontinued operations", "net cash used in discontinued operations"),
    ("Inventories (Notes 1 and 3)", "inventories"),
    ("Cash and cash equivalents included in other assets1",
     "cash and cash equivalents included in other assets"),
    ("Less: Net income attributable to noncontrolling interests",
     "net income attributable to noncontrolling interests"),
    ("Treasury stock, at cost; Shares held: 970 million and 961 million", "treasury stock at cost"),
])
def test_normalise_label(printed: str, normal: str) -> None:
    assert normalise_label(printed) == normal


def test_the_synonym_table() -> None:
    concepts = known_concepts()
    assert len(concepts) >= 60
    assert set(SYNONYMS) <= set(STATEMENTS_OF)
    assert all(c[:1].isupper() and ":" not in c for c in concepts)  # local names, no "us-gaap:" prefix


# --- the real shared corpus -----------------------------------------------------------------------------


def _statement_facts(doc: str) -> list[StatementFact]:
    """Every fact of the filing's pages that print a primary statement."""
    from engine.facts.tables import extract_page_facts
    from engine.ingest.pdf import read_pdf_pages

    issuer = doc.split("_")[0]
    pages, _ = read_pdf_pages(str(needs_shared("corpus", "filings", issuer, "10-K", f"{doc}.pdf")))
    out: list[StatementFact] = []
    for no, text in enumerate(pages):
        facts = extract_page_facts(text, no)
        if any(f.statement != "table" for f in facts):
            out += facts
    return out


def _concepts(facts: list[StatementFact], label: str, statement: str) -> set[str | None]:
    return {concept_for(f.label, f.parent, f.statement, f.unit) for f in facts
            if f.label.startswith(label) and f.statement == statement}


@pytest.mark.shared
def test_known_rows_of_real_filings() -> None:
    mmm, bby, amzn = (_statement_facts(d) for d in ("3M_2018_10K", "BESTBUY_2019_10K", "AMAZON_2019_10K"))

    assert _concepts(mmm, "Purchases of property, plant and equipment (PP&E)", CF) == {
        CAPEX}
    assert _concepts(mmm, "Proceeds from sale of PP&E", CF) == {None}
    assert _concepts(mmm, "Net cash provided by (used in) operating activities", CF) == {
        "NetCashProvidedByUsedInOperatingActivities"}
    assert _concepts(mmm, "Purchases of treasury stock", CF) == {"PaymentsForRepurchaseOfCommonStock"}

    assert _concepts(bby, "Merchandise inventories", BS) == {"InventoryNet"}
    assert _concepts(bby, "Merchandise inventories", CF) == {None}  # the change in inventories
    assert _concepts(bby, "Total current assets", BS) == {"AssetsCurrent"}
    assert _concepts(bby, "Additions to property and equipment", CF) == {CAPEX}

    assert _concepts(amzn, "Total net sales", IS) == {"RevenueFromContractWithCustomerExcludingAssessedTax"}
    assert _concepts(amzn, "Diluted earnings per share", IS) == {"EarningsPerShareDiluted"}
    assert _concepts(amzn, "Purchases of property and equipment", CF) >= {CAPEX}
    assert _concepts(amzn, "Proceeds from property and equipment sales and incentives", CF) == {None}
    income = [f for f in amzn if f.statement == IS and f.label == "Net income"]
    assert income
    assert {concept_for(f.label, f.parent, f.statement, f.unit) for f in income} == {"NetIncomeLoss"}

    # capital expenditure is never a row that names proceeds ("Purchases of property and equipment, net of
    # proceeds from sales and incentives" included), in any of the three filings
    proceeds = [f for f in (*mmm, *bby, *amzn) if "proceeds" in f.label.lower()]
    assert len({f.label for f in proceeds}) >= 5
    assert all(concept_for(f.label, f.parent, f.statement, f.unit) != CAPEX for f in proceeds)


def test_a_searched_phrase_names_its_concept_in_either_number() -> None:
    from engine.vocab.concepts import concept_of_query

    assert concept_of_query("capital expenditure") == CAPEX == concept_of_query("Capital Expenditures")
    assert concept_of_query("inventory") == "InventoryNet"
    assert concept_of_query("proceeds from sale of PP&E") == "ProceedsFromSaleOfPropertyPlantAndEquipment"
    assert concept_of_query("other") is None


def test_an_upgraded_library_maps_its_stored_facts_again_once(tmp_path: Path, embedder) -> None:  # noqa: ANN001
    """Facts mapped under an older concept mapping (here: before "Cost of products" meant a part of the cost of
    sales) are mapped again from their stored labels at the next ingest or index rebuild, once; the gross margin of
    a company that prints its costs in two lines is then computed from both."""
    from engine.indexing import sync_indexes
    from engine.ingest import ingest, refresh_concepts
    from engine.pipeline import Models, build_pipeline
    from engine.settings import Settings
    from engine.store import Library
    from engine.vocab.concepts import CONCEPTS_VERSION
    from tests.engine.test_identity import add_table_page, write_cover_pdf

    rows = [("Consolidated Statements of Operations", "", ""), ("(in millions)", "2023", "2022"),
            ("Sales of products", "8,100", "7,400"), ("Sales of services", "1,900", "1,800"),
            ("Total revenues", "10,000", "9,200"), ("Cost of products", "(7,200)", "(6,700)"),
            ("Cost of services", "(1,500)", "(1,450)"), ("Operating income", "1,000", "760"),
            ("Net income", "760", "560")]
    add_table_page(write_cover_pdf(tmp_path / "f" / "ACMEAERO_2023_10K.pdf", name="ACME AERO CORP", form="10-K",
                                   period_text="December 31, 2023"), rows)
    settings = Settings(home=tmp_path / "lib", ingest={"workers": 1})
    library = Library(settings.home)
    ingest(library, [tmp_path / "f"], settings)
    assert library.concepts_version() == CONCEPTS_VERSION and refresh_concepts(library) == 0
    with library.conn:  # as an older mapping left them
        library.conn.execute("UPDATE facts SET concept = NULL WHERE label LIKE 'Cost of %'")
        library.conn.execute("UPDATE meta SET value = 'concepts-0' WHERE key = 'concepts_version'")
    assert refresh_concepts(library) == 4 and refresh_concepts(library) == 0
    assert {s.fact.concept for s in library.facts(match='"cost"')} == {"CostOfGoodsSold", "CostOfServices"}
    sync_indexes(library, settings, embedder)
    run = build_pipeline(settings, library, Models(embedder)).run(
        "What was Acme Aero's gross margin in FY2023?", store=False)
    assert run.status == "answered" and run.answer.value == pytest.approx(13.0), run.answer.text


@pytest.mark.parametrize("label", ["Payments for acquisition of property, plant and equipment",
                                   "Purchases for the acquisition of property and equipment",
                                   "Additions to property and equipment", "Purchases of property and equipment"])
def test_capital_expenditure_is_read_however_the_payment_is_worded(label: str) -> None:
    assert concept_for(label, "Investing activities:", "cash flows") == CAPEX
