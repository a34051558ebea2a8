"""save_model / load_model: a fitted model as a .npz of arrays, read without pickle."""

import io
import json
import pickle
import warnings
import zipfile

import numpy as np
import pytest
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import NotFittedError

from sklearn_clda import CompoundLDA, LDAGibbs, load_model, save_model
from sklearn_clda.datasets import make_compound_corpus

BAD = "is not a valid sklearn-clda model file"


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(
        n_topics=3, n_features=30, n_collections=3, docs_per_collection=15,
        doc_length=(20, 40), random_state=0,
    )


def _str_groups(groups):
    return np.array(["north", "south", "west"])[groups]


# Each case: (name, make the estimator, groups used in fit: None, "int" or "str").
CASES = [
    ("lda", lambda: LDAGibbs(n_components=3, max_iter=20, random_state=0), None),
    ("lda-asymmetric", lambda: LDAGibbs(
        n_components=3, max_iter=20, doc_topic_prior=[0.1, 0.3, 0.6],
        learn_priors=True, prior_update_every=2, evaluate_every=5, random_state=0,
    ), None),
    ("clda-no-groups", lambda: CompoundLDA(n_components=3, max_iter=20, random_state=0),
     None),
    ("clda-int-groups", lambda: CompoundLDA(
        n_components=3, max_iter=20, evaluate_every=4, random_state=0), "int"),
    ("clda-str-groups", lambda: CompoundLDA(
        n_components=3, max_iter=20, learn_priors=("eta", "gamma", "alpha"),
        prior_update_every=2, random_state=0), "str"),
    ("clda-mgs", lambda: CompoundLDA(
        n_components=3, max_iter=20, algorithm="mgs", evaluate_every=5,
        random_state=0), "str"),
    ("clda-vem", lambda: CompoundLDA(
        n_components=3, max_iter=30, algorithm="vem", random_state=0), "int"),
]


def _groups(corpus, kind):
    if kind is None:
        return None
    return corpus.groups if kind == "int" else _str_groups(corpus.groups)


def _fit(corpus, make, kind):
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # VEM's ConvergenceWarning at 30 iterations
        if isinstance(model, CompoundLDA):
            return model.fit(corpus.data, groups=_groups(corpus, kind))
        return model.fit(corpus.data)


def _outputs(model, corpus, kind):
    """transform, score and perplexity on the training data and on new documents."""
    X = corpus.data
    new = np.random.default_rng(1).poisson(0.8, size=(5, X.shape[1]))
    if isinstance(model, CompoundLDA):
        groups = _groups(corpus, kind)
        new_groups = None if groups is None else groups[:5]
        return (model.transform(X, groups=groups), model.transform(new, groups=new_groups),
                model.score(X, groups=groups), model.perplexity(X, groups=groups))
    return model.transform(X), model.transform(new), model.score(X), model.perplexity(X)


