"""Warnings and errors raised by sklearn_clda."""

__all__ = [
    "FitInterruptedWarning",
    "ManyCollectionsWarning",
    "MemoryLimitError",
    "ShardRebuiltWarning",
    "UnseenCollectionWarning",
]


class UnseenCollectionWarning(UserWarning):
    """A document's collection was not seen in fit, or groups were not given.

    The document then gets the documented fallback prior (the mixture of the
    fitted collections weighted by their number of training documents).
    Also raised when ``groups`` are given to a model fitted without them: the
    labels are then ignored (the model has one collection).
    """


class FitInterruptedWarning(UserWarning):
    """``fit`` or ``partial_fit`` was interrupted (Ctrl-C).

    The estimator keeps the fitted state it had before that call (or stays
    unfitted): nothing of the interrupted call is published.
    """


class ManyCollectionsWarning(UserWarning):
    """``CompoundLDA.fit`` got more than one collection per five documents.

    That is almost always a per-document column (an id, a title) passed as
    ``groups``. The fit goes on (its cost grows only linearly with the
    number of collections), but each collection's mixture rests on very
    few documents.
    """


class ShardRebuiltWarning(UserWarning):
    """A distributed fit (:mod:`sklearn_clda.dask`) lost a Dask worker and went on.

    The shard of documents that lived on the lost worker was rebuilt on
    another worker from the input, its topic assignments drawn afresh from
    the topics at that round; every other shard kept its state. The fit
    is then a chain restarted in part, which the remaining sweeps mix in;
    the message names the shards and rounds.
    """


class MemoryLimitError(ValueError):
    """A fit refused before any work: this machine cannot hold it.

    Raised by ``fit`` and ``partial_fit`` when the estimated peak memory
    of the fit exceeds the machine's memory (or a Dask worker's limit),
    before anything is allocated, and by ``transform`` when the documents'
    topic proportions would not fit; its message names the largest part
    (the word-topic table, the tokens, the kept draws, ...) and what to
    change. A subclass of ``ValueError``.
    """
