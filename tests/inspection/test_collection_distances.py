"""collection_distances: the posterior of the distance between two collections' mixtures."""

import numpy as np
import pytest

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda import _chunking
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import collection_distances, effective_sample_size, rhat
from sklearn_clda.inspection._collection_distances import draw_distances
from sklearn_clda.metrics._topics import _topic_distances

pytest.importorskip("pandas")

METRICS = ["hellinger", "tv", "jsd"]


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=4, n_features=40, n_collections=4,
                                  docs_per_collection=25, doc_length=40, random_state=3)
    labels = np.array(["d", "a", "c", "b"])[corpus.groups]
    clda = CompoundLDA(n_components=4, max_iter=60, thin=2, random_state=0)
    return clda.fit(corpus.data, groups=labels), corpus


def _reference(samples, metric):
    """Each draw's matrix of distances by the topics' distance function."""
    return np.stack([_topic_distances(pi, pi, metric) for pi in samples])


@pytest.mark.parametrize("metric", METRICS)
def test_every_pair_summarizes_its_draws(fitted, metric):
    clda, _ = fitted
    out = collection_distances(clda, metric=metric, ci=0.8)
    draws = _reference(clda.collection_topic_samples_, metric)
    labels = clda.groups_.tolist()
    assert out[["a", "b"]].values.tolist() == [
        [labels[i], labels[j]] for i in range(4) for j in range(i + 1, 4)]
    samples = clda.collection_topic_samples_
    for row in out.itertuples():
        a, b = labels.index(row.a), labels.index(row.b)
        d = draws[:, a, b]
        assert row.distance == pytest.approx(d.mean(), rel=1e-12, abs=1e-12)
        lower, upper = np.quantile(d, [0.1, 0.9])
        assert (row.lower, row.upper) == pytest.approx((lower, upper), rel=1e-10, abs=1e-12)
        # R-hat's folded draws tie two draws exactly (those either side of
        # an even count's median), and rounding at 1e-16 breaks the tie
        # either way: ESS and R-hat are checked on the function's own draws.
        own = draw_distances(samples[:, a], samples[:, [b]], metric)[:, 0]
        np.testing.assert_allclose(own, d, rtol=1e-12, atol=1e-15)
        assert row.ess == pytest.approx(float(effective_sample_size(own)), rel=1e-9)
        assert row.rhat == pytest.approx(float(rhat(own[None])), rel=1e-9)
    assert ((out.distance >= 0) & (out.distance <= 1)).all()
    assert out.attrs == {"metric": metric, "ci": 0.8, "n_chains": 1,
                         "collections": labels}


def test_the_topics_order_does_not_matter(fitted):
    clda, _ = fitted
    before = collection_distances(clda)
    perm = np.array([2, 0, 3, 1])
    saved = clda.collection_topic_samples_
    try:
        clda.collection_topic_samples_ = saved[:, :, perm]
        after = collection_distances(clda)
    finally:
        clda.collection_topic_samples_ = saved
    np.testing.assert_allclose(after.distance, before.distance, rtol=1e-12)
    np.testing.assert_allclose(after[["lower", "upper"]], before[["lower", "upper"]],
                               rtol=1e-12)


def test_alike_collections_come_out_close():
    # Collections 0 and 1 draw their documents from one mixture, 2 from another.
    rng = np.random.default_rng(0)
    phi = rng.dirichlet(np.full(30, 0.1), size=3)
    mixtures = [[0.7, 0.3, 0.0], [0.7, 0.3, 0.0], [0.0, 0.2, 0.8]]
    rows, groups = [], []
    for j, pi in enumerate(mixtures):
        for _ in range(60):
            theta = rng.dirichlet(np.asarray(pi) * 5 + 1e-3)
            rows.append(rng.multinomial(60, theta @ phi))
            groups.append(j)
    clda = CompoundLDA(n_components=3, max_iter=150, thin=2, random_state=0)
    clda.fit(np.array(rows), groups=groups)
    out = collection_distances(clda)
    near = out[(out.a == 0) & (out.b == 1)].iloc[0]
    far = out[out.b == 2]
    assert near.upper < far.lower.min()