def _assert_same_value(a, b, name):
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), name
        for key in a:
            _assert_same_value(a[key], b[key], f"{name}[{key!r}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), name
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    else:
        assert type(a) is type(b) and (a == b or (a != a and b != b)), name


@pytest.mark.parametrize("name, make, kind", CASES, ids=[c[0] for c in CASES])
def test_round_trip_gives_identical_outputs(name, make, kind, corpus, tmp_path):
    model = _fit(corpus, make, kind)
    path = save_model(model, tmp_path / "model.npz")
    assert path == tmp_path / "model.npz" and path.is_file()
    loaded = load_model(path)
    assert type(loaded) is type(model)
    assert loaded.get_params() == {
        k: list(v) if isinstance(v, tuple) else v for k, v in model.get_params().items()
    }
    fitted = sorted(n for n in vars(model) if n.endswith("_") and not n.startswith("_"))
    assert sorted(n for n in vars(loaded) if not n.startswith("_")) == sorted(
        set(fitted) | set(model.get_params())
    )
    for attr in fitted:
        _assert_same_value(getattr(model, attr), getattr(loaded, attr), attr)
    for before, after in zip(_outputs(model, corpus, kind), _outputs(loaded, corpus, kind)):
        np.testing.assert_array_equal(before, after)


@pytest.mark.parametrize("make", [CASES[0][1], CASES[4][1]], ids=["lda", "clda"])
def test_round_trip_keeps_float32(make, corpus, tmp_path):
    X = corpus.data.astype(np.float32)
    model = make()
    model.fit(X, **({"groups": _str_groups(corpus.groups)}
                    if isinstance(model, CompoundLDA) else {}))
    loaded = load_model(save_model(model, tmp_path / "m.npz"))
    for name in ("components_", "doc_topic_"):
        _assert_same_value(getattr(model, name), getattr(loaded, name), name)
        assert getattr(loaded, name).dtype == np.float32


def test_round_trip_keeps_feature_names(corpus, tmp_path):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(corpus.data.toarray(), columns=[f"w{i}" for i in range(corpus.data.shape[1])])
    model = LDAGibbs(n_components=2, max_iter=10, random_state=0).fit(X)
    loaded = load_model(save_model(model, tmp_path / "m.npz"))
    assert loaded.feature_names_in_.dtype == object
    assert list(loaded.feature_names_in_) == list(X.columns)
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    with pytest.raises(ValueError, match="feature names"):
        loaded.transform(X.rename(columns={"w0": "other"}))


def test_load_model_never_unpickles(corpus, tmp_path, monkeypatch):
    model = _fit(corpus, CASES[3][1], "str")
    path = save_model(model, tmp_path / "m.npz")
    # Every entry reads with allow_pickle=False: no object arrays in the file.
    with np.load(path, allow_pickle=False) as npz:
        for key in npz.files:
            assert npz[key].dtype.kind in "biufU", key
    calls = []
    real_load = np.load

    def checked_load(*args, **kwargs):
        calls.append(kwargs.get("allow_pickle"))
        return real_load(*args, **kwargs)

    def no_pickle(*args, **kwargs):
        raise AssertionError("load_model unpickled something")

    monkeypatch.setattr(np, "load", checked_load)
    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "loads", no_pickle)
    monkeypatch.setattr(pickle, "Unpickler", no_pickle)
    loaded = load_model(path)
    assert calls == [False]
    np.testing.assert_array_equal(loaded.components_, model.components_)


def test_random_state_instance_is_saved_as_none_with_a_note(corpus, tmp_path):
    model = LDAGibbs(n_components=2, max_iter=10, random_state=np.random.RandomState(0))
    model.fit(corpus.data)
    with pytest.warns(UserWarning, match="random_state was a RandomState instance"):
        path = save_model(model, tmp_path / "m.npz")
    with np.load(path, allow_pickle=False) as npz:
        assert json.loads(str(npz["params"]))["random_state"] is None
        assert "RandomState" in json.loads(str(npz["notes"]))[0]
    loaded = load_model(path)
    assert loaded.random_state is None
    np.testing.assert_array_equal(loaded.transform(corpus.data), model.transform(corpus.data))


def test_save_model_rejects_what_it_cannot_store(corpus, tmp_path):
    path = tmp_path / "m.npz"
    path.write_bytes(b"old")
    with pytest.raises(NotFittedError):
        save_model(LDAGibbs(), path)
    assert path.read_bytes() == b"old"  # not truncated by a failed save
    with pytest.raises(ValueError, match="estimator"):
        save_model(LatentDirichletAllocation(), path)

    class MyLDA(LDAGibbs):
        pass

    with pytest.raises(ValueError, match="not the subclass MyLDA"):
        save_model(MyLDA(n_components=2, max_iter=4).fit(corpus.data), path)
    model = LDAGibbs(n_components=2, max_iter=4).fit(corpus.data)
    model.n_jobs = object()  # not a JSON value
    with pytest.raises(ValueError, match="cannot save the parameter n_jobs"):
        save_model(model, path)
    model.n_jobs = None
    model.extra_ = {"a": object()}
    with pytest.raises(ValueError, match="cannot save the fitted attribute extra_"):
        save_model(model, path)
    assert path.read_bytes() == b"old"


