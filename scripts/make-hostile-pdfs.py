#!/usr/bin/env python3
"""Makes the hostile PDF corpus in fixtures/pdf/hostile/ (issue 24), byte by byte.

    python3 scripts/make-hostile-pdfs.py

Standard library only (zlib, base64): every file is written by hand here, nothing is
downloaded. Each one is small and well formed enough for a PDF reader to go deep into
it, and each attacks one weakness of a parser with no limits of its own:

- xobject-self.pdf: a page draws a form XObject that draws itself (endless recursion;
  the unguarded parser overflowed its stack and aborted the whole process).
- xobject-mutual.pdf: two form XObjects that draw each other.
- xobject-deep.pdf: a chain of 1,000 distinct form XObjects, each drawing the next
  (no cycle, only depth: recursion 1,000 frames deep, enough to overflow a stack).
- xobject-fanout.pdf: 30 levels of form XObjects, each drawing the next twice
  (2^30 draws, no cycle and within any depth cap: "billion laughs" for PDF; the
  unguarded parser never ends).
- self-parent.pdf: a page whose /Parent is itself and that has no /Resources or
  /MediaBox, so a reader looking them up the page tree walks in a circle forever.
- ascii85-flate-bomb.pdf: a content stream under [/ASCII85Decode /FlateDecode]
  inflating to 300 MiB of spaces (the old pre-scan only tried zlib on the raw bytes).
- raw-deflate-bomb.pdf: a content stream whose zlib header is corrupt; lopdf then
  retries it as raw deflate, which inflates to 512 MiB.
- q-flood.pdf: a content stream of 2 million `q` (save graphics state) operators,
  4 MB inflated from 4.5 KB; each `q` copies the graphics state.
- tounicode-range.pdf: a font whose ToUnicode CMap maps the range <00000000>
  <FFFFFFFF>, which a CMap parser expands into 4 billion map entries.
Every file has a /Title, so a test can tell a refused file from an empty one.
"""
import base64
import pathlib
import zlib

OUT = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "pdf" / "hostile"

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
TEXT = b"BT /F1 12 Tf 72 720 Td (Hostile fixture) Tj ET\n"


def stream(content, extra=b""):
    """A stream object's body: dictionary with /Length, the data, endstream."""
    return b"<< /Length %d %s>>\nstream\n" % (len(content), extra) + content + b"\nendstream"


def pdf(objects, title):
    """A whole file: header, numbered objects (1 is the catalog), xref, trailer."""
    objects = list(objects)
    info = len(objects) + 1
    objects.append(b"<< /Title (%s) /Producer (scripts/make-hostile-pdfs.py) >>" % title)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


def one_page(content, resources=b"<< /Font << /F1 4 0 R >> >>", more=()):
    """Catalog (1), pages (2), a page (3) drawing `content` (5), Helvetica (4), then `more`."""
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>",
        b"<< /Type /Page /Parent 2 0 R /Resources %s /Contents 5 0 R >>" % resources,
        FONT,
        stream(content),
        *more,
    ]


