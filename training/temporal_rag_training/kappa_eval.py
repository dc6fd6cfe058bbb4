"""How well a prose conflict scorer separates supersessions from compatible statements.

Scores labelled (older, newer) pairs (the hand-written ``pairsets/dev.jsonl`` and
``pairsets/test.jsonl``, or generated ones) and reports precision, recall and F1 overall and per
pair kind, false alarms on unrelated pairs, and the cost per pair and per 10-candidate set.

Per kind: a positive kind (explicit or implied change, retraction) is scored against all the
negatives, so its precision counts the false alarms it competes with; a negative kind
(paraphrase, compatible, multi-valued, ...) is scored with all the positives, so its F1 drops
with its own false alarms. Thresholds are chosen on the dev set (:func:`best_threshold`) and
only applied to the test set.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared_core.errors import InvalidInputError
from temporal_rag_training.labelled import ALL_KINDS, RESTATING_KINDS
from temporal_rag_training.pairs import LabelledPair

PAIRSETS = Path(__file__).parent / "pairsets"
SPLITS = ("dev", "test")
POSITIVE_KINDS = ("explicit_change", "implied_change", "retraction")
Scorer = Callable[[Sequence[tuple[str, str]]], list[float]]


def load_pairset(split_or_path: str | Path) -> list[LabelledPair]:
    """The labelled pairs of a split (``"dev"``, ``"test"``) or of a JSONL file."""
    if isinstance(split_or_path, str) and split_or_path in SPLITS:
        path = PAIRSETS / f"{split_or_path}.jsonl"
    else:
        path = Path(split_or_path)
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("kind") not in ALL_KINDS or row.get("label") not in (0, 1):
            raise InvalidInputError(
                f"{path.name}:{number}",
                f"has kind {row.get('kind')!r} and label {row.get('label')!r}",
                f"use a kind of {list(ALL_KINDS)} and a label 0 or 1",
            )
        pairs.append(
            LabelledPair(
                older=str(row["older"]),
                newer=str(row["newer"]),
                label=int(row["label"]),
                kind=str(row["kind"]),
                family=str(row.get("family", "hand-written")),
            )
        )
    return pairs


@dataclass(frozen=True, slots=True)
class Scores:
    """Precision, recall and F1 of flagging, with the counts behind them."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        flagged = self.true_positives + self.false_positives
        return self.true_positives / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positives + self.false_negatives
        return self.true_positives / wanted if wanted else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def scores_of(labels: Iterable[int], flags: Iterable[bool]) -> Scores:
    tp = fp = fn = 0
    for label, flag in zip(labels, flags, strict=True):
        tp += int(flag and label == 1)
        fp += int(flag and label == 0)
        fn += int(not flag and label == 1)
    return Scores(tp, fp, fn)


@dataclass(frozen=True, slots=True)
class KindReport:
    kind: str
    label: int
    count: int
    flagged: int  # how many of this kind the scorer flagged
    scores: Scores  # see the module doc for how a kind is scored


@dataclass(frozen=True, slots=True)
class PairReport:
    threshold: float
    overall: Scores
    kinds: tuple[KindReport, ...]
    count: int

    @property
    def unrelated_false_alarms(self) -> tuple[int, int]:
        """(flagged, total) over the unrelated pairs."""
        for kind in self.kinds:
            if kind.kind == "unrelated":
                return kind.flagged, kind.count
        return 0, 0

    def to_dict(self) -> dict[str, Any]:
        def scored(s: Scores) -> dict[str, float]:
            return {"precision": s.precision, "recall": s.recall, "f1": s.f1}

        return {
            "threshold": self.threshold,
            "count": self.count,
            "overall": scored(self.overall),
            "kinds": {
                k.kind: {
                    "label": k.label,
                    "count": k.count,
                    "flagged": k.flagged,
                    **scored(k.scores),
                }
                for k in self.kinds
            },
        }


