"""A seed gives the same chain on every machine and dependency version.

The user guide promises that a ``random_state`` gives the same model on
every machine (``doc/user_guide.rst``, "Parallelism and reproducibility"):
the samplers draw from a counter-based stream keyed by NumPy's PCG64, and
their arithmetic is compiled without FMA contraction, so neither the CPU's
instruction set (the AVX2 or the portable kernel, x86-64 or ARM) nor the
compiler may change a draw. The other tests compare two fits in one
process, which cannot see a chain that depends on the machine. These
compare each fit's fingerprint, a hash of what depends only on the chain,
with the value recorded when the chains were last changed on purpose; the
wheel workflow runs them on every platform it builds for.

What is hashed: ``components_`` (the kept samples' topic-word counts plus
the fixed ``topic_word_prior``) for both estimators, and for ``LDAGibbs``
its ``doc_topic_`` and ``transform`` too, all sums and quotients of counts
and fixed priors. Left out are the values that go through a math library's
functions, whose last bits may differ between CPUs and libraries while the
chain is the same: ``CompoundLDA``'s collection mixtures (Dirichlet draws),
the trace's log-likelihoods, learned priors (SciPy's ``digamma``) and VEM.

Recorded on Linux x86-64 (AVX2 kernels) with NumPy 2.4 and 1.26, and
checked equal on Linux aarch64 (the portable kernels, under emulation).
When a change of the samplers changes the chains on purpose, the failure
prints the new table: replace ``FINGERPRINTS`` with it and say so in the
commit (users' seeded results change with it).
"""

import functools
import hashlib
import platform

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_clda import CompoundLDA, LDAGibbs, _mh_sampling, _sampling


def integer_corpus():
    """120 documents of 80 tokens over 60 words, four planted topics, three
    collections, drawn with ``Generator.integers`` only (integer arithmetic,
    so the corpus itself is the same on every machine)."""
    rng = np.random.Generator(np.random.PCG64(20261201))
    n_docs, length, V, K = 120, 80, 60, 4
    block = V // K
    topic = np.arange(n_docs) % K
    planted = topic[:, None] * block + rng.integers(0, block, size=(n_docs, length))
    anywhere = rng.integers(0, V, size=(n_docs, length))
    words = np.where(rng.integers(0, 10, size=(n_docs, length)) < 8, planted, anywhere)
    rows = np.repeat(np.arange(n_docs), length)
    X = sp.csr_matrix((np.ones(rows.size, dtype=np.int64), (rows, words.ravel())), shape=(n_docs, V))
    X.sum_duplicates()
    groups = np.arange(n_docs) % 3
    return X, groups