@pytest.mark.parametrize("attr, value, reason", [
    ("gamma_", np.nan, "gamma_ has NaN or infinite values"),
    ("collection_topic_", lambda m: -m.collection_topic_, "collection_topic_ must not be "
                                                          "negative"),
    ("doc_topic_", lambda m: m.doc_topic_[:, :2], "doc_topic_ has not n_components columns"),
    ("trace_", None, "trace_ must map names to 1-d numeric arrays"),
])
def test_save_model_refuses_what_load_model_would_refuse(corpus, tmp_path, attr, value,
                                                         reason):
    # (such a model was written, and the file refused only when read back)
    model = CompoundLDA(n_components=3, max_iter=20, random_state=0).fit(
        corpus.data, groups=corpus.groups)
    setattr(model, attr, value(model) if callable(value) else value)
    path = tmp_path / "m.npz"
    path.write_bytes(b"old")
    with pytest.raises(ValueError, match=rf"save_model cannot save this CompoundLDA: "
                                         rf"load_model would refuse the file, because {reason}"):
        save_model(model, path)
    assert path.read_bytes() == b"old"


# ---------------------------------------------------------------------------
# Hostile or broken files: ValueError, never a crash or a half-built model
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(corpus, tmp_path_factory):
    """The entries of a saved CompoundLDA with str groups, as a dict of arrays."""
    model = _fit(corpus, CASES[5][1], "str")  # MGS: every optional attribute too
    path = save_model(model, tmp_path_factory.mktemp("saved") / "m.npz")
    with np.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def _edit_json(entries, key, edit):
    value = json.loads(str(entries[key]))
    edit(value)
    entries[key] = np.asarray(json.dumps(value))


def _set(key, value):
    def edit(entries):
        entries[key] = np.asarray(value)
    return edit


def _drop(key):
    def edit(entries):
        del entries[key]
    return edit


def _params(**changes):
    return lambda e: _edit_json(e, "params", lambda p: p.update(changes))


def _attributes(edit):
    return lambda e: _edit_json(e, "attributes", edit)


def _scaled(key, factor):
    return lambda e: e.__setitem__(key, e[key] * factor)


def _with_nan(key):
    def edit(entries):
        a = entries[key].astype(np.float64)
        a.flat[0] = np.nan
        entries[key] = a
    return edit


