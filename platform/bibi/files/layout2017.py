"""The 2017 shared task's files, read one way wherever they are uploaded; and its builders'
headerless prediction files (``iter_2017_predictions``).

The 2017 organizers wrote their TSV files without quoting: every character between two
tabs is text, so a sentence may begin with a quote (``"Terrific" says it all.``). Their
files name a ``sentence_id`` column (``<id>_a`` the original, ``<id>_b`` its variant), in
the pair files breakers uploaded and in the prediction files builders answered with. A TSV
whose header names ``sentence_id`` is therefore read as written (``quoted=False``); any
other file is read with CSV quoting. Pair sets (``bibi.pairs.layouts``) and self-reported
predictions (``bibi.systems.predictions``) both read their rows through ``read_2017_aware``.

A field quoted as a CSV writer quotes it (in quotes, inner quotes doubled) is not what a
2017 file holds: ``csv_quoted_problem`` says so, for the row to be refused with a hint.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator, Mapping

from bibi.files.rows import Row, iter_rows

SENTENCE_ID = "sentence_id"
# A field as a CSV writer quotes it: in quotes, with the quotes inside doubled.
_CSV_QUOTED = re.compile(r'"(?:[^"]|"")*""(?:[^"]|"")*"', re.DOTALL)

CSV_QUOTED_REASON = (
    'a field is quoted as CSV writes it (in quotes, with "" inside), but a TSV file in the '
    "2017 layout is read as written, quotes included: save it without quoting, or upload "
    "it as CSV"
)


def names_2017_layout(text: str) -> bool:
    """Whether the first non-blank line, split at tabs, names the ``sentence_id`` column."""
    for line in io.StringIO(text, newline=None):
        if line.strip():
            return SENTENCE_ID in (name.strip().lower() for name in line.split("\t"))
    return False


def reads_as_written(text: str, *, file_format: str) -> bool:
    """Whether ``text`` is a 2017 TSV file, read without quoting."""
    return file_format == "tsv" and names_2017_layout(text)


def read_2017_aware(text: str, *, file_format: str) -> Callable[[], Iterator[Row]]:
    """The rows of ``text`` as often as they are wanted (read anew each time, never kept):
    a 2017 TSV file as written, any other file with CSV quoting. Raises ``FileFormatError``
    at once when the file cannot be read at all."""
    quoted = not reads_as_written(text, file_format=file_format)
    iter_rows(text, file_format=file_format, quoted=quoted)

    def rows() -> Iterator[Row]:
        return iter_rows(text, file_format=file_format, quoted=quoted)

    return rows


def csv_quoted_problem(fields: Mapping[str, str]) -> str | None:
    """Why a row of a file read as written looks written by a CSV writer, or None."""
    if any(_CSV_QUOTED.fullmatch(value) for value in fields.values()):
        return CSV_QUOTED_REASON
    return None


# The 2017 builders' prediction files have no header and no conventional extension (a
# builder's ``.non_neural``, ``.predictions``, ``.opinion`` files): a line per item.
PREDICTIONS_2017 = "2017"


def iter_2017_predictions(text: str) -> Iterator[Row]:
    """The rows of a 2017 predictions file, which has no header: a line per item, either
    ``label<TAB>sentence`` (``sentence<TAB>label`` is taken too: the label is the field
    without a space), ``label sentence`` as the sst2 files write it, or the label alone.
    A label alone names its item by its place: ``position`` (1 for the first line that is
    not blank). Blank lines are skipped; a line is a record, quotes included."""
    position = 0
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        position += 1
        if "\t" in line:
            parts = [part.strip() for part in line.split("\t")]
            if len(parts) != 2 or not all(parts):
                yield Row(
                    line=number,
                    fields={},
                    error=f"has {len([p for p in parts if p])} fields separated by tabs where a "
                    "2017 predictions line has two: the label, a tab, the sentence",
                )
                continue
            first, second = parts
            if " " in first and " " not in second:
                first, second = second, first
            yield Row(line=number, fields={"label": first, "text": second})
            continue
        words = line.strip().split(None, 1)
        if len(words) == 1:
            yield Row(line=number, fields={"label": words[0], "position": str(position)})
        else:
            yield Row(line=number, fields={"label": words[0], "text": words[1]})
