"""The frame head (shared_core.detectors.frames): loading, thresholds, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shared_core.detectors.frames import (
    FRAMES_CARD,
    FRAMES_WEIGHTS,
    Frame,
    FrameHead,
    _Weights,
)
from shared_core.errors import DetectorError, InvalidInputError, ModelNotFoundError

LABELS = ["home_city", "employer", "other"]


def write_head(folder: Path, *, threshold: float = 0.8, labels: list[str] | None = None) -> Path:
    labels = LABELS if labels is None else labels
    folder.mkdir(parents=True, exist_ok=True)
    weights = np.zeros((len(labels), 3), dtype=np.float32)
    for row in range(min(len(labels), 3)):
        weights[row, row] = 10.0  # axis i -> label i
    np.savez(folder / FRAMES_WEIGHTS, weights=weights, bias=np.zeros(len(labels), np.float32))
    card = {
        "name": "frames-test",
        "labels": labels,
        "threshold": threshold,
        "embedder": "test-embedder",
        "dimension": 3,
    }
    (folder / FRAMES_CARD).write_text(json.dumps(card))
    return folder


def edit_card(folder: Path, **fields: Any) -> None:
    """Set ``fields`` in the head's card."""
    card = json.loads((folder / FRAMES_CARD).read_text())
    card.update(fields)
    (folder / FRAMES_CARD).write_text(json.dumps(card))


def test_a_confident_attribute_is_a_frame_and_other_or_unsure_is_none(tmp_path: Path) -> None:
    head = FrameHead(folder=write_head(tmp_path / "head"))
    found = head.frames([[1, 0, 0], [0, 2, 0], [0, 0, 1], [1, 1, 0]])
    assert [f.attribute if f else None for f in found] == ["home_city", "employer", None, None]
    assert isinstance(found[0], Frame)
    assert found[0].probability > 0.99
    assert head.embedder == "test-embedder"
    assert head.frames([]) == []


def test_vectors_of_another_dimension_are_refused(tmp_path: Path) -> None:
    head = FrameHead(folder=write_head(tmp_path / "head"))
    with pytest.raises(InvalidInputError, match=r"vectors.*3-dimensional vectors of test-embedder"):
        head.frames([[1.0, 0.0]])


def test_a_missing_or_broken_head_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="train-frames"):
        FrameHead(folder=tmp_path / "nothing")
    write_head(tmp_path / "no-other", labels=["home_city", "employer"])
    with pytest.raises(DetectorError, match="include 'other'"):
        FrameHead(folder=tmp_path / "no-other")
    folder = write_head(tmp_path / "short")
    np.savez(folder / FRAMES_WEIGHTS, weights=np.zeros((2, 3)), bias=np.zeros(2))
    with pytest.raises(DetectorError, match="do not match"):
        FrameHead(folder=folder).frames([[1, 0, 0]])


def test_the_shipped_head_reads_minilm_vectors() -> None:
    head = FrameHead()
    assert head.embedder == "sentence-transformers/all-MiniLM-L6-v2"
    assert head.card.dimension == 384
    assert head.card.labels[-1] == "other"
    assert 0.5 <= head.card.threshold < 1.0


