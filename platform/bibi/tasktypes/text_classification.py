"""Text classification: one text in, one label of the task's label set out (the 2017
sentiment track). Everything it does is ``LabelledTaskType``'s over a single segment; its
examples files may also be the 2017 SST files' ``LABEL sentence`` lines (``sst2``)."""

from __future__ import annotations

from bibi.tasktypes.base import Segment
from bibi.tasktypes.labelled import LabelledTaskType
from bibi.tasktypes.pair_files import PAIRS, SST2017


class TextClassification(LabelledTaskType):
    key = "text_classification"
    name = "Text classification"
    description = "One text in, one label of the task's label set out (2017: sentiment)."
    segments = (Segment("text", "Text"),)
    template_key = "text_classification"
    example_formats = ("csv", "tsv", "jsonl", "sst2")
    pair_layouts = (PAIRS, SST2017)
