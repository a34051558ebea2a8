"""What a fit must hold in memory at once, and the check that refuses,
before any work, a fit that cannot fit in this machine's memory.

A fit's arrays live in phases: the sampler's count tables while it
samples, then (the tables released) the fitted ``components_`` and
``doc_topic_``; variational EM and ``partial_fit`` hold their topic-word
tables throughout; a :mod:`sklearn_clda.dask` fit's client holds the
global counts and the averages. Each estimate below counts only the
arrays a phase cannot do without (not the working arrays of a piece of
documents, which the chunk budgets bound), so it is a lower bound of the
fit's peak (``tests/test_memory.py`` and ``tests/test_dask.py`` hold it to
that, and to within a small factor of the peak it bounds, against
``tracemalloc``). The check therefore never refuses a fit that would run
in memory: it turns one that would fail at its end, after all its
sweeps, or be killed by the system on the way, into an immediate
``ValueError`` that says what is too large.
"""

import os

from . import _sampling
from .exceptions import MemoryLimitError

# Variational EM holds lambda, exp(E[log beta]) (transposed) and the
# sufficient statistics, each (n_components, n_features) float64, through
# its E-step, and lambda, E[log beta] and one temporary through its bound.
VEM_TOPIC_TABLES = 3
# partial_fit holds its word-topic estimate and the new components_ (the
# old components_ and the estimate, which becomes the new components_ in
# place, when it updates a fitted model).
ONLINE_TOPIC_TABLES = 2
# The parts of a fit that grow with its kept draws (max_iter / thin), not
# with its topics and words.
_KEPT_DRAWS = frozenset({"the kept collection mixtures", "collection_topic_samples_"})

#: What to do when the largest part of the phase that does not fit is
#: this one (else: fewer topics or a smaller vocabulary).
_REMEDIES = {
    **dict.fromkeys(_KEPT_DRAWS, "keep fewer draws (a smaller max_iter or a larger thin)"),
    "the uniforms of the longest document": "split the longest documents into shorter ones",
    "the tokens' words and topics": "fit on a sample of the documents, or stream them in "
                                    "batches with partial_fit",
}


def gibbs_phases(n_docs, n_features, n_components, n_groups, *, word_table, itemsize,
                 n_tokens=0, uniform_bytes=0, kept_samples=0, previous=0,
                 keeps_chain=False):
    """The phases of a Gibbs fit: ``{phase: {array: bytes}}``.

    ``word_table``: whether the sampler keeps a word-topic count table
    (all but ``sampler="sparse"``); ``itemsize``: the bytes of an entry of
    the fitted ``components_`` and ``doc_topic_`` (8, or 4 for float32
    input); ``n_tokens``: the corpus' tokens, each with a word and a topic
    (int32 each) while sampling; ``uniform_bytes``: the sweeping threads'
    buffers of uniforms, each as long as the longest document (a corpus of
    one long document needs more than the same tokens in many);
    ``kept_samples``: the bytes of the kept samples' collection mixtures
    (``CompoundLDA``), which become ``collection_topic_samples_``;
    ``previous``: see :func:`with_previous_fit`; ``keeps_chain``:
    ``warm_start``, whose kept chain holds on to the documents' running
    sums (``doc_topic_`` is a copy) and a copy of the kept mixtures.
    """
    K = n_components
    table = 4 * n_features * _sampling.padded_n_components(K) if word_table else 0
    return with_previous_fit(previous, {
        "while sampling": {
            "the word-topic counts": table,
            "the tokens' words and topics": 8 * n_tokens,
            "the uniforms of the longest document": uniform_bytes,
            "the document-topic counts and their running mean": 12 * n_docs * K,
            # a sweep's table counts and prior, the mixtures and the next
            # draw's gamma variates and their parameters, (n_groups, K) each
            "the collections' tables and mixtures": 40 * n_groups * K,
            "the kept collection mixtures": kept_samples,
        },
        "for the fitted attributes": {
            "components_": itemsize * K * n_features,
            "doc_topic_": itemsize * n_docs * K,
            # the kept mixtures are published as they are; a warm_start
            # chain keeps a copy of them
            "collection_topic_samples_": kept_samples * (2 if keeps_chain else 1),
            "the kept chain's document sums": 8 * n_docs * K if keeps_chain else 0,
        },
    })


def vem_phases(n_docs, n_features, n_components, previous=0):
    """The one phase of a variational EM fit (``algorithm="vem"``);
    ``previous``: see :func:`with_previous_fit`."""
    K = n_components
    return with_previous_fit(previous, {
        "during variational EM": {
            "the topic-word tables": VEM_TOPIC_TABLES * 8 * K * n_features,
            "the document-topic parameters and doc_topic_": 16 * n_docs * K,
        },
    })


def with_previous_fit(previous, phases):
    """``phases`` with, in each, the ``previous`` bytes that the estimator
    holds from its last fit (its fitted arrays and a ``warm_start`` chain):
    a fit publishes its attributes only once it has succeeded, so the old
    ones live through all of it."""
    if previous:
        for parts in phases.values():
            parts["the previous fit's arrays, kept until this one succeeds"] = previous
    return phases


