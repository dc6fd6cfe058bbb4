"""The products in numpy's own loops equal numpy's BLAS products."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from shared_core.products import row_dots, row_products

FINITE = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12), st.integers(1, 9), st.integers(1, 7), st.data())
def test_the_products_equal_numpys(
    rows: int, columns: int, others: int, data: st.DataObject
) -> None:
    matrix = data.draw(arrays(np.float64, (rows, columns), elements=FINITE))
    vector = data.draw(arrays(np.float64, (columns,), elements=FINITE))
    weights = data.draw(arrays(np.float64, (others, columns), elements=FINITE))
    np.testing.assert_allclose(row_dots(matrix, vector), matrix @ vector, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(
        row_products(matrix, weights), matrix @ weights.T, rtol=1e-9, atol=1e-6
    )


def test_the_products_keep_float32_vectors_float32() -> None:
    matrix = np.ones((3, 4), dtype=np.float32)
    assert row_dots(matrix, np.ones(4, dtype=np.float32)).dtype == np.float32
    assert row_dots(matrix, np.ones(4, dtype=np.float32)).tolist() == [4.0, 4.0, 4.0]
