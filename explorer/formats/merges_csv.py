"""The merge history as CSV (format ``csv``), both ways: one row per merge with its counts as
training found them (empty for a tokenizer imported rather than trained here)::

    step,left,right,token,id,count,tokens_after,words_affected,n_tied
    1,a,",","a,",3,2,4,1,1

The reader finds columns by the header's names and needs ``step, left, right, token, id``;
the file names no alphabet, unit or pre-tokenizer, which are inferred
(:mod:`explorer.formats.token_merges`) and said in its notes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

from ..bpe.tokenizer import Tokenizer
from ..errors import FormatError
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, require, whole_number
from .token_merges import merges_are_bytes, read_token_merges

__all__ = ["CSV_COLUMNS", "CSV_NEEDED", "FORMAT", "read_merges_csv", "to_merges_csv"]

CSV_COLUMNS = ("step", "left", "right", "token", "id", "count", "tokens_after", "words_affected", "n_tied")
CSV_NEEDED = ("step", "left", "right", "token", "id")  # the columns of CSV_COLUMNS read back


def to_merges_csv(trace: Mapping) -> str:
    """The merge history as CSV, one row per merge (counts are empty for a tokenizer that was
    imported rather than trained here).

    >>> from explorer import make_config, train
    >>> from explorer.formats.trace import trace_dict
    >>> print(to_merges_csv(trace_dict(train("a,a a,a", make_config("hf-course", num_merges=1)))), end="")
    step,left,right,token,id,count,tokens_after,words_affected,n_tied
    1,a,",","a,",3,2,4,1,1
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for m in trace["merges"]:
        w.writerow(["" if m.get(c) is None else m[c] for c in CSV_COLUMNS])
    return buf.getvalue()


def read_merges_csv(text: str, *, name: str = "merges.csv") -> tuple[list[tuple[str, str]], list[int], list[int]]:
    """The merges CSV (``exporters.to_merges_csv``) -> the pairs, the id each makes and the line
    each is on. Columns are found by the header's names; ``step, left, right, token, id`` must be
    there, the counts may be missing.

    >>> read_merges_csv('step,left,right,token,id\\n1,a,",","a,",3\\n')
    ([('a', ',')], [3], [2])
    >>> read_merges_csv('step,left,right,token,id\\n1,a,b,ab,3\\n2,ab,b,abc,4\\n')
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merges.csv line 3: 'ab' + 'b' makes 'abb', but the token column says 'abc'
    """
    rows = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    pairs: list[tuple[str, str]] = []
    ids: list[int] = []
    where: list[int] = []
    try:
        header = next(rows, None)
        require(header is not None and any(h.strip() for h in header), f"{name} is empty")
        assert header is not None
        column: dict[str, int] = {}
        for i, h in enumerate(header):
            column.setdefault(h.strip().lower(), i)
        missing = [c for c in CSV_NEEDED if c not in column]
        require(
            not missing,
            f"{name} line 1: the header has no {', '.join(repr(c) for c in missing)} "
            f"column{'s' * (len(missing) > 1)} "
            f"(a merges CSV starts 'step,left,right,token,id'; found {','.join(header)[:60]!r})",
        )
        last = max(column[c] for c in CSV_NEEDED)
        for row in rows:
            n = rows.line_num
            if not any(cell.strip() for cell in row):
                continue
            require(
                len(row) > last,
                f"{name} line {n}: {len(row)} fields, but the header puts 'id' and the others in the first {last + 1}",
            )
            step, left, right, token, new = (row[column[c]] for c in CSV_NEEDED)
            require(
                step.strip() == str(len(pairs) + 1),
                f"{name} line {n}: step {step!r} where step {len(pairs) + 1} was expected (one row per merge, in order)",
            )
            require(bool(left) and bool(right), f"{name} line {n}: the left or right token is empty")
            require(
                token == left + right,
                f"{name} line {n}: {left!r} + {right!r} makes {left + right!r}, but the token column says {token!r}",
            )
            made = whole_number(new, f"{name} line {n}: id {new!r} is not a whole number")
            pairs.append((left, right))
            ids.append(made)
            where.append(n)
    except csv.Error as err:
        raise FormatError(f"{name} line {rows.line_num}: {err}") from None
    require(bool(pairs), f"{name} holds no merges (only its header)")
    return pairs, ids, where


def _is_csv(upload: Upload) -> bool:
    return upload.lower.endswith(".csv") or upload.first_line.lower().startswith("step,")


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"merges.csv": to_merges_csv(trace)}


def _read(found: Found, options: ImportOptions) -> Imported:
    upload = found["csv"]
    merges, ids, lines = read_merges_csv(upload.text, name=upload.name)
    return read_token_merges(upload, merges, lines, options, ids=ids, what="CSV merges")


def _needs_pretokenizer(found: Found) -> bool:
    upload = found["csv"]
    return merges_are_bytes(read_merges_csv(upload.text, name=upload.name)[0])


FORMAT = FileFormat(
    name="csv",
    title="merge history (CSV)",
    description="one row per merge: step, pair, new token and id, count, tokens after, words affected",
    files="merges.csv as this app writes it (step,left,right,token,id,...)",
    write=_write,
    read=_read,
    # after minbpe's files, before a rank file (whose first line is two fields too)
    kinds=(FileKind("csv", "text", 30, _is_csv),),
    file_sets=(("csv",),),
    uses_trace=True,
    needs_pretokenizer=_needs_pretokenizer,
)