def fingerprint(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    return digest.hexdigest()[:16]


def case_id(name, sampler, K, n_jobs, algorithm="ags"):
    label = name if algorithm == "ags" else f"{name}-{algorithm}"
    return f"{label}-{sampler}-K{K}-jobs{n_jobs}"


# Every sampler, serial and partitioned, one block of eight topics and
# several; CompoundLDA's collapsed (AGS) and Metropolis-within-Gibbs chains.
CASES = [
    (name, sampler, K, n_jobs)
    for name in ("LDAGibbs", "CompoundLDA")
    for sampler in ("dense", "sparse", "mh")
    for K in (4, 40)
    for n_jobs in (1, 2)
] + [("CompoundLDA", "dense", 4, 1, "mgs")]


def fit_fingerprint(name, sampler, K, n_jobs, algorithm="ags"):
    X, groups = integer_corpus()
    common = dict(n_components=K, max_iter=40, sampler=sampler, n_jobs=n_jobs, random_state=3)
    if name == "LDAGibbs":
        est = LDAGibbs(doc_topic_prior=0.3, topic_word_prior=0.1, **common).fit(X)
        return fingerprint(est.components_, est.doc_topic_, est.transform(X[:20]))
    est = CompoundLDA(algorithm=algorithm, alpha=1.0, gamma=1.0, eta=0.1, **common)
    return fingerprint(est.fit(X, groups=groups).components_)


FINGERPRINTS = {
    "corpus": "36d22c74421c2338",
    "LDAGibbs-dense-K4-jobs1": "0467ce60d46a9614",
    "LDAGibbs-dense-K4-jobs2": "e237628a86cc7226",
    "LDAGibbs-dense-K40-jobs1": "0de45aea6d335a56",
    "LDAGibbs-dense-K40-jobs2": "8e5ca02e1f049636",
    "LDAGibbs-sparse-K4-jobs1": "512bb22a96c327e1",
    "LDAGibbs-sparse-K4-jobs2": "0ec66e309cea76c6",
    "LDAGibbs-sparse-K40-jobs1": "ac1681c38c6d72b3",
    "LDAGibbs-sparse-K40-jobs2": "48e75322e221eadb",
    "LDAGibbs-mh-K4-jobs1": "77060b1c9536af4b",
    "LDAGibbs-mh-K4-jobs2": "9027101fcd119e7f",
    "LDAGibbs-mh-K40-jobs1": "ebb0c399df68d3db",
    "LDAGibbs-mh-K40-jobs2": "749f7d2d340279aa",
    "CompoundLDA-dense-K4-jobs1": "88d11889339598be",
    "CompoundLDA-dense-K4-jobs2": "ee6b09e125181e3d",
    "CompoundLDA-dense-K40-jobs1": "480c68c4191e0ff7",
    "CompoundLDA-dense-K40-jobs2": "edbb6f1182c8c4c8",
    "CompoundLDA-sparse-K4-jobs1": "11a49f348d697e16",
    "CompoundLDA-sparse-K4-jobs2": "23a214818028349e",
    "CompoundLDA-sparse-K40-jobs1": "6df2891cfe0d40d5",
    "CompoundLDA-sparse-K40-jobs2": "cfcd08297b661175",
    "CompoundLDA-mh-K4-jobs1": "ea9f97186dafb85e",
    "CompoundLDA-mh-K4-jobs2": "6f4241e46a4ee818",
    "CompoundLDA-mh-K40-jobs1": "46e7230cf66d94bb",
    "CompoundLDA-mh-K40-jobs2": "eae8605da8731238",
    "CompoundLDA-mgs-dense-K4-jobs1": "b5f44f8d9e24ffc0",
}


@functools.cache
def all_fingerprints():
    """The table to paste into FINGERPRINTS when the chains change on purpose."""
    table = {"corpus": corpus_fingerprint()}
    for case in CASES:
        table[case_id(*case)] = fit_fingerprint(*case)
    return "FINGERPRINTS = {\n" + "".join(f'    "{k}": "{v}",\n' for k, v in table.items()) + "}"


def corpus_fingerprint():
    X, groups = integer_corpus()
    return fingerprint(X.indptr, X.indices, X.data, groups)


def check(key, value):
    if FINGERPRINTS.get(key) != value:
        pytest.fail(
            f"{key}: fingerprint {value}, recorded {FINGERPRINTS.get(key)}. "
            f"On {platform.machine()} with NumPy {np.__version__}, a seed no longer gives the recorded chain. If "
            "the samplers were changed on purpose, record the new table:\n" + all_fingerprints()
        )


def test_corpus_is_the_recorded_one():
    # A failure here means NumPy's Generator.integers stream changed, not a
    # sampler: every other test of this file then fails for that reason.
    check("corpus", corpus_fingerprint())


@pytest.fixture(params=["auto", "portable"])
def kernels(request):
    """The kernels this CPU picks, then the portable C z-step and the MH
    samplers' portable uniform loop, which CPUs without AVX2 or AVX-512 (ARM
    among them) run: both give the recorded chains. (The exact sampler's
    uniform loop has no switch; the two loops' equality is tested in
    test_mh_sampling.py, and ARM runs the portable one.)"""
    old = _sampling._set_kernel(request.param), _mh_sampling._set_fill(request.param)
    yield request.param
    _sampling._set_kernel(old[0])
    _mh_sampling._set_fill(old[1])


@pytest.mark.parametrize("case", CASES, ids=[case_id(*c) for c in CASES])
def test_seeded_chain_is_the_recorded_one(case, kernels):
    check(case_id(*case), fit_fingerprint(*case))

