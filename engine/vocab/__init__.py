"""The ground floor of vocabulary every layer above reads: nothing here imports another engine package but
:mod:`engine.records`' neighbours (:mod:`engine.errors`, :mod:`engine.settings`).

- :mod:`.numbers` — the one reader of printed numbers, scales and table cells (cell grammar, scale factors);
- :mod:`.concepts` — the us-gaap concepts statement rows are read as;
- :mod:`.catalogue` — the metric catalogue: metrics, their formulas over line items, and the line items;
- :mod:`.lexicon` — the metric and line-item lexicon: the words analysts and filings use for each;
- :mod:`.tokens` — the BM25 tokenizer and the term tables stored beside each filing.
"""
