"""Parse one file into a :class:`ParsedFiling` (runs in a worker process)."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from pathlib import Path

from engine.chunking import chunk_pages
from engine.errors import IngestError
from engine.facts.tables import extract_facts
from engine.facts.xbrl import merge_xbrl
from engine.ingest.folio import FOLIO_VERSION, printed_folios
from engine.ingest.html import read_html_document
from engine.ingest.identity import (
    IDENTITY_VERSION,
    combine,
    dei_cover,
    looks_like_filing,
    parse_cover,
    parse_file_name,
    pdf_link_uris,
    summary_text,
    with_balance_sheet_year_end,
    with_linked_cik,
    with_tagged_cover,
)
from engine.ingest.pdf import WordBox, read_pdf_pages, span_box
from engine.ingest.sections import SECTION_VERSION, with_sections
from engine.records import ParsedFiling, StatementFact, indexed_text
from engine.settings import ChunkingSettings, IngestSettings, Settings
from engine.vocab.concepts import concept_for, is_instant
from engine.vocab.tokens import chunk_terms

log = logging.getLogger(__name__)

# html-2: inline XBRL headers are not page text; html-3: the reader keeps the dei cover tags (CIK, fiscal-year end),
# so HTML filings stored before are read again on their next ingest; pdf-rows-2 / html-4: invisible format
# characters (zero-width, bidirectional controls) are dropped as text is read (engine.invisible); html-5: no page is
# longer than 20,000 characters (a 5 MB single line is cut into pages); html-6: the file's encoding is found (byte-order
# mark, UTF-16, the declared charset, else UTF-8 or windows-1252) instead of reading every file as UTF-8
PARSER_VERSION = "pdf-rows-2/html-6/chunk-2"
# The statement-fact reader's version, apart from the parser's: a new one re-reads facts (``filinglens reindex``)
# without invalidating chunks and their indexes. facts-6: a page that opens with another statement's own heading
# (the equity statement after the cash flows) no longer takes the previous page's period columns; facts-7: each
# period's amount read where it prints more than its amount ("Amount  to Sales  Amount  to Sales"), and a release's
# "SECOND QUARTER" caption is three months; facts-8: a percent printed outside its parentheses, "(6.4)%", is negative; facts-9: an
# aside of amounts in a label's brackets ("Dividends declared ($2.585 per share)") gives the row no unit; facts-10: no fact is read from a table of another entity's figures
# (an investee's, another registrant's, the guarantors'); facts-11: nor from an annual or quarterly report's Exhibit 99
# pages (an investee's financial statements filed with it); facts-12: nor from a deed of cross guarantee's closed group;
# facts-13: a cell that opens a parenthesis and prints no closing one, "(22,680", is negative.
FACTS_VERSION = "facts-13"
SUPPORTED_SUFFIXES = {".pdf", ".htm", ".html"}


def parse_file(path: Path, sha256: str, ingest: IngestSettings, chunking: ChunkingSettings,
               lofin_summary: str | None = None) -> ParsedFiling:
    """Read, identify and chunk one filing; raise IngestError with a one-line reason."""
    suffix = path.suffix.lower()
    boxes: list[list[WordBox]] = []
    notes: list[str] = []
    document = None
    if suffix == ".pdf":
        pages, image_only = read_pdf_pages(str(path), min_chars=ingest.min_chars_per_page, boxes=boxes, notes=notes)
    elif suffix in (".htm", ".html"):
        document = read_html_document(str(path), page_chars=ingest.html_page_chars)
        pages, image_only = list(document.pages), []
    else:
        raise IngestError(f"unsupported file type {suffix or '(none)'}: FilingLens reads .pdf, .htm and .html")
    file_ident = parse_file_name(path)
    opening = "\n".join(pages[:3])
    if file_ident.form is None and not looks_like_filing(opening):
        raise IngestError(
            "does not look like an SEC filing: no SEC cover page (form type, registrant) in its first pages "
            "and the file name is not <ISSUER>_<PERIOD>_<FORM>"
        )
    cover = parse_cover(opening)
    if document is not None:
        cover = with_tagged_cover(cover, dei_cover(document.dei, document.entity_cik))
    else:
        cover = with_linked_cik(cover, pdf_link_uris(str(path)))
    identity = combine(file_ident, cover)
    facts = extract_facts(pages, form=identity.form)
    facts = merge_xbrl(document, facts) if document is not None else _boxed(facts, boxes)
    identity = with_balance_sheet_year_end(identity, [(f.statement, f.period.end, f.period.months) for f in facts])
    chunks = with_sections(pages, chunk_pages(pages, size=chunking.size, overlap=chunking.overlap), identity.form)
    return ParsedFiling(
        path=str(path),
        sha256=sha256,
        bytes=path.stat().st_size,
        identity=identity,
        pages=tuple(pages),
        image_only_pages=tuple(image_only),
        chunks=tuple(chunks),
        summary=summary_text(identity),
        parser_version=PARSER_VERSION,
        lofin_summary=lofin_summary,
        facts=tuple(_with_concept(f) for f in facts),
        facts_version=FACTS_VERSION,
        printed_folios=printed_folios(pages),
        folio_version=FOLIO_VERSION,
        section_version=SECTION_VERSION,
        identity_version=IDENTITY_VERSION,
        notes=tuple(notes),
        terms=chunk_terms([indexed_text(c.context, c.text) for c in chunks]),
    )


def reads_pages_alike(stored_version: str, path: str) -> bool:
    """Whether this parser reads the file's pages as the one that stored it (``stored_version``) did: the reader
    of its type and the chunker are the same versions."""
    kind = "pdf" if path.lower().endswith(".pdf") else "html"
    parts = stored_version.split("/")
    return all(p in parts for p in PARSER_VERSION.split("/") if p.startswith((kind, "chunk")))


def _boxed(facts: list[StatementFact], boxes: list[list[WordBox]]) -> list[StatementFact]:
    """Each fact with its cell's box on the PDF page."""
    return [replace(f, box=span_box(boxes[f.page_index], f.char_start, f.char_end)) for f in facts]


