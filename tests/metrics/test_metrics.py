"""Tests of sklearn_clda.metrics: splitter, perplexity, coherence, topic summaries."""

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import jensenshannon
from scipy.stats import hypergeom
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import NotFittedError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus, make_lda_corpus
from sklearn_clda.metrics import (
    align_topics,
    doc_completion_split,
    heldout_log_likelihood,
    perplexity,
    perplexity_from_estimates,
    top_word_indices,
    top_words,
    topic_coherence,
    topic_sizes,
)
from sklearn_clda.metrics import _perplexity as perplexity_module


def _dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


@pytest.fixture(scope="module")
def lda_corpus():
    return make_lda_corpus(
        n_topics=4, n_features=60, n_samples=200, doc_length=(30, 90),
        doc_topic_prior=0.1, topic_word_prior=0.05, random_state=0,
    )


@pytest.fixture(scope="module")
def compound_corpus():
    return make_compound_corpus(
        n_topics=4, n_features=60, n_collections=3, docs_per_collection=60,
        doc_length=(30, 90), random_state=0,
    )


# ---------------------------------------------------------------- splitter


def test_split_sizes_and_exact_partition(lda_corpus):
    X = lda_corpus.data
    split = doc_completion_split(X, test_size=0.2, word_share=0.5, random_state=0)
    n_heldout = math.ceil(0.2 * X.shape[0])
    n_train = X.shape[0] - n_heldout
    assert split.heldout_index.shape == (n_heldout,)
    assert split.train_index.shape == (n_train,)
    assert np.array_equal(
        np.sort(np.concatenate([split.train_index, split.heldout_index])),
        np.arange(X.shape[0]),
    )
    assert np.all(np.diff(split.heldout_index) > 0)
    assert np.all(np.diff(split.train_index) > 0)
    for name in ("X_train", "X_observed", "X_test"):
        assert sp.issparse(split[name]) and split[name].format == "csr"
        assert split[name].dtype == np.int64
    assert split.X_train.shape == X.shape
    assert split.X_observed.shape == split.X_test.shape == (n_heldout, X.shape[1])
    # Observed + test parts are exactly the held-out documents.
    assert np.array_equal(
        _dense(split.X_observed + split.X_test), _dense(X[split.heldout_index])
    )
    assert split.X_observed.data.min() > 0 and split.X_test.data.min() > 0
    # Observed share per document: floor(share * n_d + 0.5).
    lengths = _dense(X[split.heldout_index]).sum(axis=1)
    assert np.array_equal(
        _dense(split.X_observed).sum(axis=1), np.floor(0.5 * lengths + 0.5)
    )
    assert split.groups_train is None and split.groups_heldout is None


def test_split_x_train_composition(lda_corpus):
    X = lda_corpus.data
    split = doc_completion_split(X, test_size=17, word_share=0.3, random_state=1)
    n_train = X.shape[0] - 17
    assert np.array_equal(split.heldout_rows, n_train + np.arange(17))
    assert np.array_equal(_dense(split.X_train[:n_train]), _dense(X[split.train_index]))
    assert np.array_equal(
        _dense(split.X_train[split.heldout_rows]), _dense(split.X_observed)
    )
    lengths = _dense(X[split.heldout_index]).sum(axis=1)
    assert np.array_equal(
        _dense(split.X_observed).sum(axis=1), np.floor(0.3 * lengths + 0.5)
    )


def test_split_determinism(lda_corpus):
    X = lda_corpus.data
    a = doc_completion_split(X, random_state=42)
    b = doc_completion_split(X, random_state=42)
    c = doc_completion_split(X, random_state=43)
    for key in ("X_train", "X_observed", "X_test"):
        assert (a[key] != b[key]).nnz == 0
    assert np.array_equal(a.heldout_index, b.heldout_index)
    assert not np.array_equal(a.heldout_index, c.heldout_index)
    # An int seed and RandomState(seed) agree; a Generator is accepted.
    d = doc_completion_split(X, random_state=np.random.RandomState(42))
    assert (a.X_test != d.X_test).nnz == 0
    e = doc_completion_split(X, random_state=np.random.default_rng(0))
    assert e.X_test.shape == a.X_test.shape