HOSTILE = {
    "format name": (_set("format", "something else"), "'format'"),
    "newer version": (_set("format_version", 2), "format version 2"),
    "version as text": (_set("format_version", "1"), "format_version"),
    "unknown class": (_set("class_name", "os.system"), "unknown class 'os.system'"),
    "params not JSON": (_set("params", "{n_components: 3"), "not valid JSON"),
    "params nested deep": (_set("params", "[" * 100_000 + "]" * 100_000), "not valid JSON"),
    "params a list": (_set("params", "[]"), "not a JSON dict"),
    "unknown param": (_params(exec_me="rm -rf /"), "unknown parameters ['exec_me']"),
    "invalid param": (_params(n_components=-3), "invalid parameters"),
    "param a dict": (_params(tol={"a": 1}), "neither a scalar"),
    "K mismatch": (_params(n_components=4), "components_ has shape"),
    "missing header": (_drop("class_name"), "'class_name'"),
    "missing attribute": (
        lambda e: (_attributes(lambda a: a.pop("groups_"))(e), e.pop("fitted/groups_")),
        "missing fitted attributes ['groups_']"),
    "missing entry": (_drop("fitted/components_"), "no entry 'fitted/components_'"),
    "extra entry": (_set("payload", [1, 2]), "unexpected entries ['payload']"),
    "bad kind": (_attributes(lambda a: a.update(components_="pickle")), "components_"),
    "dunder name": (_attributes(lambda a: a.update(__class__="str")), "'__class__'"),
    "str_array numbers": (_attributes(lambda a: a.update(components_="str_array")),
                          "not an array of strings"),
    "int as float": (_set("fitted/n_iter_", 2.5), "n_iter_ is stored as int"),
    "NaN in components": (_with_nan("fitted/components_"), "components_ has NaN"),
    "negative components": (_scaled("fitted/components_", -1.0), "components_ must be positive"),
    "components 1-d": (lambda e: e.__setitem__("fitted/components_",
                                               e["fitted/components_"].ravel()),
                       "components_ must be a 2-d array"),
    "components ints": (lambda e: e.__setitem__("fitted/components_",
                                                e["fitted/components_"].astype(int)),
                        "components_ must be a 2-d array"),
    "n_features mismatch": (_set("fitted/n_features_in_", 31), "n_features_in_ differs"),
    "doc_topic columns": (lambda e: e.__setitem__("fitted/doc_topic_",
                                                  e["fitted/doc_topic_"][:, :2]),
                          "doc_topic_ has not n_components columns"),
    "infinite gamma": (_set("fitted/gamma_", np.inf), "gamma_ has NaN or infinite"),
    "zero eta": (_set("fitted/eta_", 0.0), "eta_ must be in [1e-100, 1e+10]"),
    # finite and positive, but out of any fit's range: scores and proportions
    # came out NaN or rows of zeros
    "huge eta": (_set("fitted/eta_", 1e308), "eta_ must be in [1e-100, 1e+10]"),
    "huge gamma": (_set("fitted/gamma_", 1e11), "gamma_ must be in [1e-100, 1e+10]"),
    "huge components": (_scaled("fitted/components_", 1e300),
                        "components_ must be in [0, 1e+100]"),
    "pi not summing to 1": (_scaled("fitted/collection_topic_", 2.0), "collection_topic_"),
    "pi draws not summing to 1": (_scaled("fitted/collection_topic_samples_", 7.0),
                                  "collection_topic_samples_ must hold mixtures"),
    "theta not summing to 1": (_scaled("fitted/doc_topic_", 7.0),
                               "doc_topic_ must hold topic proportions"),
    "pi draws mismatch": (lambda e: e.__setitem__(
        "fitted/collection_topic_samples_", e["fitted/collection_topic_samples_"][:, :2]),
        "collection_topic_samples_ does not match"),
    "groups unsorted": (lambda e: e.__setitem__("fitted/groups_", e["fitted/groups_"][::-1]),
                        "groups_ must list one label per collection, sorted"),
    "groups repeated": (_set("fitted/groups_", ["a", "a", "b"]), "without repeats"),
    "groups none with 3 collections": (
        lambda e: (_attributes(lambda a: a.update(groups_="none"))(e),
                   e.pop("fitted/groups_")),
        "groups_ is None but there are several collections"),
    "sizes zero": (_scaled("fitted/collection_sizes_", 0), "collection_sizes_"),
    "burn_in past n_iter": (_set("fitted/burn_in_", 20), "burn_in_ must be in"),
    "acceptance rate 2": (_set("fitted/acceptance_rate_", 2.0), "acceptance_rate_ must be"),
    "step sizes mismatch": (_set("fitted/step_size_", [0.1]), "step_size_ must hold"),
    "trace lengths": (lambda e: e.__setitem__("fitted/trace_/alpha",
                                              e["fitted/trace_/alpha"][:-1]),
                      "trace_ must map names"),
    "pickled object array": (_set("fitted/groups_", np.array([{"a": 1}, None, 3],
                                                             dtype=object)),
                             "unsupported dtype object"),
}


def _write_entries(path, entries):
    with open(path, "wb") as fh:
        np.savez(fh, **entries)  # allow_pickle defaults to True for writing
    return path


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_load_model_rejects_hostile_files(case, saved, tmp_path):
    edit, message = HOSTILE[case]
    entries = dict(saved)
    edit(entries)
    path = _write_entries(tmp_path / "hostile.npz", entries)
    with pytest.raises(ValueError, match=BAD) as exc:
        load_model(path)
    assert message in str(exc.value)


def test_unedited_entries_load(saved, tmp_path):
    # The hostile cases above start from a file that loads.
    model = load_model(_write_entries(tmp_path / "ok.npz", dict(saved)))
    assert model.groups_.tolist() == ["north", "south", "west"]


