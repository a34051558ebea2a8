"""topic_effects: regressions of topic shares on document covariates, by the
method of composition."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.exceptions import UnseenCollectionWarning
from sklearn_clda.inspection import topic_effects
from sklearn_clda.inspection._composition import WeightedFits, composition_summary

pd = pytest.importorskip("pandas")

K, V = 3, 60


def _planted(n_docs, length, seed, overlap=0.05):
    """Documents of three topics whose shares move with a covariate ``x``:
    their mean is ``(0.2 + 0.5 x, 0.5 - 0.3 x, 0.3 - 0.2 x)``. The topics
    are drawn from a Dirichlet of parameter ``overlap``: at 0.05 their
    words tell them apart, at 1 they share most. Returns the topics,
    counts, ``x`` and the shares drawn."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(V, overlap), size=K)
    x = rng.uniform(size=n_docs)
    mean = np.stack([0.2 + 0.5 * x, 0.5 - 0.3 * x, 0.3 - 0.2 * x], axis=1)
    theta = np.array([rng.dirichlet(5.0 * m) for m in mean])
    rows = []
    for d in range(n_docs):
        z = rng.choice(K, size=length, p=theta[d])
        rows.append(np.bincount([rng.choice(V, p=phi[k]) for k in z], minlength=V))
    return phi, sp.csr_matrix(np.array(rows)), x, theta


def _lda_with_topics(X, phi, prior=1.0):
    """An LDAGibbs fitted to ``X`` briefly, then given the topics ``phi``
    and the prior ``prior``: the regression then sees the shares'
    uncertainty only."""
    model = LDAGibbs(n_components=K, max_iter=5, random_state=0).fit(X)
    model.components_ = phi * 1000.0
    model.doc_topic_prior_ = prior
    return model


@pytest.fixture(scope="module")
def planted():
    phi, X, x, theta = _planted(600, 40, seed=1)
    return _lda_with_topics(X, phi), X, x, theta


def _slopes(table, term="x0"):
    return table[table["term"] == term].set_index("topic")


@pytest.mark.parametrize("n_contrasts", [None, 7])
def test_each_draw_is_a_weighted_fit_with_sandwich_errors(n_contrasts):
    """The sums taken piece by piece give, draw by draw, ``lstsq`` on the
    rows scaled by ``sqrt(w)`` and the HC1 sandwich written out, of the
    coefficients or of combinations ``C.T @ B`` of them (``C`` the
    contrasts: predictions at chosen design rows)."""
    rng = np.random.default_rng(0)
    design = np.c_[np.ones(50), rng.normal(size=(50, 2))]
    weights = rng.uniform(0.2, 1.0, size=50)
    shares = rng.dirichlet(np.ones(5), size=(4, 50))
    C = np.eye(3) if n_contrasts is None else rng.normal(size=(3, n_contrasts))
    fits = WeightedFits(design, weights, 4, 5, "test",
                        contrasts=None if n_contrasts is None else C)
    for s in range(4):
        for lo, hi in ((0, 17), (17, 18), (18, 50)):
            fits.add(lo, hi, s, shares[s, lo:hi])
    values, scale = fits.coefficients()
    assert values.shape == scale.shape == (4, C.shape[1], 5)
    root = np.sqrt(weights)[:, None]
    bread = np.linalg.inv(design.T @ (weights[:, None] * design))
    for s in range(4):
        expected = np.linalg.lstsq(root * design, root * shares[s], rcond=None)[0]
        np.testing.assert_allclose(values[s], C.T @ expected, rtol=1e-9, atol=1e-12)
        residual = shares[s] - design @ expected
        for k in range(5):
            meat = (design * ((weights * residual[:, k]) ** 2)[:, None]).T @ design
            variance = np.diag(C.T @ bread @ meat @ bread @ C) * 50 / (50 - 3)
            np.testing.assert_allclose(scale[s, :, k], np.sqrt(variance), rtol=1e-8)


def test_the_summary_is_that_of_the_mixture_of_the_fits():
    """Mean, standard deviation, quantiles and tail at 0 of the equal
    mixture of scaled t distributions, against a million draws of it."""
    rng = np.random.default_rng(1)
    coef = rng.normal(0.1, 0.05, size=(6, 2, 3))
    scale = rng.uniform(0.01, 0.08, size=(6, 2, 3))
    scale[0, 0, 0] = 0.0  # a fit without residuals: a point mass
    estimate, std_error, lower, upper, p_value = composition_summary(coef, scale, 0.8, 7)
    which = rng.integers(0, 6, size=1_000_000)
    draws = coef[which] + scale[which] * rng.standard_t(7, size=(1_000_000, 1, 1))
    np.testing.assert_allclose(estimate, draws.mean(axis=0), atol=2e-4)
    np.testing.assert_allclose(std_error, draws.std(axis=0), rtol=5e-3)
    np.testing.assert_allclose(lower, np.quantile(draws, 0.1, axis=0), atol=1e-3)
    np.testing.assert_allclose(upper, np.quantile(draws, 0.9, axis=0), atol=1e-3)
    below = (draws < 0).mean(axis=0)
    np.testing.assert_allclose(p_value, 2 * np.minimum(below, 1 - below), atol=2e-3)