def _with_concept(fact: StatementFact) -> StatementFact:
    """A fact without a tagged concept gets the one its label maps to, if any. A balance (an instant concept) read
    from a column of a period ("Years Ended December 31": cash in a summary of results) is as of its end."""
    if fact.concept is None:
        fact = replace(fact, concept=concept_for(fact.label, fact.parent, fact.statement, fact.unit))
    if fact.concept is not None and fact.period.months and is_instant(fact.concept):
        fact = replace(fact, period=replace(fact.period, months=0))
    return fact


def parse_job(path: str, sha: str, settings_json: str, lofin_summary: str | None) -> ParsedFiling | str:
    """:func:`parse_file` as a worker process runs it: settings as JSON; an error is returned as its message."""
    settings = Settings.model_validate_json(settings_json)
    try:
        return parse_file(Path(path), sha, settings.ingest, settings.chunking, lofin_summary)
    except IngestError as exc:
        return str(exc)
    except Exception as exc:  # a parser bug must not stop the other files
        log.exception("unexpected error parsing %s", path)
        return f"unexpected parser error: {type(exc).__name__}: {exc}"


def pool_outcome(future: Future, timeout: float) -> ParsedFiling | str:
    """A pebble pool's :func:`parse_job` result, or why the file was not read (its time limit passed, its
    process died): the file's failure, never the batch's."""
    from pebble import ProcessExpired

    try:
        return future.result()
    except FutureTimeout:
        return (f"abandoned: reading it took longer than {timeout:g} s (ingest.file_timeout_s); "
                "the other files went on")
    except ProcessExpired as exc:  # the reader died: out of memory, a crash in a native library
        return f"the process reading it died (exit code {exc.exitcode}); the other files went on"
    except Exception as exc:  # noqa: BLE001 - any other failure of the pool is this file's outcome
        return f"parser process failed: {type(exc).__name__}: {exc}"


def warm_worker() -> None:
    """A reading process's start: load what reading a file needs (the readers, the term tokenizer) before the
    first file, so that ``ingest.file_timeout_s`` measures reading, not the process's start-up."""
    from engine.vocab.tokens import tokenizer

    tokenizer()