def form(content, resources):
    """A form XObject drawing `content` with `resources`."""
    return stream(content, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources %s " % resources)


def deflate(chunk, total):
    """zlib data of `total` bytes made of `chunk` repeated, compressed piece by piece."""
    compressor = zlib.compressobj(9)
    piece = chunk * (1024 * 1024 // len(chunk))
    parts = []
    done = 0
    while done < total:
        take = piece[: min(len(piece), total - done)]
        parts.append(compressor.compress(take))
        done += len(take)
    parts.append(compressor.flush())
    return b"".join(parts)


def xobject_self():
    page = one_page(
        TEXT + b"/X1 Do\n",
        b"<< /Font << /F1 4 0 R >> /XObject << /X1 6 0 R >> >>",
        [form(b"/X1 Do\n", b"<< /XObject << /X1 6 0 R >> >>")],
    )
    return pdf(page, b"A drawing that draws itself")


def xobject_mutual():
    page = one_page(
        TEXT + b"/A Do\n",
        b"<< /Font << /F1 4 0 R >> /XObject << /A 6 0 R >> >>",
        [
            form(b"/B Do\n", b"<< /XObject << /B 7 0 R >> >>"),
            form(b"/A Do\n", b"<< /XObject << /A 6 0 R >> >>"),
        ],
    )
    return pdf(page, b"Two drawings that draw each other")


def xobject_deep(depth=1000):
    first = 6
    forms = []
    for i in range(depth):
        n = first + i
        if i + 1 < depth:
            forms.append(form(b"/N Do\n", b"<< /XObject << /N %d 0 R >> >>" % (n + 1)))
        else:
            forms.append(form(TEXT, b"<< /Font << /F1 4 0 R >> >>"))
    page = one_page(
        b"/N Do\n",
        b"<< /Font << /F1 4 0 R >> /XObject << /N %d 0 R >> >>" % first,
        forms,
    )
    return pdf(page, b"Drawings nested 1000 deep")


def xobject_fanout(levels=30):
    first = 6
    forms = []
    for i in range(levels):
        n = first + i
        if i + 1 < levels:
            forms.append(form(b"/N Do /N Do\n", b"<< /XObject << /N %d 0 R >> >>" % (n + 1)))
        else:
            forms.append(form(b"0 0 m 1 1 l S\n", b"<< >>"))
    page = one_page(
        TEXT + b"/N Do\n",
        b"<< /Font << /F1 4 0 R >> /XObject << /N %d 0 R >> >>" % first,
        forms,
    )
    return pdf(page, b"Drawings that draw the next one twice, 30 levels")


def self_parent():
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        # No /Resources and no /MediaBox here: both are looked up through /Parent.
        b"<< /Type /Page /Parent 3 0 R /Contents 5 0 R >>",
        FONT,
        stream(TEXT),
    ]
    return pdf(objects, b"A page that is its own parent")


def ascii85_flate_bomb():
    data = base64.a85encode(deflate(b" ", 300 * 1024 * 1024), wrapcol=80) + b"~>"
    objects = one_page(b"")
    objects[4] = stream(data, b"/Filter [/ASCII85Decode /FlateDecode] ")
    return pdf(objects, b"ASCII85 and Flate inflating to 300 MiB")


def raw_deflate_bomb():
    data = bytearray(deflate(b" ", 512 * 1024 * 1024))
    data[0:2] = b"\x00\x00"  # not a zlib header: lopdf falls back to raw deflate
    objects = one_page(b"")
    objects[4] = stream(bytes(data), b"/Filter /FlateDecode ")
    return pdf(objects, b"A corrupt zlib header over 512 MiB of raw deflate")


def q_flood():
    data = zlib.compress(TEXT + b"q\n" * 2_000_000, 9)
    objects = one_page(b"")
    objects[4] = stream(data, b"/Filter /FlateDecode ")
    return pdf(objects, b"Two million q operators")


def tounicode_range():
    cmap = (
        b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        b"/CMapName /Hostile def\n/CMapType 2 def\n"
        b"1 begincodespacerange\n<00000000> <FFFFFFFF>\nendcodespacerange\n"
        b"1 beginbfrange\n<00000000> <FFFFFFFF> <0041>\nendbfrange\n"
        b"endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    )
    objects = one_page(TEXT)
    objects[3] = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
        b"/Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>"
    )
    objects.append(stream(cmap))
    return pdf(objects, b"A ToUnicode range of four billion codes")


FILES = {
    "xobject-self.pdf": xobject_self,
    "xobject-mutual.pdf": xobject_mutual,
    "xobject-deep.pdf": xobject_deep,
    "xobject-fanout.pdf": xobject_fanout,
    "self-parent.pdf": self_parent,
    "ascii85-flate-bomb.pdf": ascii85_flate_bomb,
    "raw-deflate-bomb.pdf": raw_deflate_bomb,
    "q-flood.pdf": q_flood,
    "tounicode-range.pdf": tounicode_range,
}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in FILES.items():
        data = make()
        (OUT / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