@pytest.mark.parametrize("chunk", [None, 30])
def test_split_is_a_uniform_random_subset_of_tokens(chunk, monkeypatch):
    """Each row's observed counts follow the multivariate hypergeometric law,
    whether its tokens are shuffled or (a row longer than a chunk) its
    counts drawn from that law directly."""
    if chunk is not None:  # every row of 40 tokens is then longer than a chunk
        monkeypatch.setattr(perplexity_module, "_SPLIT_CHUNK_TOKENS", chunk)
    counts = np.array([12, 5, 3, 0, 20])  # 40 tokens, 20 observed
    n_rows = 4000
    X = sp.csr_matrix(np.tile(counts, (n_rows, 1)))
    split = doc_completion_split(X, test_size=1.0, word_share=0.5, random_state=0)
    obs = _dense(split.X_observed)
    assert np.all(obs.sum(axis=1) == 20)
    N, n = counts.sum(), 20
    for w, K in enumerate(counts):
        if K == 0:
            assert np.all(obs[:, w] == 0)
            continue
        dist = hypergeom(N, K, n)
        assert abs(obs[:, w].mean() - dist.mean()) < 5 * dist.std() / np.sqrt(n_rows)
        assert obs[:, w].var() == pytest.approx(dist.var(), rel=0.1)
    # The whole distribution of one word's observed count.
    freq = np.bincount(obs[:, 0], minlength=13) / n_rows
    assert np.abs(freq - hypergeom(N, 12, n).pmf(np.arange(13))).max() < 0.03


def test_split_chunking_gives_identical_result(lda_corpus, monkeypatch):
    X = lda_corpus.data
    full = doc_completion_split(X, test_size=0.5, random_state=3)
    monkeypatch.setattr(perplexity_module, "_SPLIT_CHUNK_TOKENS", 100)
    chunked = doc_completion_split(X, test_size=0.5, random_state=3)
    assert (full.X_observed != chunked.X_observed).nnz == 0
    assert (full.X_test != chunked.X_test).nnz == 0


def test_split_of_a_row_of_a_billion_tokens_expands_none():
    # (its tokens were expanded: 8 GiB for one of the temporaries, 16 GiB
    # at two billion, which is refused by name)
    X = sp.csr_matrix(np.array([[10**9 - 4, 3, 0], [3, 0, 2]]))
    split = doc_completion_split(X, test_size=1.0, word_share=0.25, random_state=0)
    obs, test = _dense(split.X_observed), _dense(split.X_test)
    np.testing.assert_array_equal(obs + test, X.toarray())
    assert obs[0].sum() == 10**9 // 4 and obs[1].sum() == 1
    with pytest.raises(ValueError, match="document 1 has 2,147,483,647 tokens; a document "
                                         "completion split takes documents of at most "
                                         "999,999,999"):
        doc_completion_split(sp.csr_matrix(np.array([[1, 0], [2**31 - 2, 1]])),
                             test_size=1.0, random_state=0)


def test_split_groups_carried(compound_corpus):
    X = compound_corpus.data
    groups = np.array(["abc"[g] for g in compound_corpus.groups])
    split = doc_completion_split(X, groups, test_size=0.25, random_state=0)
    assert np.array_equal(split.groups_heldout, groups[split.heldout_index])
    assert np.array_equal(
        split.groups_train,
        np.concatenate([groups[split.train_index], groups[split.heldout_index]]),
    )
    assert np.array_equal(split.groups_train[split.heldout_rows], split.groups_heldout)
    # Same split of X with or without groups.
    plain = doc_completion_split(X, test_size=0.25, random_state=0)
    assert (plain.X_test != split.X_test).nnz == 0


