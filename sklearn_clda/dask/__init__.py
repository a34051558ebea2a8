"""Fitting the topic models on a Dask cluster.

:class:`CompoundLDA` and :class:`LDAGibbs` take the parameters of the
in-memory estimators of the same names, plus ``client``, ``local_sweeps``
and ``timeout``, and fit on a dask array of sparse counts (or in-memory
counts) with one shard of documents per worker. Needs the ``dask`` extra:
``pip install "sklearn-clda[dask]"``.
"""

try:
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "sklearn_clda.dask needs Dask and distributed, which are not installed "
        f"({exc}); install them with: pip install \"sklearn-clda[dask]\""
    ) from exc

from ._estimators import CompoundLDA, LDAGibbs  # noqa: E402

__all__ = ["CompoundLDA", "LDAGibbs"]