def test_profiles_read_state_attribute_and_agreement(tmp_path: Path) -> None:
    head = FrameHead(folder=write_head(tmp_path / "head"))
    city, job, other = head.profiles([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    assert city.state > 0.99
    assert other.state < 0.01
    assert city.frame == head.frames([[1, 0, 0]])[0]
    assert other.frame is None
    assert city.agreement(city) == pytest.approx(1.0)
    assert city.agreement(job) < 0.05  # two attributes: never judged against each other
    assert city.agreement(job) == pytest.approx(job.agreement(city))


def test_profiles_of_two_heads_are_not_compared(tmp_path: Path) -> None:
    one = FrameHead(folder=write_head(tmp_path / "one")).profiles([[1, 0, 0]])[0]
    two = FrameHead(
        folder=write_head(tmp_path / "two", labels=["home_city", "employer", "diet", "other"])
    ).profiles([[1, 0, 0]])[0]
    with pytest.raises(InvalidInputError, match="another frame head"):
        one.agreement(two)


def test_a_card_carries_the_claim_judges_thresholds(tmp_path: Path) -> None:
    folder = write_head(tmp_path / "head")
    edit_card(folder, state_threshold=0.6, agreement_threshold=0.75)
    head = FrameHead(folder=folder)
    assert (head.card.state_threshold, head.card.agreement_threshold) == (0.6, 0.75)
    assert head.card.to_dict()["agreement_threshold"] == 0.75


def test_a_profile_names_the_likeliest_attribute_and_whether_it_never_changes(
    tmp_path: Path,
) -> None:
    folder = write_head(tmp_path / "head")
    edit_card(folder, static_labels=["employer"])
    head = FrameHead(folder=folder)
    unsure_city, employer, other = head.profiles([[1, 0.9, 0], [0, 2, 0], [0, 0, 1]])
    assert unsure_city.frame is None  # below the threshold, yet the likeliest attribute
    assert (unsure_city.likeliest, unsure_city.unchanging) == ("home_city", False)
    assert (employer.likeliest, employer.unchanging) == ("employer", True)
    assert other.likeliest in ("home_city", "employer")  # a state or not, some attribute
    assert head.card.to_dict()["static_labels"] == ["employer"]
    assert "static_labels" not in FrameHead(folder=write_head(tmp_path / "b")).card.to_dict()


@pytest.mark.parametrize("static", [["hometown"], ["other"]], ids=["unknown", "other"])
def test_static_labels_that_are_not_attributes_of_the_head_are_refused(
    tmp_path: Path, static: list[str]
) -> None:
    folder = write_head(tmp_path / "head")
    edit_card(folder, static_labels=static)
    with pytest.raises(DetectorError, match=r"static_labels \[.*\] are not attribute labels"):
        FrameHead(folder=folder)


def test_the_shipped_card_lists_the_training_families_that_never_change() -> None:
    assert FrameHead().card.static_labels == ("hometown", "native_language")


def write_hidden_head(folder: Path) -> Path:
    """A head with a hidden layer: the identity under a softmax layer whose ``employer`` row
    reads the first unit negatively, so only a ReLU between them keeps [-1, 0, x] off it."""
    write_head(folder)
    np.savez(
        folder / FRAMES_WEIGHTS,
        hidden_weights=np.eye(3, dtype=np.float32),
        hidden_bias=np.zeros(3, np.float32),
        weights=np.array([[10, 0, 0], [-10, 0, 0], [0, 0, 10]], np.float32),
        bias=np.zeros(3, np.float32),
    )
    return folder


def test_a_head_with_a_hidden_layer_reads_through_its_relu(tmp_path: Path) -> None:
    head = FrameHead(folder=write_hidden_head(tmp_path / "head"))
    city, negative = head.profiles([[1, 0, 0], [-1, 0, 0.2]])
    assert city.frame is not None
    assert city.frame.attribute == "home_city"
    assert city.frame.probability > 0.99
    # without the ReLU the first unit (-0.98) would make this an employer at 0.9997
    assert negative.frame is None
    assert negative.state < 0.3


@pytest.mark.parametrize(
    ("hidden_shape", "output_shape", "match"),
    [
        ((4, 2), (3, 4), r"hidden weights \(4, 2\) .* do not match the card's dimension 3"),
        ((4, 3), (3, 3), r"weights \(3, 3\) .* the card's \(3, 4\)"),
    ],
)
def test_a_hidden_layer_of_another_dimension_is_refused(
    tmp_path: Path, hidden_shape: tuple[int, int], output_shape: tuple[int, int], match: str
) -> None:
    folder = write_hidden_head(tmp_path / "head")
    np.savez(
        folder / FRAMES_WEIGHTS,
        hidden_weights=np.zeros(hidden_shape),
        hidden_bias=np.zeros(hidden_shape[0]),
        weights=np.zeros(output_shape),
        bias=np.zeros(output_shape[0]),
    )
    with pytest.raises(DetectorError, match=match):
        FrameHead(folder=folder).frames([[1, 0, 0]])


class _NoBlas(np.ndarray):
    """An array that refuses matrix products: BLAS's would start its thread pool."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is np.matmul:
            raise AssertionError("the frame head multiplied through BLAS")
        plain = [i.view(np.ndarray) if isinstance(i, _NoBlas) else i for i in inputs]
        return getattr(ufunc, method)(*plain, **kwargs)


def test_the_frame_head_keeps_off_blas_whose_threads_slowed_kappa(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenBLAS's threads kept spinning after the hidden layer's product and slowed the
    embedder and kappa that ran next (chat writes took 1.7x as long on two cores)."""
    head = FrameHead(folder=write_hidden_head(tmp_path / "head"))
    expected = head.profiles([[1, 0, 0], [-1, 0, 0.2]])
    loaded = head._loaded()
    assert loaded.hidden is not None
    hidden_weights, hidden_bias = loaded.hidden
    guarded = _Weights(
        weights=loaded.weights.view(_NoBlas),
        bias=loaded.bias,
        hidden=(hidden_weights.view(_NoBlas), hidden_bias),
    )
    monkeypatch.setattr(head, "_loaded", lambda: guarded)
    assert head.profiles([[1, 0, 0], [-1, 0, 0.2]]) == expected
