"""How a CSV file is written: its text encoding, field separator, decimal mark and header row.

European and Excel exports use ``;`` between fields and ``,`` as the decimal mark; Windows tools
write cp1252 / latin-1 text. :func:`detect_csv_format` looks at the start of the file and finds
these, so such files read without options; ``sep`` / ``decimal`` / ``encoding`` given by the
caller always win. The separator is the candidate (``,`` ``;`` tab ``|``) that splits every
sampled line into the same number (> 1) of fields, the most fields winning; the decimal mark is
``,`` when the separator is not ``,`` and cells such as ``3,14`` occur.
"""

from __future__ import annotations

import csv
import gzip
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madcluster.exceptions import DataError

logger = logging.getLogger(__name__)

SEPARATORS = (",", ";", "\t", "|")
SEPARATOR_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
#: Tried in order when a file is not UTF-8 (cp1252 leaves a few bytes undefined; latin-1 none).
FALLBACK_ENCODINGS = ("cp1252", "latin-1")
#: ``DataFrame.attrs`` key set by :func:`read_csv_frame`: False when the CSV had no header row.
HEADER_ATTR = "madcluster_header"
_SAMPLE_BYTES = 1 << 16
_SAMPLE_LINES = 50
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class CsvFormat:
    """What :func:`detect_csv_format` found; ``first_row`` is the first line's cells."""

    encoding: str
    sep: str
    decimal: str
    first_row: list[str]


