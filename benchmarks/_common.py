"""Shared helpers for the benchmark scripts.

Everything here is benchmark plumbing: corpus loading, the
document-completion split, the held-out perplexity, and one small runner
per library that fits a model and returns its estimates in a common form.

Importing this module pins every threaded library (BLAS, OpenMP) to one
thread, so it must be imported before numpy in the scripts.
"""

import os

# One thread for every library unless a script says otherwise.  These must
# be set before numpy / scipy / sklearn load their thread pools.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import logging  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(HERE)
# Make an in-place build of the package importable when the scripts are run
# as ``python benchmarks/bench_*.py`` from a checkout.
if REPO_ROOT not in sys.path:
    sys.path.append(REPO_ROOT)


CLOCK_FUNCTIONS = {"wall": time.perf_counter, "cpu": time.process_time}


def log(msg):
    """Progress line on stderr (tables go to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


@dataclass
class Corpus:
    X: sp.csr_matrix  # (n_docs, n_words) int32 counts
    groups: np.ndarray  # (n_docs,) str collection name per document
    group_names: np.ndarray  # (n_collections,) str
    feature_names: np.ndarray  # (n_words,) str
    source: str = ""


def load_news16():
    """Load the 16-newsgroups corpus bundled with the package.

    Reads it with ``sklearn_clda.datasets.load_news16`` (the package must be
    importable: installed, or built in place in this checkout).
    """
    from sklearn_clda.datasets import load_news16 as _load

    b = _load()
    X = sp.csr_matrix(b.data)
    X.sort_indices()
    return Corpus(
        X=X.astype(np.int32),
        groups=np.asarray(b.groups).astype(str),
        group_names=np.asarray(b.group_names).astype(str),
        feature_names=np.asarray(b.feature_names).astype(str),
        source="sklearn_clda.datasets.load_news16",
    )



def synthetic_corpus(n_tokens, seed=0):
    """``make_compound_corpus`` with about ``n_tokens`` tokens: 8 collections,
    V = 20,000, documents of 200 tokens, 100 topics."""
    from sklearn_clda.datasets import make_compound_corpus

    docs = max(1, n_tokens // (8 * 200))
    b = make_compound_corpus(
        n_topics=100, n_features=20_000, n_collections=8, docs_per_collection=docs,
        doc_length=200, alpha=0.1, gamma=10.0, eta=0.01, random_state=seed,
    )
    X = sp.csr_matrix(b.data, dtype=np.int32)
    names = np.array([f"w{j}" for j in range(X.shape[1])])
    return Corpus(X=X, groups=np.asarray(b.groups).astype(str),
                  group_names=np.unique(np.asarray(b.groups).astype(str)),
                  feature_names=names, source=f"make_compound_corpus ({X.sum()} tokens)")

# ---------------------------------------------------------------------------
# Document-completion split
# ---------------------------------------------------------------------------


@dataclass
class Split:
    X_train_full: sp.csr_matrix  # all docs; held-out rows hold observed halves
    X_test: sp.csr_matrix  # test halves, rows aligned with heldout_idx
    heldout_idx: np.ndarray  # rows of X_train_full that are held-out docs
    groups: np.ndarray  # collection per row of X_train_full
    feature_names: np.ndarray  # column names of both matrices
    info: dict = field(default_factory=dict)

    @property
    def n_train_tokens(self):
        return int(self.X_train_full.sum())

    @property
    def n_test_tokens(self):
        return int(self.X_test.sum())


def _tokens_of_rows(X):
    """(row, word) of every token of a CSR count matrix, rows ascending."""
    X = sp.csr_matrix(X)
    nnz_rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    counts = X.data.astype(np.int64)
    return np.repeat(nnz_rows, counts), np.repeat(X.indices, counts)


def document_completion_split(corpus, heldout_frac=0.2, seed=0):
    """Hold out documents and split each one's tokens into two halves.

    * ``round(heldout_frac * n_docs)`` documents are drawn uniformly without
      replacement (``numpy.random.default_rng(seed)``).
    * Each held-out document's tokens (the multiset: a word with count c is
      c tokens) are put in a uniformly random order; the first
      ``floor(n_d / 2)`` go to the *test* half and the remaining
      ``ceil(n_d / 2)`` to the *observed* half.  So the observed half is
      never empty, and a one-token document contributes no test token.
    * Models are trained on ``X_train_full``: every document, with held-out
      rows replaced by their observed halves (row order is unchanged, so
      ``groups`` still lines up).
    * Columns are restricted to words that occur in ``X_train_full``: a word
      whose every occurrence fell in test halves cannot be scored by a model
      with a closed vocabulary (tomotopy builds its vocabulary from the
      training documents), so its test tokens are dropped for *all* models.
      The count is reported in ``info``.
    """
    X = sp.csr_matrix(corpus.X, dtype=np.int64)
    n_docs, n_words = X.shape
    rng = np.random.default_rng(seed)
    n_held = int(round(heldout_frac * n_docs))
    heldout_idx = np.sort(rng.choice(n_docs, size=n_held, replace=False))

    # Tokens of the held-out documents, grouped by (held-out position, word).
    tok_doc, tok_word = _tokens_of_rows(X[heldout_idx])
    # Random order within each document: sort by (doc, random key), then the
    # rank of a token in its document is its position minus the doc start.
    order = np.lexsort((rng.random(tok_doc.size), tok_doc))
    tok_doc, tok_word = tok_doc[order], tok_word[order]
    doc_len = np.bincount(tok_doc, minlength=n_held)
    doc_start = np.concatenate(([0], np.cumsum(doc_len)[:-1]))
    rank = np.arange(tok_doc.size) - doc_start[tok_doc]
    is_test = rank < (doc_len // 2)[tok_doc]

    def _counts(mask):
        return sp.csr_matrix(
            (np.ones(mask.sum(), dtype=np.int64), (tok_doc[mask], tok_word[mask])),
            shape=(n_held, n_words),
        )  # duplicates are summed

    X_obs, X_test = _counts(~is_test), _counts(is_test)

    # Replace held-out rows with their observed halves.
    keep = np.ones(n_docs, dtype=bool)
    keep[heldout_idx] = False
    X_rest = sp.diags(keep.astype(np.int64), dtype=np.int64) @ X
    place = sp.csr_matrix(
        (np.ones(n_held, dtype=np.int64), (heldout_idx, np.arange(n_held))),
        shape=(n_docs, n_held),
    )
    X_train_full = sp.csr_matrix(X_rest + place @ X_obs)

    # Closed vocabulary: words seen in training.
    seen = np.asarray(X_train_full.sum(axis=0)).ravel() > 0
    n_test_before = int(X_test.sum())
    X_train_full = X_train_full[:, seen]
    X_test = X_test[:, seen]
    for M in (X_train_full, X_test):
        M.eliminate_zeros()
        M.sort_indices()
    X_train_full = X_train_full.astype(np.int32)
    X_test = X_test.astype(np.int32)

    assert X_train_full.sum() + X_test.sum() + (n_test_before - X_test.sum()) == X.sum()
    assert np.all(np.diff(X_train_full.indptr) > 0), "empty training row"

    info = dict(
        seed=seed,
        heldout_frac=heldout_frac,
        n_docs=n_docs,
        n_heldout_docs=n_held,
        n_words_corpus=n_words,
        n_words_train=int(seen.sum()),
        n_tokens_corpus=int(X.sum()),
        n_train_tokens=int(X_train_full.sum()),
        n_test_tokens=int(X_test.sum()),
        n_test_tokens_dropped_unseen_word=n_test_before - int(X_test.sum()),
        n_heldout_docs_without_test_tokens=int(np.sum(doc_len // 2 == 0)),
    )
    return Split(
        X_train_full=X_train_full,
        X_test=X_test,
        heldout_idx=heldout_idx,
        groups=np.asarray(corpus.groups)[:],
        feature_names=np.asarray(corpus.feature_names)[seen],
        info=info,
    )


# ---------------------------------------------------------------------------
# Perplexity
# ---------------------------------------------------------------------------


def perplexity_from_estimates(theta, phi, X_test, chunk=200_000):
    """Held-out perplexity of test tokens under ``theta @ phi``.

    ``exp(-sum_{d,w} n_dw log(sum_k theta_dk phi_kw) / sum_{d,w} n_dw)``,
    with ``theta`` (n_test_docs, K) aligned with the rows of ``X_test`` and
    ``phi`` (K, V) aligned with its columns.  Only the nonzero cells of
    ``X_test`` are evaluated (in chunks of ``chunk`` cells, so memory stays
    ``chunk * K`` floats); no per-token Python loop.
    """
    theta = np.asarray(theta, dtype=np.float64)
    phi = np.asarray(phi, dtype=np.float64)
    X = sp.coo_matrix(X_test)
    if theta.shape[0] != X.shape[0] or phi.shape[1] != X.shape[1]:
        raise ValueError(
            f"shape mismatch: theta {theta.shape}, phi {phi.shape}, X_test {X.shape}"
        )
    if theta.shape[1] != phi.shape[0]:
        raise ValueError(f"theta has {theta.shape[1]} topics, phi {phi.shape[0]}")
    rows, cols, cnt = X.row, X.col, X.data.astype(np.float64)
    phi_t = np.ascontiguousarray(phi.T)
    total = 0.0
    for s in range(0, rows.size, chunk):
        e = s + chunk
        p = np.einsum("ik,ik->i", theta[rows[s:e]], phi_t[cols[s:e]])
        with np.errstate(divide="ignore"):
            total += float(np.dot(cnt[s:e], np.log(p)))
    return float(np.exp(-total / cnt.sum()))


def normalize_rows(A):
    A = np.asarray(A, dtype=np.float64)
    return A / A.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------
# Runners: each returns a RunResult
# ---------------------------------------------------------------------------


@dataclass
class RunResult:
    name: str
    fit_seconds: float
    tokens_per_second: float  # n_train_tokens * n_sweeps / fit_seconds
    theta: np.ndarray  # (n_heldout, K) for split.heldout_idx rows
    phi: np.ndarray  # (K, V) in split column order
    n_sweeps: int
    setup_seconds: float = 0.0  # work outside the timed fit (e.g. add_doc)
    extra: dict = field(default_factory=dict)
    perplexity: float = float("nan")


def _finish(name, split, t_fit, n_sweeps, theta, phi, setup=0.0, **extra):
    theta = normalize_rows(theta)
    phi = normalize_rows(phi)
    res = RunResult(
        name=name,
        fit_seconds=t_fit,
        tokens_per_second=split.n_train_tokens * n_sweeps / t_fit,
        theta=theta,
        phi=phi,
        n_sweeps=n_sweeps,
        setup_seconds=setup,
        extra=extra,
    )
    res.perplexity = perplexity_from_estimates(theta, phi, split.X_test)
    return res


def run_lda(split, K, n_iter, alpha=0.1, eta=0.01, seed=0):
    """``lda`` package (collapsed Gibbs, Cython).

    Timed: ``LDA.fit`` (includes its own conversion of the matrix to token
    arrays, which is reported separately as ``setup_seconds`` for
    information; it is part of the fit time).  ``doc_topic_`` /
    ``topic_word_`` are point estimates from the final sample.
    """
    import lda
    import lda.utils

    logging.getLogger("lda").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    lda.utils.matrix_to_lists(split.X_train_full)
    t_conv = time.perf_counter() - t0

    model = lda.LDA(n_topics=K, n_iter=n_iter, alpha=alpha, eta=eta, random_state=seed)
    t0 = time.perf_counter()
    model.fit(split.X_train_full)
    t_fit = time.perf_counter() - t0
    return _finish(
        "lda",
        split,
        t_fit,
        n_iter,
        model.doc_topic_[split.heldout_idx],
        model.topic_word_,
        setup=t_conv,
        setup_note="matrix->token conversion inside fit (included in fit s)",
    )


def _tomotopy_token_lists(split):
    """Token list (str words, repeated by count) of every training row."""
    X = split.X_train_full
    words = split.feature_names
    tok_words = np.repeat(words[X.indices], X.data)
    ends = np.cumsum(np.add.reduceat(X.data, X.indptr[:-1]))
    return [a.tolist() for a in np.split(tok_words, ends[:-1])]


def _tomotopy_estimates(model, split, K, normalize=True):
    """theta of the held-out rows, and phi in our column order (with
    ``normalize=False``: tomotopy's raw ``n_kw + eta``).  theta is always
    normalized."""
    # tomotopy 0.14's ``model.docs[i]`` raises IndexError for i > 0, so
    # iterate (documents come back in insertion order = our row order).
    docs = list(model.docs)
    if len(docs) != split.X_train_full.shape[0]:
        raise RuntimeError(f"tomotopy has {len(docs)} documents")
    theta = np.array(
        [docs[i].get_topic_dist(normalize=True) for i in split.heldout_idx]
    )
    tv = list(model.used_vocabs)
    pos = {w: j for j, w in enumerate(split.feature_names)}
    col = np.array([pos[w] for w in tv])
    if col.size != len(split.feature_names):
        raise RuntimeError(
            f"tomotopy vocabulary has {col.size} words, split has "
            f"{len(split.feature_names)}"
        )
    phi = np.zeros((K, len(split.feature_names)))
    for k in range(K):
        phi[k, col] = model.get_topic_word_dist(k, normalize=normalize)
    return theta, phi


def run_tomotopy_lda(
    split, K, n_iter, alpha=0.1, eta=0.01, seed=0, workers=1, optimize_alpha=False
):
    """tomotopy ``LDAModel``.

    ``optim_interval`` defaults to 10 in tomotopy, i.e. it re-estimates the
    (per-topic) alpha every 10 iterations.  For a like-for-like comparison
    with fixed hyperparameters we set it to 0 unless ``optimize_alpha``.
    Timed: the single ``train(n_iter, workers=workers)`` call (default
    parallel scheme); ``add_doc`` time is reported as ``setup_seconds``.
    """
    import tomotopy as tp

    model = tp.LDAModel(k=K, alpha=alpha, eta=eta, seed=seed)
    if not optimize_alpha:
        model.optim_interval = 0
    t0 = time.perf_counter()
    for toks in _tomotopy_token_lists(split):
        model.add_doc(toks)
    t_add = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.train(n_iter, workers=workers)
    t_fit = time.perf_counter() - t0
    theta, phi = _tomotopy_estimates(model, split, K)
    name = "tomotopy LDA" + ("" if workers == 1 else f" (workers={workers})")
    return _finish(name, split, t_fit, n_iter, theta, phi, setup=t_add,
                   optim_interval=model.optim_interval)


def run_tomotopy_dmr(split, K, n_iter, alpha=0.1, eta=0.01, seed=0, workers=1):
    """tomotopy ``DMRModel`` with the collection name as metadata.

    ``alpha`` is the initial value of exp(lambda); tomotopy optimizes the
    lambdas every ``optim_interval`` (default 10) iterations, which is what
    makes DMR differ from LDA, so that default is kept.
    """
    import tomotopy as tp

    model = tp.DMRModel(k=K, alpha=alpha, eta=eta, seed=seed)
    t0 = time.perf_counter()
    for toks, g in zip(_tomotopy_token_lists(split), split.groups):
        model.add_doc(toks, metadata=str(g))
    t_add = time.perf_counter() - t0
    t0 = time.perf_counter()
    model.train(n_iter, workers=workers)
    t_fit = time.perf_counter() - t0
    theta, phi = _tomotopy_estimates(model, split, K)
    return _finish("tomotopy DMR", split, t_fit, n_iter, theta, phi, setup=t_add,
                   optim_interval=model.optim_interval)


def run_sklearn_vb(split, K, max_iter=20, alpha=0.1, eta=0.01, seed=0):
    """scikit-learn ``LatentDirichletAllocation`` (batch variational Bayes).

    theta for held-out rows = ``transform`` of their (trained-on) observed
    halves with the fitted model, not a training-chain estimate.
    "Sweeps" = ``max_iter`` passes.
    """
    from sklearn.decomposition import LatentDirichletAllocation
    from threadpoolctl import threadpool_limits

    model = LatentDirichletAllocation(
        n_components=K,
        doc_topic_prior=alpha,
        topic_word_prior=eta,
        learning_method="batch",
        max_iter=max_iter,
        random_state=seed,
        n_jobs=1,
    )
    X = split.X_train_full.astype(np.float64)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        model.fit(X)
        t_fit = time.perf_counter() - t0
        theta = model.transform(X[split.heldout_idx])
    return _finish(f"sklearn VB ({max_iter} it)", split, t_fit, max_iter,
                   theta, model.components_)


def run_gensim_vb(split, K, passes=10, alpha=0.1, eta=0.01, seed=0):
    """gensim ``LdaModel`` (online VB, single process).

    theta for held-out rows = normalized variational gamma from
    ``inference`` on their observed halves.  "Sweeps" = ``passes``.
    """
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel
    from threadpoolctl import threadpool_limits

    X = split.X_train_full
    corpus = list(Sparse2Corpus(X, documents_columns=False))
    with threadpool_limits(1):
        t0 = time.perf_counter()
        model = LdaModel(
            corpus=corpus,
            num_topics=K,
            alpha=np.full(K, alpha),
            eta=eta,
            passes=passes,
            iterations=50,
            chunksize=2000,
            random_state=seed,
            eval_every=None,
        )
        t_fit = time.perf_counter() - t0
        gamma, _ = model.inference([corpus[int(i)] for i in split.heldout_idx])
    logging.getLogger("gensim").setLevel(logging.WARNING)
    return _finish(f"gensim VB ({passes} passes)", split, t_fit, passes,
                   gamma, model.get_topics())


def last_state_kwargs(n_iter):
    """burn_in/thin that make our estimators keep only the final state, like
    ``lda`` and tomotopy (their estimates are from the last sample)."""
    return dict(burn_in=n_iter - 1, thin=1)


def run_lda_gibbs(split, K, n_iter, alpha=0.1, eta=0.01, seed=0, name=None, clock="wall",
                  **kwargs):
    """Our ``LDAGibbs``; timed: ``fit`` (``clock``: wall-clock or process CPU
    seconds).  theta = ``doc_topic_`` rows.

    ``kwargs`` go to the estimator (e.g. ``burn_in``, ``thin``); by default
    its ``doc_topic_`` / ``components_`` average the kept samples.
    """
    timer = CLOCK_FUNCTIONS[clock]
    from sklearn_clda import LDAGibbs

    model = LDAGibbs(
        n_components=K,
        doc_topic_prior=alpha,
        topic_word_prior=eta,
        max_iter=n_iter,
        random_state=seed,
        **kwargs,
    )
    t0 = timer()
    model.fit(split.X_train_full)
    t_fit = timer() - t0
    return _finish(
        name or "sklearn_clda LDAGibbs", split, t_fit, n_iter,
        np.asarray(model.doc_topic_)[split.heldout_idx], model.components_,
        model=model,
    )


def run_compound_lda(split, K, n_iter, alpha=1.0, gamma=None, eta=0.01, seed=0,
                     use_groups=True, name=None, clock="wall", **kwargs):
    """Our ``CompoundLDA``; ``use_groups=False`` fits a single collection.
    Timed like ``run_lda_gibbs``."""
    timer = CLOCK_FUNCTIONS[clock]
    from sklearn_clda import CompoundLDA

    model = CompoundLDA(
        n_components=K,
        alpha=alpha,
        gamma=gamma,
        eta=eta,
        max_iter=n_iter,
        random_state=seed,
        **kwargs,
    )
    g = split.groups if use_groups else None
    t0 = timer()
    model.fit(split.X_train_full, groups=g)
    t_fit = timer() - t0
    if name is None:
        n_coll = len(np.unique(split.groups)) if use_groups else 1
        name = f"CompoundLDA ({n_coll} coll.)"
    return _finish(
        name, split, t_fit, n_iter,
        np.asarray(model.doc_topic_)[split.heldout_idx], model.components_,
        model=model,
    )


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------


def format_table(headers, rows, align=None):
    """Plain-text aligned table; ``align`` is a string of 'l'/'r' per column."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    align = align or "l" + "r" * (len(headers) - 1)

    def fmt(r):
        return "  ".join(
            c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align)
        ).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([fmt(cells[0]), sep] + [fmt(r) for r in cells[1:]])


def load_average():
    """1-minute load average (str), to flag runs disturbed by other work."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):
        return "n/a"


def environment_info():
    info = dict(
        python=platform.python_version(),
        machine=platform.machine(),
        processor=platform.processor(),
        cpu_count=os.cpu_count(),
    )
    for mod in ("numpy", "scipy", "sklearn", "lda", "tomotopy", "gensim", "sklearn_clda"):
        try:
            m = __import__(mod)
            info[mod] = getattr(m, "__version__", "?")
        except Exception:
            info[mod] = None
    try:
        import tomotopy

        info["tomotopy_isa"] = tomotopy.isa
    except Exception:
        pass
    return info


def write_json(path, payload):
    def default(o):
        if isinstance(o, (np.integer,)):
            return int(o)
        if isinstance(o, (np.floating,)):
            return float(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    with open(path, "w") as f:
        json.dump(payload, f, indent=2, default=default)