def test_split_dense_and_float_input():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(30, 8))
    split = doc_completion_split(X, test_size=0.5, random_state=0)
    assert np.array_equal(
        _dense(split.X_observed + split.X_test), X[split.heldout_index]
    )
    with pytest.warns(UserWarning, match="non-integer"):
        split_f = doc_completion_split(X + 0.2, test_size=0.5, random_state=0)
    assert (split_f.X_test != split.X_test).nnz == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"test_size": 0.0}, "test_size"),
        ({"test_size": 1.5}, "test_size"),
        ({"test_size": 0}, "test_size"),
        ({"test_size": 11}, "test_size"),
        ({"test_size": "half"}, "test_size"),
        ({"word_share": 0.0}, "word_share"),
        ({"word_share": 1.0}, "word_share"),
        ({"groups": [0, 1]}, "labels"),
    ],
)
def test_split_validation(kwargs, match):
    X = np.ones((10, 3))
    with pytest.raises(ValueError, match=match):
        doc_completion_split(X, **kwargs)


def test_split_rejects_negative_and_nan():
    with pytest.raises(ValueError, match="[Nn]egative"):
        doc_completion_split(np.array([[1, -1], [2, 2]]))
    with pytest.raises(ValueError):
        doc_completion_split(np.array([[1, np.nan], [2, 2]]))


# -------------------------------------------------------------- perplexity


def _slow_log_likelihood(theta, phi, X_test):
    theta = theta / theta.sum(axis=1, keepdims=True)
    phi = phi / phi.sum(axis=1, keepdims=True)
    X = _dense(X_test)
    ll, n = 0.0, 0
    for d in range(X.shape[0]):
        for w in range(X.shape[1]):
            for _ in range(int(X[d, w])):
                ll += math.log(sum(theta[d, k] * phi[k, w] for k in range(phi.shape[0])))
                n += 1
    return ll, n


def test_perplexity_from_estimates_matches_loop(monkeypatch):
    rng = np.random.default_rng(0)
    theta = rng.gamma(0.5, size=(15, 4)) + 1e-3  # unnormalized on purpose
    phi = rng.gamma(0.5, size=(4, 12)) + 1e-3
    X_test = sp.csr_matrix(rng.poisson(0.7, size=(15, 12)))
    ll, n = _slow_log_likelihood(theta, phi, X_test)
    expected = math.exp(-ll / n)
    assert perplexity_from_estimates(theta, phi, X_test) == pytest.approx(expected, rel=1e-12)
    assert perplexity_from_estimates(theta, phi, X_test.toarray()) == pytest.approx(
        expected, rel=1e-12
    )
    monkeypatch.setattr(perplexity_module, "_LL_CHUNK_ENTRIES", 7)
    assert perplexity_from_estimates(theta, phi, X_test) == pytest.approx(expected, rel=1e-12)


