"""Train the frame head (``make train-kappa``): which single-valued attribute a statement states.

Generates labelled statements (:func:`temporal_rag_training.frames.generate_statements`),
embeds them with the offline all-MiniLM-L6-v2 (the memory's default embedder, whose vectors the
head reads at write time), fits a softmax layer on 85% of them and picks the threshold on the
other 15%: the lowest (on a 0.05 grid) at which at most :data:`FALSE_FRAMES` of the held-out
``other`` statements (events, feelings, plans, multi-valued values) get an attribute. Writes
``frames.npz`` and ``frames.json`` into ``--out``. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from shared_core.detectors.frames import FRAMES_CARD, FRAMES_WEIGHTS, OTHER, FrameCard
from shared_core.embedders.minilm import MiniLMEmbedder
from temporal_rag_training.frames import generate_statements

NAME = "frames-minilm-v1"
FALSE_FRAMES = 0.001
HELD_OUT = 0.15
EMBED_BATCH = 256


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--count", type=int, default=24_000, help="statements to generate")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True, help="folder for the head")
    return parser.parse_args(argv)


def fit(
    vectors: Any, targets: Any, *, classes: int, steps: int, lr: float, seed: int
) -> tuple[Any, Any]:
    """Softmax regression on unit vectors: (weights [classes x dim], bias [classes])."""
    torch.manual_seed(seed)
    x = torch.tensor(vectors, dtype=torch.float32)
    y = torch.tensor(targets)
    weights = torch.zeros(classes, x.shape[1], requires_grad=True)
    bias = torch.zeros(classes, requires_grad=True)
    optimiser = torch.optim.Adam([weights, bias], lr=lr)
    for _ in range(steps):
        optimiser.zero_grad()
        loss = torch.nn.functional.cross_entropy(x @ weights.T + bias, y)
        (loss + 1e-6 * (weights**2).sum()).backward()  # type: ignore[no-untyped-call]
        optimiser.step()
    return weights.detach().numpy(), bias.detach().numpy()


def probabilities(vectors: Any, weights: Any, bias: Any) -> Any:
    logits = vectors @ weights.T + bias
    logits -= logits.max(axis=1, keepdims=True)
    exp = np.exp(logits)
    return exp / exp.sum(axis=1, keepdims=True)


def choose_threshold(probs: Any, targets: Any, other: int) -> tuple[float, dict[str, float]]:
    """The lowest threshold keeping held-out ``other`` statements framed at most
    :data:`FALSE_FRAMES`, with the held-out precision and recall of the frames at it."""
    best, chosen = probs.argmax(axis=1), probs.max(axis=1)
    is_other = targets == other
    for step in range(10, 20):
        threshold = step / 20
        framed = (best != other) & (chosen >= threshold)
        if (framed & is_other).sum() <= FALSE_FRAMES * is_other.sum():
            right = framed & (best == targets)
            return threshold, {
                "heldout_precision": round(float(right.sum() / max(framed.sum(), 1)), 4),
                "heldout_recall": round(float(right.sum() / max((~is_other).sum(), 1)), 4),
                "heldout_other_framed": round(float((framed & is_other).mean()), 5),
            }
    return 0.99, {}


def main(argv: Sequence[str] | None = None) -> int:
    args = options(argv)
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    statements = generate_statements(seed=args.seed, count=args.count)
    labels = (*sorted({s.label for s in statements} - {OTHER}), OTHER)
    embedder = MiniLMEmbedder()
    texts = [s.text for s in statements]
    rows = [
        v
        for i in range(0, len(texts), EMBED_BATCH)
        for v in embedder.embed_documents(texts[i : i + EMBED_BATCH])
    ]
    vectors = np.asarray(rows, dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    targets = np.asarray([labels.index(s.label) for s in statements])
    order = np.random.RandomState(args.seed).permutation(len(statements))
    cut = int((1 - HELD_OUT) * len(order))
    train, held = order[:cut], order[cut:]
    weights, bias = fit(
        vectors[train],
        targets[train],
        classes=len(labels),
        steps=args.steps,
        lr=args.lr,
        seed=args.seed,
    )
    threshold, quality = choose_threshold(
        probabilities(vectors[held], weights, bias), targets[held], labels.index(OTHER)
    )
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez(
        args.out / FRAMES_WEIGHTS, weights=weights.astype(np.float32), bias=bias.astype(np.float32)
    )
    card = FrameCard(
        name=NAME,
        labels=labels,
        threshold=threshold,
        embedder=embedder.name,
        dimension=int(vectors.shape[1]),
        facts={
            "seed": args.seed,
            "statements": len(statements),
            "steps": args.steps,
            "lr": args.lr,
            "seconds": round(time.perf_counter() - started, 1),
            **quality,
        },
    )
    (args.out / FRAMES_CARD).write_text(json.dumps(card.to_dict(), indent=2) + "\n")
    print(json.dumps(card.to_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
