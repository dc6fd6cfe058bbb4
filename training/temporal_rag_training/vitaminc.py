"""Labelled pairs from VitaminC's real Wikipedia revisions (CC BY-SA 3.0, TalSchuster/VitaminC,
NAACL 2021), read in place from ``<data dir>/vitaminc/vitaminc_real.zip``.

The rows of one ``case_id`` share a claim (or two), and their evidence sentences are one
sentence before and after one revision (which side is older is not stated). From them:

- ``revision_change`` ("ends"): the two evidence sentences of a case where one claim is
  SUPPORTED by one sentence and REFUTED by the other, and the sentences differ in at most
  :data:`MAX_EDIT` tokens (a one-value revision); both orders, since for a single-valued
  attribute either newer one ends the older.
- ``supported_claim`` ("restates"): an evidence sentence and a claim it SUPPORTS (the claim says
  again a fact the sentence states), in one seeded order.
- ``unsupported_claim`` ("neither"): an evidence sentence and a claim about the same thing it
  gives NOT ENOUGH INFO for, in one seeded order.
- ``same_page`` ("neither"): two evidence sentences of different cases of one page that share
  few words (:data:`MAX_SAME_PAGE_OVERLAP`; a near copy may be the same sentence revised).

Left out: claims an evidence sentence REFUTES (comparatives such as "fewer than 127 critics",
not statements a memory stores) and revisions that change more than :data:`MAX_EDIT` tokens or
change a value without refuting anything (a count that grew: "more than 940 million views" ->
"more than 950 million"), whose label for a memory is unclear.

Pages are split into train/dev/test by :func:`split_pages` (seeded; no page in two splits).
"""

from __future__ import annotations

import difflib
import json
import random
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shared_core.errors import InvalidInputError
from temporal_rag_training.labelled import LabelledPair

__all__ = [
    "DATA_ENV",
    "MAX_EDIT",
    "SPLIT_NAMES",
    "VITAMINC_ZIP",
    "VitaminCRow",
    "build_pairs",
    "edit_size",
    "read_rows",
    "split_pages",
    "split_pairs",
]

DATA_ENV = "TEMPORAL_RAG_DATA"
"""The environment variable naming the shared data folder when no folder is passed."""
VITAMINC_ZIP = Path("vitaminc/vitaminc_real.zip")
MAX_EDIT = 6
"""At most this many tokens differ between the two sides of a one-value revision."""
MAX_SAME_PAGE_OVERLAP = 0.3
"""Two sentences of one page count as unrelated when their word sets' Jaccard overlap is at
most this."""
SPLIT_NAMES = ("train", "dev", "test")
LABELS = frozenset({"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"})
FAMILY = "vitaminc"


@dataclass(frozen=True, slots=True)
class VitaminCRow:
    """One claim/evidence row of VitaminC's real-revision set."""

    case_id: str
    page: str
    label: str  # SUPPORTS, REFUTES or NOT ENOUGH INFO
    claim: str
    evidence: str


def _row(record: Mapping[str, object], where: str) -> VitaminCRow:
    fields = {}
    for name in ("case_id", "page", "label", "claim", "evidence"):
        value = record.get(name)
        if not isinstance(value, str) or not value.strip():
            raise InvalidInputError(f"{where}.{name}", f"is {value!r}", "a non-empty string")
        fields[name] = " ".join(value.split())
    if fields["label"] not in LABELS:
        raise InvalidInputError(f"{where}.label", f"is {fields['label']!r}", f"one of {LABELS}")
    return VitaminCRow(**fields)