def test_perplexity_from_estimates_zero_probability_is_inf():
    theta = np.array([[1.0, 0.0]])
    phi = np.array([[1.0, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert perplexity_from_estimates(theta, phi, np.array([[1, 1]])) == np.inf


def test_a_perplexity_past_the_largest_double_is_inf_without_a_warning():
    # a token of probability 1e-309 gives exp(711.5): past 1.8e308 (found by
    # fuzzing: numpy warned of the overflow)
    theta = np.array([[1.0]])
    phi = np.array([[1.0, 1e-309]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert perplexity_from_estimates(theta, phi, np.array([[0, 1]])) == np.inf


@pytest.mark.parametrize(
    "theta, phi, X_test, match",
    [
        (np.ones((2, 3)), np.ones((2, 4)), np.ones((2, 4)), "topics"),
        (np.ones((2, 2)), np.ones((2, 5)), np.ones((2, 4)), "features"),
        (np.ones((3, 2)), np.ones((2, 4)), np.ones((2, 4)), "rows"),
        (np.ones((2, 2)), np.ones((2, 4)), np.zeros((2, 4)), "no tokens"),
        (-np.ones((2, 2)), np.ones((2, 4)), np.ones((2, 4)), "non-negative"),
        (np.zeros((2, 2)), np.ones((2, 4)), np.ones((2, 4)), "summing to zero"),
    ],
)
def test_perplexity_from_estimates_validation(theta, phi, X_test, match):
    with pytest.raises(ValueError, match=match):
        perplexity_from_estimates(theta, phi, X_test)


@pytest.fixture(scope="module")
def lda_split(lda_corpus):
    return doc_completion_split(lda_corpus.data, test_size=0.2, random_state=0)


def _gibbs(K):
    return LDAGibbs(n_components=K, max_iter=150, random_state=0)


def _vb(K):
    return LatentDirichletAllocation(n_components=K, max_iter=20, random_state=0)


@pytest.mark.parametrize("make", [_gibbs, _vb], ids=["LDAGibbs", "sklearn-LDA"])
def test_perplexity_lda_models(make, lda_split):
    split = lda_split
    n_train = len(split.train_index)
    good = make(4).fit(split.X_train[:n_train])
    flat = make(1).fit(split.X_train[:n_train])
    p_good = perplexity(good, split.X_observed, split.X_test)
    p_flat = perplexity(flat, split.X_observed, split.X_test)
    assert 1 < p_good < 0.75 * p_flat
    # Same as plugging in transform's theta and the normalized components_.
    theta = good.transform(split.X_observed)
    assert p_good == pytest.approx(
        perplexity_from_estimates(theta, good.components_, split.X_test), rel=1e-12
    )
    ll = heldout_log_likelihood(good, split.X_observed, split.X_test)
    n_test = split.X_test.sum()
    assert p_good == pytest.approx(math.exp(-ll / n_test), rel=1e-12)
    # groups are ignored by models whose transform does not take them.
    groups = np.arange(split.X_test.shape[0]) % 2
    assert perplexity(good, split.X_observed, split.X_test, groups=groups) == p_good
    # Dense input works too.
    assert perplexity(
        good, split.X_observed.toarray(), split.X_test.toarray()
    ) == pytest.approx(p_good, rel=1e-12)


def test_perplexity_compound_lda_uses_groups(compound_corpus):
    split = doc_completion_split(
        compound_corpus.data, compound_corpus.groups, test_size=0.2, random_state=0
    )
    n_train = len(split.train_index)
    X_fit, g_fit = split.X_train[:n_train], split.groups_train[:n_train]
    good = CompoundLDA(n_components=4, max_iter=150, random_state=0).fit(X_fit, groups=g_fit)
    flat = CompoundLDA(n_components=1, max_iter=50, random_state=0).fit(X_fit, groups=g_fit)
    p_good = perplexity(good, split.X_observed, split.X_test, groups=split.groups_heldout)
    p_flat = perplexity(flat, split.X_observed, split.X_test, groups=split.groups_heldout)
    assert 1 < p_good < 0.9 * p_flat
    theta = good.transform(split.X_observed, groups=split.groups_heldout)
    assert p_good == pytest.approx(
        perplexity_from_estimates(theta, good.components_, split.X_test), rel=1e-12
    )
    ll = heldout_log_likelihood(good, split.X_observed, split.X_test, split.groups_heldout)
    assert p_good == pytest.approx(math.exp(-ll / split.X_test.sum()), rel=1e-12)


def test_paper_protocol_with_chain_estimates(compound_corpus):
    """Observed parts trained on; theta from the chain's doc_topic_."""
    split = doc_completion_split(
        compound_corpus.data, compound_corpus.groups, test_size=0.2, random_state=1
    )
    scores = {}
    for K in (4, 1):
        model = CompoundLDA(n_components=K, max_iter=150, random_state=0)
        model.fit(split.X_train, groups=split.groups_train)
        scores[K] = perplexity_from_estimates(
            model.doc_topic_[split.heldout_rows], model.components_, split.X_test
        )
    assert 1 < scores[4] < 0.9 * scores[1]


def test_perplexity_validation(lda_split):
    split = lda_split
    with pytest.raises(NotFittedError):
        perplexity(LDAGibbs(n_components=2), split.X_observed, split.X_test)
    model = LDAGibbs(n_components=2, max_iter=5, random_state=0).fit(split.X_train)
    with pytest.raises(ValueError, match="same number of documents"):
        perplexity(model, split.X_observed[:3], split.X_test)
    with pytest.raises(ValueError, match="no tokens"):
        perplexity(model, split.X_observed, sp.csr_matrix(split.X_test.shape))
    with pytest.raises(ValueError, match="features"):
        perplexity_from_estimates(
            model.transform(split.X_observed), model.components_, split.X_test[:, :5]
        )


# --------------------------------------------------------------- coherence


def _brute_force_coherence(X, components, m, smoothing=1.0):
    B = _dense(X) > 0
    out = []
    for row in components:
        top = sorted(range(len(row)), key=lambda w: (-row[w], w))[:m]
        total = 0.0
        for i in range(1, m):
            for j in range(i):
                df_j = B[:, top[j]].sum()
                co = (B[:, top[i]] & B[:, top[j]]).sum()
                total += math.log((co + smoothing) / df_j)
        out.append(total)
    return np.array(out)


def test_coherence_matches_brute_force(lda_corpus):
    X = lda_corpus.data
    components = lda_corpus.beta + 0.01  # top words occur in X
    for m in (2, 5, 10):
        assert np.allclose(
            topic_coherence(X, components, top_n=m),
            _brute_force_coherence(X, components, m),
            rtol=1e-12, atol=1e-12,
        )
    assert np.allclose(
        topic_coherence(X, components, top_n=6, smoothing=0.5),
        _brute_force_coherence(X, components, 6, smoothing=0.5),
    )
    assert np.array_equal(topic_coherence(X, components, top_n=1), np.zeros(4))


def test_coherence_small_example():
    # Topic 0: v1 = word 0 (df 3), v2 = word 1 (df 2, co-df 2):
    #   j < i gives log((2 + 1) / 3) = 0; the paper's printed j <= i would
    #   add log((3 + 1) / 3) + log((2 + 1) / 2).
    X = np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1]])
    comps = np.array([[0.6, 0.3, 0.1]])
    assert topic_coherence(X, comps, top_n=2) == pytest.approx([0.0])
    # Three words: pairs (1|0), (2|0), (2|1): log(3/3) + log(2/3) + log(1/2).
    assert topic_coherence(X, comps, top_n=3) == pytest.approx(
        [math.log(2 / 3) + math.log(1 / 2)]
    )


def test_coherence_matches_gensim_u_mass(lda_corpus):
    """Exact relation to gensim's ``CoherenceModel(coherence="u_mass")``.

    gensim segments each topic's top words ``v_1..v_m`` (given in
    decreasing order) with ``s_one_pre`` into the pairs ``(v_i, v_j)``,
    ``j < i`` -- the same pairs and the same conditioning word ``v_j`` as
    Mimno et al. -- scores each with
    ``log((df(v_i, v_j) / D + 1e-12) / (df(v_j) / D))`` from boolean
    document counts over ``D`` documents (0 when ``df(v_j) == 0``) and
    averages over the ``m (m - 1) / 2`` pairs. Hence, for the same top
    words and a dictionary containing all of them::

        topic_coherence(X, comp, m, smoothing=1e-12 * D)
            == m (m - 1) / 2 * gensim_per_topic

    up to rounding. With the default ``smoothing=1`` the values differ by
    ``sum_pairs log((df(v_i, v_j) + 1) / (df(v_i, v_j) + 1e-12 D))``.
    (gensim silently drops top words missing from its dictionary, which
    breaks the relation; the dictionary below holds the whole vocabulary.)
    """
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    X = lda_corpus.data
    n_docs, n_features = X.shape
    names = np.array([f"w{i}" for i in range(n_features)])
    dictionary = Dictionary([names.tolist()])
    texts = [
        np.repeat(names[X[d].indices], X[d].data).tolist() for d in range(n_docs)
    ]
    corpus = [dictionary.doc2bow(t) for t in texts]
    components = lda_corpus.beta  # some top words never occur (df = 0)
    for m in (5, 12):
        top = top_word_indices(components, m)
        cm = CoherenceModel(
            topics=names[top].tolist(), corpus=corpus, dictionary=dictionary,
            coherence="u_mass", topn=m,
        )
        gensim_values = np.array(cm.get_coherence_per_topic())
        n_pairs = m * (m - 1) / 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # df = 0 top words
            ours = topic_coherence(X, components, m, smoothing=1e-12 * n_docs)
            ours_default = topic_coherence(X, components, m)
        assert np.allclose(ours, n_pairs * gensim_values, rtol=1e-12, atol=1e-9)
        # The default smoothing differs by the documented per-pair term.
        B = _dense(X) > 0
        gap = np.zeros(len(top))
        for k, words in enumerate(top):
            for i in range(1, m):
                for j in range(i):
                    if B[:, words[j]].sum():
                        co = (B[:, words[i]] & B[:, words[j]]).sum()
                        gap[k] += math.log((co + 1) / (co + 1e-12 * n_docs))
        assert np.allclose(ours_default, n_pairs * gensim_values + gap, atol=1e-9)


def test_coherence_unseen_top_words_warn_and_are_skipped():
    X = np.array([[1, 1, 0], [1, 0, 0]])
    comps = np.array([[0.1, 0.3, 0.6]])  # top word 2 never occurs
    with pytest.warns(UserWarning, match="never occur"):
        value = topic_coherence(X, comps, top_n=3)
    # Pairs (1|2) and (0|2) are skipped; (0|1): log((1 + 1) / 1).
    assert value == pytest.approx([math.log(2.0)])


def test_coherence_validation():
    X = np.ones((3, 4))
    with pytest.raises(ValueError, match="features"):
        topic_coherence(X, np.ones((2, 5)))
    with pytest.raises(ValueError, match="top_n"):
        topic_coherence(X, np.ones((2, 4)), top_n=5)
    with pytest.raises(ValueError, match="top_n"):
        topic_coherence(X, np.ones((2, 4)), top_n=0)
    with pytest.raises(ValueError, match="smoothing"):
        topic_coherence(X, np.ones((2, 4)), top_n=2, smoothing=0)


# ------------------------------------------------------------- align topics


@pytest.mark.parametrize("metric", ["tv", "hellinger", "jsd"])
def test_align_topics_recovers_permutation(metric):
    rng = np.random.default_rng(0)
    beta = rng.dirichlet(np.full(50, 0.1), size=6)
    perm = rng.permutation(6)
    noisy = beta[perm] * 3.0 + rng.uniform(0, 1e-3, size=beta.shape)  # unnormalized
    permutation, distances = align_topics(beta, noisy, metric=metric)
    assert np.array_equal(noisy[permutation].argmax(axis=1), beta.argmax(axis=1))
    assert np.array_equal(perm[permutation], np.arange(6))
    assert distances.shape == (6,) and np.all(distances < 0.05)
    exact, d0 = align_topics(beta, beta[perm], metric=metric)
    assert np.array_equal(perm[exact], np.arange(6))
    assert np.allclose(d0, 0.0, atol=1e-7)


def test_align_topics_metric_values():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(20), size=3)
    Q = rng.dirichlet(np.ones(20), size=3)
    for metric, dist in [
        ("tv", lambda p, q: 0.5 * np.abs(p - q).sum()),
        ("hellinger", lambda p, q: np.sqrt(0.5 * ((np.sqrt(p) - np.sqrt(q)) ** 2).sum())),
        ("jsd", lambda p, q: jensenshannon(p, q, base=2) ** 2),
    ]:
        perm, d = align_topics(P, Q, metric=metric)
        D = np.array([[dist(p, q) for q in Q] for p in P])
        assert np.allclose(d, D[np.arange(3), perm])
        # Optimal: no other permutation has a smaller total.
        best = min(sum(D[i, s[i]] for i in range(3)) for s in itertools.permutations(range(3)))
        assert d.sum() == pytest.approx(best)


def test_align_topics_rectangular():
    rng = np.random.default_rng(2)
    beta = rng.dirichlet(np.full(30, 0.1), size=5)
    # Fewer topics in beta_a: each is matched, extra rows of beta_b unused.
    perm, d = align_topics(beta[[3, 1]], beta)
    assert perm.tolist() == [3, 1] and np.allclose(d, 0)
    # More topics in beta_a: unmatched rows get -1 and nan.
    perm, d = align_topics(beta, beta[[4, 0]])
    assert perm.tolist() == [1, -1, -1, -1, 0]
    assert np.isnan(d[[1, 2, 3]]).all() and np.allclose(d[[0, 4]], 0)


def test_align_fitted_model_to_truth():
    corpus = make_lda_corpus(
        n_topics=3, n_features=40, n_samples=150, doc_length=60,
        topic_word_prior=0.05, random_state=0,
    )
    lda = LDAGibbs(n_components=3, max_iter=150, random_state=0).fit(corpus.data)
    perm, d = align_topics(corpus.beta, lda.components_, metric="hellinger")
    P = corpus.beta / corpus.beta.sum(axis=1, keepdims=True)
    Q = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    H = np.sqrt(0.5 * ((np.sqrt(P)[:, None, :] - np.sqrt(Q)[None, :, :]) ** 2).sum(axis=-1))
    np.testing.assert_array_equal(perm, H.argmin(axis=1))  # each true topic's nearest fit
    np.testing.assert_allclose(d, H[np.arange(3), perm])
    assert d.max() < 0.2


def test_align_topics_validation():
    with pytest.raises(ValueError, match="metric"):
        align_topics(np.ones((2, 3)), np.ones((2, 3)), metric="l2")
    with pytest.raises(ValueError, match="same number of features"):
        align_topics(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="summing to zero"):
        align_topics(np.array([[0.0, 0.0]]), np.ones((1, 2)))


# ---------------------------------------------------- top words, topic sizes


def test_top_words_and_indices():
    components = np.array([[0.1, 0.5, 0.4, 0.5], [3.0, 1.0, 2.0, 0.0]])
    assert top_word_indices(components, n=3).tolist() == [[1, 3, 2], [0, 2, 1]]
    names = np.array(["a", "b", "c", "d"], dtype=object)
    words = top_words(components, names, n=2)
    assert words.shape == (2, 2) and words.tolist() == [["b", "d"], ["a", "c"]]
    assert top_words(components, list("abcd"), n=4).shape == (2, 4)
    with pytest.raises(ValueError, match="3 names"):
        top_words(components, ["a", "b", "c"], n=2)
    with pytest.raises(ValueError, match="n passed"):
        top_word_indices(components, n=5)


def test_topic_sizes(lda_corpus):
    X = lda_corpus.data
    sizes = topic_sizes(lda_corpus.theta, X)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert np.allclose(sizes, lengths @ lda_corpus.theta)
    assert sizes.sum() == pytest.approx(X.sum())
    # Close to the true number of tokens drawn from each topic.
    truth = lda_corpus.doc_topic_counts.sum(axis=0)
    assert np.allclose(sizes, truth, rtol=0.05)
    lda = LDAGibbs(n_components=4, max_iter=30, random_state=0).fit(X)
    assert np.allclose(topic_sizes(lda, X), lengths @ lda.transform(X))
    assert topic_sizes(lda.doc_topic_, X).sum() == pytest.approx(X.sum())
    with pytest.raises(ValueError, match="rows"):
        topic_sizes(lda_corpus.theta[:5], X)


def test_topic_sizes_compound_lda_groups(compound_corpus):
    X, groups = compound_corpus.data, compound_corpus.groups
    clda = CompoundLDA(n_components=4, max_iter=30, random_state=0).fit(X, groups=groups)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    expected = lengths @ clda.transform(X, groups=groups)
    assert np.allclose(topic_sizes(clda, X, groups=groups), expected)


# ------------------------------------------------------ parameter checks
# validate_params with StrictInterval: True and np.True_ are refused alike.
_ONES = np.ones((10, 4))


@pytest.mark.parametrize("flag", [True, np.True_], ids=["True", "np.True_"])
@pytest.mark.parametrize(
    "call, param",
    [
        (lambda v: top_word_indices(_ONES, n=v), "n"),
        (lambda v: top_words(_ONES, list("abcd"), n=v), "n"),
        (lambda v: topic_coherence(_ONES, _ONES, top_n=v), "top_n"),
        (lambda v: topic_coherence(_ONES, _ONES, top_n=2, smoothing=v), "smoothing"),
        (lambda v: doc_completion_split(_ONES, test_size=v), "test_size"),
        (lambda v: doc_completion_split(_ONES, word_share=v), "word_share"),
    ],
    ids=["top_word_indices", "top_words", "top_n", "smoothing", "test_size",
         "word_share"],
)
def test_boolean_flags_are_not_numbers(call, param, flag):
    with pytest.raises(ValueError, match=rf"'{param}' parameter of \w+ must be"):
        call(flag)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: top_word_indices(_ONES, n=0), r"'n' parameter .* \[1, inf\)"),
        (lambda: top_word_indices(_ONES, n=2.0), r"'n' parameter"),
        (lambda: top_word_indices(_ONES, n=5), r"n passed to top_word_indices must be "
                                               r"at most the number of features \(4\)"),
        (lambda: topic_coherence(_ONES, _ONES, top_n=2, smoothing=np.inf),
         r"'smoothing' parameter .* \(0.0, inf\)"),
        (lambda: doc_completion_split(_ONES, random_state=-1), "'random_state' parameter"),
        (lambda: align_topics(_ONES, _ONES, metric="cosine"), "'metric' parameter"),
        (lambda: topic_sizes(None, _ONES), "'doc_topic' parameter"),
        (lambda: perplexity(np.ones((2, 2)), _ONES, _ONES), "'estimator' parameter"),
    ],
)
def test_parameter_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_numpy_scalars_are_accepted():
    X = np.ones((10, 4))
    assert top_word_indices(X, n=np.int64(2)).shape == (10, 2)
    split = doc_completion_split(X, test_size=np.int32(3), word_share=np.float32(0.5),
                                 random_state=np.random.default_rng(0))
    assert split.X_test.shape == (3, 4)


