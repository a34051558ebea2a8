"""The benchmark scripts' like-for-like machinery (``benchmarks/``).

Not timed: these check that the scripts parse their options, that the
peers' averaged estimates use the sweeps our estimators keep, and that
running a peer's chain in steps leaves it the chain its own ``fit`` runs.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_clda import LDAGibbs

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "benchmarks")
if not os.path.isdir(BENCH):
    pytest.skip("no benchmarks/ folder next to tests/", allow_module_level=True)
sys.path.insert(0, BENCH)
import _stepped  # noqa: E402


def _counts(seed=0, n_docs=30, n_words=40):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.poisson(0.6, size=(n_docs, n_words)))
    X[np.asarray(X.sum(axis=1)).ravel() == 0, 0] = 1
    return sp.csr_matrix(X, dtype=np.int32)


@pytest.mark.parametrize("script", ["bench_lda_gibbs.py", "bench_clda.py", "bench_speed.py"])
def test_bench_script_parses_its_options(script):
    out = subprocess.run([sys.executable, os.path.join(BENCH, script), "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "--clock" in out.stdout


@pytest.mark.parametrize("n_iter, burn_in, thin", [(12, 6, 3), (10, 4, 4), (7, 6, 1), (5, 4, 3)])
def test_kept_sweeps_are_the_ones_our_estimator_averages(n_iter, burn_in, thin):
    # The same seed runs the same chain whatever max_iter, so the average
    # over kept sweeps equals the mean of last-state fits stopped there.
    X = _counts()
    avg = LDAGibbs(3, max_iter=n_iter, burn_in=burn_in, thin=thin, random_state=0).fit(X)
    states = [LDAGibbs(3, max_iter=k, burn_in=k - 1, thin=1, random_state=0).fit(X)
              for k in _stepped.kept_sweeps(n_iter, burn_in, thin)]
    np.testing.assert_allclose(avg.doc_topic_,
                               np.mean([m.doc_topic_ for m in states], axis=0), rtol=1e-12)
    np.testing.assert_allclose(avg.components_,
                               np.mean([m.components_ for m in states], axis=0), rtol=1e-12)


def test_lda_chain_in_steps_is_the_chain_of_lda_fit():
    lda = pytest.importorskip("lda")
    import logging

    logging.getLogger("lda").setLevel(logging.ERROR)
    X = _counts(1)
    chain = _stepped.LdaChain(X, np.arange(5), 4, 0.1, 0.01, seed=3)
    chain.start()
    for n in (2, 1, 4):
        chain.sweep(n)
    ref = lda.LDA(n_topics=4, n_iter=7, alpha=0.1, eta=0.01, random_state=3).fit(X)
    np.testing.assert_array_equal(chain.model.nzw_, ref.nzw_)
    np.testing.assert_allclose(chain.heldout_theta(), ref.doc_topic_[:5], rtol=1e-12)


def test_tomotopy_chain_in_steps_is_one_chain():
    tp = pytest.importorskip("tomotopy")
    docs = [[f"w{j}" for j in np.flatnonzero(row) for _ in range(row[j])]
            for row in _counts(2).toarray()]

    def model():
        m = tp.LDAModel(k=3, alpha=0.1, eta=0.01, seed=5)
        m.optim_interval = 0
        for d in docs:
            m.add_doc(d)
        return m

    one, steps = model(), model()
    one.train(9, workers=1)
    for n in (4, 3, 2):
        steps.train(n, workers=1)
    for k in range(3):
        np.testing.assert_array_equal(one.get_topic_word_dist(k, normalize=False),
                                      steps.get_topic_word_dist(k, normalize=False))


def test_bench_mixing_transition_rows_leave_the_conditional_invariant():
    # bench_mixing's exact one-step distribution of the sparse kernel: each
    # row sums to 1, and the exact conditional p is stationary (the MH step
    # is p-invariant), which a wrong reverse proposal would break.
    import bench_large_k as B
    import bench_mixing as M

    rng = np.random.default_rng(3)
    K = 7
    nw = rng.integers(0, 5, K).astype(float)
    nd = rng.integers(0, 4, K).astype(float)
    inv = 1.0 / (rng.integers(20, 60, K) + 50 * B.ETA)
    n_w = nw.sum() + 1  # the token itself, left out of nw
    c = 0.03
    p = (nd + B.ALPHA) * (nw + B.ETA) * inv
    p /= p.sum()
    list_part = (nw + B.ETA) * nd * inv
    rows = np.array([M._mh_row(p, s, list_part, nw + B.ETA, c, nw, nd, inv, n_w, K)
                     for s in range(K)])
    assert np.all(rows >= -1e-15)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(p @ rows, p, rtol=1e-10)
    # Off the diagonal: the proposal from s (the token's own count in its
    # word part), normalised here from scratch, times the acceptance.
    def q(s):
        word = nw + B.ETA
        word[s] += 1
        out = list_part + c * word
        return out / out.sum()
    for s in range(K):
        for t in range(K):
            if t != s:
                want = q(s)[t] * min(1.0, p[t] * q(t)[s] / (p[s] * q(s)[t]))
                np.testing.assert_allclose(rows[s, t], want, rtol=1e-12)


def test_bench_threads_times_continuations_of_one_warm_chain():
    # Each worker count continues a copy of the chain warmed up on all
    # workers; the warm chain itself is left as it was.
    import bench_threads

    from sklearn_clda.datasets import make_compound_corpus

    c = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
                             docs_per_collection=40, doc_length=40, random_state=0)
    corpus = bench_threads._common.Corpus(X=sp.csr_matrix(c.data), groups=c.groups,
                                          group_names=None, feature_names=None, source="test")
    for cls in ("LDAGibbs", "CompoundLDA"):
        for sampler in ("auto", "sparse"):
            warm = bench_threads.warm_ours(corpus, cls, 2, 3, 5, sampler)
            assert warm.sampler == sampler
            n_iter = warm.n_iter_
            for w in (1, 2):
                assert bench_threads.ours_rate(corpus, cls, warm, w, 3) > 0
            assert warm.n_iter_ == n_iter == 5


def test_bench_side_by_side_runs_processes_at_once():
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_side_by_side.py"), "--tokens", "40000",
         "--features", "300", "--k", "5", "--processes", "1", "2", "--warmup", "1",
         "--rounds", "2"],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = [cells for cells in map(str.split, out.stdout.splitlines())
            if cells and cells[0].isdigit()]
    assert [r[0] for r in rows] == ["1", "2"] and rows[0][4] == "1.00x"


def test_bench_partition_reports_each_thread_count():
    import bench_partition

    from sklearn_clda.datasets import make_compound_corpus

    c = make_compound_corpus(n_topics=3, n_features=60, n_collections=2,
                             docs_per_collection=60, doc_length=40, random_state=0)
    corpus = bench_partition._common.Corpus(X=sp.csr_matrix(c.data), groups=c.groups,
                                            group_names=None, feature_names=None)
    args = bench_partition._args(["--max-workers", "2", "-K", "4", "--warmup", "2",
                                  "--sweeps", "2"])
    rows = [r.split() for r in bench_partition.table("tiny", corpus, args).splitlines()[2:]]
    # corpus, sweep kind and thread count lead the first row of each block
    assert rows[0][:3] == ["tiny", "LDA", "1"] and rows[1][0] == "2"
    assert rows[2][:2] == ["AGS", "1"] and rows[3][0] == "2"
    assert rows[0][4] == "1.00x" and rows[2][3] == "1.00x"


def test_bench_large_k_fits_time_both_estimators(capsys):
    import bench_large_k as B

    from sklearn_clda.datasets import make_compound_corpus

    c = make_compound_corpus(n_topics=3, n_features=80, n_collections=2,
                             docs_per_collection=30, doc_length=40, random_state=0)
    X = sp.csr_matrix(c.data, dtype=np.int32)
    names = np.array([f"w{j}" for j in range(X.shape[1])])
    corpus = B.C.Corpus(X=X, groups=np.asarray(c.groups).astype(str), group_names=None,
                        feature_names=names)
    args = B.parse_args(["--fits-k", "5", "--fits-sweeps", "4"])
    out = B.part_fits(corpus, args)
    for name in ("LDAGibbs-5", "CompoundLDA-5"):
        assert 0 < out[name]["sweep_s"] and 0 <= out[name]["outside_s"] < out[name]["fit_s"]
        assert out[name]["transform_s"] > 0 and out[name]["score_s"] > 0
    assert "CompoundLDA" in capsys.readouterr().out


def test_bench_large_k_sparse_kernel_with_and_without_table_is_one_chain():
    # Part 4's "sparse" (no word-topic table, as the estimators run it) and
    # "sparse-table" time the same chain.
    import bench_large_k as B

    from sklearn_clda.datasets import make_lda_corpus

    X = sp.csr_matrix(make_lda_corpus(4, 30, 60, 40, random_state=0).data)
    a, b = B._kernel_state(X, 200), B._kernel_state(X, 200)
    for _ in range(3):
        B._kernel_sweep("sparse", a)
        B._kernel_sweep("sparse-table", b)
    np.testing.assert_array_equal(a["z"], b["z"])
    np.testing.assert_array_equal(a["ndk"], b["ndk"])


def test_bench_analysis_times_each_step():
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_analysis.py"), "--collections", "45",
         "--features", "60", "--sweeps", "8", "--vem-iter", "2", "--skip", "report"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    header, _, row = out.stdout.splitlines()[1:4]
    assert header.split() == ["collections", "documents", "fit", "s", "vem", "s", "words", "s",
                              "summary", "s", "heatmap", "s"]
    assert row.split()[:2] == ["45", "180"]


def test_bench_permutation_rates_each_rule_in_both_settings():
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_permutation.py"), "--replications", "2",
         "--permutations", "2", "--sweeps", "20"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    header, _, null, real = out.stdout.splitlines()[:4]
    assert header.split()[:3] == ["setting", "interval", "any"]
    rates = [float(v) for row in (null, real) for v in row.split()[1:]]
    assert [null.split()[0], real.split()[0]] == ["null", "real"]
    assert len(rates) == 12 and all(0 <= r <= 1 for r in rates)


def test_bench_topic_effects_rates_the_three_estimates():
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_topic_effects.py"), "--corpora", "1",
         "--docs", "120", "--max-iter", "5", "--length", "30"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rows = lines[lines.index(next(x for x in lines if x.startswith("estimate"))) + 1:]
    assert [r.split()[0] for r in rows] == ["covariates", "model", "fold-in"]
    coverage = [float(r.split()[-4]) for r in rows]
    assert all(0 <= c <= 1 for c in coverage)


def test_bench_share_curves_rates_both_estimates():
    out = subprocess.run(
        [sys.executable, os.path.join(BENCH, "bench_share_curves.py"), "--corpora", "1",
         "--docs", "120", "--max-iter", "5", "--length", "30"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rows = lines[lines.index(next(x for x in lines if x.startswith("estimate"))) + 1:]
    assert [r.split()[0] for r in rows] == ["topic_share_curves", "fold-in"]
    coverage = [float(r.split()[-5]) for r in rows]
    assert all(0 <= c <= 1 for c in coverage)


def test_bench_inference_runs_each_library_at_its_rule_and_converged():
    import bench_inference as bi

    pytest.importorskip("gensim")  # no gensim for Python 3.14 (pyproject.toml)
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel
    from sklearn.decomposition import LatentDirichletAllocation

    X = _counts(n_docs=40, n_words=60)
    libs = [bi.Ours("LDAGibbs", LDAGibbs(n_components=4, max_iter=20, random_state=0).fit(X)),
            bi.Sklearn(LatentDirichletAllocation(n_components=4, max_iter=5,
                                                 random_state=0).fit(X)),
            bi.Gensim(LdaModel(corpus=list(Sparse2Corpus(X, documents_columns=False)),
                               num_topics=4, passes=2, random_state=0))]
    rows = np.array([3, 0, 17, 17])
    assert libs[2].batch(X, rows) == list(Sparse2Corpus(X[rows], documents_columns=False))
    def rule(lib):
        if isinstance(lib, bi.Gensim):
            return lib.model.iterations, lib.model.gamma_threshold
        return lib.model.get_params()

    for lib in libs:
        batch = lib.batch(X, rows)
        default, kept = lib.infer(batch), rule(lib)
        converged = lib.converged(batch)
        assert rule(lib) == kept  # the default rule is back
        assert converged.shape == default.shape == (4, 4)
        np.testing.assert_allclose(converged.sum(axis=1), 1.0, rtol=1e-6)  # gensim: float32
        assert np.abs(default - converged).max() < 0.2
        if not isinstance(lib, bi.Gensim):  # gensim starts each call at random
            assert not np.array_equal(converged, default)
            np.testing.assert_array_equal(lib.infer(batch), default)
