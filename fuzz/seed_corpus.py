#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus (fuzz/corpus/<target>/) from the repository's fixtures:
the stored entry JSON (flue_session_entries.data) of tests/fixtures/flue-beta7/*.db.gz, plus a
few hand-written rows for what the fixtures lack (terminal escapes, bidi controls, bytes that
are not UTF-8). Standard library only; run from anywhere: python3 fuzz/seed_corpus.py"""

import gzip
import hashlib
import pathlib
import sqlite3
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "flue-beta7"
CORPUS = ROOT / "fuzz" / "corpus"


def sessions():
    """{(fixture, session_id): [data, ...]} in position order, every fixture database."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for gz in sorted(FIXTURES.glob("*.db.gz")):
            db = pathlib.Path(tmp) / gz.name[: -len(".gz")]
            db.write_bytes(gzip.decompress(gz.read_bytes()))
            con = sqlite3.connect(db)
            query = "SELECT session_id, data FROM flue_session_entries ORDER BY session_id, position"
            for session, data in con.execute(query):
                data = data if isinstance(data, bytes) else data.encode()
                out.setdefault((gz.name, session), []).append(data)
            con.close()
    return out


def write(target, items):
    folder = CORPUS / target
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for item in items:
        (folder / hashlib.sha1(item).hexdigest()).write_bytes(item)
    print(f"{target}: {len(set(items))} files, {sum(len(i) for i in set(items))} bytes")


def main():
    by_session = sessions()
    rows = []
    for entries in by_session.values():
        for data in entries:
            if data not in rows:
                rows.append(data)
    hostile = [
        # An ANSI escape, a C1 CSI, a right-to-left override, zero-width characters, a character
        # split by an invalid byte, a lone continuation byte and a cut-short character.
        '{"type":"message","message":{"role":"toolResult","content":"\u001b[31mred\u009b2J'
        '\u202eevil\u200b\u2066x\ufeff"}}'.encode(),
        "\x1b]0;title\x07 \u202e\u061c\u2028 é€😀\r\n\tok".encode(),
        b'{"text":"caf\xc3\xa9 \xe2\x82 \x80 \xff \xf0\x9f\x98"}',
        b'{"type":"message","message":{"content":"a\\ud800b\\u12g4"}}',
    ]
    # Every row: the scanner's and the serde visitors' paths on what the runtime writes.
    write("compact_entry", rows + hostile)
    # The string scans read from every quote on, so a row holds many cases.
    write("string_body", rows[::2] + hostile)
    # The writer's first byte picks the chunk sizes: 0 writes the row at once.
    write("terminal_text", [bytes([k % 7]) + r for k, r in enumerate(rows[::2] + hostile)])
    # Whole sessions of two or more rows, one per line, with right and wrong counts and splits:
    # header bytes (flags, count, split point, first half's length, whole length); see the target.
    headers = [
        bytes([0, 0, 0, 0, 0]),  # no count: batches only
        bytes([1, 0, 0, 0, 0]),  # the right count: the slots filled
        bytes([1, 5, 0, 0, 0]),  # a count two too high
        bytes([3, 0, 1, 0, 0]),  # split after the first row, right
        bytes([3, 0, 2, 7, 0]),  # a first half one too long
        bytes([7, 0, 1, 0, 6]),  # previews dropped, a whole length one too short
    ]
    multi = [e for e in by_session.values() if len(e) >= 2]
    sessions_ = [h + b"\n".join(e) for k, e in enumerate(multi) for h in headers[k % 3 :: 3]]
    write("parallel_rows", sessions_)


if __name__ == "__main__":
    main()
