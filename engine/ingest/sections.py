"""The section each chunk of a filing belongs to, read at ingest from the filing's own headings: the items of a
10-K, 10-Q or 8-K ("Item 1A Risk Factors", "Part II Item 1A Risk Factors", "Item 2.02 Results of Operations"),
each note of the financial statements ("Note 5 Inventories"), an earnings release's own headings ("Release:
Segment Sales Results"). The items, their titles and kinds are data (:mod:`engine.vocab.sections`).

Decisions worth knowing:
- A heading is a line that starts "Item <number>" and goes on with one of the item's titles for the filing's form
  (letters compared; see ``resources/reader/sections.toml``); a 10-Q's two numberings are told apart by the title
  and by the "Part II" line before them.
- A page listing item lines with page numbers after them, or four or more item headings line after line, is a
  table of contents: it changes nothing.
- Notes are read only once the financial statements have begun, and in their printed order, so "Note 5" at the
  start of a line of MD&A prose, or "Note 2A)" inside Note 5, is not a heading; a running header "Notes to
  Consolidated Financial Statements" on every page does not end the note it is printed in.
- A current report's exhibits ("Exhibit 10.1" alone on its line) are sections of the kind their number has; one
  that opens as a press release ("announces", "news release") is a release section: from there the release's
  capitalised headings are read, not items or notes.
- A filing that prints its items in an order of its own, under headings without "Item" (Intel's 10-Qs), and maps
  them in a "Cross-Reference Index" ("Item 1A.  Risk Factors  Page 40") is read from that index: each page whose
  printed folio an item lists is of that item, where no heading said otherwise; on such a page a line printing the
  item's title begins the item there, and of several items listing one page without printing their titles on it
  the one listing the fewest pages is taken.
- Pages are read in order and a section runs until the next heading: a chunk's section is the last heading before
  its first character. Upgraded libraries are read again from their stored pages (:func:`refresh_sections`, in the
  ingest runner), as folios are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from string import capwords

from engine.facts.tables import primary_statement
from engine.ingest.folio import printed_folios
from engine.records import ChunkSpan
from engine.vocab.sections import Item, SectionVocab, letters, vocab

__all__ = ["SECTION_VERSION", "chunk_sections", "page_sections", "with_sections"]

# a new reader re-reads the sections of stored filings from their pages; sections-6: a chunk is of the section most
# of its characters are printed in, not only the one its first character is in, and the auditor's report is a section
# sections-7: a cross-reference index's pages
SECTION_VERSION = "sections-7"

_PART = re.compile(r"^\s*part\s+(iv|i{1,3})\b", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:part\s+(iv|i{1,3})\b[\s.,:;—–-]*)?item\s+(\d{1,2}(?:\.\d{2})?[a-c]?)\b\s*[.:\-–—]?\s*(.*)$",
                   re.IGNORECASE)
_NOTE = re.compile(r"^\s*note\s+(\d{1,2})(?![\w)])\s*[.:\-–—]?\s*(.*)$", re.IGNORECASE)  # not "Note 2A)"
_EXHIBIT = re.compile(r"^\s*exhibit\s+(\d{1,3})(\.\d{1,2})?\s*$", re.IGNORECASE)  # "Exhibit 99.1" alone on its line
_RUNNING_HEAD = re.compile(r"^\s*table\s+of\s+contents\s*", re.IGNORECASE)  # printed on the heading's line
_AUDIT_LINE = 120  # an auditor's report heading is a short line (not a sentence that names the report)
_NOTES_HEAD = re.compile(r"^\s*notes to (?:the )?(?:condensed )?consolidated financial statements\s*$", re.IGNORECASE)
_PAGE_NUMBER_END = re.compile(r"\s\d{1,3}\s*$")
_TOC = 4  # this many item headings line after line: a table of contents
_INDEX = re.compile(r"cross[\s-]*reference\s+index", re.IGNORECASE)  # a page mapping the items to page numbers
_RANGE = r"\d{1,3}(?:\s*[-–—]\s*\d{1,3})?"
_LISTED_PAGES = re.compile(rf"\s+pages?\s+({_RANGE}(?:\s*,\s*{_RANGE})*)\s*$", re.IGNORECASE)  # "Pages 3, 23 - 34"
_TITLE_LINE = 100  # a line printing an item's title as its heading is short
_CUT = 15  # letters a heading may print past its title ("(continued)", "(unaudited)")
_VARIANT = 20  # letters a variant title shares with the form's own


def _fits(rest: str, item: Item) -> bool:
    r = letters(rest)
    for t in item.title_letters:
        common = len(_prefix(r, t))
        if common < min(len(t), 12):
            continue
        if t.startswith(r) or (r.startswith(t) and len(r) - len(t) <= _CUT):
            return True
        if common >= _VARIANT and len(r) <= len(t) + _CUT:
            return True
    return False


def _prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


def _item_at(line: str, next_line: str, items: Sequence[Item], part: str) -> Item | None:
    m = _ITEM.match(line)
    if not m:
        return None
    number, rest = m.group(2).upper(), m.group(3).strip()
    if m.group(1):
        part = m.group(1).upper()
    if rest and _PAGE_NUMBER_END.search(rest):
        return None  # "Item 1A. Risk Factors  10": a table of contents
    title = rest if letters(rest) else next_line.strip()
    if not letters(title) or _PAGE_NUMBER_END.search(title):
        return None
    fits = [i for i in items if i.item == number and _fits(title, i)]
    if len(fits) > 1 and part:  # a 10-Q: Part I and Part II both number from 1
        fits = [i for i in fits if i.name.startswith(f"Part {part} ")] or fits
    return fits[0] if fits else None


def _note_at(line: str, last: int) -> tuple[int, str] | None:
    """``(number, name)`` of a note's heading; notes are printed in order, so a number not above ``last`` (the
    note the statements are in) is a cross-reference ("Note 2A)" in Note 5's text)."""
    m = _NOTE.match(line)
    if not m or int(m.group(1)) <= last:
        return None
    title = m.group(2).strip()
    run_in = re.match(r"([^.]{3,80})\.\s+[A-Z]", title)  # "Note 4 — Debt. Long-term debt was ...": a run-in heading
    title = (run_in.group(1) if run_in else title).strip().rstrip(".:").strip()
    words = title.split()
    if (not words or not title[0].isupper() or len(words) > 10 or title.endswith((",", ";")) or "  " in title
            or not any(sum(ch.isalpha() for ch in w) >= 3 for w in words)):
        return None
    name = " ".join(words[:8])
    return int(m.group(1)), f"Note {int(m.group(1))} {capwords(name) if name.isupper() else name}"


def _release_heading(line: str, v: SectionVocab) -> str | None:
    text = line.strip().rstrip(":").strip()
    words = text.split()
    if not 2 <= len(words) <= 8 or any(ch.isdigit() for ch in text) or "  " in text:
        return None
    alpha = [ch for ch in text if ch.isalpha()]
    if len(alpha) < 6 or not all(ch.isupper() for ch in alpha):
        return None
    if any(n in text.lower() for n in v.not_headings) or ":" in text or ";" in text:
        return None
    return f"Release: {capwords(text)}"


def page_sections(pages: Sequence[str], form: str | None) -> list[tuple[str, list[tuple[int, str]]]]:
    """Per page: the section it starts in, and the headings it prints as (character offset, section name)."""
    v = vocab()
    items = v.items(form)
    release = (form or "").upper() in v.release_forms
    exhibits = (form or "").upper() in v.exhibit_forms
    out: list[tuple[str, list[tuple[int, str]]]] = []
    current = "Release" if release else ""
    part = ""
    in_statements = False
    note = 0  # the note the statements are in (0: none yet)
    statements_item = next((i.name for i in items if i.kind == "statements"), "")
    for text in pages:
        start, start_state = current, (part, in_statements, note)
        lines: list[tuple[int, str]] = []
        pos = 0
        for line in text.splitlines(keepends=True):
            lines.append((pos, line.rstrip("\n")))
            pos += len(line)
        found: list[tuple[int, str]] = []
        heads: list[int] = []  # the line numbers of the item headings read
        listed = 0  # item lines ending in a page number
        for k, (at, line) in enumerate(lines):
            if not line.strip():
                continue
            following = next((ln for _, ln in lines[k + 1 : k + 3] if ln.strip()), "")
            exhibit = _EXHIBIT.match(line) if exhibits else None
            if exhibit:  # an exhibit the report prints after its items; a press release reads as one
                name = v.exhibit_section(f"{exhibit.group(1)}{exhibit.group(2) or ''}", text[at + len(line):])
                found.append((at, name))
                release = name.startswith("Release")
                in_statements, note = False, 0
                continue
            if items and not release:
                pm = _PART.match(line)
                if pm and not _ITEM.match(line):
                    part = pm.group(1).upper()
                if _ITEM.match(line) and _PAGE_NUMBER_END.search(line):
                    listed += 1
                item = _item_at(line, following, items, part)
                if item is not None:
                    heads.append(k)
                    found.append((at, item.name))
                    in_statements, note = item.kind == "statements", 0
                    continue
            if (in_statements or not items) and not release:
                said = letters(_RUNNING_HEAD.sub("", line))
                if len(line) <= _AUDIT_LINE and said and any(said.startswith(h) for h in v.audit_headings):
                    if current != v.audit_name and not any(n == v.audit_name for _, n in found[-1:]):
                        found.append((at, v.audit_name))  # (its heading repeated on each page changes nothing)
                    continue
                if statements_item and (found[-1][1] if found else current) == v.audit_name \
                        and primary_statement(line.strip()):
                    found.append((at, statements_item))  # the statements after the report
                    continue
                if _NOTES_HEAD.match(line):
                    in_statements = True
                    if not (current.startswith("Note ") or any(n.startswith("Note ") for _, n in found)):
                        found.append((at, "Notes to Financial Statements"))  # a running page header changes nothing
                    continue
                read = _note_at(line, note) if in_statements else None
                if read is not None:
                    note = read[0]
                    found.append((at, read[1]))
                    continue
            if release:
                head = _release_heading(line, v)
                if head is not None:
                    found.append((at, head))
        if listed >= 2 or (len(heads) >= _TOC and heads[-1] - heads[0] < 2 * len(heads)):
            # a table of contents (page numbers after the items, or items listed line after line): no section
            found = []
            part, in_statements, note = start_state
        for _, name in found:
            current = name
        out.append((start, found))
    return out


def _listed_pages(listed: str) -> list[int]:
    out: list[int] = []
    for part in listed.split(","):
        ends = [int(n) for n in re.findall(r"\d+", part)]
        out += list(range(ends[0], ends[-1] + 1)) if ends[-1] >= ends[0] else [ends[0]]
    return out


def index_claims(pages: Sequence[str], items: Sequence[Item]) -> list[tuple[Item, list[int]]]:
    """The items a cross-reference index lists with their printed page numbers, in its order (a line under an
    item that lists pages of its own, "Liquidity and capital resources  Pages 35 - 36", is of that item); [] when
    the filing prints no such index."""
    for text in pages:
        if not _INDEX.search(text[:600]):
            continue
        claims: list[tuple[Item, list[int]]] = []
        part, last = "", None
        lines = text.splitlines()
        for k, line in enumerate(lines):
            pm = _PART.match(line)
            if pm and not _ITEM.match(line):
                part = pm.group(1).upper()
                continue
            listed = _LISTED_PAGES.search(line)
            m = _ITEM.match(line[:listed.start()] if listed else line)
            if m:
                number, rest = m.group(2).upper(), m.group(3).strip().rstrip(":").strip()
                numbered = [i for i in items if i.item == number]
                if m.group(1) or part:  # a 10-Q: Part I and Part II both number from 1
                    numbered = [i for i in numbered if i.name.startswith(f"Part {(m.group(1) or part).upper()} ")] \
                        or numbered
                # the title as printed, or broken over the line above or below ("Management's Discussion … Results"
                # above "Item 2.  of Operations:"); else the item the number names in its part, if only one
                above, below = (lines[k - 1] if k else ""), (lines[k + 1] if k + 1 < len(lines) else "")
                fits = next((f for title in (rest, f"{above} {rest}", f"{rest} {below}")
                             if (f := [i for i in numbered if _fits(title.strip(), i)])), [])
                last = fits[0] if fits else numbered[0] if len(numbered) == 1 else None
            if listed and last is not None:
                claims.append((last, _listed_pages(listed.group(1))))
        if claims:
            return claims
    return []


def _title_at(text: str, item: Item) -> int | None:
    """Where ``text`` prints ``item``'s title as a line of its own (a heading without "Item"), or None."""
    pos = 0
    for line in text.splitlines(keepends=True):
        said = line.strip()
        if said and len(said) <= _TITLE_LINE and letters(said) and _fits(said, item):
            return pos + (len(line) - len(line.lstrip()))
        pos += len(line)
    return None


def _from_index(pages: Sequence[str], per_page: list[tuple[str, list[tuple[int, str]]]],
                items: Sequence[Item]) -> list[tuple[str, list[tuple[int, str]]]]:
    """``per_page`` with the pages no heading placed in a section read from the filing's cross-reference index."""
    claims = index_claims(pages, items) if items else []
    if not claims:
        return per_page
    folios = printed_folios(pages)
    at_folio = {int(f): i for i, f in enumerate(folios) if f is not None and f.isdigit()}
    out = list(per_page)
    running = ""
    for i, (start, found) in enumerate(per_page):
        if start or found:  # the filing's own headings decide
            running = found[-1][1] if found else start
            continue
        folio = next((f for f, k in at_folio.items() if k == i), None)
        mine = sorted({(len(listed), n, item.name): item for n, (item, listed) in enumerate(claims)
                       if folio is not None and folio in listed}.items())
        if not mine:
            running = ""
            continue
        heads = sorted((at, item.name) for _k, item in mine if (at := _title_at(pages[i], item)) is not None)
        headed = {name for _, name in heads}
        rest = [item.name for _k, item in mine if item.name not in headed]
        first = heads[0][0] if heads else None
        begin = rest[0] if rest else running if running in headed or running in {it.name for _k, it in mine} else ""
        if first == 0 or (first is not None and not pages[i][:first].strip("\n").strip()):
            begin = heads[0][1]
        out[i] = (begin, heads)
        running = heads[-1][1] if heads else begin
    return out


def chunk_sections(pages: Sequence[str], chunks: Sequence[ChunkSpan], form: str | None) -> list[str]:
    """The section of each chunk: the one most of its characters are printed in (a chunk that begins with the last
    lines of Item 2 and goes on with the whole of Item 3 is Item 3's); a section begins at its heading, and the
    chunk's first characters are in the section of the last heading before them (before the first one, the cover
    page on a form with items' first pages, else ""). Of two covering as much, the earlier."""
    v = vocab()
    per_page = _from_index(pages, page_sections(pages, form), v.items(form))
    cover = v.cover_name if v.items(form) else ""
    out = []
    for c in chunks:
        if c.page_index >= len(per_page):
            out.append("")
            continue
        section, found = per_page[c.page_index]
        for pos, name in found:
            if pos <= c.char_start:
                section = name
        section = section or (cover if c.page_index < v.cover_pages else "")
        # the sections the chunk's characters run through, from its first one: (characters, section)
        runs: list[tuple[int, str]] = []
        at = c.char_start
        for pos, name in found:
            if c.char_start < pos < c.char_end:
                runs.append((pos - at, section))
                at, section = pos, name
        runs.append((c.char_end - at, section))
        out.append(max(runs, key=lambda r: r[0])[1])  # (max keeps the first of equal runs)
    return out


def with_sections(pages: Sequence[str], chunks: Sequence[ChunkSpan], form: str | None) -> tuple[ChunkSpan, ...]:
    return tuple(replace(c, section=s) for c, s in zip(chunks, chunk_sections(pages, chunks, form), strict=True))
