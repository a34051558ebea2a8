"""Fits that fail or are interrupted leave no half-state; every wait can be
interrupted; settings at and beyond their bounds get clear errors.

The interruption tests send a real SIGINT to a child Python process (as
Ctrl-C in a terminal does) and read what it reports, so a stray signal can
never reach the test runner itself.
"""

import json
import logging
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda._base import MAX_CONCENTRATION
from sklearn_clda._sweeper import _shard_count, _ShardedSweeper
from sklearn_clda.datasets import make_compound_corpus, make_lda_corpus
from sklearn_clda.exceptions import ManyCollectionsWarning

from _signals import interruptible_child


@pytest.fixture(scope="module")
def corpus():
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                             docs_per_collection=30, doc_length=40, random_state=0)
    return c.data, c.groups


def _fitted_state(est):
    return {k: v for k, v in vars(est).items() if k.endswith("_")}


def _assert_same_state(before, after):
    assert sorted(before) == sorted(after)
    for name, value in before.items():
        if isinstance(value, np.ndarray):
            assert_array_equal(after[name], value)
        elif isinstance(value, dict):
            assert sorted(value) == sorted(after[name])
        else:
            assert after[name] == value


# ------------------------------------------------------- all or nothing
def test_failed_refit_keeps_the_previous_model(corpus):
    X, g = corpus
    model = CompoundLDA(n_components=3, max_iter=20, random_state=0).fit(X, groups=g)
    before = _fitted_state(model)
    new_labels = np.array([f"new{i % 2}" for i in range(X.shape[0])])
    with pytest.raises(ValueError, match="burn_in=50 must be smaller"):
        model.set_params(burn_in=50).fit(X, groups=new_labels)
    _assert_same_state(before, _fitted_state(model))
    # The old collections are still the model's: new labels are unseen.
    with pytest.warns(UserWarning, match="not seen in fit"):
        model.transform(X[:3], groups=new_labels[:3])


def test_failed_first_fit_leaves_the_estimator_unfitted(corpus):
    X, g = corpus
    model = CompoundLDA(n_components=3, max_iter=10, burn_in=10)
    with pytest.raises(ValueError, match="burn_in"):
        model.fit(X, groups=g)
    assert _fitted_state(model) == {}
    with pytest.raises(NotFittedError):
        check_is_fitted(model)


def test_refit_with_another_algorithm_drops_stale_attributes(corpus):
    X, g = corpus
    model = CompoundLDA(n_components=3, max_iter=20, algorithm="mgs", random_state=0)
    model.fit(X, groups=g)
    assert hasattr(model, "acceptance_rate_")
    model.set_params(algorithm="ags").fit(X, groups=g)
    assert not hasattr(model, "acceptance_rate_")
    assert not hasattr(model, "step_size_")


_INTERRUPT_SCRIPT = textwrap.dedent("""
    import json, os, signal, sys, threading, time, warnings
    import numpy as np
    from sklearn_clda import CompoundLDA, LDAGibbs
    from sklearn_clda.datasets import make_compound_corpus

    what, n_jobs = sys.argv[1], int(sys.argv[2])
    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                             docs_per_collection=40, doc_length=40, random_state=0)
    out = {}
    if what == "fit":
        est = CompoundLDA(n_components=3, max_iter=20, random_state=0, n_jobs=n_jobs)
        est.fit(c.data, groups=c.groups)
        before = est.components_.copy()
        est.set_params(max_iter=10**7)
        call = lambda: est.fit(c.data, groups=c.groups)
    else:
        rng = np.random.default_rng(0)
        X = rng.poisson(0.05, size=(6000, 2000))
        est = LDAGibbs(n_components=200, max_iter=2, random_state=0, n_jobs=n_jobs,
                       max_doc_update_iter=10**6, mean_change_tol=0.0).fit(X[:200])
        before = est.components_.copy()
        call = lambda: getattr(est, what)(X)
    fired = []
    def interrupt():
        fired.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Timer(1.0, interrupt).start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
            out["interrupted"] = False
        except KeyboardInterrupt:
            out["interrupted"] = True
            out["latency"] = time.perf_counter() - fired[0]
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    out["unchanged"] = bool(np.array_equal(est.components_, before))
    out["max_iter_attr"] = int(est.n_iter_)
    print(json.dumps(out))
""")


