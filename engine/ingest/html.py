"""SEC HTML filings (EDGAR ``.htm``): text with table rows kept on one line, split into pages, plus the
inline XBRL (iXBRL) facts the filing tags.

EDGAR documents mark printed page breaks with CSS ``page-break-before/after``; those become page
boundaries. A document without them is cut into pages of roughly ``page_chars`` characters at
paragraph boundaries so citations still point at a readable unit.

Inline XBRL: each ``ix:nonFraction`` value is recorded as a :class:`TaggedValue` with its characters in the
final page text. The reader writes private-use sentinels around a tagged value's text, runs the ordinary
whitespace, cell-merging and page-splitting steps (which treat the sentinels as invisible), then strips
them per page and keeps their offsets. The ``ix:header`` (contexts, units, hidden facts) is parsed into
:class:`XbrlContext` records and unit measures and never reaches the page text; hidden facts have no
printed place and are not recorded as tagged values. The cover's ``dei`` tags (``ix:nonNumeric``, hidden or
printed: CIK, fiscal-year end, trading symbol) are kept by name, with the CIK the contexts' entity identifiers
give, for the filing's identity.
"""

from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from engine.errors import IngestError
from engine.invisible import visible
from engine.records import HtmlDocument, TaggedValue, XbrlContext

logger = logging.getLogger(__name__)

_BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "hr", "section", "title"}
_SKIP = {"script", "style", "head", "ix:header"}
_VOID = {"hr", "br", "img"}
_BREAK_STYLE = re.compile(r"page-break-(before|after)\s*:\s*always|break-(before|after)\s*:\s*page",
                          re.IGNORECASE)
PAGE_MARK = "\f"
# Sentinels around a tagged value's text until the pages are final: the opening one names its tag (one
# supplementary private-use character per tag, so a row the reader drops loses its tags and no other's).
_OPEN_BASE, _MAX_TAGS, _CLOSE = 0xF0000, 0xFFFE, "\U0010fffd"
_OPENS = "[\U000f0000-\U000ffffd]"
_SENTINELS = re.compile(f"{_OPENS}|{_CLOSE}")
_WS_AFTER_OPEN = re.compile(rf"({_OPENS})(\s+)")
_WS_BEFORE_CLOSE = re.compile(rf"(\s+){_CLOSE}")
_TAGGED = "ix:nonfraction"
_TEXT_TAG = "ix:nonnumeric"
_SEC_CIK_SCHEME = "sec.gov/cik"


@dataclass
class _OpenTag:
    attrs: dict[str, str]
    index: int | None = None  # set when its first visible character is written
    closed: bool = False


@dataclass
class _Header:
    """What the ``ix:header`` is being read into: the context or unit being built, and captured text."""

    contexts: dict[str, XbrlContext] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    context: dict[str, str] | None = None
    members: list[str] = field(default_factory=list)
    unit: str | None = None
    numerator: list[str] = field(default_factory=list)
    denominator: list[str] = field(default_factory=list)
    in_denominator: bool = False
    capture: list[str] | None = None
    capture_tag: str = ""
    capture_attr: str = ""
    entity_cik: str | None = None

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if name == "context":
            self.context, self.members = {"id": attrs.get("id", "")}, []
        elif name == "unit":
            self.unit, self.numerator, self.denominator = attrs.get("id", ""), [], []
        elif name == "unitdenominator":
            self.in_denominator = True
        if name in ("startdate", "enddate", "instant", "explicitmember", "typedmember", "measure"):
            self.capture, self.capture_tag, self.capture_attr = [], name, attrs.get("dimension", "")
        elif name == "identifier" and _SEC_CIK_SCHEME in attrs.get("scheme", "").lower():
            self.capture, self.capture_tag, self.capture_attr = [], name, ""

    def end(self, name: str) -> None:
        if self.capture is not None and name == self.capture_tag:
            text = "".join(self.capture).strip()
            if name == "measure":
                (self.denominator if self.in_denominator else self.numerator).append(text)
            elif name in ("explicitmember", "typedmember"):
                self.members.append(f"{self.capture_attr}={text}")
            elif name == "identifier":
                self.entity_cik = self.entity_cik or text
            elif self.context is not None:
                self.context[name] = text
            self.capture = None
        if name == "context" and self.context is not None:
            c = self.context
            self.contexts[c["id"]] = XbrlContext(
                c["id"], c.get("startdate"), c.get("enddate"), c.get("instant"), tuple(self.members))
            self.context = None
        elif name == "unitdenominator":
            self.in_denominator = False
        elif name == "unit" and self.unit is not None:
            measure = "*".join(self.numerator)
            self.units[self.unit] = f"{measure}/{'*'.join(self.denominator)}" if self.denominator else measure
            self.unit = None