def _npy_member(header_shape, data):
    """A .npy file whose header claims ``header_shape`` float64 but holds ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": header_shape}
    )
    return buf.getvalue() + data


def _compressed(entries, tmp_path):
    """The bytes of a file written like save_model writes it (deflated members)."""
    path = tmp_path / "compressed.npz"
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **entries)
    return path.read_bytes()


def _wrong_crc(data, name):
    """``data`` (a zip file) with the CRC recorded for member ``name`` changed.

    The member's bytes are intact but no longer match their checksum, as
    after a bit flip in storage: zipfile raises BadZipFile when numpy reads it.
    """
    data = bytearray(data)
    record = data.index(b"PK\x01\x02")  # the first record of the central directory
    while True:
        name_len = int.from_bytes(data[record + 28:record + 30], "little")
        if data[record + 46:record + 46 + name_len] == name.encode():
            data[record + 16] ^= 0xFF  # CRC-32 field of the central directory
            return bytes(data)
        extra = int.from_bytes(data[record + 30:record + 32], "little")
        comment = int.from_bytes(data[record + 32:record + 34], "little")
        record += 46 + name_len + extra + comment


@pytest.mark.parametrize("kind", ["not a zip", "empty", "npy", "truncated", "huge header",
                                  "short data", "not npy members", "corrupt data"])
def test_load_model_rejects_broken_files(kind, saved, tmp_path):
    path = tmp_path / "broken.npz"
    good = _write_entries(tmp_path / "good.npz", dict(saved)).read_bytes()
    if kind == "not a zip":
        path.write_bytes(b"\x80\x04\x95 pickle or anything else")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "npy":
        np.save(path.with_suffix(".npy"), np.arange(3))
        path = path.with_suffix(".npy")
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "corrupt data":
        path.write_bytes(_wrong_crc(_compressed(saved, tmp_path), "fitted/components_.npy"))
    else:
        shape, data = {
            "huge header": ((10**12,), b"\0" * 16),  # would ask for 8 TB
            "short data": ((100,), b"\0" * 16),
            "not npy members": (None, b"text"),
        }[kind]
        with zipfile.ZipFile(path, "w") as zf:
            for key, value in saved.items():
                if shape is not None and key == "fitted/components_":
                    continue
                buf = io.BytesIO()
                np.save(buf, value)
                zf.writestr(key + ".npy", buf.getvalue())
            if shape is None:
                zf.writestr("readme.txt", data)
            else:
                zf.writestr("fitted/components_.npy", _npy_member(shape, data))
    with pytest.raises(ValueError, match=BAD):
        load_model(path)


def test_load_model_random_corruptions(saved, tmp_path):
    good = _write_entries(tmp_path / "good.npz", dict(saved)).read_bytes()
    rng = np.random.default_rng(0)
    path = tmp_path / "corrupt.npz"
    for _ in range(40):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), size=rng.integers(1, 4)):
            data[pos] = rng.integers(0, 256)
        path.write_bytes(bytes(data))
        try:
            model = load_model(path)
        except ValueError as exc:
            assert BAD in str(exc)
        else:  # a change the checks cannot see (e.g. a timestamp): a whole model
            theta = model.transform(np.ones((1, 30)), groups=["north"])
            assert theta.shape == (1, 3) and np.all(np.isfinite(theta))


def test_load_model_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "nope.npz")


@pytest.mark.parametrize("key", ["fitted/doc_topic_prior_", "fitted/topic_word_prior_"])
def test_load_model_refuses_lda_priors_no_fit_gives(corpus, tmp_path, key):
    """A prior of 1e308 gave transform rows of zeros and a NaN score."""
    X = corpus.data
    path = tmp_path / "lda.npz"
    save_model(LDAGibbs(n_components=3, max_iter=5, random_state=0).fit(X), path)
    entries = dict(np.load(path))
    entries[key] = np.float64(1e308)
    with pytest.raises(ValueError, match=rf"{key.split('/')[1]} must be in \[1e-100, 1e\+10\]"):
        load_model(_write_entries(tmp_path / "hostile.npz", entries))


def test_load_model_refuses_arrays_larger_than_the_memory(saved, tmp_path, monkeypatch):
    # Zeros deflate about 1000:1: a small file may declare arrays of any
    # size, so the declared sizes are checked against the memory before
    # any array is read.
    from sklearn_clda import _memory

    path = tmp_path / "m.npz"
    _write_entries(path, saved)
    monkeypatch.setattr(_memory, "physical_memory", lambda: 1000)
    with pytest.raises(ValueError, match=r"its arrays would take 0\.0 GiB, more than this "
                                         r"machine's 0\.0 GiB of memory"):
        load_model(path)
    monkeypatch.setattr(_memory, "physical_memory", lambda: None)  # (not known: no check)
    load_model(path)