def test_planted_slopes_are_recovered(planted):
    model, X, x, theta = planted
    table = topic_effects(model, X, x, n_samples=40, random_state=0)
    assert table.columns.tolist() == ["topic", "term", "estimate", "std_error", "lower",
                                      "upper", "p_value"]
    assert table["term"].tolist() == ["intercept", "x0"] * K
    truth = np.linalg.lstsq(np.c_[np.ones(x.size), x], theta, rcond=None)[0]
    slopes, intercepts = _slopes(table), _slopes(table, "intercept")
    np.testing.assert_allclose(slopes["estimate"], truth[1], atol=0.06)
    np.testing.assert_allclose(intercepts["estimate"], truth[0], atol=0.04)
    assert ((slopes["lower"] < truth[1]) & (truth[1] < slopes["upper"])).all()
    assert (slopes["p_value"] < 1e-6).all()
    assert table.attrs == {"ci": 0.9, "n_samples": 40, "n_documents": 600, "df": 598,
                           "prior": "covariates"}


@pytest.mark.parametrize("length", [40, 5])
def test_intervals_of_unrelated_covariates_cover_zero_at_their_rate(length):
    """Over 20 covariates drawn apart from the documents, the 90% intervals
    of the 60 slopes hold 0 about 90% of the time (0.90 and 0.88 here; 0.78
    to 0.99 is within two binomial standard deviations), also with the
    prior fitted to the covariates, and a p-value is below 0.1 exactly when
    its interval leaves 0 out."""
    phi, X, _, _ = _planted(400, length, seed=1)
    model = _lda_with_topics(X, phi)
    covered, p_values = [], []
    for seed in range(20):
        noise = np.random.default_rng(100 + seed).normal(size=X.shape[0])
        slopes = _slopes(topic_effects(model, X, noise, random_state=seed))
        covered.extend((slopes["lower"] < 0) & (slopes["upper"] > 0))
        p_values.extend(slopes["p_value"])
    assert 0.78 <= np.mean(covered) <= 0.99
    np.testing.assert_array_equal(np.array(p_values) >= 0.1, covered)


def test_short_documents_shrink_the_slopes_unless_the_prior_follows_the_covariates():
    """At five tokens a document, with topics whose words overlap, the
    model's prior pulls the tokens' topics toward the corpus's mixture and
    the slopes to about 0.4 of the planted ones; a prior fitted to the
    covariate gives most of them back (0.86 on average here, 0.57 to 1.4:
    short documents of alike topics say little), their intervals holding
    the planted slopes 6 times of 9."""
    planted = np.array([0.5, -0.3, -0.2])
    ratios, covered = {"model": [], "covariates": []}, []
    for seed in range(3):
        phi, X, x, _ = _planted(400, 5, seed=seed, overlap=1.0)
        model = _lda_with_topics(X, phi)
        for prior in ratios:
            slopes = _slopes(topic_effects(model, X, x, prior=prior, random_state=seed))
            ratios[prior].append(slopes["estimate"].to_numpy() / planted)
            if prior == "covariates":
                covered.extend((slopes["lower"] < planted) & (planted < slopes["upper"]))
    assert np.mean(ratios["model"]) < 0.6
    assert abs(np.mean(ratios["covariates"]) - 1.0) < 0.15
    assert sum(covered) >= 6


def test_the_covariate_prior_follows_the_collections_too():
    from sklearn_clda.inspection._effects import _settled_prior
    from sklearn_clda.inspection._share_draws import ModelPrior, ShareSampler

    phi, X, x, _ = _planted(90, 10, seed=0)
    design = np.c_[np.ones(90), x]
    for n_rows, doc_rows, n_terms in ((3, np.arange(90) % 3, 2 + 3), (1, np.zeros(90), 2)):
        sampler = ShareSampler(phi.T.copy(), X, ModelPrior(np.ones((n_rows, K)), doc_rows),
                               np.random.RandomState(0), "test")
        assert _settled_prior(sampler, design, "test").coef.shape == (n_terms, K)


def test_a_prior_too_heavy_for_its_documents_is_said_not_to_settle():
    phi, X, x, _ = _planted(100, 2, seed=0)
    model = _lda_with_topics(X, phi, prior=500.0)
    with pytest.warns(ConvergenceWarning, match="would need more than 50 refits"):
        topic_effects(model, X, x, random_state=0)


