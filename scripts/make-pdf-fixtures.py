#!/usr/bin/env python3
"""Makes the PDF fixtures in fixtures/pdf/ (issue 13), shaped like real PDFs.

    python3 -m venv /tmp/pdfvenv && /tmp/pdfvenv/bin/pip install fpdf2 pypdf
    /tmp/pdfvenv/bin/python scripts/make-pdf-fixtures.py

- report.pdf: two pages, DejaVu Sans embedded as a *subset* TrueType font with a
  ToUnicode map (what fpdf2 writes for TTF fonts), Flate-compressed streams, accented
  text (German, French, Polish, Swedish), and a /Title in the metadata.
- core-font.pdf: Helvetica (a standard font, WinAnsiEncoding, no ToUnicode, no
  embedded font) with accents, and no /Title (the result's title is used).
- scanned.pdf: one page that is only an image, as a scan is: no text at all.
- truncated.pdf: report.pdf cut at 60% of its bytes, as a download cut short.
- positioned.pdf: written by hand like some generators do: words placed one by one
  with `Td` and no space characters, and a `TJ` array whose word gaps are real-number
  offsets; a reader must space words by their positions.
- malformed.pdf: report.pdf with its /MediaBox blanked out (same length, so the
  cross-reference table still holds): a structure error the parser panics on.
The texts are asserted in tests/it/pdf.rs; pypdf reads each file back here as a check.
"""
import datetime
import io
import pathlib

from fpdf import FPDF
from PIL import Image
from pypdf import PdfReader

OUT = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "pdf"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WHEN = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)

PAGE_ONE = [
    "Tardigrades in Space: A Field Report",
    "In September 2007, dried tardigrades were exposed to open space for ten days "
    "on the FOTON-M3 mission. Most of the animals that were shielded from solar "
    "radiation recovered after rehydration.",
    "Die Bärtierchen überstanden die Kälte und das Vakuum; die Größe der Tiere "
    "beträgt meist weniger als einen Millimeter.",
]
PAGE_TWO = [
    "Cryptobiosis",
    "When they dry out, tardigrades enter a dormant tun state called anhydrobiosis, "
    "in which their metabolism falls to less than 0.01 percent of normal.",
    "Résumé : les tardigrades survivent à la déshydratation. Kraków, Ångström, naïve café.",
]


def doc(title=None):
    pdf = FPDF()
    pdf.set_creation_date(WHEN)
    pdf.set_producer("ground fixture generator (fpdf2)")
    if title:
        pdf.set_title(title)
        pdf.set_author("ground test suite")
    pdf.set_compression(True)
    return pdf


def write(pdf, paragraphs):
    pdf.add_page()
    for text in paragraphs:
        pdf.multi_cell(0, 8, text)
        pdf.ln(4)


def report():
    pdf = doc("Tardigrades in Space: A Field Report")
    pdf.add_font("DejaVu", "", FONT)  # embedded as a subset, with a ToUnicode CMap
    pdf.set_font("DejaVu", size=12)
    write(pdf, PAGE_ONE)
    write(pdf, PAGE_TWO)
    return bytes(pdf.output())


def core_font():
    pdf = doc()
    pdf.set_font("Helvetica", size=12)
    write(pdf, ["SQLite VACUUM", "The VACUUM command rebuilds the database file. Café, naïve, Größe."])
    return bytes(pdf.output())


def scanned():
    pdf = doc("Scanned letter")
    pdf.add_page()
    img = Image.new("L", (400, 300), 255)
    for x in range(40, 360):
        for y in (60, 100, 140, 180):
            img.putpixel((x, y), 0)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    buf.seek(0)
    pdf.image(buf, x=10, y=10, w=180)
    return bytes(pdf.output())


def positioned():
    content = (
        b"BT /F1 12 Tf 72 720 Td (Words) Tj 42 0 Td (placed) Tj 44 0 Td (one) Tj 26 0 Td (by) Tj 18 0 Td (one.) Tj ET\n"
        b"BT /F1 12 Tf 72 700 Td [(Gaps)-280.5(as)-280.5(real)-280.5(offsets.)] TJ ET\n"
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>",
        b"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"endstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    files = {
        "report.pdf": report(),
        "core-font.pdf": core_font(),
        "scanned.pdf": scanned(),
        "positioned.pdf": positioned(),
    }
    files["truncated.pdf"] = files["report.pdf"][: len(files["report.pdf"]) * 6 // 10]
    box = b"/MediaBox [0 0 595.28 841.89]"
    assert files["report.pdf"].count(box) == 1
    files["malformed.pdf"] = files["report.pdf"].replace(box, b" " * len(box))
    for name, data in files.items():
        (OUT / name).write_bytes(data)
        try:
            reader = PdfReader(io.BytesIO(data))
            text = " | ".join((p.extract_text() or "").replace("\n", " ")[:60] for p in reader.pages)
            print(f"{name}: {len(data)} bytes, {len(reader.pages)} pages, title {reader.metadata.title if reader.metadata else None!r}: {text}")
        except Exception as e:  # the truncated one
            print(f"{name}: {len(data)} bytes, pypdf: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
