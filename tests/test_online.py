"""Continued chains (``warm_start``) and streaming (``partial_fit``)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linear_sum_assignment
from scipy.special import digamma

from sklearn_clda import CompoundLDA, LDAGibbs, load_model, save_model
from sklearn_clda import _online
from sklearn_clda.datasets import make_compound_corpus, make_lda_corpus
from sklearn_clda.exceptions import FitInterruptedWarning


@pytest.fixture(scope="module")
def corpus():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                             docs_per_collection=30, doc_length=40, random_state=0)
    return c.data, c.groups


def _fit_kwargs(est, groups):
    return {} if isinstance(est, LDAGibbs) else {"groups": groups}


def _state(est):
    """Every fitted attribute of an estimator, public and private, by value."""
    return {k: pickle.dumps(v) for k, v in vars(est).items()
            if k.endswith("_") or k.startswith("_")}


def _max_tv(estimated, true):
    """Largest total-variation distance between matched rows (up to permutation)."""
    est = estimated / estimated.sum(axis=1, keepdims=True)
    dist = 0.5 * np.abs(est[:, None, :] - true[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(dist)
    return dist[rows, cols].max(), rows, cols


# ------------------------------------------------------------ warm start
CHAINS = [
    (LDAGibbs, {}),
    (CompoundLDA, {}),
    (CompoundLDA, {"algorithm": "mgs"}),
    (CompoundLDA, {"learn_priors": ["gamma", "alpha"], "prior_update_every": 2}),
]


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("Est, params", CHAINS)
def test_two_warm_fits_equal_one_long_chain_bit_for_bit(corpus, Est, params, n_jobs):
    X, g = corpus
    common = dict(n_components=3, burn_in=10, thin=3, random_state=0, n_jobs=n_jobs,
                  evaluate_every=5, **params)
    one = Est(max_iter=60, **common)
    one.fit(X, **_fit_kwargs(one, g))
    two = Est(max_iter=30, warm_start=True, **common)
    two.fit(X, **_fit_kwargs(two, g))
    two = pickle.loads(pickle.dumps(two))  # the kept chain survives a round trip
    two.fit(X, **_fit_kwargs(two, g))
    names = ["components_", "doc_topic_", "bound_"]
    if Est is CompoundLDA:
        names += ["collection_topic_samples_", "collection_topic_", "alpha_", "gamma_"]
    for name in names:
        assert_array_equal(getattr(two, name), getattr(one, name), err_msg=name)
    assert two.n_iter_ == 60 and two.burn_in_ == 10
    assert two.sweep_times_.shape == (60,)
    assert_array_equal(two.trace_["iteration"], one.trace_["iteration"])
    assert_array_equal(two.trace_["log_likelihood"], one.trace_["log_likelihood"])


@pytest.mark.parametrize("Est, params", [(LDAGibbs, {}), (CompoundLDA, {"sampler": "mh"})])
def test_warm_start_continues_the_chain_with_another_n_jobs(corpus, Est, params):
    # A chain started on one machine goes on with another shard count: from
    # its state (the log-likelihood goes on from where it was, it does not
    # fall back to a fresh start's), with new streams that a given sequence
    # of fits reproduces.
    X, g = corpus

    def chain(n_jobs_sequence):
        m = Est(n_components=3, max_iter=20, burn_in=10, evaluate_every=1, warm_start=True,
                random_state=0, n_jobs=n_jobs_sequence[0], **params)
        for n_jobs in n_jobs_sequence:
            m.set_params(n_jobs=n_jobs).fit(X, **_fit_kwargs(m, g))
        return m

    a, b = chain([1, 2, 1]), chain([1, 2, 1])
    assert a.n_iter_ == 60 and a.sweep_times_.shape == (60,)
    for name in ("components_", "doc_topic_", "bound_"):
        assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    ll = dict(zip(a.trace_["iteration"].tolist(), a.trace_["log_likelihood"]))
    climb = ll[20] - ll[1]
    assert abs(ll[21] - ll[20]) < climb / 4 and abs(ll[41] - ll[40]) < climb / 4
    same = chain([1, 1, 1])
    assert not np.array_equal(same.components_, a.components_)


def test_warm_start_keeps_the_samples_and_counts_sweeps_of_the_chain(corpus):
    X, g = corpus
    m = CompoundLDA(n_components=3, max_iter=20, burn_in=10, thin=5, warm_start=True,
                    random_state=0).fit(X, groups=g)
    assert m.collection_topic_samples_.shape[0] == 2  # sweeps 15 and 20
    m.fit(X, groups=g)  # burn-in stays 10: sweeps 25, ..., 40 join
    assert m.collection_topic_samples_.shape[0] == 6
    assert (m.n_iter_, m.burn_in_) == (40, 10)
    # The kept state is one int32 per token.
    assert m._warm_chain.z.dtype == np.int32 and m._warm_chain.z.shape == (m.n_tokens_,)


def test_warm_fit_publishes_draws_that_its_kept_chain_does_not_share(corpus):
    # The chain keeps its own copy of the kept mixtures: a caller writing
    # into collection_topic_samples_ does not change what the next fit
    # continues from.
    X, g = corpus
    m = CompoundLDA(n_components=3, max_iter=20, burn_in=10, thin=5, warm_start=True,
                    random_state=0).fit(X, groups=g)
    first = m.collection_topic_samples_.copy()
    m.collection_topic_samples_[:] = 0.0
    m.fit(X, groups=g)
    assert_array_equal(m.collection_topic_samples_[:2], first)


def test_warm_start_refuses_to_continue_on_other_data_or_settings(corpus):
    X, g = corpus
    m = CompoundLDA(n_components=3, max_iter=20, warm_start=True, random_state=0)
    m.fit(X, groups=g)
    before = _state(m)
    X_other = X.copy()
    X_other[0, 0] += 1
    with pytest.raises(ValueError, match="same X"):
        m.fit(X_other, groups=g)
    with pytest.raises(ValueError, match="same X"):
        m.fit(X, groups=np.roll(g, 1))
    with pytest.raises(ValueError, match="same X"):
        m.fit(X[:-1], groups=g[:-1])
    with pytest.raises(ValueError, match=r"n_components=3 -> 4"):
        m.set_params(n_components=4).fit(X, groups=g)
    with pytest.raises(ValueError, match="burn_in_=10"):
        m.set_params(n_components=3, burn_in=5).fit(X, groups=g)
    assert _state(m) == before
    # With the settings back, the chain continues; an equal number of
    # another type is the same setting.
    m.set_params(burn_in=None, alpha=1, n_components=np.int64(3)).fit(X, groups=g)
    assert m.n_iter_ == 40


@pytest.mark.parametrize("Est, name, bad", [(CompoundLDA, "alpha", -1.0),
                                            (CompoundLDA, "sampler", "nope"),
                                            (LDAGibbs, "topic_word_prior", -5.0)])
def test_partial_fit_validates_settings_changed_after_the_first_call(corpus, Est, name, bad):
    # scikit-learn validates partial_fit's parameters on the first call only.
    X, g = corpus
    model = Est(n_components=3, random_state=0)
    fit = (lambda m: m.partial_fit(X, groups=g)) if Est is CompoundLDA else (
        lambda m: m.partial_fit(X))
    fit(model)
    before = _state(model)
    with pytest.raises(ValueError, match=f"The '{name}' parameter of {Est.__name__}"):
        fit(model.set_params(**{name: bad}))
    assert _state(model) == before


def test_warm_start_without_a_kept_chain_warns_and_starts_a_new_one(corpus):
    X, g = corpus
    m = LDAGibbs(n_components=3, max_iter=20, random_state=0).fit(X)
    assert not hasattr(m, "_warm_chain")
    with pytest.warns(UserWarning, match="keeps no chain"):
        m.set_params(warm_start=True).fit(X)
    fresh = LDAGibbs(n_components=3, max_iter=20, random_state=0).fit(X)
    assert_array_equal(m.components_, fresh.components_)
    assert m.n_iter_ == 20
    # A fit without warm_start drops the kept chain again.
    m.set_params(warm_start=False).fit(X)
    assert not hasattr(m, "_warm_chain")


def test_vem_does_not_support_warm_start(corpus):
    X, g = corpus
    with pytest.raises(ValueError, match="vem.*warm_start"):
        CompoundLDA(n_components=3, algorithm="vem", warm_start=True).fit(X, groups=g)


def test_interrupted_warm_fit_keeps_the_previous_state_and_chain(corpus, monkeypatch):
    X, g = corpus
    m = CompoundLDA(n_components=3, max_iter=30, burn_in=10, thin=3, warm_start=True,
                    random_state=0).fit(X, groups=g)
    before = _state(m)
    original = CompoundLDA._after_sweep

    def interrupted(self, run, sweep, tables, rng, state):
        original(self, run, sweep, tables, rng, state)
        if sweep == 45:
            raise KeyboardInterrupt

    monkeypatch.setattr(CompoundLDA, "_after_sweep", interrupted)
    with pytest.raises(KeyboardInterrupt), pytest.warns(FitInterruptedWarning,
                                                        match="fit was interrupted"):
        m.fit(X, groups=g)
    assert _state(m) == before
    monkeypatch.setattr(CompoundLDA, "_after_sweep", original)
    m.fit(X, groups=g)
    one = CompoundLDA(n_components=3, max_iter=60, burn_in=10, thin=3,
                      random_state=0).fit(X, groups=g)
    assert_array_equal(m.components_, one.components_)
    assert_array_equal(m.collection_topic_samples_, one.collection_topic_samples_)


# ------------------------------------------------------------- streaming
def _stream(model, X, groups=None, batch=200):
    for lo in range(0, X.shape[0], batch):
        kwargs = {} if groups is None else {"groups": groups[lo:lo + batch]}
        model.partial_fit(X[lo:lo + batch], **kwargs)
    return model


def test_partial_fit_recovers_planted_topics():
    c = make_lda_corpus(n_topics=3, n_features=30, n_samples=2000, doc_length=50,
                        random_state=0)
    m = _stream(LDAGibbs(n_components=3, random_state=0), c.data)
    tv, _, _ = _max_tv(m.components_, c.beta)
    assert tv < 0.03
    assert m.n_batches_ == 10 and m.n_tokens_ == c.data.sum()
    # The counts hold exactly the tokens seen (plus the prior).
    assert_allclose(m.components_.sum() - m.components_.size * m.topic_word_prior_,
                     m.n_tokens_, rtol=1e-9)


def test_partial_fit_adds_collections_that_appear_in_later_batches():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                             docs_per_collection=600, doc_length=50, random_state=0)
    labels = np.array(["b", "c", "a"])[c.groups]  # "a" (true row 2) sorts first
    order = np.random.default_rng(0).permutation(c.data.shape[0])
    late = labels[order] == "a"
    order = np.concatenate([order[~late], order[late]])  # "a" only in the last batches
    X, groups = c.data[order], labels[order]
    m = CompoundLDA(n_components=3, random_state=0)
    m.partial_fit(X[:200], groups=groups[:200])
    assert m.groups_.tolist() == ["b", "c"]
    _stream(m, X[200:], groups[200:])
    assert m.groups_.tolist() == ["a", "b", "c"]
    assert m.collection_sizes_.tolist() == [600, 600, 600]
    tv, rows, cols = _max_tv(m.components_, c.beta)
    assert tv < 0.08
    pi = np.empty_like(m.collection_topic_)
    pi[:, cols] = m.collection_topic_[:, rows]
    true_pi = c.pi[[2, 0, 1]]  # rows of "a", "b", "c"
    tv_pi = 0.5 * np.abs(pi - true_pi).sum(axis=1)
    # One pass is rougher than fit (about 0.05 here); the rows are the right
    # collections' (any two true mixtures are at least 0.55 apart).
    assert tv_pi[0] < 0.1 and tv_pi.max() < 0.3


def test_a_collection_keeps_its_mixture_while_it_gets_no_documents():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                             docs_per_collection=600, doc_length=50, random_state=1)
    order = np.random.default_rng(0).permutation(1200)
    first = np.concatenate([order[:400], order[400:][c.groups[order[400:]] == 0][:50]])
    m = _stream(CompoundLDA(n_components=3, random_state=0), c.data[first], c.groups[first])
    pi_1 = m.collection_topic_[1].copy()
    rest = np.setdiff1d(np.flatnonzero(c.groups == 0), first)
    _stream(m, c.data[rest], c.groups[rest])  # collection 1 gets nothing more
    assert m.collection_sizes_[1] == np.sum(c.groups[first] == 1)
    assert_allclose(m.collection_topic_[1], pi_1, rtol=1e-12)
    assert 0.5 * np.abs(m.collection_topic_[0] - pi_1).sum() > 0.1  # the other one moves


def test_partial_fit_memory_does_not_grow_with_batches():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                             docs_per_collection=500, doc_length=40, random_state=0)
    order = np.random.default_rng(0).permutation(1000)
    X, groups = c.data[order], c.groups[order]
    m = CompoundLDA(n_components=3, random_state=0)

    def held_bytes():
        total = 0
        for value in vars(m).values():
            values = value.values() if isinstance(value, dict) else [value]
            total += sum(np.asarray(v).nbytes for v in values if isinstance(v, np.ndarray))
        return total, len(pickle.dumps(m))

    sizes = []
    for lo in range(0, 1000, 100):
        m.partial_fit(X[lo:lo + 100], groups=groups[lo:lo + 100])
        sizes.append(held_bytes())
    assert sizes[1] == sizes[-1]


def test_a_bad_or_interrupted_batch_leaves_the_model_unchanged(corpus, monkeypatch):
    X, g = corpus
    m = CompoundLDA(n_components=3, random_state=0).partial_fit(X[:45], groups=g[:45])
    before = _state(m)
    with pytest.raises(ValueError, match="X has 29 features"):
        m.partial_fit(X[45:, :-1], groups=g[45:])
    with pytest.raises(ValueError, match="groups=None"):
        m.partial_fit(X[45:])
    with pytest.raises(ValueError, match="kind"):
        m.partial_fit(X[45:], groups=np.full(X.shape[0] - 45, "x"))
    assert _state(m) == before

    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(CompoundLDA, "_after_online_step", interrupted)
    with pytest.raises(KeyboardInterrupt), pytest.warns(
        FitInterruptedWarning, match="partial_fit was interrupted.*previous fitted state"
    ):
        m.partial_fit(X[45:], groups=g[45:])
    assert _state(m) == before


def test_partial_fit_refuses_groups_for_a_model_without_collections(corpus):
    X, g = corpus
    m = CompoundLDA(n_components=3, random_state=0).partial_fit(X[:45])
    with pytest.raises(ValueError, match="without groups"):
        m.partial_fit(X[45:], groups=g[45:])


def test_partial_fit_is_reproducible_with_a_seed(corpus):
    X, g = corpus
    a = _stream(CompoundLDA(n_components=3, random_state=3), X, g, batch=30)
    b = _stream(CompoundLDA(n_components=3, random_state=3), X, g, batch=30)
    c = _stream(CompoundLDA(n_components=3, random_state=4), X, g, batch=30)
    assert_array_equal(a.components_, b.components_)
    assert_array_equal(a.collection_topic_, b.collection_topic_)
    assert not np.array_equal(a.components_, c.components_)


def test_partial_fit_continues_a_fitted_model():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                             docs_per_collection=300, doc_length=50, random_state=0)
    order = np.random.default_rng(0).permutation(c.data.shape[0])
    X, g = c.data[order], c.groups[order]
    m = CompoundLDA(n_components=3, max_iter=100, random_state=0).fit(X[:300], groups=g[:300])
    tv_fit, rows_fit, _ = _max_tv(m.components_, c.beta)
    tables = m._table_sums.copy()
    _stream(m, X[300:], g[300:])
    tv, rows, _ = _max_tv(m.components_, c.beta)
    assert tv < 0.05 and tv_fit < 0.05
    assert_array_equal(rows, rows_fit)  # the topics stay in place
    assert m.n_batches_ == 4 and m.n_tokens_ == X.sum()
    assert m.collection_sizes_.tolist() == [300, 300, 300]
    assert np.all(m._table_sums.sum(axis=1) > tables.sum(axis=1))  # kept, and grown


def test_partial_fit_on_a_loaded_model_warns_about_the_missing_tables(tmp_path, corpus):
    X, g = corpus
    m = CompoundLDA(n_components=3, max_iter=20, random_state=0).fit(X, groups=g)
    save_model(m, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    with pytest.warns(UserWarning, match="no collection table counts"):
        loaded.partial_fit(X[:30], groups=g[:30])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.partial_fit(X[:30], groups=g[:30])


def test_a_streamed_model_saves_and_loads(tmp_path, corpus):
    X, g = corpus
    m = _stream(CompoundLDA(n_components=3, random_state=0), X, g, batch=30)
    save_model(m, tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    assert loaded.n_batches_ == 3 and loaded.burn_in_ == 0
    assert_array_equal(loaded.transform(X, groups=g), m.transform(X, groups=g))


def test_partial_fit_requests_groups_like_fit():
    routing = CompoundLDA().get_metadata_routing()
    assert routing.partial_fit.requests == {"groups": True}
    assert routing.fit.requests == {"groups": True}


# --------------------------------------------------------- the pieces
def test_online_step_weighs_pieces_by_their_position():
    # Feed unit pieces, each with its own indicator, and read their weights.
    n_pieces = 50
    counts, mass = np.zeros(n_pieces), 0.0
    for i in range(n_pieces):
        keep, add = _online.online_step(mass, 1.0)
        counts *= keep
        counts[i] += add
        mass += 1.0
    assert_allclose(counts.sum(), n_pieces)  # the counts hold everything seen
    assert counts[0] == 0.0  # the first piece, folded under random topics, is gone
    assert_allclose(counts[1:], counts[1] * np.arange(1, n_pieces), rtol=1e-9)
    keep, add = _online.online_step(np.array([5.0, 5.0]), np.array([0.0, 5.0]))
    assert_array_equal(keep, [1.0, 0.0]) and add[0] == 0.0  # nothing new: unchanged
    # Nothing new before anything was seen: the starting counts stay too.
    keep, add = _online.online_step(0.0, 0.0)
    assert keep == 1.0 and add == 0.0


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_a_first_piece_without_tokens_keeps_the_topics_apart(Est):
    # Documents sorted so that the first sub-batch has no token (they lost
    # every word): it must not wipe the random start that tells the topics
    # apart (all topics came out identical).
    corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=100, doc_length=40,
                             random_state=0)
    empty = sp.csr_matrix((2 * _online.SUB_BATCH_DOCS, 30), dtype=corpus.data.dtype)
    X = sp.vstack([empty, corpus.data]).tocsr()
    first = next(iter(_online.sub_batches(X.shape[0])))
    assert X[first[0]:first[1]].sum() == 0
    model = Est(n_components=3, random_state=0).partial_fit(X)
    spread = np.abs(model.components_ - model.components_[0]).max()
    assert spread > 1.0


def test_expected_tables_are_exact_for_known_and_single_token_counts():
    prior = np.array([[0.3, 2.0]])
    groups = np.zeros(3, dtype=np.int32)
    counts = np.array([[1, 0], [4, 3], [0, 2]])
    exact = [sum(a / (a + l) for l in range(n)) for n, a in ((1, 0.3), (4, 0.3))]
    exact_2 = [sum(2.0 / (2.0 + l) for l in range(n)) for n in (3, 2)]
    out = _online.expected_table_sums(counts, prior, groups, 1)
    assert_allclose(out, [[sum(exact), sum(exact_2)]])
    assert_allclose(out, [[
        0.3 * (digamma(1.3) - digamma(0.3)) + 0.3 * (digamma(4.3) - digamma(0.3)),
        2.0 * (digamma(5.0) - digamma(2.0)) + 2.0 * (digamma(4.0) - digamma(2.0)),
    ]])
    # One token that has the topic with probability q: q tables on average.
    q = np.array([[0.02, 0.5]])
    out = _online.expected_table_sums(q, prior, np.zeros(1, dtype=np.int32), 1,
                                      log_none=np.log1p(-q))
    assert_allclose(out, q)


def test_local_step_matches_a_token_by_token_cvb0_update():
    rng = np.random.default_rng(0)
    K, V = 3, 6
    X = sp.csr_matrix(make_lda_corpus(n_topics=K, n_features=V, n_samples=4,
                                      doc_length=12, random_state=0).data)
    phi = rng.dirichlet(np.ones(V), size=K).T.copy()
    prior = np.array([[0.2, 0.5, 1.0]])
    groups = np.zeros(X.shape[0], dtype=np.int32)
    theta, word_topic, doc_topic, log_none = _online.local_step(X, prior, groups, phi, 7)
    # Reference: the same parallel update written per document and word.
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        words, n = X.indices[lo:hi], X.data[lo:hi].astype(float)
        r = phi[words] * prior[0]
        r /= r.sum(axis=1, keepdims=True)
        for _ in range(7):
            Nd = (n[:, None] * r).sum(axis=0)
            r = phi[words] * (Nd - r + prior[0])
            r /= r.sum(axis=1, keepdims=True)
        Nd = (n[:, None] * r).sum(axis=0)
        assert_allclose(doc_topic[d], Nd)
        assert_allclose(theta[d], (Nd + prior[0]) / (n.sum() + prior.sum()))
        assert_allclose(log_none[d], (n[:, None] * np.log1p(-r)).sum(axis=0))
    assert_allclose(word_topic.sum(axis=0), doc_topic.sum(axis=0))


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize("new_k", [2, 5])
def test_a_changed_n_components_is_named_by_partial_fit_and_ignored_by_inference(
    corpus, Est, new_k
):
    """The fitted model has 3 topics whatever n_components says after it:
    transform and score use the fitted ones (as scikit-learn's LDA does), and
    partial_fit, which would continue them, says what changed and leaves the
    model as it was (it failed deep in numpy or the fold-in kernel)."""
    X, groups = corpus
    model = Est(n_components=3, max_iter=20, random_state=0)
    kw = _fit_kwargs(model, groups)
    model.fit(X, **kw)
    theta, score = model.transform(X, **kw), model.score(X, **kw)
    before = {k: v for k, v in vars(model).items() if k.endswith("_")}
    model.set_params(n_components=new_k)
    assert_array_equal(model.transform(X, **kw), theta)
    assert model.score(X, **kw) == score
    with pytest.raises(ValueError, match=rf"partial_fit continues the fitted model, which has "
                                         rf"3 topics, but n_components is now {new_k}"):
        model.partial_fit(X, **kw)
    assert all(vars(model)[k] is v for k, v in before.items())


@pytest.mark.parametrize("param, value", [("n_jobs", "x"), ("max_doc_update_iter", 0),
                                          ("mean_change_tol", np.nan)])
def test_inference_validates_settings_changed_after_fit(corpus, param, value):
    from sklearn.utils._param_validation import InvalidParameterError

    X, _ = corpus
    model = LDAGibbs(n_components=3, max_iter=5, random_state=0).fit(X)
    model.set_params(**{param: value})
    for call in (model.transform, model.score, model.perplexity):
        with pytest.raises(InvalidParameterError, match=f"'{param}' parameter of LDAGibbs"):
            call(X)
