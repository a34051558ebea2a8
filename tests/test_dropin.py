"""Behaviours that code written for scikit-learn's LatentDirichletAllocation
relies on: the keyword ``normalize`` of ``fit_transform``, the output dtype
of ``transform``, an empty batch in a stream, quiet logging at
``verbose=0``; and what ``save_model`` needs of a model.
"""

import inspect
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.decomposition import LatentDirichletAllocation

from sklearn_clda import CompoundLDA, LDAGibbs, save_model
from sklearn_clda.datasets import make_compound_corpus


@pytest.fixture(scope="module")
def corpus():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                             docs_per_collection=30, doc_length=40, random_state=0)
    return c.data, c.groups


def _fit(Est, X, g, **kw):
    est = Est(n_components=3, max_iter=20, random_state=0, **kw)
    return est.fit(X, groups=g) if Est is CompoundLDA else est.fit(X)


def _call(est, name, X, g, **kw):
    if isinstance(est, CompoundLDA):
        kw["groups"] = g
    return getattr(est, name)(X, **kw)


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_fit_transform_takes_normalize_like_scikit_learns(Est, corpus):
    X, g = corpus
    assert "normalize" in inspect.signature(LatentDirichletAllocation.fit_transform).parameters
    raw = _call(Est(n_components=3, max_iter=20, random_state=0), "fit_transform", X, g,
                normalize=False)
    model = _fit(Est, X, g)
    assert_array_equal(raw, _call(model, "transform", X, g, normalize=False))
    assert_allclose(raw / raw.sum(axis=1, keepdims=True), _call(model, "transform", X, g))
    # A bad value is refused before the fit, which would be wasted.
    est = Est(n_components=3, max_iter=20, random_state=0)
    with pytest.raises(ValueError, match=f"'normalize' parameter of {Est.__name__}.fit_tr"):
        _call(est, "fit_transform", X, g, normalize="no")
    assert not hasattr(est, "components_")


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize("fit_dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("new_dtype", [np.float32, np.float64, np.int64])
def test_transform_returns_the_models_dtype(Est, corpus, fit_dtype, new_dtype):
    # As scikit-learn's LDA: the fitted model's dtype, whatever the dtype of
    # the documents transformed.
    X, g = corpus
    model = _fit(Est, X.astype(fit_dtype), g)
    expected = np.float32 if fit_dtype == np.float32 else np.float64
    assert model.components_.dtype == expected
    assert _call(model, "transform", X.astype(new_dtype), g).dtype == expected


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_a_batch_without_tokens_is_skipped_with_a_warning(Est, corpus):
    X, g = corpus
    X = sp.csr_matrix(X)
    model = Est(n_components=3, random_state=0)
    model = _call(model, "partial_fit", X[:30], g[:30])
    before = {k: v for k, v in vars(model).items() if k.endswith("_")}
    empty = sp.csr_matrix(X[:4].shape, dtype=X.dtype)
    with pytest.warns(UserWarning, match="no tokens.*batch is skipped"):
        assert _call(model, "partial_fit", empty, g[:4]) is model
    after = {k: v for k, v in vars(model).items() if k.endswith("_")}
    assert sorted(after) == sorted(before)
    for name, value in before.items():
        assert after[name] is value
    # The stream goes on.
    _call(model, "partial_fit", X[30:], g[30:])
    assert model.n_batches_ == 2
    # A stream cannot start without tokens.
    with pytest.raises(ValueError, match="cannot start a model"):
        _call(Est(n_components=3), "partial_fit", empty, g[:4])


def test_an_empty_batch_still_gets_its_labels_checked(corpus):
    X, g = corpus
    model = CompoundLDA(n_components=3, random_state=0).partial_fit(X, groups=g)
    empty = sp.csr_matrix((4, X.shape[1]))
    with pytest.raises(ValueError, match="groups"):
        model.partial_fit(empty, groups=g[:3])


_QUIET_OR_VERBOSE = textwrap.dedent("""
    import logging, sys
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="LOG %(message)s")
    from sklearn_clda import LDAGibbs
    from sklearn_clda.datasets import make_lda_corpus
    X = make_lda_corpus(n_topics=2, n_features=20, n_samples=30, doc_length=20,
                        random_state=0).data
    LDAGibbs(n_components=2, max_iter=20, evaluate_every=10, verbose={verbose},
             random_state=0).fit(X)
""")


@pytest.mark.parametrize("verbose", [0, 1])
def test_logging_basic_config_hears_a_verbose_fit_once_and_a_quiet_one_not(verbose):
    proc = subprocess.run(
        [sys.executable, "-c", _QUIET_OR_VERBOSE.format(verbose=verbose)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    logged = [line for line in proc.stderr.splitlines() if "iteration" in line]
    if verbose:
        assert [line.split(",")[0] for line in logged] == [
            f"LOG LDAGibbs iteration {i} of 20" for i in (0, 10, 20)
        ]
        assert "iteration" not in proc.stdout
    else:
        assert logged == [] and proc.stdout == ""


def test_quiet_fits_log_at_debug_level(corpus, caplog):
    X, g = corpus
    with caplog.at_level(logging.DEBUG, logger="sklearn_clda"):
        _fit(LDAGibbs, X, g, evaluate_every=10)
    levels = {r.levelno for r in caplog.records if r.name == "sklearn_clda"}
    assert levels == {logging.DEBUG}


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_save_model_refuses_a_model_missing_an_attribute_load_needs(Est, corpus, tmp_path):
    X, g = corpus
    model = _fit(Est, X, g)
    del model.doc_topic_
    path = tmp_path / "model.npz"
    with pytest.raises(ValueError, match=r"lacks the fitted attributes \['doc_topic_'\]"):
        save_model(model, path)
    assert not path.exists()