def test_the_shares_uncertainty_widens_the_intervals():
    """Documents of four tokens say little about their shares: the composed
    standard errors exceed those of one regression of the fold-in's mean
    shares, which takes the shares as known."""
    phi, X, x, _ = _planted(400, 4, seed=2)
    model = _lda_with_topics(X, phi)
    slopes = _slopes(topic_effects(model, X, x, n_samples=40, random_state=0))
    design = np.c_[np.ones(x.size), x]
    theta = model.transform(X)
    coef = np.linalg.lstsq(design, theta, rcond=None)[0]
    residual = ((theta - design @ coef) ** 2).sum(axis=0) / (x.size - 2)
    naive = np.sqrt(residual * np.linalg.inv(design.T @ design)[1, 1])
    assert (slopes["std_error"].to_numpy() > 1.5 * naive).all()


def test_compound_lda_samples_each_document_under_its_collections_prior():
    """With topics that all give the same words, the words say nothing and
    every token's topic is drawn from its collection's mixture: the slope
    on the indicator of collection "b" is the difference of the two
    mixtures, and without groups (every document under the pooled mixture)
    it is 0."""
    corpus = make_compound_corpus(n_topics=K, n_features=V, n_collections=2,
                                  docs_per_collection=150, doc_length=20, random_state=0)
    labels = np.array(["a", "b"])[corpus.groups]
    model = CompoundLDA(n_components=K, max_iter=4, random_state=0)
    model.fit(corpus.data, groups=labels)
    pi = np.array([[0.6, 0.3, 0.1], [0.2, 0.3, 0.5]])
    model.collection_topic_ = pi
    model.gamma_ = 1000.0
    model.components_ = np.ones((K, V))
    in_b = (labels == "b").astype(float)
    table = topic_effects(model, corpus.data, in_b, labels, prior="model", random_state=0)
    np.testing.assert_allclose(_slopes(table)["estimate"], pi[1] - pi[0], atol=0.03)
    np.testing.assert_allclose(_slopes(table, "intercept")["estimate"], pi[0], atol=0.03)
    with pytest.warns(UnseenCollectionWarning, match="groups=None"):
        pooled = _slopes(topic_effects(model, corpus.data, in_b, prior="model",
                                       random_state=0))
    np.testing.assert_allclose(pooled["estimate"], 0.0, atol=0.03)


def test_a_pipeline_of_texts_with_a_dataframe_of_covariates():
    corpus = make_compound_corpus(n_topics=K, n_features=30, n_collections=2,
                                  docs_per_collection=60, doc_length=30, random_state=2)
    words = np.array([f"w{i}" for i in range(30)])
    texts = [" ".join(np.repeat(words[row.indices], row.data)) for row in corpus.data]
    pipe = make_pipeline(CountVectorizer(), CompoundLDA(n_components=K, max_iter=40,
                                                        random_state=0))
    pipe.fit(texts, compoundlda__groups=corpus.groups)
    rng = np.random.default_rng(0)
    covariates = pd.DataFrame({"year": rng.integers(2000, 2020, 120).astype(float),
                               "long": (rng.random(120) < 0.5).astype(float)})
    table = topic_effects(pipe, texts, covariates, corpus.groups, topics=[2, 0],
                          random_state=0)
    assert table["topic"].tolist() == [2, 2, 2, 0, 0, 0]
    assert table["term"].tolist() == ["intercept", "year", "long"] * 2
    direct = topic_effects(pipe[-1], pipe[:-1].transform(texts), covariates.to_numpy(),
                           corpus.groups, topics=[2, 0], random_state=0)
    np.testing.assert_array_equal(direct["estimate"], table["estimate"])
    assert direct["term"].tolist() == ["intercept", "x0", "x1"] * 2


def test_a_seed_repeats_and_another_seed_moves_little(planted):
    model, X, x, _ = planted
    one = topic_effects(model, X[:200], x[:200], random_state=5)
    again = topic_effects(model, X[:200], x[:200], random_state=5)
    other = topic_effects(model, X[:200], x[:200], random_state=6)
    pd.testing.assert_frame_equal(one, again)
    assert not one["estimate"].equals(other["estimate"])
    np.testing.assert_allclose(one["estimate"], other["estimate"],
                               atol=float(one["std_error"].max()))


def test_pieces_of_documents_give_the_same_table(planted, monkeypatch):
    from sklearn_clda.inspection import _document_collections as module

    model, X, x, _ = planted
    whole = topic_effects(model, X[:100], x[:100], random_state=0)
    monkeypatch.setattr(module, "PIECE_BYTES", 1)  # a document at a time
    pieces = topic_effects(model, X[:100], x[:100], random_state=0)
    np.testing.assert_allclose(pieces["estimate"], whole["estimate"], atol=0.05)