def _interrupt(what, n_jobs):
    with interruptible_child(
        [sys.executable, "-c", _INTERRUPT_SCRIPT, what, str(n_jobs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_ctrl_c_during_fit_keeps_the_previous_model_and_says_so(n_jobs):
    out = _interrupt("fit", n_jobs)
    assert out["interrupted"]
    assert out["unchanged"] and out["max_iter_attr"] == 20
    assert any(
        w.startswith("FitInterruptedWarning") and "keeps its previous fitted state" in w
        for w in out["warnings"]
    ), out["warnings"]
    assert out["latency"] < 0.5


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("method", ["transform", "score"])
def test_ctrl_c_lands_quickly_in_long_inference(method, n_jobs):
    # 6,000 documents at K=200 with a fold-in that never converges: minutes
    # of work in one nogil call before inference was cut into pieces.
    out = _interrupt(method, n_jobs)
    assert out["interrupted"]
    assert out["latency"] < 0.5, out["latency"]


# --------------------------------------------------------- settings
@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize(
    "params, match",
    [
        (dict(n_components=True), "n_components.* must be an int .*Got True"),
        (dict(n_components=np.True_), r"n_components.*Got (np\.True_|True)"),  # NumPy 1.x: True
        (dict(n_components=2**63 - 1), "n_components"),
        (dict(max_iter=False), "max_iter"),
        (dict(n_jobs=0), "n_jobs == 0"),
    ],
)
def test_integer_settings_get_clear_errors(Est, params, match):
    X = make_lda_corpus(n_topics=2, n_features=10, n_samples=10, doc_length=10,
                        random_state=0).data
    est = Est(max_iter=4, **{k: v for k, v in params.items() if k != "max_iter"})
    if "max_iter" in params:
        est.set_params(max_iter=params["max_iter"])
    with pytest.raises(ValueError, match=match):
        est.fit(X)
    assert _fitted_state(est) == {}


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize("value", ["no", "False", [False], 0, None])
def test_transform_normalize_must_be_a_bool(Est, value):
    X = make_lda_corpus(n_topics=2, n_features=10, n_samples=10, doc_length=10,
                        random_state=0).data
    est = Est(n_components=2, max_iter=4, random_state=0).fit(X)
    with pytest.raises(ValueError, match=f"'normalize' parameter of {Est.__name__}.transform"):
        est.transform(X, normalize=value)
    assert_array_equal(est.transform(X, normalize=np.False_), est.transform(X, normalize=False))


@pytest.mark.parametrize(
    "Est, name", [(LDAGibbs, "doc_topic_prior"), (LDAGibbs, "topic_word_prior"),
                  (CompoundLDA, "alpha"), (CompoundLDA, "gamma"), (CompoundLDA, "eta")],
)
def test_concentrations_beyond_the_supported_range_are_refused(Est, name):
    X = make_lda_corpus(n_topics=2, n_features=10, n_samples=10, doc_length=10,
                        random_state=0).data
    for value in (1e308, 0.0, 1e-300, np.inf):
        with pytest.raises(ValueError, match=name):
            Est(n_components=2, max_iter=4, **{name: value}).fit(X)
    if name == "doc_topic_prior":
        with pytest.raises(ValueError, match="doc_topic_prior must be"):
            Est(n_components=2, max_iter=4, doc_topic_prior=[0.1, 1e308]).fit(X)
        for value in ({"a": 1}, ["a", "b"]):  # (a dict passes as array-like)
            with pytest.raises(ValueError, match="doc_topic_prior must be a float or an array"):
                Est(n_components=2, max_iter=4, doc_topic_prior=value).fit(X)
        # A 0-d array passes as array-like, not as a Real: the same range.
        for value in (0.0, -1.0, np.nan, np.inf, 1e308):
            with pytest.raises(ValueError, match=r"doc_topic_prior must be in \[1e-100"):
                Est(n_components=2, max_iter=4, doc_topic_prior=np.array(value)).fit(X)
        as_array = Est(n_components=2, max_iter=4, random_state=0,
                       doc_topic_prior=np.array(0.3)).fit(X)
        as_float = Est(n_components=2, max_iter=4, random_state=0,
                       doc_topic_prior=0.3).fit(X)
        assert_array_equal(as_array.doc_topic_, as_float.doc_topic_)
        assert as_array.doc_topic_prior_ == 0.3


@pytest.mark.parametrize("value", [1e-100, MAX_CONCENTRATION])
@pytest.mark.parametrize("name", ["doc_topic_prior", "topic_word_prior"])
def test_concentrations_at_the_bounds_give_finite_results(name, value):
    X = make_lda_corpus(n_topics=2, n_features=10, n_samples=10, doc_length=10,
                        random_state=0).data
    est = LDAGibbs(n_components=3, max_iter=6, random_state=0, **{name: value}).fit(X)
    theta = est.transform(X)
    assert np.all(np.isfinite(theta)) and np.allclose(theta.sum(axis=1), 1.0)
    assert np.isfinite(est.score(X)) and np.isfinite(est.perplexity(X))
    assert np.all(np.isfinite(est.trace_["log_likelihood"]))


def test_numpy_bools_are_accepted_like_bools(corpus):
    X, g = corpus
    a = CompoundLDA(n_components=3, max_iter=20, burn_in=10, prior_update_every=2,
                    learn_priors=np.True_, random_state=0).fit(X, groups=g)
    b = CompoundLDA(n_components=3, max_iter=20, burn_in=10, prior_update_every=2,
                    learn_priors=True, random_state=0).fit(X, groups=g)
    assert a.gamma_ == b.gamma_ and a.eta_ == b.eta_


# ------------------------------------------------------------ n_jobs
def test_shards_are_capped_by_the_data():
    assert _shard_count(1000, n_docs=50, n_tokens=10**9) == 50
    assert _shard_count(1000, n_docs=10**6, n_tokens=5000) == 4  # 1024 tokens each
    assert _shard_count(3, n_docs=10**6, n_tokens=10**9) == 3
    assert _shard_count(None, n_docs=10, n_tokens=10**6) == 1


def test_n_jobs_1000_uses_at_most_one_thread_per_cpu(corpus):
    X, _ = corpus
    est = LDAGibbs(n_components=3, max_iter=3, random_state=0, n_jobs=1000)
    from sklearn_clda._sweeper import _GibbsState

    state = _GibbsState(X.tocsr(), np.zeros(X.shape[0]), 3, np.random.default_rng(0))
    sweeper = _ShardedSweeper(state, 1000, np.random.SeedSequence(0), 0)
    assert len(sweeper.shards) == min(1000, X.shape[0])
    assert len(sweeper.private) <= (os.cpu_count() or 1)
    est.fit(X)  # runs, with bounded threads and tables


def test_n_jobs_results_do_not_depend_on_the_number_of_cpus(monkeypatch):
    # A thread that runs several shards must give each the start-of-sweep
    # counts, so that a machine with fewer CPUs gives the same chain.
    from sklearn_clda import _sweeper

    X = make_lda_corpus(n_topics=4, n_features=100, n_samples=200, doc_length=60,
                        random_state=1).data
    results = []
    for cpus in (1, 2, 3, 8):
        monkeypatch.setattr(_sweeper, "_n_threads", lambda n, c=cpus: max(1, min(n, c)))
        est = LDAGibbs(n_components=4, max_iter=15, random_state=0, n_jobs=8).fit(X)
        results.append(est.components_)
    for other in results[1:]:
        assert_array_equal(other, results[0])
    serial = LDAGibbs(n_components=4, max_iter=15, random_state=0).fit(X)
    assert not np.array_equal(serial.components_, results[0])  # really 8 shards


# -------------------------------------------------- many collections
def test_one_collection_per_document_warns(corpus):
    X, _ = corpus
    ids = np.arange(X.shape[0])
    with pytest.warns(ManyCollectionsWarning, match="did you pass an id column"):
        CompoundLDA(n_components=3, max_iter=4, random_state=0).fit(X, groups=ids)


def test_a_few_collections_do_not_warn(corpus):
    X, g = corpus
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CompoundLDA(n_components=3, max_iter=4, random_state=0).fit(X, groups=g)


# ---------------------------------------------------------- messages
def test_messages_go_through_the_package_logger(corpus, caplog):
    X, g = corpus
    with caplog.at_level(logging.DEBUG, logger="sklearn_clda"):
        CompoundLDA(n_components=3, max_iter=6, evaluate_every=2, random_state=0).fit(
            X, groups=g
        )
    lines = [r.getMessage() for r in caplog.records if r.name == "sklearn_clda"]
    assert len(lines) == 4 and all("log-likelihood" in m for m in lines)
    assert lines[-1].startswith("CompoundLDA iteration 6 of 6")


def test_verbose_prints_evaluations_and_no_bar_in_a_log_file(tmp_path):
    script = textwrap.dedent("""
        from sklearn_clda import LDAGibbs
        from sklearn_clda.datasets import make_lda_corpus
        X = make_lda_corpus(n_topics=2, n_features=20, n_samples=30, doc_length=20,
                            random_state=0).data
        LDAGibbs(n_components=2, max_iter=300, evaluate_every=100, verbose=1,
                 random_state=0).fit(X)
    """)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with open(out, "w") as fo, open(err, "w") as fe:
        proc = subprocess.run([sys.executable, "-c", script], stdout=fo, stderr=fe,
                              timeout=120)
    assert proc.returncode == 0, err.read_text()
    lines = out.read_text().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        f"LDAGibbs iteration {i} of 300" for i in (0, 100, 200, 300)
    ]
    # The progress bar writes carriage returns; a file must get none.
    assert "\r" not in err.read_text()


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize("int_type", [np.int8, np.uint8, np.int16])
def test_narrow_numpy_integers_work_like_python_ints(Est, int_type):
    # Under NumPy 2's promotion rules `200 % np.int8(10)` overflows: the
    # settings must be used as Python ints.
    X = make_lda_corpus(n_topics=2, n_features=30, n_samples=120, doc_length=30,
                        random_state=0).data
    ints = dict(n_components=2, max_iter=127, burn_in=100, thin=3, evaluate_every=40,
                max_doc_update_iter=50, prior_update_every=5)
    kw = dict(random_state=0, learn_priors=True)
    if Est is CompoundLDA:
        kw["algorithm"] = "ags"
    python_ints = Est(**ints, **kw).fit(X)
    numpy_ints = Est(**{k: int_type(v) for k, v in ints.items()}, **kw).fit(X)
    assert_array_equal(numpy_ints.components_, python_ints.components_)
    assert_array_equal(numpy_ints.trace_["iteration"], python_ints.trace_["iteration"])
    assert_array_equal(numpy_ints.transform(X[:5]), python_ints.transform(X[:5]))


def _constraint_tables():
    """Every ``(owner, {parameter: constraints})`` of the public API: the
    estimators' ``_parameter_constraints`` and the tables of the functions
    and methods wrapped by ``validate_params``."""
    import importlib
    import inspect

    modules = ["sklearn_clda", "sklearn_clda.inspection", "sklearn_clda.metrics",
               "sklearn_clda.plotting", "sklearn_clda.datasets", "sklearn_clda.dask"]
    seen, tables = set(), []
    for name in modules:
        module = importlib.import_module(name)
        for public in module.__all__:
            obj = getattr(module, public)
            found = [getattr(obj, "_parameter_constraints", None)]
            methods = [m for _, m in inspect.getmembers(obj)] if inspect.isclass(obj) else [obj]
            found += [getattr(getattr(m, "__func__", m), "_skl_parameter_constraints", None)
                      for m in methods]
            for table in found:
                if isinstance(table, dict) and id(table) not in seen:
                    seen.add(id(table))
                    tables.append((f"{name}.{public}", table))
    return tables


def test_no_parameter_takes_a_bool_for_a_number():
    # scikit-learn's Interval lets True through as 1 (bool subclasses int):
    # every numeric range of the public API is a StrictInterval instead.
    from sklearn.utils._param_validation import Interval

    from sklearn_clda._corpus import StrictInterval

    tables = _constraint_tables()
    assert len(tables) > 30  # the walk found the API
    loose = [f"{owner}: {param}" for owner, table in tables
             for param, rules in table.items() for rule in rules
             if isinstance(rule, Interval) and not isinstance(rule, StrictInterval)]
    assert not loose, loose


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_more_tokens_than_supported_are_named_before_any_memory_estimate(Est, monkeypatch):
    # 2**31 + 10 tokens: the memory check ran first and advised fewer topics
    # (on a machine of 1 GiB here, which such a fit never fits in).
    import scipy.sparse as sp

    real = os.sysconf
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 2**30 // 4096}
    monkeypatch.setattr(os, "sysconf", lambda name: pages.get(name) or real(name))
    X = sp.csr_matrix(np.array([[2**30, 2**30, 10]], dtype=np.int64))
    with pytest.raises(ValueError, match=r"has 2,147,483,658 tokens; at most "
                                         r"2,147,483,647 are supported.*partial_fit"):
        Est(n_components=2).fit(X)


_HAND_SET = {
    # attribute: bad values (NaN or wrong-shaped ones gave NaN scores, a
    # crash in a broadcast or an AttributeError deep inside)
    "components_": [lambda m: m.components_.tolist(), lambda m: _sparse(m.components_),
                    lambda m: m.components_[:0]],
    "doc_topic_prior_": [np.nan, 0.0, -1.0, np.array([1.0, -1.0, 1.0]), np.ones(2), "0.1"],
    "topic_word_prior_": [np.inf, 0.0],
    "gamma_": [np.nan, 0.0, -1.0, np.ones(3)],
    "alpha_": [np.inf, np.array([1.0, 1.0, 1.0])],
    "eta_": [np.nan],
    "collection_topic_": [lambda m: np.full_like(m.collection_topic_, np.nan),
                          lambda m: -m.collection_topic_,
                          lambda m: np.zeros_like(m.collection_topic_),
                          lambda m: m.collection_topic_[:, :2], lambda m: m.collection_topic_[:2]],
    "collection_sizes_": [lambda m: -m.collection_sizes_, lambda m: m.collection_sizes_[:1]],
}


def _sparse(a):
    import scipy.sparse as sp

    return sp.csr_matrix(a)


def _hand_set_cases():
    for attr, values in _HAND_SET.items():
        ests = ([LDAGibbs] if attr.endswith("prior_") else
                [CompoundLDA] if attr != "components_" else [LDAGibbs, CompoundLDA])
        for Est in ests:
            for i, value in enumerate(values):
                yield pytest.param(Est, attr, value, id=f"{Est.__name__}-{attr}-{i}")


@pytest.mark.parametrize("Est, attr, value", list(_hand_set_cases()))
def test_fitted_attributes_set_by_hand_are_named_when_unusable(corpus, Est, attr, value):
    """The fitted attributes that inference and partial_fit read may be set by
    hand (a migration sets components_ and the priors); what they cannot use
    is refused by name, and partial_fit leaves the model as it was."""
    X, groups = corpus
    model = Est(n_components=3, max_iter=3, random_state=0)
    model.fit(X, **({"groups": groups} if Est is CompoundLDA else {}))
    setattr(model, attr, value(model) if callable(value) else value)
    kw = {"groups": groups[:4]} if Est is CompoundLDA else {}
    before = dict(vars(model))
    for call in (model.transform, model.score, model.perplexity, model.partial_fit):
        with pytest.raises(ValueError, match=rf"{Est.__name__}\.{call.__name__}: {attr} must be"):
            call(X[:4], **kw)
    assert all(vars(model)[k] is v for k, v in before.items())


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_fitted_attributes_set_by_hand_in_other_usable_forms_are_taken(corpus, Est):
    X, groups = corpus
    kw = {"groups": groups} if Est is CompoundLDA else {}
    model = Est(n_components=3, max_iter=3, random_state=0).fit(X, **kw)
    expected = model.transform(X[:4], **{k: v[:4] for k, v in kw.items()})
    model.components_ = np.asfortranarray(model.components_.astype(np.float32))
    if Est is LDAGibbs:
        model.doc_topic_prior_ = np.full(3, np.float32(model.doc_topic_prior_))
    else:
        model.gamma_ = np.float32(model.gamma_)
        model.collection_topic_ = model.collection_topic_.astype(np.float32)
    np.testing.assert_allclose(model.transform(X[:4], **{k: v[:4] for k, v in kw.items()}),
                               expected, rtol=1e-5)
    model.partial_fit(X[:4], **{k: v[:4] for k, v in kw.items()})
