"""Reading the files organizers and teams upload: bytes to text, text to numbered rows.

Pure functions, no models: the example importer and the pair-set submission both build on
them, so a file is decoded, split and numbered the same way everywhere, and a row error
names the same line a person sees in their editor.

    >>> decoded = decode_upload("id,text,label\\n1,Un film très réussi,1\\n".encode("cp1252"))
    >>> decoded.encoding
    'cp1252'
    >>> read_rows(decoded.text, file_format=detect_format("dev.csv"))
    [Row(line=2, fields={'id': '1', 'text': 'Un film très réussi', 'label': '1'}, error=None)]

Which problems stop the whole file and which are reported per row:

- ``FileFormatError`` (raised): the file cannot be read at all. It is empty, its bytes are
  in none of the supported encodings, its name has no known format, or its header row is
  unusable (an empty or repeated column name).
- A row with ``error`` set (returned): one record is broken but the others can still be
  read, so every broken record is reported at once. A CSV/TSV record with more or fewer
  fields than the header, a quote that is never closed or is followed by more text, a JSONL
  line that is not a JSON object (or holds what no text column can store, see
  ``json_parse``), an sst2 line without a sentence separator.

A refusal counts every problem but keeps only what it shows (``RowErrors``), so a file of a
million bad rows costs a few hundred error objects, not a million.

This package's public names are re-exported here: ``errors`` (what a refusal says),
``decoding`` (bytes to text), ``rows`` (text to numbered rows), ``json_input`` (JSON bibi
takes), ``refused`` (the rows a partial upload refused, as CSV, and that CSV read back as
the file it came from), ``csv_out`` (every CSV the platform writes: cells a spreadsheet will
not run as formulas), ``layout2017`` (the 2017
shared task's files, read one way for pair sets and predictions).
"""

from bibi.files.csv_out import csv_text, csv_writer, neutralized, restored
from bibi.files.decoding import (
    ENCODINGS,
    DecodedText,
    decode_upload,
)
from bibi.files.errors import (
    ERRORS_SHOWN,
    LINES_KEPT,
    MESSAGES_GROUPED,
    RANGES_SHOWN,
    ErrorGroup,
    FileFormatError,
    FileRejected,
    RowError,
    RowErrors,
)
from bibi.files.json_input import (
    JSON_MAX_DEPTH,
    JsonRefused,
    json_field_text,
    json_parse,
)
from bibi.files.refused import REFUSED_COLUMNS, refused_file_unfold, refused_rows_csv
from bibi.files.rows import (
    FORMAT_BY_EXTENSION,
    FORMATS,
    Row,
    delimiter_hint,
    detect_format,
    iter_rows,
    read_rows,
)

__all__ = [
    "DecodedText",
    "ENCODINGS",
    "ERRORS_SHOWN",
    "ErrorGroup",
    "FORMATS",
    "FORMAT_BY_EXTENSION",
    "FileFormatError",
    "FileRejected",
    "JSON_MAX_DEPTH",
    "JsonRefused",
    "LINES_KEPT",
    "MESSAGES_GROUPED",
    "RANGES_SHOWN",
    "REFUSED_COLUMNS",
    "Row",
    "RowError",
    "RowErrors",
    "decode_upload",
    "delimiter_hint",
    "detect_format",
    "iter_rows",
    "json_field_text",
    "json_parse",
    "read_rows",
    "csv_text",
    "csv_writer",
    "neutralized",
    "refused_file_unfold",
    "refused_rows_csv",
    "restored",
]
