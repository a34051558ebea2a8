"""average_ranks: scipy.stats.rankdata(method="average", axis=0), faster."""

import numpy as np
import pytest
from scipy.stats import rankdata

from sklearn_clda import _chunking
from sklearn_clda.inspection._ranks import average_ranks

SHAPES = [(1,), (2,), (7,), (1, 3), (3, 1), (10, 3, 4), (50, 20), (0, 4), (6, 0)]


def _values(rng, shape, kind):
    if kind == "continuous":
        return rng.standard_normal(shape)
    x = rng.integers(0, 3, shape).astype(np.float64)  # many ties
    if x.size and kind == "nan":
        x.flat[rng.integers(x.size, size=2)] = np.nan
    if x.size and kind == "inf":
        x.flat[rng.integers(x.size, size=2)] = [-np.inf, np.inf]
    if kind == "all nan":
        x[...] = np.nan
    return x


@pytest.mark.parametrize("kind", ["continuous", "ties", "nan", "inf", "all nan"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_average_ranks_are_scipys(shape, kind):
    x = _values(np.random.default_rng(0), shape, kind)
    expected = rankdata(x, method="average", axis=0) if x.size else np.empty(shape)
    got = average_ranks(x)
    assert got.shape == expected.shape and got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


def test_average_ranks_by_pieces_are_those_of_one_piece(monkeypatch):
    """Columns go by pieces of the chunk budget; the pieces' seams change
    nothing."""
    x = np.random.default_rng(1).integers(0, 4, (30, 7, 11)).astype(np.float64)
    whole = average_ranks(x)
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", 1)  # one column a piece
    np.testing.assert_array_equal(average_ranks(x), whole)
    np.testing.assert_array_equal(whole, rankdata(x, method="average", axis=0))


def test_tied_values_share_the_mean_of_their_places():
    x = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(average_ranks(x), [[4, 2], [1.5, 2], [3, 2], [1.5, 4]])