def detect_csv_format(
    path: Path,
    *,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> CsvFormat:
    """The encoding, separator and decimal mark of the CSV at ``path`` (given values win)."""
    sep = _unescape(sep)
    if sep is not None and len(sep) != 1:
        raise DataError(f"--sep / sep must be one character, got {sep!r}")
    if decimal is not None and decimal not in (".", ","):
        raise DataError(f"--decimal / decimal must be '.' or ',', got {decimal!r}")
    raw = _head_bytes(path)
    encoding, text = _decode(raw, path, encoding)
    lines = [line for line in text.splitlines() if line.strip()][:_SAMPLE_LINES]
    if sep is None:
        sep = _guess_separator(lines)
        if sep != ",":
            logger.info("%s: fields separated by %s", path, SEPARATOR_NAMES.get(sep, repr(sep)))
    rows = list(csv.reader(lines, delimiter=sep)) if lines else []
    if decimal is None:
        cells = [cell.strip() for row in rows[1:] for cell in row]
        decimal = "," if sep != "," and any(_DECIMAL_COMMA.match(c) for c in cells) else "."
    if decimal == sep:
        raise DataError(
            f"{str(path)!r}: the field separator and the decimal mark are both {sep!r}; "
            "pass --sep ';' with --decimal ','"
        )
    return CsvFormat(encoding=encoding, sep=sep, decimal=decimal, first_row=rows[0] if rows else [])


def read_csv_frame(
    path: Path,
    *,
    header: bool | None = None,
    sep: str | None = None,
    decimal: str | None = None,
    encoding: str | None = None,
) -> Any:
    """The CSV as a pandas DataFrame, format detected (module docstring), header row detected.

    ``header=None``: a first row made only of numbers is data, not column names, unless it is
    exactly ``0, 1, ..., D-1`` (what pandas writes for an unnamed array); headerless columns are
    named ``"0"``, ``"1"``, ... . Duplicated header names are an error naming them (pandas would
    silently rename the second ``a`` to ``a.1``).
    """
    import pandas as pd

    fmt = detect_csv_format(path, sep=sep, decimal=decimal, encoding=encoding)
    header = resolve_header(fmt, header, path)
    if header:
        dupes = sorted({n for n in fmt.first_row if fmt.first_row.count(n) > 1})
        if dupes:
            raise DataError(
                f"{str(path)!r} has duplicated column name(s) {dupes[:10]}: rename them so each "
                "column has its own name"
            )
    try:
        frame = pd.read_csv(
            path,
            header=0 if header else None,
            sep=fmt.sep,
            decimal=fmt.decimal,
            encoding=fmt.encoding,
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{str(path)!r} is empty") from None
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{str(path)!r} is not valid {fmt.encoding} text after its first 64 KiB "
            f"({exc.reason}): pass --encoding (e.g. latin-1, cp1252)"
        ) from None
    except pd.errors.ParserError as exc:
        raise DataError(
            f"{str(path)!r} is not a readable CSV file ({str(exc).strip()}); "
            f"{_separator_sentence(fmt)}"
        ) from None
    if not header:
        frame.columns = [str(i) for i in range(frame.shape[1])]
    if frame.shape[1] == 1:
        refuse_glued_header(path, str(frame.columns[0]), fmt)
    frame.attrs[HEADER_ATTR] = bool(header)
    return frame


def _separator_sentence(fmt: CsvFormat) -> str:
    name = SEPARATOR_NAMES.get(fmt.sep, repr(fmt.sep))
    return f"fields were split at {name}s ({fmt.sep!r}): pass --sep (sep=...) if that is wrong"


def refuse_glued_header(path: Path, name: str, fmt: CsvFormat) -> None:
    """One column whose name holds another separator: the separator was not found; say which."""
    found = [s for s in SEPARATORS if s != fmt.sep and s in name]
    if found:
        raise DataError(
            f"{str(path)!r} was read as one column named {name[:60]!r}, which looks like several "
            f"columns joined by {found[0]!r}, but its lines do not split into the same number of "
            f"fields at {found[0]!r}; fix the file or pass --sep {found[0]!r}"
        )


def first_row_is_data(fmt: CsvFormat) -> bool:
    """True when every cell of the first row is a number (and not pandas' 0..D-1 names)."""
    cells = [cell.strip() for cell in fmt.first_row]
    if not cells or cells == [str(i) for i in range(len(cells))]:
        return False
    for cell in cells:
        try:
            float(cell.replace(",", ".") if fmt.decimal == "," else cell)
        except ValueError:
            return False
    return True


def resolve_header(fmt: CsvFormat, header: bool | None, path: object) -> bool:
    """``header`` as given, or (None) whether the first row is a header: not when it holds only
    numbers, which is then said in a warning (a header of numbers must be declared)."""
    if header is not None:
        return header
    if first_row_is_data(fmt):
        logger.warning(
            "%s: the first row holds only numbers, so it is read as data, not as column names "
            "(columns are named 0, 1, ...); if it is a header, say so (--header / header=True)",
            path,
        )
        return False
    return True


def _unescape(sep: str | None) -> str | None:
    """``\\t`` / ``tab`` typed on a command line mean a tab."""
    if sep in ("\\t", "tab", "TAB"):
        return "\t"
    return sep


def _head_bytes(path: Path) -> bytes:
    """Up to 64 KiB from the start of the file (decompressed for .gz), cut at a line end."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as handle:
            raw = handle.read(_SAMPLE_BYTES)
    except (OSError, EOFError) as exc:
        raise DataError(f"{str(path)!r} could not be read: {exc}") from None
    if len(raw) == _SAMPLE_BYTES and b"\n" in raw:
        raw = raw[: raw.rindex(b"\n") + 1]
    return raw


def _decode(raw: bytes, path: Path, encoding: str | None) -> tuple[str, str]:
    """``(encoding, text)``: the given encoding, else UTF-8, else a Windows / latin-1 fallback."""
    if encoding is not None:
        try:
            return encoding, raw.decode(encoding)
        except LookupError:
            raise DataError(
                f"unknown encoding {encoding!r} (e.g. utf-8, latin-1, cp1252)"
            ) from None
        except UnicodeDecodeError as exc:
            raise DataError(
                f"{str(path)!r} is not valid {encoding} text ({exc.reason} at byte {exc.start}); "
                "try another --encoding (e.g. utf-8, latin-1, cp1252)"
            ) from None
    try:
        return "utf-8-sig", raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        for fallback in FALLBACK_ENCODINGS:
            try:
                text = raw.decode(fallback)
            except UnicodeDecodeError:
                continue
            logger.warning(
                "%s is not UTF-8 (byte %d); read as %s: pass --encoding (encoding=...) to choose",
                path,
                exc.start,
                fallback,
            )
            return fallback, text
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def _guess_separator(lines: list[str]) -> str:
    """The separator giving every line the same number (> 1) of fields; among those, the one
    whose cells read most often as numbers, then the one with the most fields."""
    best, best_key = ",", (-1.0, 1)
    for candidate in SEPARATORS:
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=candidate))
        counts = {len(row) for row in rows}
        if len(counts) != 1 or (fields := counts.pop()) < 2:
            continue
        cells = [cell.strip() for row in rows for cell in row]
        numeric = sum(_is_number(c, comma=candidate != ",") for c in cells) / max(len(cells), 1)
        if (numeric, fields) > best_key:
            best, best_key = candidate, (numeric, fields)
    return best


def _is_number(cell: str, *, comma: bool) -> bool:
    try:
        float(cell)
    except ValueError:
        return comma and bool(_DECIMAL_COMMA.match(cell))
    return True
