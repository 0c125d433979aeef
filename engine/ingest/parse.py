"""Parse one file into a :class:`ParsedFiling` (runs in a worker process)."""

from __future__ import annotations

from pathlib import Path

from engine.chunking import chunk_pages
from engine.errors import IngestError
from engine.ingest.html import read_html_pages
from engine.ingest.identity import combine, looks_like_filing, parse_cover, parse_file_name, summary_text
from engine.ingest.pdf import read_pdf_pages
from engine.records import ParsedFiling
from engine.settings import ChunkingSettings, IngestSettings

PARSER_VERSION = "pdf-rows-1/html-1/chunk-2"
SUPPORTED_SUFFIXES = {".pdf", ".htm", ".html"}


def parse_file(path: Path, sha256: str, ingest: IngestSettings, chunking: ChunkingSettings,
               lofin_summary: str | None = None) -> ParsedFiling:
    """Read, identify and chunk one filing; raise IngestError with a one-line reason."""
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        pages, image_only = read_pdf_pages(str(path), min_chars=ingest.min_chars_per_page)
    elif suffix in (".htm", ".html"):
        pages, image_only = read_html_pages(str(path), page_chars=ingest.html_page_chars), []
    else:
        raise IngestError(f"unsupported file type {suffix or '(none)'}: FilingLens reads .pdf, .htm and .html")
    file_ident = parse_file_name(path)
    opening = "\n".join(pages[:3])
    if file_ident.form is None and not looks_like_filing(opening):
        raise IngestError(
            "does not look like an SEC filing: no SEC cover page (form type, registrant) in its first pages "
            "and the file name is not <ISSUER>_<PERIOD>_<FORM>"
        )
    identity = combine(file_ident, parse_cover(opening))
    chunks = chunk_pages(pages, size=chunking.size, overlap=chunking.overlap)
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
    )
