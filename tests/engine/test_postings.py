"""BM25 inside chosen filings from the terms stored with each filing (engine.vocab.tokens, engine.store.terms,
engine.retrieval.postings): the whole-library index's scores, statistics that follow every add, removal and
replacement, a migration that makes the terms of an older library, and a question path that loads no
whole-library index."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from engine.indexing import lexical_index, open_indexes, sync_indexes
from engine.ingest import ingest
from engine.retrieval.postings import FilingLexicon
from engine.store import Library, terms

QUERIES = ["total revenue 2022", "net income per share diluted", "purchases of property and equipment",
           "risk factors cybersecurity", "revenue revenue segment", "the of and", "zzqx qqvbn"]


def same_ranking(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> None:
    """Same chunks with the same scores (float32 in bm25s); ties may come in another order."""
    assert len(a) == len(b)
    sa, sb = dict(a), dict(b)
    assert sa.keys() == sb.keys()
    assert all(abs(sa[c] - sb[c]) <= 1e-5 * max(1.0, abs(sa[c])) for c in sa)
    assert np.all(np.diff([s for _, s in b]) <= 1e-9)  # best first


def test_scores_inside_filings_are_the_whole_library_index_scores(ingested_demo):
    library, settings, _ = ingested_demo
    index = lexical_index(library, settings)
    lexicon = FilingLexicon(library)
    fids = [f.id for f in library.filings()]
    for query in QUERIES:
        for chosen in (fids[:1], fids[2:5], fids):
            expected = index.top(index.scores(query), 10_000, chosen)
            same_ranking(expected, lexicon.top(query, 10_000, chosen))
    assert lexicon.top("zzqx qqvbn", 10, fids) == []
    assert sorted(int(c) for ids, _ in lexicon.by_filing("revenue", fids).values() for c in ids) == sorted(
        c.id for c in library.chunks_of_filings(fids))


def test_statistics_follow_adds_removals_and_replacements(tmp_path, demo_dir, settings):
    library = Library(settings.library_home())
    ingest(library, [demo_dir], settings)
    assert terms.problems(library.conn) == []
    full_stats = terms.stats(library.conn)
    full_df = dict(library.conn.execute("SELECT term, df FROM term_df"))
    assert full_stats[0] == library.count("chunks") and full_stats[1] > full_stats[0]

    victim = library.filings()[3]
    library.remove_filings([victim.id])
    assert terms.problems(library.conn) == []  # recomputed from the stored terms: the counts agree
    assert terms.stats(library.conn)[0] == full_stats[0] - victim.n_chunks
    assert library.conn.execute("SELECT COUNT(*) FROM chunk_terms WHERE filing_id=?", (victim.id,)).fetchone()[0] == 0

    ingest(library, [demo_dir], settings)  # the file is still there: read again
    assert terms.problems(library.conn) == []
    assert terms.stats(library.conn) == full_stats
    assert dict(library.conn.execute("SELECT term, df FROM term_df")) == full_df

    # a filing replaced in place (the same file read by a newer parser) counts once
    again = library.filings()[0]
    parsed_rows = library.conn.execute("UPDATE filings SET parser_version='old' WHERE id=?", (again.id,))
    assert parsed_rows.rowcount == 1
    report = ingest(library, [demo_dir], settings)
    assert report.count("added") == 1
    assert terms.problems(library.conn) == [] and terms.stats(library.conn) == full_stats


def test_an_older_library_gets_its_terms_made_when_opened(tmp_path, demo_dir, settings, embedder):
    library = Library(settings.library_home())
    ingest(library, [demo_dir], settings)
    sync_indexes(library, settings, embedder)
    library.close()
    conn = sqlite3.connect(settings.library_home() / "library.sqlite3")  # back to schema 7, as before the terms
    conn.executescript("DROP TABLE chunk_terms; DROP TABLE term_df; DELETE FROM meta WHERE key LIKE 'term_%';"
                       "DELETE FROM schema_migrations WHERE version = 8;")
    conn.close()
    with Library(settings.library_home()) as reopened:
        assert terms.problems(reopened.conn) == []
        assert reopened.conn.execute("SELECT COUNT(*) FROM chunk_terms").fetchone()[0] == 8
        index = lexical_index(reopened, settings)
        fids = [f.id for f in reopened.filings()]
        same_ranking(index.top(index.scores(QUERIES[0]), 10_000, fids), FilingLexicon(reopened).top(QUERIES[0], 10_000,
                                                                                                      fids))


def test_a_question_loads_no_whole_library_index(ingested_demo, embedder, monkeypatch):
    from engine.retrieval.hierarchical import HierarchicalRetriever
    from engine.store.bm25 import LexicalIndex

    def refuse(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise AssertionError("the question path loaded the whole-library BM25 index")

    monkeypatch.setattr(LexicalIndex, "__init__", refuse)
    library, settings, _ = ingested_demo
    retriever = HierarchicalRetriever(library, settings, embedder, open_indexes(library, settings, embedder))
    filings = library.filings()[:2]
    passages, payload = retriever.passages("total revenue", "total revenue", filings)
    assert passages and {p.chunk.filing_id for p in passages} <= {f.id for f in filings}


@pytest.mark.parametrize("query", QUERIES[:3])
def test_the_term_table_of_a_filing_round_trips(ingested_demo, query):
    library, _, _ = ingested_demo
    fid = library.filings()[0].id
    (chunk_ids, table), = terms.tables(library.conn, [fid]).values()
    assert table.chunks == len(chunk_ids) and table.offsets[-1] == len(table.terms) == len(table.tfs)
    assert list(chunk_ids) == sorted(c.id for c in library.chunks_of_filings([fid]))


def test_a_library_past_the_limit_has_no_whole_library_index_and_search_still_finds(library_copy, embedder):
    """Past retrieval.library_bm25_max_chunks the builder skips the whole-library BM25 index (its rebuild costs the
    whole library on every ingest); search scores inside the filtered or summary-selected filings instead, with
    the same scores; raising the limit builds it again."""
    from engine.indexing import open_indexes, verify_indexes
    from engine.retrieval.search import MetadataFilter, Searcher

    library, settings = library_copy
    full = Searcher(library, settings, embedder, open_indexes(library, settings, embedder)).search("total revenue", 5)
    small = settings.with_overrides(retrieval={"library_bm25_max_chunks": 10})
    report = sync_indexes(library, small, embedder)
    assert report.published and not report.lexical_rebuilt and "more than retrieval.library_bm25_max_chunks" in \
        report.lexical_skipped
    opened = open_indexes(library, small, embedder)
    assert not opened.lexical.available and opened.lexical.skipped
    assert verify_indexes(library, small, embedder).ok
    res = Searcher(library, small, embedder, opened).search("total revenue", 5)
    assert 0 < res.lexical_scope <= small.retrieval.doc_candidates
    same_ranking([(h.chunk.id, h.score) for h in full.bm25], [(h.chunk.id, h.score) for h in res.bm25])
    ticker = library.filings()[0].identity.ticker
    filtered = Searcher(library, small, embedder, opened).search("total revenue", 5, MetadataFilter(issuer=ticker))
    assert filtered.bm25 and {h.chunk.doc_name.split("_")[0] for h in filtered.bm25} == {ticker}
    assert sync_indexes(library, small, embedder).published == ""  # current: nothing to do

    again = sync_indexes(library, settings, embedder)  # the default limit: built again
    assert again.lexical_rebuilt and not again.lexical_skipped
    assert open_indexes(library, settings, embedder).lexical.available