class _Extractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.breaks = 0
        self.after_stack: list[str] = []
        self.header_depth = 0
        self.header = _Header()
        self.open_tags: list[_OpenTag] = []
        self.tags: list[dict[str, str]] = []  # in the order their opening sentinels are written
        self.text_tags: list[tuple[str | None, list[str]]] = []  # open ix:nonNumeric: (dei name or None, text)
        self.dei: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "ix:header":
            self.header_depth += 1
        if self.header_depth:
            self.header.start(tag.rsplit(":", 1)[-1], {k: v or "" for k, v in attrs})
        if tag == _TAGGED and not self.skip:
            self.open_tags.append(_OpenTag({k: v or "" for k, v in attrs}))
        if tag == _TEXT_TAG:
            name = next((v or "" for k, v in attrs if k == "name"), "")
            self.text_tags.append((name if name.startswith("dei:") else None, []))
        style = " ".join(v or "" for k, v in attrs if k == "style")
        brk = _BREAK_STYLE.search(style)
        if tag in _SKIP:
            self.skip += 1
        if brk and ("before" in brk.group(0).lower() or tag in _VOID):
            self._page_break()
        elif brk:
            self.after_stack.append(tag)  # break when this element closes
        if tag == "tr":
            self._close_tags()
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self._close_tags()
            self.cell = []
        elif tag in _BLOCK and self.row is None:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self.header_depth:
            self.header.end(tag.rsplit(":", 1)[-1])
        if tag == "ix:header" and self.header_depth:
            self.header_depth -= 1
        if tag == _TAGGED and self.open_tags and not self.skip:
            self._close_tags(self.open_tags.pop())
        if tag == _TEXT_TAG and self.text_tags:
            name, parts = self.text_tags.pop()
            if name and (text := " ".join("".join(parts).split())):
                self.dei.setdefault(name, text)
        if tag in _SKIP and self.skip:
            self.skip -= 1
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self._close_tags()
            text = " ".join(_move_space_out("".join(self.cell)).split())
            if text:
                self.row.append(text)
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self._close_tags()
            cells = _merge_symbol_cells(self.row)
            if cells:
                self.out.append("\n" + "  ".join(cells))
            self.row = None
        elif tag in _BLOCK and self.row is None:
            self.out.append("\n")
        if self.after_stack and self.after_stack[-1] == tag:
            self.after_stack.pop()
            self._page_break()

    def handle_data(self, data: str) -> None:
        data = visible(data)
        if self.header.capture is not None:
            self.header.capture.append(data)
        for name, parts in self.text_tags:  # a dei tag may be hidden (in the skipped ix:header) or printed
            if name and len(parts) < 64:  # a cover value is a few words; an unclosed tag must not keep the rest
                parts.append(data)
        if self.skip:
            return
        if self.cell is not None:
            target = self.cell
        elif self.row is None:
            target = self.out
            data = re.sub(r"\s+", " ", data)
        else:
            return
        if data.strip():
            for tag in self.open_tags:  # outer tags first, so sentinels nest like the elements
                if tag.index is None and len(self.tags) < _MAX_TAGS:
                    tag.index = len(self.tags)
                    self.tags.append(tag.attrs)
                    target.append(chr(_OPEN_BASE + tag.index))
        target.append(data)

    def _close_tags(self, only: _OpenTag | None = None) -> None:
        """Write the closing sentinel of a tag (or of every open tag, when its text's place changes: a new
        cell or row) where its opening one went."""
        if only is None and not self.open_tags:
            return
        target = self.cell if self.cell is not None else self.out if self.row is None else None
        for tag in [only] if only else reversed(self.open_tags):
            if tag.index is not None and not tag.closed:
                tag.closed = True
                if target is not None:
                    target.append(_CLOSE)

    def _page_break(self) -> None:
        self._close_tags()
        self.out.append(PAGE_MARK)
        self.breaks += 1


