"""The generator's data files: shipped in the package, read lazily, and bad ones named."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from temporal_rag_training import datafiles, families, noise, phrasings, subjects, tables
from temporal_rag_training.datafiles import DataFileError
from temporal_rag_training.pairs import family_names

# The uncached loaders: read the files again on each call (the cached ones keep the shipped data).
LOADERS: dict[str, Callable[[], object]] = {
    "families": families.families.__wrapped__,
    "pools": families.value_pools.__wrapped__,
    "subjects": subjects._subjects.__wrapped__,
    "logs": tables.log_tables.__wrapped__,
    "instances": tables.instances.__wrapped__,
    "implied": tables.implied_states.__wrapped__,
    "noise": noise.noise.__wrapped__,
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the data files that the loaders read instead of the shipped ones."""
    copy = tmp_path / "families"
    shutil.copytree(Path(str(datafiles.data_folder())), copy)
    monkeypatch.setattr(datafiles, "data_folder", lambda: copy)
    return copy


def edit(folder: Path, file: str, change: Callable[[Any], None]) -> None:
    path = folder / file
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def failure(loader: str) -> DataFileError:
    with pytest.raises(DataFileError) as caught:
        LOADERS[loader]()
    return caught.value


def test_every_data_file_is_read_and_the_copy_loads_the_same(folder: Path) -> None:
    assert {path.name for path in folder.iterdir()} == {
        *families.FAMILY_FILES,
        families.POOLS_FILE,
        subjects.SUBJECTS_FILE,
        tables.LOGS_FILE,
        tables.INSTANCES_FILE,
        tables.IMPLIED_FILE,
        noise.NOISE_FILE,
        phrasings.PHRASINGS_FILE,
    }
    assert LOADERS["families"]() == families.families()
    assert LOADERS["implied"]() == tables.implied_states()


def test_importing_the_generator_reads_no_data_file() -> None:
    code = (
        "import temporal_rag_training.pairs, temporal_rag_training.kappa_eval\n"
        "from temporal_rag_training import families, tables\n"
        "assert families.families.cache_info().currsize == 0\n"
        "assert tables.implied_states.cache_info().currsize == 0\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_missing_file_is_named(folder: Path) -> None:
    (folder / "people.json").unlink()
    error = failure("families")
    assert error.file == "people.json"
    assert "families/people.json" in str(error)
    assert "missing" in str(error)


def test_a_file_that_is_not_json_is_named(folder: Path) -> None:
    (folder / "logs.json").write_text('{"logs": [', encoding="utf-8")
    error = failure("logs")
    assert error.file == "logs.json"
    assert "not valid JSON" in error.problem


def test_a_duplicate_key_is_refused(folder: Path) -> None:
    (folder / "noise.json").write_text('{"asides": [], "asides": []}', encoding="utf-8")
    assert "appears twice" in failure("noise").problem


def test_a_field_of_the_wrong_type_is_named(folder: Path) -> None:
    edit(folder, "people.json", lambda data: data["families"][0].update(state="{S} lives in {v}"))
    error = failure("families")
    assert (error.file, error.field) == ("people.json", 'families[0] "home_city".state')
    assert "should be a list of strings" in error.problem


def test_an_unknown_key_is_named(folder: Path) -> None:
    edit(folder, "events.json", lambda data: data["families"][1].update(chnage=["x"]))
    error = failure("families")
    assert error.field == 'families[1] "workouts"'
    assert "'chnage'" in error.problem


def test_a_value_of_the_wrong_type_is_named(folder: Path) -> None:
    edit(folder, "life.json", lambda data: data["families"][0]["values"][1].update(forms="x"))
    error = failure("families")
    assert error.field.endswith(".values[1].forms")


def test_an_unknown_pool_or_shape_or_subject_is_named(folder: Path) -> None:
    edit(folder, "people.json", lambda data: data["families"][0].update(values="towns"))
    assert failure("families").field == 'families[0] "home_city".values'
    edit(folder, "people.json", lambda data: data["families"][0].update(values="cities"))
    edit(folder, "code.json", lambda data: data["families"][0].update(shape="several"))
    assert failure("families").field.endswith(".shape")
    edit(folder, "code.json", lambda data: data["families"][0].update(shape="single"))
    edit(folder, "code.json", lambda data: data["families"][0].update(subject="robot"))
    assert failure("families").field.endswith(".subject")


def test_a_missing_field_is_named(folder: Path) -> None:
    edit(folder, "instances.json", lambda data: data["instances"][2].pop("change"))
    error = failure("instances")
    assert error.field == 'instances[2] "inst_store_manager"'
    assert "'change'" in error.problem


def test_bad_subjects_and_logs_are_named(folder: Path) -> None:
    edit(folder, "subjects.json", lambda data: data["relations"][0].update(pronoun="xe"))
    assert failure("subjects").field == "relations[0].pronoun"
    edit(folder, "logs.json", lambda data: data["logs"][0].update(period="fortnight"))
    assert failure("logs").field == 'logs[0] "log_bill".period'
    edit(folder, "implied.json", lambda data: data["implied"][0].update(subjects=["person", "x"]))
    assert failure("implied").field == 'implied[0] "implied_unemployed".subjects'


def test_family_names_are_unique_and_conflicts_name_families(folder: Path) -> None:
    def rename(data: Any) -> None:
        data["families"][1]["name"] = data["families"][0]["name"]

    original = json.loads((folder / "life.json").read_text(encoding="utf-8"))
    edit(folder, "life.json", rename)
    assert "earlier family" in failure("families").problem
    (folder / "life.json").write_text(json.dumps(original), encoding="utf-8")
    edit(folder, "life.json", lambda data: data["families"][1].update(conflicts=["nope"]))
    assert failure("families").field.endswith(".conflicts")


def test_the_table_names_are_family_names() -> None:
    assert set(tables.table_names()) <= set(family_names())
