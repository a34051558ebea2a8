"""A fit knows which documents it saw: a report or an extended chain given
other documents of the same shape does not take them for the fitted ones."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda._fingerprint import fitted_on
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.metrics import topic_sizes


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                                docs_per_collection=20, doc_length=40, random_state=0)


@pytest.fixture(scope="module")
def clda(corpus):
    labels = np.array(["left", "middle", "right"])[corpus.groups]
    return CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0).fit(
        corpus.data, groups=labels), labels


def test_fitted_on_tells_the_fitted_documents_from_others(corpus, clda):
    model, labels = clda
    X, order = corpus.data, np.arange(59, -1, -1)
    assert fitted_on(model, X, labels, "test") is True
    # The same counts in another form, the labels as a list of objects.
    assert fitted_on(model, X.toarray().astype(float), list(labels.astype(object)),
                     "test") is True
    assert fitted_on(model, X, None, "test") is True  # the counts alone
    assert fitted_on(model, X[order], labels[order], "test") is False
    assert fitted_on(model, X, labels[order], "test") is False
    assert fitted_on(model, X[:-1], labels[:-1], "test") is False
    changed = X.tolil()
    changed[0, 0] += 1
    assert fitted_on(model, changed, labels, "test") is False
    renamed = np.where(labels == "left", "west", labels)
    assert fitted_on(model, X, renamed, "test") is False


def test_every_fit_keeps_a_fingerprint_a_stream_none(corpus):
    lda = LDAGibbs(n_components=3, max_iter=5, random_state=0).fit(corpus.data)
    assert fitted_on(lda, corpus.data, None, "test") is True
    assert fitted_on(lda, corpus.data[::-1], None, "test") is False
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # not converged in 5 iterations
        vem.fit(corpus.data, groups=corpus.groups)
    assert fitted_on(vem, corpus.data, corpus.groups, "test") is True
    # partial_fit's doc_topic_ is of its last batch: no fingerprint, and
    # none left over from the fit before.
    lda.partial_fit(corpus.data[:10])
    assert fitted_on(lda, corpus.data, None, "test") is None
    # A continued chain keeps working (it checks its data the same way).
    warm = LDAGibbs(n_components=3, max_iter=5, warm_start=True, random_state=0)
    warm.fit(corpus.data).fit(corpus.data)
    assert warm.n_iter_ == 10
    with pytest.raises(ValueError):
        warm.fit(corpus.data[::-1])


def _tokens(summary):
    return np.array([row["tokens"] for row in sorted(summary["topics"],
                                                      key=lambda r: r["topic"])])


def test_report_folds_in_reordered_documents(corpus, clda, tmp_path):
    pytest.importorskip("jinja2")
    from sklearn_clda.report import write_report

    model, labels = clda
    names = [f"w{i}" for i in range(corpus.data.shape[1])]
    X, order = corpus.data, np.arange(59, -1, -1)
    same = write_report(model, X, names, tmp_path / "same", groups=labels, figures=False)
    assert "document_topics.csv" in same["files"]
    assert_allclose(_tokens(same), topic_sizes(model.doc_topic_, X))
    assert not [note for note in same["notes"] if "not the fitted documents" in note]

    other = write_report(model, X[order], names, tmp_path / "other", groups=labels[order],
                         figures=False)
    assert "document_topics.csv" not in other["files"]
    assert [note for note in other["notes"] if "not the fitted documents" in note]
    # The topic sizes are those of the documents given, not the fit's
    # proportions weighed by the other documents' lengths.
    folded = topic_sizes(model, X[order], groups=labels[order])
    assert_allclose(_tokens(other), folded)
    wrong = topic_sizes(model.doc_topic_, X[order])
    assert np.abs(wrong - folded).max() > 1.0


def test_extend_chain_refuses_reordered_documents(corpus, clda):
    from sklearn_clda.report import extend_chain

    model, labels = clda
    X, order = corpus.data, np.arange(59, -1, -1)
    before = model.n_iter_
    with pytest.raises(ValueError, match="another order of the documents"):
        extend_chain(model, X[order], labels[order], time_budget=5)
    with pytest.raises(ValueError, match="another order of the documents"):
        extend_chain(model, X, labels[order], time_budget=5)
    assert model.n_iter_ == before


def test_chains_of_other_documents_are_refused(corpus, clda):
    from sklearn_clda.inspection import align_chains

    model, labels = clda
    order = np.arange(59, -1, -1)
    other = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=1).fit(
        corpus.data[order], groups=labels[order])
    with pytest.raises(ValueError, match="fitted on different documents"):
        align_chains([model, other])
    same = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=1).fit(
        corpus.data, groups=labels)
    assert align_chains([model, same]).draws.shape[0] == 2


def test_saved_model_keeps_its_fingerprint(corpus, clda, tmp_path):
    import json

    from sklearn_clda import load_model, save_model

    model, labels = clda
    copy = load_model(save_model(model, tmp_path / "m.npz"))
    assert copy._data_fingerprint == model._data_fingerprint
    assert fitted_on(copy, corpus.data, labels, "test") is True
    assert fitted_on(copy, corpus.data[::-1], labels[::-1], "test") is False
    # A model that keeps none (after partial_fit) saves none.
    lda = LDAGibbs(n_components=3, max_iter=5, random_state=0).fit(corpus.data)
    lda.partial_fit(corpus.data[:10])
    assert fitted_on(load_model(save_model(lda, tmp_path / "l.npz")), corpus.data, None,
                     "test") is None
    # A damaged entry is refused, naming it.
    entries = dict(np.load(tmp_path / "m.npz"))
    for bad in ([1, 2], [[[60, 30], 2400, "xyz"], "0" * 32], [[[60, -1], 2400, "0" * 32],
                                                              "0" * 32], {"a": 1}):
        entries["data_fingerprint"] = np.asarray(json.dumps(bad))
        np.savez(tmp_path / "bad.npz", **entries)
        with pytest.raises(ValueError, match="data_fingerprint"):
            load_model(tmp_path / "bad.npz")


def test_lists_and_streams(corpus, clda, tmp_path):
    pytest.importorskip("jinja2")
    from sklearn_clda.report import extend_chain, write_report

    model, labels = clda
    X = corpus.data.toarray()
    assert fitted_on(model, X.tolist(), labels.tolist(), "test") is True
    assert fitted_on(model, tuple(map(tuple, X[::-1])), labels[::-1], "test") is False
    info = extend_chain(model, X.tolist(), labels.tolist(), time_budget=0)
    assert info["rounds"] == 0
    # After partial_fit, doc_topic_ is of the last batch and the model keeps
    # no fingerprint: ten other documents are folded in, with a note.
    stream = CompoundLDA(n_components=3, max_iter=20, random_state=0)
    batch = np.r_[0:4, 20:24, 40:44]
    stream.partial_fit(corpus.data[batch], groups=labels[batch])
    names = [f"w{i}" for i in range(X.shape[1])]
    other = batch + 4  # as many documents, of the same collections
    summary = write_report(stream, corpus.data[other], names, tmp_path / "s",
                           groups=labels[other], figures=False)
    assert "document_topics.csv" not in summary["files"]
    assert any("keeps no record" in note for note in summary["notes"])