def _bare(text: str) -> str:
    return _SENTINELS.sub("", text)


def _move_space_out(text: str) -> str:
    """Put whitespace outside a tagged value's sentinels, so collapsing and stripping whitespace treat them as
    invisible (an opening sentinel moves right past spaces, a closing one left)."""
    if not _SENTINELS.search(text):
        return text
    while True:
        moved = _WS_BEFORE_CLOSE.sub(rf"{_CLOSE}\1", _WS_AFTER_OPEN.sub(r"\2\1", text))
        if moved == text:
            return text
        text = moved


def _merge_symbol_cells(cells: list[str]) -> list[str]:
    """EDGAR puts '$', ')' and '%' in cells of their own; glue them to the number."""
    merged: list[str] = []
    for c in cells:
        if merged and (_bare(c) in {")", "%", ")%"} or _bare(merged[-1]) in {"$", "("}):
            merged[-1] += c
        else:
            merged.append(c)
    return merged


def _tidy(text: str) -> str:
    lines = [ln.strip() for ln in text.split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _split_pages(text: str, page_chars: int) -> list[str]:
    pages, current, size = [], "", 0  # size: current's length without sentinels
    for para in text.split("\n\n"):
        length = len(_bare(para))
        if current and size + length > page_chars:
            pages.append(current)
            current, size = "", 0
        current, size = (f"{current}\n\n{para}", size + 2 + length) if current else (para, length)
    if current:
        pages.append(current)
    return pages


def _cap_pages(pages: list[str], max_chars: int) -> list[str]:
    """Cut a page longer than ``max_chars`` (without sentinels) into pages of at most that: at line ends, else
    at the last space before the limit, else at the limit. Only pathological input reaches it (a 5 MB single
    line, a document whose printed breaks are missing for hundreds of pages); printed pages are far shorter.
    A tagged value that straddles a cut is not recorded (see :func:`_locate`)."""
    out: list[str] = []
    for page in pages:
        if len(_bare(page)) <= max_chars:
            out.append(page)
            continue
        current: list[str] = []
        size = 0
        for line in page.split("\n"):
            while len(_bare(line)) > max_chars:  # one overlong line: cut it at a space near the limit
                cut = line.rfind(" ", max_chars // 2, max_chars)
                cut = max_chars if cut < 0 else cut
                if current:
                    out.append("\n".join(current))
                    current, size = [], 0
                out.append(line[:cut].strip())
                line = line[cut:].strip()
            length = len(_bare(line))
            if current and size + 1 + length > max_chars:
                out.append("\n".join(current))
                current, size = [], 0
            current.append(line)
            size += length + 1
        if current:
            out.append("\n".join(current))
    return [p for p in out if p.strip()]


def _locate(pages: list[str], tags: list[dict[str, str]]) -> tuple[list[str], list[TaggedValue]]:
    """Strip the sentinels from each page; each balanced pair becomes a :class:`TaggedValue`."""
    clean_pages: list[str] = []
    found: list[TaggedValue] = []
    for page_index, page in enumerate(pages):
        parts: list[str] = []
        stack: list[tuple[int, int]] = []  # (tag index, start offset in the clean page)
        spans: list[tuple[int, int, int]] = []
        pos = last = 0
        for m in _SENTINELS.finditer(page):
            parts.append(page[last: m.start()])
            pos += m.start() - last
            last = m.end()
            if m[0] != _CLOSE:
                stack.append((ord(m[0]) - _OPEN_BASE, pos))
            elif stack:
                index, start = stack.pop()
                spans.append((index, start, pos))
        parts.append(page[last:])
        if stack:
            logger.debug("page index %d: %d tagged value(s) run over the page end; not recorded", page_index,
                         len(stack))
        text = "".join(parts)
        clean_pages.append(text)
        for index, start, end in sorted(spans):
            tagged = _tagged(page_index, start, end, text[start:end], tags[index])
            if tagged is not None:
                found.append(tagged)
    return clean_pages, found


def _tagged(page_index: int, start: int, end: int, printed: str, attrs: dict[str, str]) -> TaggedValue | None:
    try:
        scale = int(attrs.get("scale") or 0)
    except ValueError:
        logger.debug("ix:nonFraction %s: scale %r is not an integer; not recorded", attrs.get("name"),
                     attrs.get("scale"))
        return None
    return TaggedValue(page_index, start, end, attrs.get("name", ""), attrs.get("contextref", ""),
                       attrs.get("unitref", ""), scale, attrs.get("sign", ""), attrs.get("format", ""),
                       printed, attrs.get("decimals", ""))


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))
_SINGLE_BYTE = {"cp1252", "iso8859-1", "iso8859-15", "ascii", "cp1250", "cp437", "mac-roman"}
_DECLARED = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)|<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9._:-]+)""",
                       re.IGNORECASE)


def decode_html(raw: bytes) -> str:
    """The text of an HTML file, its encoding found as a browser finds it (WHATWG's sniffing order, shortened):
    a byte-order mark; UTF-16 without one (NULs between ASCII characters, as a Windows "Unicode" save writes);
    the charset the document declares in its first 4 KB (``<meta charset>``, ``http-equiv``, ``<?xml encoding>``);
    then UTF-8 when the bytes are valid UTF-8, else windows-1252, the default for legacy documents (many older
    EDGAR filings are windows-1252: its non-breaking space 0xA0 and dashes are not UTF-8). Never fails: bytes no
    encoding explains become U+FFFD."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return raw.decode(encoding, errors="replace")
    head = raw[:4096]
    if len(head) >= 4 and head.count(0) * 3 > len(head):  # UTF-16 without a BOM: every other byte is NUL
        return raw.decode("utf-16-le" if head[1] == 0 else "utf-16-be", errors="replace")
    try:
        utf8: str | None = raw.decode("utf-8")
    except UnicodeDecodeError:
        utf8 = None
    declared = _DECLARED.search(head)
    if declared:
        name = (declared.group(1) or declared.group(2)).decode("ascii").lower()
        # WHATWG: a declared Latin-1 / ASCII means windows-1252; a declared UTF-16 in a byte stream is UTF-8
        name = {"iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252",
                "ascii": "cp1252", "utf-16": "utf-8", "utf-16le": "utf-8", "utf-16be": "utf-8"}.get(name, name)
        try:
            legacy = codecs.lookup(name).name in _SINGLE_BYTE
        except LookupError:  # an encoding Python does not know: sniff as if none were declared
            legacy, name = False, ""
        # a file saved as UTF-8 under an old single-byte declaration: its non-ASCII bytes form valid UTF-8
        # sequences, which real windows-1252 text (an accented letter followed by a symbol) almost never does
        if name and not (legacy and utf8 is not None and not raw.isascii()):
            return raw.decode(name, errors="replace")
    return utf8 if utf8 is not None else raw.decode("cp1252", errors="replace")


def read_html_document(path: str, *, page_chars: int = 3500, max_page_chars: int = 20_000) -> HtmlDocument:
    """Read an HTML filing: its page texts and its inline XBRL facts, contexts and units.

    Args:
        path: The ``.htm``/``.html`` file.
        page_chars: Page size, in characters, for a document without printed page breaks.
        max_page_chars: No page is longer: a longer one (a 5 MB single line) is cut (:func:`_cap_pages`).

    Raises:
        IngestError: The file cannot be read, is empty, is not HTML or has no text.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise IngestError(f"cannot read file: {exc.strerror or exc}") from exc
    if not raw.strip():
        raise IngestError("empty file (0 bytes)")
    html = _SENTINELS.sub("", decode_html(raw))  # never in a filing; only ours are found
    if "<" not in html[:4096]:
        raise IngestError("not HTML: no markup in the first 4 KB")
    parser = _Extractor()
    try:
        parser.feed(html)
        parser.close()
    except Exception as exc:  # html.parser is lenient; this is a last resort
        raise IngestError(f"HTML cannot be parsed: {exc}") from exc
    body = _move_space_out("".join(parser.out))
    if parser.breaks:
        pages = [_tidy(p) for p in body.split(PAGE_MARK)]
        pages = [p for p in pages if p]
    else:
        pages = _split_pages(_tidy(body), page_chars)
    pages, tagged = _locate(_cap_pages(pages, max_page_chars), parser.tags)
    if not pages or not any(p.strip() for p in pages):
        raise IngestError("HTML has no text")
    return HtmlDocument(tuple(pages), tuple(tagged), parser.header.contexts, parser.header.units, parser.dei,
                        parser.header.entity_cik)
