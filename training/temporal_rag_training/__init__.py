"""The training pipeline of kappa-minilm, temporal-rag's prose conflict detector (the
``temporal-rag-training`` distribution of this repository, not part of ``pip install
temporal-rag``): the labelled-pair generator (:mod:`~temporal_rag_training.pairs`, reading the
data files of ``families/``), the trainer (``python -m temporal_rag_training.train``, ``make
train-kappa``) and the evaluation on the hand-written pair sets (``temporal-rag kappa-eval``).
See docs/detectors.md.
"""