def read_rows(data_dir: Path | str) -> list[VitaminCRow]:
    """Every row of ``<data_dir>/vitaminc/vitaminc_real.zip``'s JSONL files, read in place."""
    path = Path(data_dir) / VITAMINC_ZIP
    if not path.is_file():
        raise InvalidInputError(
            "data_dir",
            f"{path} does not exist",
            f"pass the shared data folder that holds {VITAMINC_ZIP} (--data-dir)",
        )
    rows: list[VitaminCRow] = []
    try:
        with zipfile.ZipFile(path) as archive:
            for name in sorted(n for n in archive.namelist() if n.endswith(".jsonl")):
                text = archive.read(name).decode("utf-8", errors="replace")
                for number, line in enumerate(text.splitlines(), start=1):
                    if line.strip():
                        rows.append(_row(json.loads(line), f"{name}:{number}"))
    except (zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise InvalidInputError("data_dir", f"{path} cannot be read: {exc}", "restore it") from exc
    return rows


def edit_size(first: str, second: str) -> int:
    """How many tokens differ between two sentences (the longer side of each changed run)."""
    a, b = first.split(), second.split()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def _words(text: str) -> frozenset[str]:
    return frozenset(word.lower() for word in text.split() if any(c.isalnum() for c in word))


def _overlap(first: str, second: str) -> float:
    a, b = _words(first), _words(second)
    return len(a & b) / len(a | b) if a | b else 1.0


def _pair(older: str, newer: str, kind: str, label: int) -> LabelledPair:
    return LabelledPair(older=older, newer=newer, label=label, kind=kind, family=FAMILY)


def _ordered(rng: random.Random, first: str, second: str, kind: str) -> LabelledPair:
    if rng.random() < 0.5:
        first, second = second, first
    return _pair(first, second, kind, 0)


def _by_case(rows: Iterable[VitaminCRow]) -> dict[str, list[VitaminCRow]]:
    cases: dict[str, list[VitaminCRow]] = defaultdict(list)
    for row in rows:
        cases[row.case_id].append(row)
    return dict(sorted(cases.items()))


def _revision_pairs(cases: Mapping[str, Sequence[VitaminCRow]]) -> list[LabelledPair]:
    pairs = []
    for rows in cases.values():
        evidence = sorted({row.evidence for row in rows})
        if len(evidence) != 2 or edit_size(*evidence) > MAX_EDIT:
            continue
        verdicts: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            verdicts[row.claim].add(row.label)
        if any({"SUPPORTS", "REFUTES"} <= labels for labels in verdicts.values()):
            pairs.append(_pair(evidence[0], evidence[1], "revision_change", 1))
            pairs.append(_pair(evidence[1], evidence[0], "revision_change", 1))
    return pairs


def _same_page_pairs(
    cases: Mapping[str, Sequence[VitaminCRow]], rng: random.Random
) -> list[LabelledPair]:
    """Per case, at most one pair of its sentence with a sentence of another case of its page."""
    pages: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for case_id, rows in cases.items():
        pages[rows[0].page].append((case_id, sorted({row.evidence for row in rows})[0]))
    pairs = []
    for members in pages.values():
        for case_id, sentence in members:
            others = [
                s
                for c, s in members
                if c != case_id and _overlap(s, sentence) <= MAX_SAME_PAGE_OVERLAP
            ]
            if others:
                pairs.append(_ordered(rng, sentence, rng.choice(others), "same_page"))
    return pairs


def build_pairs(rows: Iterable[VitaminCRow], *, seed: int) -> list[LabelledPair]:
    """The labelled pairs of the rows (see the module doc), in a stable order; the same rows and
    ``seed`` give the same list."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError("seed", f"is {seed!r}", "pass an int")
    rng = random.Random(seed)
    cases = _by_case(rows)
    pairs = _revision_pairs(cases)
    seen: set[tuple[str, str]] = set()
    for rows_of_case in cases.values():
        for row in rows_of_case:
            if (row.evidence, row.claim) in seen or row.label == "REFUTES":
                continue
            seen.add((row.evidence, row.claim))
            kind = "supported_claim" if row.label == "SUPPORTS" else "unsupported_claim"
            pairs.append(_ordered(rng, row.evidence, row.claim, kind))
    pairs.extend(_same_page_pairs(cases, rng))
    return pairs


def split_pages(
    pages: Iterable[str], *, seed: int, dev: float = 0.1, test: float = 0.1
) -> dict[str, str]:
    """Each distinct page's split (``train``, ``dev`` or ``test``): the pages sorted, shuffled
    with ``seed``, the first ``test`` share to test and the next ``dev`` share to dev."""
    for name, share in (("dev", dev), ("test", test)):
        if not 0 <= share < 1:
            raise InvalidInputError(name, f"is {share!r}", "a share from 0 to below 1")
    if dev + test >= 1:
        raise InvalidInputError("dev", f"and test add up to {dev + test}", "leave some for train")
    order = sorted(set(pages))
    random.Random(seed).shuffle(order)
    tests, devs = round(len(order) * test), round(len(order) * dev)
    return {
        page: "test" if i < tests else "dev" if i < tests + devs else "train"
        for i, page in enumerate(order)
    }


def split_pairs(
    rows: Sequence[VitaminCRow], *, seed: int, dev: float = 0.1, test: float = 0.1
) -> dict[str, list[LabelledPair]]:
    """The pairs of each split's pages (built per split, so no pair joins two splits)."""
    splits = split_pages((row.page for row in rows), seed=seed, dev=dev, test=test)
    return {
        name: build_pairs([row for row in rows if splits[row.page] == name], seed=seed)
        for name in SPLIT_NAMES
    }


def main() -> int:
    """Print the pairs per kind and split (``python -m temporal_rag_training.vitaminc DIR``)."""
    import os
    import sys
    from collections import Counter

    folder = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(DATA_ENV)
    if not folder:
        print(f"usage: python -m temporal_rag_training.vitaminc DIR (or set ${DATA_ENV})")
        return 2
    rows = read_rows(folder)
    cases = _by_case(rows)
    print(f"{len(rows)} rows, {len(cases)} cases, {len({r.page for r in rows})} pages")
    for name, pairs in split_pairs(rows, seed=13).items():
        counts = Counter(pair.kind for pair in pairs)
        print(name, len(pairs), dict(sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