def test_collections_choose_and_order_the_pairs(fitted):
    clda, _ = fitted
    full = collection_distances(clda, metric="tv")
    some = collection_distances(clda, metric="tv", collections=["c", "a", "d"])
    assert some[["a", "b"]].values.tolist() == [["c", "a"], ["c", "d"], ["a", "d"]]
    assert some.attrs["collections"] == ["c", "a", "d"]
    for row in some.itertuples():
        match = full[((full.a == row.a) & (full.b == row.b))
                     | ((full.a == row.b) & (full.b == row.a))].iloc[0]
        assert row.distance == pytest.approx(match.distance, rel=1e-12)
        assert row.lower == pytest.approx(match.lower, rel=1e-12)


def test_several_chains_pool_their_draws(fitted):
    clda, corpus = fitted
    other = CompoundLDA(**{**clda.get_params(), "random_state": 1}).fit(
        corpus.data, groups=np.array(["d", "a", "c", "b"])[corpus.groups])
    pooled = collection_distances([clda, other], metric="hellinger")
    assert pooled.attrs["n_chains"] == 2
    draws = np.stack([_reference(m.collection_topic_samples_, "hellinger")
                      for m in (clda, other)])
    d = draws[:, :, 0, 1]  # the pair (a, b) = (groups_[0], groups_[1])
    assert pooled.distance[0] == pytest.approx(d.mean(), rel=1e-12)
    assert pooled.rhat[0] == pytest.approx(float(rhat(d)), rel=1e-9)
    assert pooled.ess[0] == pytest.approx(
        float(effective_sample_size(d, multichain=True)), rel=1e-9)


def test_pieces_give_the_same_numbers(fitted, monkeypatch):
    clda, _ = fitted
    whole = collection_distances(clda, metric="jsd")
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", 1)  # one collection b at a time
    np.testing.assert_array_equal(collection_distances(clda, metric="jsd").values,
                                  whole.values)


def test_topic_groups_give_the_themes_distances(fitted):
    clda, _ = fitted
    out = collection_distances(clda, metric="tv", topic_groups={"x": [0, 3], "y": [1, 2]})
    samples = clda.collection_topic_samples_
    themes = np.stack([samples[..., [0, 3]].sum(-1), samples[..., [1, 2]].sum(-1)], -1)
    d = _reference(themes, "tv")[:, 0, 1]
    assert out.distance[0] == pytest.approx(d.mean(), rel=1e-12)
    by_label = collection_distances(clda, metric="tv", topic_groups=[1, 0, 0, 1])
    np.testing.assert_allclose(by_label.distance, out.distance, rtol=1e-12)


@pytest.mark.parametrize("groups, match", [
    ({"x": [0, 1], "y": [1, 2, 3]}, "topic 1 is in 2 groups"),
    ({"x": [0, 1], "y": [2]}, "topic 3 is in 0 groups"),
])
def test_topic_groups_must_partition_the_topics(fitted, groups, match):
    with pytest.raises(ValueError, match=match):
        collection_distances(fitted[0], topic_groups=groups)


@pytest.mark.parametrize("collections, match", [
    (["a"], "needs two collections or more, got 1"),
    (["a", "zz"], "'zz' passed to collection_distances is not a collection"),
    (["a", "b", "a"], "repeats a collection"),
])
def test_bad_collections_are_named(fitted, collections, match):
    with pytest.raises(ValueError, match=match):
        collection_distances(fitted[0], collections=collections)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_one_collection_and_no_draws_are_refused():
    corpus = make_compound_corpus(n_topics=2, n_features=20, n_collections=2,
                                  docs_per_collection=10, doc_length=20, random_state=0)
    one = CompoundLDA(n_components=2, max_iter=20, thin=1, random_state=0).fit(corpus.data)
    with pytest.raises(ValueError, match="fitted with one collection"):
        collection_distances(one)
    vem = CompoundLDA(n_components=2, algorithm="vem", max_iter=5, random_state=0)
    vem.fit(corpus.data, groups=corpus.groups)
    with pytest.raises(ValueError, match="algorithm='vem' gives a point estimate"):
        collection_distances(vem)
    lda = LDAGibbs(n_components=2, max_iter=5, random_state=0).fit(corpus.data)
    with pytest.raises(ValueError, match="needs a fitted CompoundLDA"):
        collection_distances(lda)


@pytest.mark.parametrize("kw", [{"metric": "euclid"}, {"ci": 1.0}, {"ci": 0}])
def test_bad_parameters_are_named(fitted, kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        collection_distances(fitted[0], **kw)