def online_phases(n_docs, n_features, n_components):
    """The one phase of ``partial_fit``."""
    K = n_components
    return {
        "during partial_fit": {
            "the topic-word estimates and components_":
                ONLINE_TOPIC_TABLES * 8 * K * n_features,
            "doc_topic_": 8 * n_docs * K,
        },
    }


def dask_client_phases(n_docs, n_features, n_components):
    """The phases of a :mod:`sklearn_clda.dask` fit on its client: the
    global word-topic counts (int32) with the merge's buffers (int32 sums
    and a flag a cell) and the kept samples' float64 sums while it samples,
    then the sums and ``components_``, and the gathered ``doc_topic_``."""
    K = n_components
    cells = K * n_features
    return {
        "on the client while sampling": {
            "the word-topic counts and the merge's buffers": 9 * cells,
            "the kept samples' word-topic sums": 8 * cells,
        },
        "on the client for the fitted attributes": {
            "the word-topic sums and components_": 16 * cells,
            "doc_topic_": 8 * n_docs * K,
        },
    }


def dask_worker_phases(n_docs, n_features, n_components, n_tokens=0, rebuild=False):
    """The phases of a :mod:`sklearn_clda.dask` fit on a worker holding one
    shard of ``n_docs`` documents and ``n_tokens`` tokens (each 0 when not
    known before the build): the shard's word-topic counts (int32, rows
    padded for the kernels), its document-topic counts and its tokens'
    words and topics; ``rebuild``: a shard rebuilt after its worker was
    lost first draws its topics from a ``(V, K)`` float64 table of the
    current topics."""
    K = n_components
    tokens = {"the shard's tokens and their topics": 8 * n_tokens}
    phases = {
        "on a Dask worker": {
            "the shard's word-topic counts":
                4 * n_features * _sampling.padded_n_components(K),
            "the shard's document-topic counts": 4 * n_docs * K,
            **tokens,
        },
    }
    if rebuild:
        phases["drawing a rebuilt shard's topics"] = {
            "the current topics": 8 * n_features * K, **tokens,
        }
    return phases


def physical_memory():
    """This machine's memory in bytes, or ``None`` where it is not known."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX: no check
        return None


def gib(n, digits=1):
    """``n`` bytes in GiB, as an error message shows them."""
    return f"{n / 2**30:.{digits}f} GiB"


def largest_phase(phases):
    """``(name, bytes)`` of the phase that needs the most."""
    name = max(phases, key=lambda p: sum(phases[p].values()))
    return name, sum(phases[name].values())


def check_fit_memory(estimator, shape, phases, table_free_phases=None, *, limit=None):
    """``ValueError`` if a phase of the fit needs more than this machine's
    memory; ``shape``: the data's ``(n_docs, n_features)``, ``n_docs``
    ``None`` when not known yet; ``table_free_phases``: the same fit's
    phases with ``sampler="sparse"`` (no word-topic table), named in the
    error when those would fit. ``limit``: ``(bytes, what)`` to compare
    with instead, ``what`` naming it with ``{gib}`` for its size, e.g.
    ``(2**30, "the {gib} memory_limit of Dask worker tcp://...")``."""
    available, what = ((physical_memory(), "this machine's {gib} of memory") if limit is None
                       else limit)
    phase, needed = largest_phase(phases)
    if available is None or needed <= available:
        return
    parts = phases[phase]
    largest = max(parts, key=parts.get)
    hint = ""
    if table_free_phases is not None and largest_phase(table_free_phases)[1] <= available:
        table = phases["while sampling"]["the word-topic counts"]
        hint = (f" sampler='sparse' keeps no word-topic table ({gib(table)} "
                f"of it; sampler={estimator.sampler!r} runs a kernel that does), or")
    docs = "documents" if shape[0] is None else f"{shape[0]} documents"
    more = "" if limit is None else ", or give the workers more memory"
    fewer = _REMEDIES.get(largest, "use fewer topics or a smaller vocabulary")
    # Two decimals where one would show the need and the memory alike and two tell them apart.
    one, two = ([gib(n, d) for n in (needed, available)] for d in (1, 2))
    d = 2 if one[0] == one[1] and two[0] != two[1] else 1
    raise MemoryLimitError(
        f"{type(estimator).__name__}(n_components={estimator.n_components}) on "
        f"{docs} and {shape[1]} words needs at least {gib(needed, d)} {phase} ({largest}: "
        f"{gib(parts[largest], d)}), more than {what.format(gib=gib(available, d))};{hint} "
        f"{fewer}{more}."
    )


def check_transform_memory(estimator, n_docs, method, itemsize):
    """``MemoryLimitError`` if the ``(n_docs, K)`` topic proportions that
    ``method`` returns (float64, and a copy in the output's ``itemsize``
    when it is not 8) need more than this machine's memory."""
    K = int(estimator.components_.shape[0])
    needed = n_docs * K * (8 + (itemsize if itemsize != 8 else 0))
    available = physical_memory()
    if available is None or needed <= available:
        return
    raise MemoryLimitError(
        f"{type(estimator).__name__}.{method} of {n_docs} documents with "
        f"{K} topics needs at least {gib(needed)} for their topic proportions, "
        f"more than this machine's {gib(available)} of memory; pass the documents "
        "in batches."
    )
