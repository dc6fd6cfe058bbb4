"""Matrix products in numpy's own loops, never in a BLAS thread pool.

A product big enough (a few thousand stored vectors against a query, or a batch of statements
through the frame head's hidden layer) starts OpenBLAS's threads, and they keep spinning after
the product returns, taking the cores the embedder and kappa (torch) run on next. On two cores
a MiniLM query embedding took 15-19 ms right after a BLAS product over 3,000-20,000 stored
vectors, against 10.5 ms after the same product in numpy's loops, which was also faster itself
(0.3 against 1.0 ms at 3,000 rows; benchmarks/README.md). Matrix-vector products and small
matrix products cost no more this way; large square products stay in BLAS, where numpy's
loops would be far slower.
"""

from __future__ import annotations

from typing import Any


def row_dots(matrix: Any, vector: Any) -> Any:
    """``matrix @ vector``: each row's dot product with ``vector`` (a 1-d array)."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, vector, optimize=False)


def row_products(rows: Any, weights: Any) -> Any:
    """``rows @ weights.T``: each row's dot product with each row of ``weights``."""
    import numpy as np

    return np.einsum("ij,kj->ik", rows, weights, optimize=False)
