"""Two worker processes share one machine's model store: a model one of them has just made
ready is never evicted by the other before it is opened, and a bound far below the models'
total makes each call fetch at most once, never blaming the archive."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import traceback
import uuid
from pathlib import Path

from bibi.systems import model_store
from bibi.systems.models import SystemVersion

from .conftest import zip_directory

# Each wait between the two processes follows an event; this only stops a broken test.
BOUND_SECONDS = 120
ARCHIVES = 3
ROUNDS = 6
MODEL_BYTES = 4000


def _versions(settings, tmp_path: Path) -> list[SystemVersion]:
    """``ARCHIVES`` ready versions whose archives only the upload holds (nothing unpacked)."""
    uploads = Path(settings.UPLOAD_ROOT)
    versions = []
    for index in range(ARCHIVES):
        model = tmp_path / f"model-{index}"
        model.mkdir()
        (model / "config.json").write_text(f'{{"model": {index}}}')
        (model / "weights.bin").write_bytes(os.urandom(MODEL_BYTES))
        data = zip_directory(model)
        path = f"systems/archive-{index}.zip"
        (uploads / path).parent.mkdir(parents=True, exist_ok=True)
        (uploads / path).write_bytes(data)
        version_uuid = uuid.uuid4()
        versions.append(
            SystemVersion(
                uuid=version_uuid,
                archive_path=path,
                archive_sha256=hashlib.sha256(data).hexdigest(),
                model_dir=str(version_uuid),
            )
        )
    return versions


def _worker(
    me: int,
    versions: list[SystemVersion],
    between: list,
    done: list,
    results: multiprocessing.Queue,
) -> None:
    """Round r: the leader (r % 2) opens a model and, once the store lock is let go, waits
    there while the follower opens another one (fetching it, evicting what it may)."""
    fetched: list[str] = []
    errors: list[str] = []
    real_fetch = model_store.archive_fetch

    def counting_fetch(version: SystemVersion, destination: Path) -> str:
        fetched.append(str(version.uuid))
        return real_fetch(version, destination)

    round_now = [0]

    def hold_the_leader(version: SystemVersion) -> None:
        r = round_now[0]
        if r % 2 == me:
            between[r].set()
            if not done[r].wait(BOUND_SECONDS):
                raise AssertionError(f"round {r}: the other process never finished")

    model_store.archive_fetch = counting_fetch  # type: ignore[assignment]
    model_store.between_lock_steps = hold_the_leader
    try:
        for r in range(ROUNDS):
            round_now[0] = r
            leader = r % 2 == me
            version = versions[(r + (0 if leader else 1)) % len(versions)]
            if not leader and not between[r].wait(BOUND_SECONDS):
                raise AssertionError(f"round {r}: the other process never reached the gap")
            try:
                with model_store.model_files(version) as path:
                    assert (path / "weights.bin").stat().st_size == MODEL_BYTES
            except model_store.ArchiveUnavailable as exc:
                errors.append(f"round {r}: {exc}")
            finally:
                if not leader:
                    done[r].set()
    except BaseException:
        errors.append(traceback.format_exc())
        for r in range(ROUNDS):  # let the other process finish rather than wait its bound
            between[r].set()
            done[r].set()
    results.put((me, fetched, errors))


def test_two_processes_on_a_tight_store_never_lose_a_model_they_opened(settings, tmp_path):
    settings.MODEL_STORE = tmp_path / "models"
    settings.UPLOAD_ROOT = tmp_path / "uploads"
    versions = _versions(settings, tmp_path)
    # Room for one model only: every fetch evicts every other model it may.
    settings.SYSTEM_MODEL_STORE_MAX_BYTES = MODEL_BYTES + 100

    context = multiprocessing.get_context("fork")
    between = [context.Event() for _ in range(ROUNDS)]
    done = [context.Event() for _ in range(ROUNDS)]
    results = context.Queue()
    processes = [
        context.Process(target=_worker, args=(me, versions, between, done, results))
        for me in (0, 1)
    ]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=BOUND_SECONDS) for _ in processes]
    for process in processes:
        process.join(BOUND_SECONDS)
        assert process.exitcode == 0

    errors = [error for _, _, errs in outcomes for error in errs]
    assert errors == []
    fetches = [name for _, fetched, _ in outcomes for name in fetched]
    # Each call fetches at most once (its model was evicted since it was last used): two
    # calls a round.
    assert len(fetches) <= 2 * ROUNDS
    per_entry = {str(version.uuid): fetches.count(str(version.uuid)) for version in versions}
    assert max(per_entry.values()) <= 2 * ROUNDS // ARCHIVES, per_entry
    # No pin is left once both have let go.
    pins = Path(settings.MODEL_STORE) / model_store.PINS
    assert not pins.exists() or not list(pins.iterdir())


def test_a_model_that_vanished_after_its_pin_is_fetched_once_more(settings, tmp_path, monkeypatch):
    import shutil

    settings.MODEL_STORE = tmp_path / "models"
    settings.UPLOAD_ROOT = tmp_path / "uploads"
    version = _versions(settings, tmp_path)[0]
    removed: list[str] = []

    def remove_by_hand(version: SystemVersion) -> None:
        if not removed:  # an operator (not bibi) empties the store, once
            removed.append(str(version.uuid))
            shutil.rmtree(Path(settings.MODEL_STORE) / str(version.uuid))

    fetched: list[str] = []
    real_fetch = model_store.archive_fetch
    monkeypatch.setattr(
        model_store,
        "archive_fetch",
        lambda version, destination: fetched.append("x") or real_fetch(version, destination),
    )
    monkeypatch.setattr(model_store, "between_lock_steps", remove_by_hand)
    with model_store.model_files(version) as path:
        assert (path / "weights.bin").is_file()
    assert removed and len(fetched) == 2


def test_a_pin_left_by_a_dead_process_does_not_hold_its_model(settings, tmp_path):
    settings.MODEL_STORE = tmp_path / "models"
    settings.UPLOAD_ROOT = tmp_path / "uploads"
    old, new = _versions(settings, tmp_path)[:2]
    settings.SYSTEM_MODEL_STORE_MAX_BYTES = MODEL_BYTES + 100
    with model_store.model_files(old):
        pass
    # A process killed while it held a pin leaves the file, unlocked.
    context = multiprocessing.get_context("fork")
    process = context.Process(
        target=lambda: model_store._Pin(Path(settings.MODEL_STORE), str(old.uuid))
    )
    process.start()
    process.join(BOUND_SECONDS)
    pins = Path(settings.MODEL_STORE) / model_store.PINS
    assert [pin.name.split(".")[0] for pin in pins.iterdir()] == [str(old.uuid)]
    with model_store.model_files(new):
        pass
    assert not (Path(settings.MODEL_STORE) / str(old.uuid)).exists()
    assert list(pins.iterdir()) == []