def evaluate(
    pairs: Sequence[LabelledPair], scores: Sequence[float], threshold: float
) -> PairReport:
    """The report of flagging every pair whose score is at least ``threshold``."""
    if len(pairs) != len(scores):
        raise InvalidInputError("scores", f"has {len(scores)} for {len(pairs)} pairs", "one each")
    flags = [score >= threshold for score in scores]
    labels = [pair.label for pair in pairs]
    overall = scores_of(labels, flags)
    kinds = []
    for kind in ALL_KINDS:
        members = [i for i, pair in enumerate(pairs) if pair.kind == kind]
        if not members:
            continue
        label = pairs[members[0]].label
        others = [i for i, pair in enumerate(pairs) if pair.label != label]
        chosen = members + others
        kinds.append(
            KindReport(
                kind=kind,
                label=label,
                count=len(members),
                flagged=sum(flags[i] for i in members),
                scores=scores_of([labels[i] for i in chosen], [flags[i] for i in chosen]),
            )
        )
    return PairReport(threshold, overall, tuple(kinds), len(pairs))


def best_threshold(pairs: Sequence[LabelledPair], scores: Sequence[float]) -> float:
    """The threshold (a multiple of 0.01 in [0.05, 0.95]) with the best overall F1; ties go to
    the threshold closest to 0.5."""
    grid = [round(0.05 + 0.01 * step, 2) for step in range(91)]
    return max(grid, key=lambda t: (evaluate(pairs, scores, t).overall.f1, -abs(t - 0.5)))


def best_prefilter(
    pairs: Sequence[LabelledPair],
    scores: Sequence[float],
    cosines: Sequence[float],
    threshold: float,
) -> float:
    """The cosine pre-filter (a multiple of 0.05 in [0, 0.6]) with the best F1 of flagging
    ``score >= threshold and cosine >= min_cosine``; ties go to the higher (cheaper) one."""
    grid = [round(0.05 * step, 2) for step in range(13)]

    def f1(minimum: float) -> float:
        kept = [s if c >= minimum else 0.0 for s, c in zip(scores, cosines, strict=True)]
        return evaluate(pairs, kept, threshold).overall.f1

    return max(grid, key=lambda minimum: (round(f1(minimum), 6), minimum))


@dataclass(frozen=True, slots=True)
class Timing:
    ms_per_pair: float  # all pairs of the set in one call, divided by their number
    ms_per_set_median: float  # one call for a set of ``set_size`` pairs
    ms_per_set_p90: float
    set_size: int
    sets: int


def measure(scorer: Scorer, pairs: Sequence[LabelledPair], *, set_size: int = 10) -> Timing:
    """The cost of scoring: every pair in one call, then consecutive sets of ``set_size``
    pairs (a new statement judged against its ``set_size`` nearest neighbours) one call each.
    The model is warmed up first."""
    texts = [(pair.older, pair.newer) for pair in pairs]
    scorer(texts[:set_size])
    started = time.perf_counter()
    scorer(texts)
    per_pair = (time.perf_counter() - started) * 1000 / max(len(texts), 1)
    durations = []
    for start in range(0, len(texts) - set_size + 1, set_size):
        began = time.perf_counter()
        scorer(texts[start : start + set_size])
        durations.append((time.perf_counter() - began) * 1000)
    durations.sort()
    p90 = durations[min(len(durations) - 1, int(0.9 * len(durations)))] if durations else 0.0
    median = statistics.median(durations) if durations else 0.0
    return Timing(per_pair, median, p90, set_size, len(durations))


