"""Peer Gibbs chains run in steps: last-state and averaged estimates of one chain.

Our estimators average ``doc_topic_`` and ``components_`` over the kept
samples (sweeps ``burn_in + thin``, ``burn_in + 2 thin``, ... up to
``max_iter``), while ``lda`` and tomotopy publish only their chain's final
state.  Averaging lowers held-out perplexity by itself, so a comparison of
our average with a peer's last state measures the estimate, not the
sampler.  Here each peer chain runs up to each kept sweep of the same
schedule, and its count tables are read and averaged the way ours are:

* topic-word: the counts ``n_kw`` are averaged over the kept sweeps, then
  ``eta`` is added and the rows normalized (ours: ``components_`` is the
  mean of ``n_kw`` plus ``eta``);
* held-out documents: the proportions ``(n_dk + alpha_dk) / (n_d + sum_k
  alpha_dk)`` of each kept sweep are averaged (for DMR, ``alpha_d`` is the
  document's current ``exp(lambda . x_d)``).

The final state of the same chain gives the last-state estimate, so one run
yields both.  Stepping does not change a chain: ``lda``'s step is the body
of its own ``fit`` loop (without the log-likelihood it logs every
``refresh`` sweeps, which does not touch the chain), and tomotopy's
``train(n)`` calls continue one chain (``train(10)`` four times ends in
the same state as ``train(40)``).  Only the sampling is timed (for ``lda``
its start-up assignment too, part of its ``fit``); reading the tables is
not.
"""

import logging
import time

import numpy as np

import _common as C


def kept_sweeps(n_iter, burn_in, thin):
    """The sweeps our estimators average: ``burn_in < it <= n_iter`` with
    ``(it - burn_in) % thin == 0``; the last sweep when there is none."""
    kept = list(range(burn_in + thin, n_iter + 1, thin))
    return kept or [n_iter]


class LdaChain:
    """The ``lda`` package's collapsed Gibbs chain, advanced sweep by sweep.

    Uses ``lda.LDA``'s own start (``_initialize``: topic ``i % K`` for token
    ``i``) and sweep (``_sample_topics`` on its shuffled uniform variates),
    in the order its ``fit`` calls them, so the chain is the one ``fit``
    runs with the same ``random_state``.
    """

    name = "lda"

    def __init__(self, X, heldout_idx, K, alpha, eta, seed):
        import lda
        import lda.utils

        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        self.model = lda.LDA(n_topics=K, n_iter=1, alpha=alpha, eta=eta, random_state=seed)
        # lda.LDA turns on INFO logging to the console for every logger
        # (logging.basicConfig) when nothing is configured: undo that.
        root.handlers[:], root.level = handlers, level
        self._shuffle_rng = lda.utils.check_random_state(seed)
        self._rands = self.model._rands.copy()
        self._X = X
        self._heldout = heldout_idx
        self.alpha, self.eta = alpha, eta
        self.setup_seconds = 0.0

    def start(self):
        self.model._initialize(self._X)

    def sweep(self, n):
        for _ in range(n):
            self._shuffle_rng.shuffle(self._rands)
            self.model._sample_topics(self._rands)

    def topic_word_counts(self):
        return np.asarray(self.model.nzw_, dtype=np.float64)

    def heldout_theta(self):
        theta = self.model.ndz_[self._heldout].astype(np.float64) + self.alpha
        return theta / theta.sum(axis=1, keepdims=True)


class TomotopyChain:
    """A tomotopy ``LDAModel`` or ``DMRModel`` chain, advanced by ``train(n)``.

    ``LDAModel``: ``optim_interval=0`` (fixed alpha, like the other
    libraries) unless ``optimize_alpha``.  ``DMRModel``: the collection name
    is each document's metadata and tomotopy's default ``optim_interval``
    (10) is kept, since optimizing the lambdas is what DMR does.
    """

    def __init__(self, split, K, alpha, eta, seed, dmr=False, workers=1,
                 optimize_alpha=False):
        import tomotopy as tp

        cls = tp.DMRModel if dmr else tp.LDAModel
        self.model = cls(k=K, alpha=alpha, eta=eta, seed=seed)
        if not dmr and not optimize_alpha:
            self.model.optim_interval = 0
        t0 = time.perf_counter()
        for toks, g in zip(C._tomotopy_token_lists(split), split.groups):
            if dmr:
                self.model.add_doc(toks, metadata=str(g))
            else:
                self.model.add_doc(toks)
        self.setup_seconds = time.perf_counter() - t0
        self.name = f"tomotopy {'DMR' if dmr else 'LDA'} [{tp.isa}]"
        self.isa = tp.isa
        self.workers = workers
        self.eta = eta
        self._split, self._K = split, K

    def start(self):
        pass  # tomotopy assigns the first topics inside the first train call

    def sweep(self, n):
        self.model.train(n, workers=self.workers)

    def topic_word_counts(self):
        # get_topic_word_dist(normalize=False) is n_kw + eta
        _, phi = C._tomotopy_estimates(self.model, self._split, self._K, normalize=False)
        return phi - self.eta

    def heldout_theta(self):
        theta, _ = C._tomotopy_estimates(self.model, self._split, self._K)
        return theta


def run_chain(chain, split, n_iter, burn_in, thin, clock="wall"):
    """Run ``chain`` for ``n_iter`` sweeps; returns ``(last, averaged)``
    RunResults: its final state, and its tables averaged over the sweeps
    ``kept_sweeps(n_iter, burn_in, thin)`` (those our estimators keep).
    ``clock``: time the sampling in wall-clock or process CPU seconds."""
    timer = C.CLOCK_FUNCTIONS[clock]
    kept = kept_sweeps(n_iter, burn_in, thin)
    stops = sorted(set(kept) | {n_iter})
    t0 = timer()
    chain.start()
    seconds = timer() - t0
    done, counts, theta = 0, 0.0, 0.0
    for stop in stops:
        t0 = timer()
        chain.sweep(stop - done)
        seconds += timer() - t0
        done = stop
        if stop in kept:
            counts = counts + chain.topic_word_counts()
            theta = theta + chain.heldout_theta()
    last = C._finish(f"{chain.name} last state", split, seconds, n_iter,
                     chain.heldout_theta(), chain.topic_word_counts() + chain.eta,
                     setup=chain.setup_seconds, estimate="last state")
    avg = C._finish(f"{chain.name} averaged", split, seconds, n_iter,
                    theta / len(kept), counts / len(kept) + chain.eta,
                    setup=chain.setup_seconds,
                    estimate=f"averaged over sweeps {kept[0]}..{kept[-1]} step {thin}",
                    n_kept=len(kept))
    for res in (last, avg):
        res.extra["isa"] = getattr(chain, "isa", None)
    return last, avg


def run_lda_stepped(split, K, n_iter, burn_in, thin, alpha=0.1, eta=0.01, seed=0,
                    clock="wall"):
    """``lda``: ``(last, averaged)`` estimates of one chain."""
    logging.getLogger("lda").setLevel(logging.ERROR)
    chain = LdaChain(split.X_train_full, split.heldout_idx, K, alpha, eta, seed)
    return run_chain(chain, split, n_iter, burn_in, thin, clock)


def run_tomotopy_stepped(split, K, n_iter, burn_in, thin, alpha=0.1, eta=0.01, seed=0,
                         dmr=False, workers=1, clock="wall"):
    """tomotopy LDA or DMR: ``(last, averaged)`` estimates of one chain."""
    chain = TomotopyChain(split, K, alpha, eta, seed, dmr=dmr, workers=workers)
    return run_chain(chain, split, n_iter, burn_in, thin, clock)
