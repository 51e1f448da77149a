"""JSON Lines (``.jsonl``, ``.ndjson``): one memory per line (README "The snapshot contract").

What is unambiguous is tolerated: a byte-order mark (UTF-8, or UTF-16 as Windows tools write
it), and CRLF or CR-only line ends (a raw CR is never part of a JSON value). A line that is not
valid UTF-8 costs that line (``bad encoding``, with the position of its bad byte), not the file.
Blank lines are skipped; line numbers count them, so they stay the lines of the file.

This module also holds what the other text formats share: ``normalise`` (BOM, UTF-16, line
ends), ``frame`` (the reader's result) and ``line_records`` (the split into lines).
"""

from __future__ import annotations

import duckdb
import polars as pl


def decode(data: bytes) -> tuple[bytes, str, bool]:
    """(normalised bytes, their UTF-8 text or "", whether the whole file decoded)."""
    data = normalise(data)
    try:
        return data, data.decode("utf-8"), True
    except UnicodeDecodeError:
        return data, "", False


def read_jsonl(con: duckdb.DuckDBPyConnection, data: bytes) -> pl.DataFrame:
    """Records of a JSON Lines file as (line, raw, ok, problem)."""
    return line_records(normalise(data))


def line_records(data: bytes, decoded: bool | None = None) -> pl.DataFrame:
    """One record per non-blank line of `data` (``normalise``d); `decoded` says whether it is
    valid UTF-8 as a whole (None: find out)."""
    whole = None
    if decoded is not False:
        try:  # the bytes as one Polars string (checked as UTF-8 there): no Python string at all
            whole = pl.Series("raw", [data], dtype=pl.Binary).cast(pl.String)
        except pl.exceptions.ComputeError:
            whole = None
    if whole is not None:
        frame = pl.DataFrame({"raw": whole.str.split("\n").explode()}).with_columns(
            ok=pl.lit(True), problem=pl.lit(None, pl.String))
    else:
        frame = _decode_lines(data)
    frame = frame.with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int64))
    return frame.filter(pl.col("raw").str.strip_chars() != "").select("line", "raw", "ok", "problem")


def normalise(data: bytes) -> bytes:
    """Without a byte-order mark, in UTF-8 when it came as UTF-16 with one, and LF line ends."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            pass  # not UTF-16 after all: its lines are quarantined as bad encoding
    data = data.removeprefix(b"\xef\xbb\xbf")
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def _decode_lines(data: bytes) -> pl.DataFrame:
    # Rare path: one undecodable byte costs its line, not the file.
    raws, oks, problems = [], [], []
    for chunk in data.split(b"\n"):
        try:
            raws.append(chunk.decode("utf-8"))
            oks.append(True)
            problems.append(None)
        except UnicodeDecodeError as exc:
            raws.append(chunk.decode("utf-8", "replace"))
            oks.append(False)
            problems.append(f"byte 0x{chunk[exc.start]:02X} at byte {exc.start + 1} of the line is not valid UTF-8")
    return pl.DataFrame({"raw": raws, "ok": oks, "problem": problems},
                        schema={"raw": pl.String, "ok": pl.Boolean, "problem": pl.String})


def frame(lines: list[int], raws: list[str], oks: list[bool]) -> pl.DataFrame:
    """A reader's result, (line, raw, ok, problem), from its columns (``problem`` all NULL)."""
    return pl.DataFrame({"line": lines, "raw": raws, "ok": oks, "problem": [None] * len(lines)},
                        schema={"line": pl.Int64, "raw": pl.String, "ok": pl.Boolean, "problem": pl.String})