def markdown(title: str, report: PairReport) -> str:
    """A table of one report."""
    o = report.overall
    lines = [
        f"### {title}: threshold {report.threshold:.2f}, {report.count} pairs",
        "",
        f"Overall: precision {o.precision:.3f}, recall {o.recall:.3f}, **F1 {o.f1:.3f}**. "
        f"False alarms on unrelated pairs: {report.unrelated_false_alarms[0]} of "
        f"{report.unrelated_false_alarms[1]}.",
        "",
        "| kind | label | pairs | flagged | precision | recall | F1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for k in report.kinds:
        s = k.scores
        lines.append(
            f"| {k.kind} | {k.label} | {k.count} | {k.flagged} | {s.precision:.3f} | "
            f"{s.recall:.3f} | {s.f1:.3f} |"
        )
    return "\n".join(lines)


def cosine_scorer(embed: Callable[[list[str]], list[list[float]]]) -> Scorer:
    """A baseline scorer: the cosine of the two texts' embeddings (clipped to [0, 1])."""

    def score(pairs: Sequence[tuple[str, str]]) -> list[float]:
        vectors = embed([text for pair in pairs for text in pair])
        out = []
        for index in range(len(pairs)):
            a, b = vectors[2 * index], vectors[2 * index + 1]
            dot = sum(x * y for x, y in zip(a, b, strict=True))
            norm = (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5 or 1.0
            out.append(min(1.0, max(0.0, dot / norm)))
        return out

    return score


def run(
    scorers: Sequence[tuple[str, Scorer, float | None]],
    *,
    splits: Sequence[str] = SPLITS,
    timed: bool = True,
) -> tuple[str, dict[str, Any]]:
    """Evaluate each (name, scorer, threshold) on the splits. A None threshold is chosen on
    the dev split (which must then be among ``splits``). Returns markdown and a dict."""
    sections, record = [], {}
    data = {split: load_pairset(split) for split in splits}
    for name, scorer, threshold in scorers:
        scored = {
            split: scorer([(p.older, p.newer) for p in pairs]) for split, pairs in data.items()
        }
        if threshold is None:
            if "dev" not in scored:
                raise InvalidInputError(
                    "splits", "has no dev split", "add dev to choose a threshold"
                )
            threshold = best_threshold(data["dev"], scored["dev"])
        entry: dict[str, Any] = {}
        for split, pairs in data.items():
            report = evaluate(pairs, scored[split], threshold)
            sections.append(markdown(f"{name} on {split}", report))
            entry[split] = report.to_dict()
        if timed:
            timing = measure(scorer, data[splits[-1]])
            entry["timing"] = _timing(timing)
            sections.append(
                f"{name}: {timing.ms_per_pair:.2f} ms per pair (one call for the whole split); "
                f"{timing.ms_per_set_median:.1f} ms median (p90 {timing.ms_per_set_p90:.1f} ms) "
                f"per set of {timing.set_size} pairs over {timing.sets} sets."
            )
        record[name] = entry
    return "\n\n".join(sections) + "\n", record


def restates_report(
    pairs: Sequence[LabelledPair], restates: Sequence[float], threshold: float
) -> dict[str, Any]:
    """How many paraphrase pairs reach the restates threshold (recognised) and how many other
    pairs do (false restates: two statements that would wrongly become one claim)."""
    hits = [
        (pair.kind in RESTATING_KINDS, score >= threshold)
        for pair, score in zip(pairs, restates, strict=True)
    ]
    same = sum(1 for restating, _ in hits if restating)
    recognised = sum(1 for restating, flagged in hits if restating and flagged)
    false = sum(1 for restating, flagged in hits if flagged and not restating)
    return {
        "threshold": threshold,
        "restating_pairs": same,
        "recognised": recognised,
        "recognised_share": recognised / same if same else 1.0,
        "false_restates": false,
        "other_pairs": len(hits) - same,
    }


def _timing(timing: Timing) -> dict[str, float]:
    return {
        "ms_per_pair": timing.ms_per_pair,
        "ms_per_set_median": timing.ms_per_set_median,
        "ms_per_set_p90": timing.ms_per_set_p90,
        "set_size": timing.set_size,
        "sets": timing.sets,
    }
