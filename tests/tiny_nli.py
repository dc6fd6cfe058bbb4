"""A tiny, randomly initialised NLI model on disk: tests the loading and batching code path
(and times its overhead), not quality. Needs the nli extra (transformers and torch)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import torch
import transformers

NLI_LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_model(
    folder: Path, id2label: dict[int, str], words: Iterable[str], seed: int = 0
) -> Path:
    """A 1-layer BERT (hidden size 32, random weights) and a WordPiece tokenizer over ``words``
    (lower-cased words and punctuation), saved with save_pretrained like a real model folder."""
    folder.mkdir(parents=True, exist_ok=True)
    vocabulary = sorted({w for text in words for w in re.findall(r"\w+|[^\w\s]", text.lower())})
    vocab = folder / "source-vocab.txt"
    vocab.write_text("\n".join([*_SPECIAL, *vocabulary]) + "\n")
    tokenizer = transformers.BertTokenizer(vocab_file=str(vocab), do_lower_case=True)
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        id2label=id2label,
        label2id={label: i for i, label in id2label.items()},
    )
    torch.manual_seed(seed)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
