"""Pair sets that arrive as uploads: a file (``pair_set_upload``) or a JSON list
(``pair_list_submit``). Both are read, recognised when identical to a set the team already
submitted (refused without counting against the quota), then submitted whole by
``pair_sets.pair_set_submit``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import PurePath

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files import File

from bibi.files import FileFormatError
from bibi.pairs.models import PairSet
from bibi.pairs.services.pair_sets import (
    PAIR_SET_FILE,
    PairSetRejected,
    PairSetSubmission,
    identical_upload_refuse,
    pair_set_size_require,
    pair_set_submit,
    pair_set_submit_require,
)
from bibi.sharedtasks.models import SharedTask, Team
from bibi.tasktypes.pair_files import PairFile, read_pair_file
from bibi.tasktypes.rules import PairInput
from bibi.uploads import upload_digest, upload_size_require


def pair_list_digest(
    pairs: Sequence[PairInput],
    *,
    label_map: Mapping[str, str] | None,
    append_to: PairSet | None = None,
) -> str:
    """The digest of a JSON list of pairs (``bibi.uploads.upload_digest`` over the pairs' fields
    as read, in order): the same list sent again, however its JSON is spaced or its keys
    ordered, has the same digest (added to a set, another: it says which)."""
    fields = [dataclasses.asdict(pair) for pair in pairs]
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False).encode()
    options = {"append_to": append_to.id} if append_to else {}
    return upload_digest(canonical, source="json", label_map=dict(label_map or {}), **options)


def pair_list_submit(
    *,
    team: Team,
    user: AbstractBaseUser,
    pairs: Sequence[PairInput],
    label_map: Mapping[str, str] | None = None,
    dry_run: bool = False,
    append_to: PairSet | None = None,
) -> PairSetSubmission:
    """Submit a JSON list of pairs with ``pair_set_submit``; a list identical to one the team
    submitted as a set (``pair_list_digest``) is refused with a ``ValidationError`` naming that
    set, and does not count against the quota. ``append_to``: see ``pair_set_submit``."""
    pair_set_submit_require(team=team, user=user)
    digest = pair_list_digest(pairs, label_map=label_map, append_to=append_to)
    identical_upload_refuse(team=team, digest=digest, source=PairSet.Source.API)
    return pair_set_submit(
        team=team,
        user=user,
        pairs=pairs,
        label_map=label_map,
        dry_run=dry_run,
        digest=digest,
        append_to=append_to,
    )


def _pair_file_read(
    shared_task: SharedTask, data: bytes, filename: str, file_format: str | None
) -> PairFile:
    """The file read in its type's layouts (a file of more pairs than the task takes only
    counted); ``PairSetRejected`` when it cannot be read at all."""
    try:
        return read_pair_file(
            data,
            filename=filename,
            file_format=file_format,
            max_pairs=shared_task.max_pairs_per_set,
            layouts=shared_task.kind.pair_layouts,
        )
    except FileFormatError as error:
        raise PairSetRejected.from_format_error(error, source=filename or "the file") from None


def _file_digest(
    data: bytes,
    file_format: str | None,
    label_map: Mapping[str, str] | None,
    *,
    partial: bool,
    append_to: PairSet | None,
) -> str:
    """The upload's digest: its bytes and the options that change what they mean (added to a
    set, the same file makes another set, so the digest says which)."""
    options = {"append_to": append_to.id} if append_to else {}
    return upload_digest(
        data,
        file_format=file_format or "",
        label_map=dict(label_map or {}),
        partial=partial,
        **options,
    )


def pair_set_upload(
    *,
    team: Team,
    user: AbstractBaseUser,
    file: File,
    file_format: str | None = None,
    label_map: Mapping[str, str] | None = None,
    dry_run: bool = False,
    partial: bool = False,
    append_to: PairSet | None = None,
) -> PairSetSubmission:
    """Read a pair-set file (see ``layouts``) and submit it with ``pair_set_submit``.

    ``file`` is any Django ``File`` (an upload, a ``ContentFile`` with a name). A file that
    cannot be read at all is rejected like a set with failing pairs; one over
    ``PAIR_SET_UPLOAD_MAX_BYTES`` raises ``bibi.uploads.UploadTooLarge`` unread. A file
    identical to a set the team submitted (same bytes, label map and mode) is refused with
    a ``ValidationError`` that names that set, and does not count. ``partial``,
    ``append_to``: see ``pair_set_submit``. A refused-rows file is read as the rows it holds,
    back on their lines (``bibi.files.refused_file_unfold``).
    """
    pair_set_submit_require(team=team, user=user)
    upload_size_require(file.size, limit=settings.PAIR_SET_UPLOAD_MAX_BYTES, what=PAIR_SET_FILE)
    filename = PurePath((file.name or "").replace("\\", "/")).name[:255]
    file.seek(0)
    data = file.read()
    digest = _file_digest(data, file_format, label_map, partial=partial, append_to=append_to)
    identical_upload_refuse(team=team, digest=digest, source=PairSet.Source.FILE)
    pair_file = _pair_file_read(team.shared_task, data, filename, file_format)
    pair_set_size_require(
        shared_task=team.shared_task,
        count=pair_file.pair_count,
        source=filename or "the file",
        encoding=pair_file.encoding,
        file_format=pair_file.file_format,
    )
    return pair_set_submit(
        team=team,
        user=user,
        pairs=pair_file.pairs,
        label_map=label_map,
        source=PairSet.Source.FILE,
        filename=filename,
        file_format=pair_file.file_format,
        layout=pair_file.layout,
        encoding=pair_file.encoding,
        read_errors=pair_file.errors,
        read_warnings=pair_file.warnings,
        dry_run=dry_run,
        partial=partial,
        text=pair_file.text,
        digest=digest,
        record_lines=pair_file.record_lines,
        append_to=append_to,
    )