def test_topic_sizes_dataframe_is_a_matrix_not_an_estimator():
    # A DataFrame has a transform method but is no model: use its values.
    pd = pytest.importorskip("pandas")
    doc_topic = pd.DataFrame([[0.5, 0.5], [1.0, 0.0]])
    X = np.array([[2, 2, 0], [0, 1, 5]])
    np.testing.assert_allclose(topic_sizes(doc_topic, X), [8.0, 2.0])


def test_topic_sizes_with_huge_finite_weights_does_not_overflow():
    # Rows are weights: scaled before summing, so 1e308 + 1e308 is no overflow.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sizes = topic_sizes(np.array([[0.0, 0, 1], [0, 1e308, 1e308]]), np.array([[1], [2]]))
    np.testing.assert_allclose(sizes, [0.0, 1.0, 2.0])


@pytest.mark.parametrize("n", [1, 3, 7, 39, 40, 50])
def test_top_indices_is_its_numpy_equivalent(n):
    # Many ties, a row of equal floors (a topic with few words), NaN: the
    # order of a stable sort of the negated values, ties by column.
    from sklearn_clda.metrics._topics import _top_indices

    rng = np.random.default_rng(2)
    values = rng.integers(0, 5, size=(8, 40)).astype(float)
    values[1] = 0.01
    values[2, :3] = [2.0, 0.01, 3.0]
    values[2, 3:] = 0.01
    values[3, 5] = np.nan
    values[4] = -values[4]
    want = np.argsort(-values, axis=1, kind="stable")[:, :n]
    got = _top_indices(values, n)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
