"""``temporal-rag kappa-eval``: registered with the core's command line through the
``temporal_rag.cli`` entry point group (see ``training/pyproject.toml``)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared_core.cli.options import EXIT_OK, Commands

if TYPE_CHECKING:
    from rich.console import Console

    from shared_core.detectors.kappa import KappaScorer


def register(commands: Commands) -> None:
    """Add ``kappa-eval`` to the ``temporal-rag`` subcommands."""
    kappa = commands.add_parser(
        "kappa-eval",
        help="score the prose conflict detector on the hand-written pair sets",
        description="Precision, recall and F1 per pair kind of kappa-minilm (at the threshold "
        "its card holds, chosen on the dev set) and of the cosine baseline (threshold chosen on "
        "dev), on the dev and test pair sets, with the cost per pair and per 10-pair set; then "
        "the claim judge end to end (each pair written into a fresh memory).",
    )
    kappa.add_argument("--folder", metavar="DIR", help="a kappa model folder (default: shipped)")
    kappa.add_argument("--no-baseline", action="store_true", help="skip the cosine baseline")
    kappa.add_argument(
        "--no-claims",
        action="store_true",
        help="skip the claim judge end to end (the judge prose_judge='kappa' uses)",
    )
    kappa.add_argument(
        "--data-dir",
        metavar="DIR",
        help="the shared data folder: also score VitaminC's held-out (test) pages, split with "
        "the card's seed (default: $TEMPORAL_RAG_DATA; skipped when neither is set)",
    )
    kappa.add_argument("--out", metavar="FILE", help="also write the report (markdown) here")
    kappa.add_argument("--json", metavar="FILE", help="also write the figures (JSON) here")
    kappa.set_defaults(handler=run)


def _restates(scorer: KappaScorer, threshold: float, record: dict[str, Any]) -> str:
    """The restates verdict on the dev and test sets (markdown lines; figures into record)."""
    from temporal_rag_training.kappa_eval import SPLITS, load_pairset, restates_report

    lines = []
    for split in SPLITS:
        pairs = load_pairset(split)
        verdicts = scorer.verdict_scores([(p.older, p.newer) for p in pairs])
        found = restates_report(pairs, [v.restates for v in verdicts], threshold)
        record[scorer.name][split]["restates"] = found
        lines.append(
            f"{scorer.name} on {split}: restates recognised {found['recognised']}/"
            f"{found['restating_pairs']} ({found['recognised_share']:.1%}) at P >= {threshold}; "
            f"false restates {found['false_restates']}/{found['other_pairs']}."
        )
    return "\n" + "\n".join(lines) + "\n"


def _vitaminc(scorer: KappaScorer, data_dir: str, record: dict[str, Any]) -> str:
    """kappa on VitaminC's test pages at the card's thresholds (markdown; figures into record):
    F1 of "ends" (revision_change against every other pair of those pages) and restates."""
    from temporal_rag_training.kappa_eval import evaluate, markdown, restates_report
    from temporal_rag_training.vitaminc import read_rows, split_pairs

    seed = int(scorer.card.facts.get("seed", 13))
    pairs = split_pairs(read_rows(data_dir), seed=seed)["test"]
    verdicts = scorer.verdict_scores([(p.older, p.newer) for p in pairs])
    report = evaluate(pairs, [v.ends for v in verdicts], scorer.card.threshold)
    entry: dict[str, Any] = {"seed": seed, **report.to_dict()}
    text = "\n" + markdown(f"{scorer.name} on VitaminC test pages (seed {seed})", report) + "\n"
    if scorer.card.restates_threshold is not None:
        found = restates_report(
            pairs, [v.restates for v in verdicts], scorer.card.restates_threshold
        )
        entry["restates"] = found
        text += (
            f"\nrestates (supported claims) recognised {found['recognised']}/"
            f"{found['restating_pairs']} ({found['recognised_share']:.1%}); "
            f"false restates {found['false_restates']}/{found['other_pairs']}.\n"
        )
    record["vitaminc_test"] = entry
    return text


def _claims(scorer: KappaScorer, record: dict[str, Any]) -> str:
    """The claim judge (this kappa with the shipped frame head) end to end on both splits."""
    from shared_core.embedders.minilm import MiniLMEmbedder
    from shared_core.judging.claims import claim_judge
    from temporal_rag_training.claims_eval import claims_markdown, claims_report
    from temporal_rag_training.kappa_eval import SPLITS, load_pairset

    judge = claim_judge(scorer=scorer)
    embedder = MiniLMEmbedder()
    sections = []
    for split in SPLITS:
        report = claims_report(load_pairset(split), judge, embedder)
        record.setdefault("claims", {})[split] = report.to_dict()
        sections.append(claims_markdown(f"claims ({judge.name}) on {split}", report))
    return "\n" + "\n".join(sections)


def run(args: argparse.Namespace, console: Console) -> int:
    """The ``kappa-eval`` command."""
    from shared_core.detectors.kappa import KappaScorer
    from shared_core.embedders.minilm import MiniLMEmbedder
    from temporal_rag_training.kappa_eval import Scorer, cosine_scorer
    from temporal_rag_training.kappa_eval import run as evaluate

    scorer = KappaScorer(folder=args.folder)
    scorers: list[tuple[str, Scorer, float | None]] = [
        (scorer.name, scorer.contradiction_scores, scorer.card.threshold)
    ]
    if not args.no_baseline:
        embedder = MiniLMEmbedder()
        scorers.append(("cosine (MiniLM)", cosine_scorer(embedder.embed_documents), None))
    text, record = evaluate(scorers)
    if scorer.card.restates_threshold is not None:
        text += _restates(scorer, scorer.card.restates_threshold, record)
    data_dir = args.data_dir or os.environ.get("TEMPORAL_RAG_DATA")
    if data_dir:
        text += _vitaminc(scorer, data_dir, record)
    if not args.no_claims:
        text += _claims(scorer, record)
    console.print(text, markup=False)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return EXIT_OK