def test_without_an_intercept_and_with_scikit_learns_lda(planted):
    _, X, x, _ = planted
    lda = LatentDirichletAllocation(n_components=K, max_iter=5, random_state=0).fit(X)
    table = topic_effects(lda, X, pd.Series(x, name="x"), fit_intercept=False,
                          random_state=0)
    assert table["term"].tolist() == ["x"] * K
    assert table.attrs["df"] == X.shape[0] - 1


def test_empty_documents_are_left_out_with_a_warning(planted):
    model, X, x, _ = planted
    X = sp.vstack([sp.csr_matrix((2, V)), X[:50]]).tocsr()
    with pytest.warns(UserWarning, match="leaves out 2 of 52 documents"):
        table = topic_effects(model, X, np.r_[0.0, 1.0, x[:50]], random_state=0)
    assert table.attrs["n_documents"] == 50


@pytest.mark.parametrize(
    "covariates, match",
    [
        (np.zeros((5, 1)), "one row per document"),
        (np.r_[np.nan, np.ones(59)], "not finite .* column 'x0'"),
        (pd.DataFrame({"party": ["a", "b"] * 30}), "must be numbers.*get_dummies"),
        (pd.DataFrame({"c": np.ones(60)}), "column 'c' is determined by"),
        (pd.DataFrame({"u": np.arange(60.0), "v": np.arange(60.0) * 2}),
         "column 'v' is determined by"),
        (pd.DataFrame({"a": np.r_[np.ones(30), np.zeros(30)],
                       "b": np.r_[np.zeros(30), np.ones(30)]}), "column 'b' is determined"),
    ],
)
def test_covariates_a_regression_cannot_use_are_named(planted, covariates, match):
    model, X, _, _ = planted
    with pytest.raises(ValueError, match=match):
        topic_effects(model, X[:60], covariates)


def test_other_wrong_calls_are_named(planted):
    model, X, x, _ = planted
    with pytest.raises(ValueError, match="needs at least 5 documents with words"):
        topic_effects(model, X[:4], x[:4])
    topic_effects(model, X[:5], x[:5])
    with pytest.raises(ValueError, match="needs at least one covariate"):
        topic_effects(model, X[:5], np.empty((5, 0)), fit_intercept=False)
    with pytest.raises(ValueError, match="LDAGibbs has no collections"):
        topic_effects(model, X[:5], x[:5], groups=np.zeros(5))
    with pytest.raises(ValueError, match="topic index 3, out of range"):
        topic_effects(model, X[:60], x[:60], topics=[3])
    with pytest.raises(ValueError, match="features"):
        topic_effects(model, X[:60, :10], x[:60])
    with pytest.raises(ValueError, match="n_samples"):
        topic_effects(model, X[:60], x[:60], n_samples=0)
    with pytest.raises(NotFittedError):
        topic_effects(LDAGibbs(), X[:60], x[:60])
    with pytest.raises(ValueError, match="LatentDirichletAllocation"):
        topic_effects(CountVectorizer().fit(["alpha beta"]), X[:60], x[:60])


def test_nearly_collinear_covariates_are_named(planted):
    model, X, x, _ = planted
    tilted = np.c_[x[:60], x[:60] * (1 + 1e-15 * np.arange(60))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="determined by|nearly collinear"):
            topic_effects(model, X[:60], tilted)


def test_a_prior_set_by_hand_to_nonsense_is_named(planted):
    import copy

    model, X, x, _ = planted
    broken = copy.deepcopy(model)
    broken.doc_topic_prior_ = np.nan
    with pytest.raises(ValueError, match="document prior to be finite"):
        topic_effects(broken, X[:60], x[:60])


def test_documents_are_weighted_by_their_length_against_the_priors_mass(planted,
                                                                        monkeypatch):
    """A short document's shares say less than a long one's: the fits weigh
    document ``d`` by ``n_d / (n_d + mass)``, the prior's mass 3 here."""
    from sklearn_clda.inspection import _effects

    seen = []

    class Recording(_effects.WeightedFits):
        def __init__(self, design, weights, *args):
            seen.append(weights)
            super().__init__(design, weights, *args)

    model, X, x, _ = planted
    X = X[:60].copy()
    X.data[: X.indptr[10]] = 1  # ten shorter documents
    monkeypatch.setattr(_effects, "WeightedFits", Recording)
    topic_effects(model, X, x[:60], random_state=0)
    lengths = X.sum(axis=1).A1
    np.testing.assert_allclose(seen[0], lengths / (lengths + 3.0))
