"""Seeded hostile inputs for ingest: damaged copies of real demo filings and files built to be pathological.

:func:`write_cases` writes them into a folder and returns what each is (its kind), so a test or
``scripts/robustness_report.py`` can ingest the folder and account for every file.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pymupdf


@dataclass(frozen=True)
class Case:
    path: Path
    kind: str


def pdf_bytes(pages: int, text: str = "Annual report page {i}", lines: int = 1) -> bytes:
    """A PDF of ``pages`` pages, each printing ``text`` on ``lines`` lines (page 1's text repeated when ``lines`` >
    1: the page is written once and copied)."""
    doc = pymupdf.open()
    if lines == 1:
        for i in range(pages):
            doc.new_page().insert_text((72, 72), text.format(i=i + 1))
        return doc.tobytes()
    one = pymupdf.open()
    one.new_page().insert_text((36, 40), "\n".join(text.format(i=n + 1) for n in range(lines)), fontsize=7)
    for _ in range(pages):
        doc.insert_pdf(one)
    return doc.tobytes()


def _long_filing(source: bytes, pages: int) -> bytes:
    """The real filing followed by dense exhibit pages up to ``pages`` pages: read whole, not rejected at its cover."""
    doc = pymupdf.open(stream=source, filetype="pdf")
    filler = pymupdf.open(stream=pdf_bytes(1, "Exhibit 99 schedule line {i}: net sales 1,234 5,678 operating income",
                                           lines=100), filetype="pdf")
    while doc.page_count < pages:
        doc.insert_pdf(filler)
    return doc.tobytes()


def _encrypted(source: bytes) -> bytes:
    doc = pymupdf.open(stream=source, filetype="pdf")
    return doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret")


def _image_only() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(200)
    page.insert_image(page.rect, pixmap=pix)
    return doc.tobytes()


def _many_objects(n: int) -> bytes:
    """One page drawing ``n`` separate tiny shapes (a huge content stream and object count)."""
    doc = pymupdf.open()
    page = doc.new_page()
    shape = page.new_shape()
    for i in range(n):
        x, y = 20 + (i % 500), 20 + (i // 500) % 700
        shape.draw_line((x, y), (x + 0.5, y + 0.5))
    shape.finish(width=0.1)
    shape.commit()
    return doc.tobytes()


def _deeply_nested_pdf(depth: int) -> bytes:
    """A hand-written PDF whose page dictionary holds an array nested ``depth`` deep."""
    nested = "[" * depth + "]" * depth
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Junk {nested} >>",
    ]
    out, offsets = b"%PDF-1.7\n", []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def _flip(data: bytes, rng: random.Random, flips: int) -> bytes:
    buf = bytearray(data)
    for _ in range(flips):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def write_cases(out: Path, pdf: Path, html: Path, *, seed: int = 0, damaged: int = 60) -> list[Case]:
    """Write the cases into ``out``: ``damaged`` truncated and ``damaged`` bit-flipped copies of the PDF filing,
    ``damaged // 2`` bit-flipped copies of the HTML filing, and one of each built pathology."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []

    def put(name: str, data: bytes | str, kind: str) -> None:
        path = out / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        cases.append(Case(path, kind))

    good_pdf, good_html = pdf.read_bytes(), html.read_bytes()
    for i in range(damaged):
        put(f"truncated_{i:03d}.pdf", good_pdf[: rng.randrange(1, len(good_pdf))], "truncated pdf")
        put(f"bitflip_{i:03d}.pdf", _flip(good_pdf, rng, rng.choice((1, 8, 64, 512))), "bit-flipped pdf")
    for i in range(damaged // 2):
        put(f"bitflip_{i:03d}.html", _flip(good_html, rng, rng.choice((1, 8, 64, 512))), "bit-flipped html")
    put("zero_bytes.pdf", b"", "zero-byte pdf")
    put("zero_bytes.htm", b"", "zero-byte html")
    put("encrypted.pdf", _encrypted(good_pdf), "encrypted pdf")
    put("zero_pages.pdf", _deeply_nested_pdf(1).replace(b"/Kids [3 0 R] /Count 1", b"/Kids [] /Count 0"),
        "zero-page pdf")
    put("image_only.pdf", _image_only(), "image-only pdf")
    put("two_thousand_pages.pdf", _long_filing(good_pdf, 2000), "2,000-page pdf")
    put("many_objects.pdf", _many_objects(100_000), "huge object count pdf")
    put("deep_nesting.pdf", _deeply_nested_pdf(10_000), "deeply nested pdf")
    put("not_a_pdf.pdf", b"MZ\x90\x00" + bytes(rng.randrange(256) for _ in range(4096)), "binary named .pdf")
    body = good_html.lower().index(b"<body")
    body = good_html.index(b">", body) + 1
    end = good_html.lower().rindex(b"</body")
    put("one_line_5mb.html", good_html[:end] + b"<p>" + b"revenue 1,234 " * 375_000 + b"</p>" + good_html[end:],
        "5 MB single-line html")  # a real filing with one 5 MB line after its statements
    put("deep_10000.html", good_html[:body] + b"<div>" * 10_000 + good_html[body:] + b"</div>" * 10_000,
        "10,000-deep html")
    # the real filing in other encodings: read as the UTF-8 file is (a legacy windows-1252 one has bytes that are
    # not UTF-8), and bytes that no encoding explains
    put("cp1252.html", good_html.decode("utf-8").replace("</body>", "<p>Management’s view — 5\u00a0%</p></body>")
        .encode("cp1252"), "windows-1252 html")
    put("utf16.html", good_html.decode("utf-8").encode("utf-16-le"), "utf-16 html")
    put("broken_utf8.html", good_html.replace(b"</body>", b"<p>caf\xc3 \xff\xfe revenue</p></body>"),
        "broken encoding html")
    put("random_bytes.html", bytes(rng.randrange(256) for _ in range(20_000)), "random bytes html")
    put("recipe.html", "<html><body><h1>Lemon cake</h1><p>Mix flour and sugar. Bake 40 minutes.</p></body></html>",
        "non-filing html")
    put("letter.pdf", pdf_bytes(2, "Dear neighbour, the garden party is on Sunday. Page {i}"), "non-filing pdf")
    for name in (" leading space.pdf", "-rf.pdf", "ünïcødé 年度报告.pdf", "semi;colon'quote\".pdf",
                 "x" * 200 + ".pdf", "new\nline.pdf"):
        put(name, good_pdf if name.startswith("-") else _flip(good_pdf, rng, 4), "odd file name")
    loop = out / "loop"
    loop.mkdir()
    (loop / "back").symlink_to(out, target_is_directory=True)  # a symlink loop back to the top
    (out / "dangling.pdf").symlink_to(out / "no_such_file.pdf")
    cases.append(Case(out / "dangling.pdf", "dangling symlink"))
    return cases
