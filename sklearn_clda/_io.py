"""Save and load fitted models as NumPy ``.npz`` files, without pickle.

``joblib.load`` and ``pickle.load`` run code chosen by whoever wrote the
file, so they must only read files you trust. :func:`save_model` writes a
fitted :class:`~sklearn_clda.CompoundLDA` or :class:`~sklearn_clda.LDAGibbs`
as plain arrays instead, and :func:`load_model` rebuilds the estimator from
them with ``np.load(path, allow_pickle=False)``: reading such a file runs no
code from it, and every value is checked before the model is built. The
format is described in the Notes of :func:`save_model`.
"""

import json
import math
import numbers
import os
import re
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
from sklearn.utils._param_validation import validate_params
from sklearn.utils.validation import check_is_fitted

from . import _memory
from ._base import MAX_CONCENTRATION, MIN_CONCENTRATION
from ._clda import CompoundLDA
from ._lda_gibbs import LDAGibbs

__all__ = ["load_model", "save_model"]

FORMAT_NAME = "sklearn_clda.model"
FORMAT_VERSION = 1
_CLASSES = {"CompoundLDA": CompoundLDA, "LDAGibbs": LDAGibbs}
_HEADER_KEYS = ("format", "format_version", "class_name", "params", "attributes", "notes",
                "data_fingerprint")
_DIGEST = re.compile(r"[0-9a-f]{32}\Z")
_PREFIX = "fitted/"
# Names of fitted attributes and of the keys of a dict attribute.
_ATTRIBUTE_NAME = re.compile(r"[a-z][a-z0-9_]*_\Z")
_KEY_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_ARRAY_KINDS = "biufU"  # dtypes an array entry may have: no objects, no bytes
_SCALAR_KINDS = ("int", "float", "bool", "str")

_COMMON_REQUIRED = frozenset({
    "components_", "doc_topic_", "n_features_in_", "n_iter_", "burn_in_",
    "n_tokens_", "sweep_times_", "trace_",
})
_REQUIRED = {
    "LDAGibbs": _COMMON_REQUIRED | {"doc_topic_prior_", "topic_word_prior_"},
    "CompoundLDA": _COMMON_REQUIRED | {
        "collection_topic_", "collection_topic_samples_", "groups_",
        "collection_sizes_", "alpha_", "gamma_", "eta_",
    },
}


# ---------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------


def _json_param(name, value, notes):
    """A JSON value for the parameter ``name``; raise ValueError if there is none."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value):
        return float(value)
    if name == "random_state" and isinstance(
        value, (np.random.RandomState, np.random.Generator)
    ):
        notes.append(
            f"random_state was a {type(value).__name__} instance, stored as None: "
            "the loaded model refits with fresh randomness"
        )
        return None
    if isinstance(value, (list, tuple, np.ndarray)) and np.ndim(value) == 1:
        return [_json_param(name, v, notes) for v in list(value)]
    raise ValueError(
        f"cannot save the parameter {name}={value!r} as JSON; set it to a number, "
        "string, bool, None or a list of those first."
    )


def _encode(name, value):
    """``(kind, array or None)`` storing the fitted attribute ``value``."""
    if value is None:
        return "none", None
    if isinstance(value, (bool, np.bool_)):
        return "bool", np.asarray(bool(value))
    if isinstance(value, numbers.Integral):
        return "int", np.asarray(int(value), dtype=np.int64)
    if isinstance(value, numbers.Real):
        return "float", np.asarray(float(value), dtype=np.float64)
    if isinstance(value, str):
        return "str", np.asarray(value, dtype=str)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in _ARRAY_KINDS:
            return "array", value
        if value.dtype.kind == "O" and all(isinstance(v, str) for v in value.flat):
            return "str_array", value.astype(str)
    raise ValueError(
        f"cannot save the fitted attribute {name} of type {type(value).__name__} "
        "without pickle."
    )


def _fitted_entries(estimator):
    """``(attributes, arrays)``: the manifest and the arrays of every fitted attribute."""
    attributes, arrays = {}, {}
    names = sorted(n for n in vars(estimator) if _ATTRIBUTE_NAME.match(n))
    for name in names:
        value = getattr(estimator, name)
        if not isinstance(value, dict):
            kind, array = _encode(name, value)
            attributes[name] = kind
            if array is not None:
                arrays[_PREFIX + name] = array
            continue
        kinds = {}
        for key, item in value.items():
            if not (isinstance(key, str) and _KEY_NAME.match(key)):
                raise ValueError(f"cannot save the key {key!r} of the fitted attribute {name}.")
            kinds[key], array = _encode(f"{name}[{key!r}]", np.asarray(item))
            arrays[f"{_PREFIX}{name}/{key}"] = array
        attributes[name] = kinds
    return attributes, arrays


@validate_params(
    {"estimator": [CompoundLDA, LDAGibbs], "path": [str, os.PathLike]},
    prefer_skip_nested_validation=True,
)
def save_model(estimator, path):
    """Save a fitted model's parameters and arrays to a ``.npz`` file, without pickle.

    Unlike ``joblib.dump``, the file holds only numbers, strings and JSON,
    so that :func:`load_model` can read it without running code from it:
    share models in this form, and load ``joblib`` or ``pickle`` files only
    from sources you trust.

    Parameters
    ----------
    estimator : CompoundLDA or LDAGibbs
        A fitted model. Its parameters must be JSON values (numbers,
        strings, bools, None or lists of those); a ``random_state`` that
        is a ``RandomState`` or ``Generator`` is saved as ``None`` with a
        warning. The entries get :func:`load_model`'s checks before the file
        is opened: a model that it would refuse (a fitted attribute set by
        hand to NaN, say) raises ``ValueError`` and writes nothing.

    path : str or path-like
        File to write, replaced if it exists. No ``.npz`` suffix is added.

    Returns
    -------
    path : pathlib.Path
        The file written.

    See Also
    --------
    load_model : Rebuild the model from the file.

    Notes
    -----
    The file (format version 1) is a ``.npz`` archive, readable with
    ``np.load(path, allow_pickle=False)``, with these entries:

    ``format``
        The string ``"sklearn_clda.model"``.
    ``format_version``
        The integer ``1``.
    ``class_name``
        ``"CompoundLDA"`` or ``"LDAGibbs"``.
    ``params``
        ``get_params()`` as a JSON object (tuples become lists, arrays
        lists of numbers; a ``random_state`` that is a ``RandomState`` or
        ``Generator`` becomes ``null``).
    ``attributes``
        A JSON object naming every fitted attribute (the public attributes
        whose names end with ``_``) and how it is stored: ``"array"``,
        ``"str_array"`` (strings, restored as an object array),
        ``"int"``, ``"float"``, ``"bool"``, ``"str"``, ``"none"`` (the
        attribute is ``None`` and has no entry), or, for a dict of arrays
        such as ``trace_``, a JSON object of such kinds.
    ``notes``
        A JSON list of strings: what was changed to store the model.
    ``data_fingerprint`` (optional)
        A JSON list ``[[[n_samples, n_features], n_tokens, counts_digest],
        groups_digest]``: which documents (and collections) the model was
        fitted on, as 32-digit hexadecimal BLAKE2 digests, so that the
        loaded model tells them from others of the same shape (see
        :func:`~sklearn_clda.report.write_report`). Absent for a model that
        keeps none (after ``partial_fit``).
    ``fitted/<name>``, ``fitted/<name>/<key>``
        The attribute ``name`` (or the entry ``key`` of a dict attribute)
        as an array; scalars are 0-d arrays.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs, load_model, save_model
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> corpus = make_lda_corpus(n_topics=2, n_features=20, n_samples=30,
    ...                          doc_length=30, random_state=0)
    >>> lda = LDAGibbs(n_components=2, max_iter=20, random_state=0).fit(corpus.data)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     copy = load_model(save_model(lda, Path(folder) / "lda.npz"))
    >>> np.array_equal(copy.transform(corpus.data), lda.transform(corpus.data))
    True
    """
    entries = _savable_entries(estimator)  # checked before the file is opened
    path = Path(path)
    with open(path, "wb") as fh:
        np.savez_compressed(fh, **entries)
    return path


def _dump_npz(estimator, fh):
    """Write the ``.npz`` of a fitted ``estimator`` to the binary file ``fh``."""
    np.savez_compressed(fh, **_savable_entries(estimator))


def _savable_entries(estimator):
    """The entries of the ``.npz`` of ``estimator``, after load_model's checks
    of them: a fitted attribute set by hand to what load_model refuses (NaN,
    a negative proportion, another shape) is named now, not when the file
    is read back."""
    entries = _npz_entries(estimator)
    try:
        _model_from_entries(entries, "")
    except _BadFile as exc:
        raise ValueError(
            f"save_model cannot save this {type(estimator).__name__}: load_model would "
            f"refuse the file, because {exc.reason} (a fitted attribute set by hand?). "
            "Nothing was written."
        ) from None
    return entries


def _npz_entries(estimator):
    """Every entry of the ``.npz`` of a fitted ``estimator``, as arrays."""
    if type(estimator) not in _CLASSES.values():
        raise ValueError(
            f"save_model saves CompoundLDA and LDAGibbs models, not the subclass "
            f"{type(estimator).__name__}."
        )
    check_is_fitted(estimator)
    missing = sorted(_REQUIRED[type(estimator).__name__] - set(vars(estimator)))
    if missing:
        raise ValueError(
            f"save_model cannot save this {type(estimator).__name__}: it lacks the "
            f"fitted attributes {missing} (deleted after fitting?), which load_model "
            "needs; fit the model again, or pickle it instead."
        )
    notes = []
    params = {
        name: _json_param(name, value, notes)
        for name, value in estimator.get_params(deep=False).items()
    }
    attributes, arrays = _fitted_entries(estimator)
    for note in notes:
        warnings.warn(f"save_model: {note}.", UserWarning, stacklevel=4)
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "class_name": type(estimator).__name__,
        "params": json.dumps(params, allow_nan=False),
        "attributes": json.dumps(attributes),
        "notes": json.dumps(notes),
    }
    fingerprint = getattr(estimator, "_data_fingerprint", None)
    if fingerprint is not None:
        header["data_fingerprint"] = json.dumps(fingerprint)
    return {**{k: np.asarray(v) for k, v in header.items()}, **arrays}


# ---------------------------------------------------------------------------
# Loading: read every entry, then check everything, then build the model
# ---------------------------------------------------------------------------


class _BadFile(ValueError):
    """A file that load_model refuses; its message names the file and the
    problem (``reason``)."""

    def __init__(self, path, reason):
        super().__init__(f"{path} is not a valid sklearn-clda model file: {reason}")
        self.reason = reason


def _bad(path, message):
    return _BadFile(path, message)


def _check_member(npz, key, path):
    """Check the header of the entry ``key`` before its array is read;
    return the array's size in bytes."""
    info = npz.zip.getinfo(key + ".npy")
    with npz.zip.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise _bad(path, f"entry {key!r} has an unsupported .npy version {version}")
        start = fh.tell()
    if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None:
        raise _bad(path, f"entry {key!r} has the unsupported dtype {dtype}")
    size = math.prod(shape) * dtype.itemsize
    if info.file_size != start + size:
        raise _bad(path, f"entry {key!r} holds {info.file_size - start} bytes for "
                         f"an array of shape {shape} and dtype {dtype}")
    return size


def _check_total_size(total, path):
    """The arrays must fit in this machine's memory: a small compressed file
    can declare arrays of any size (zeros deflate about 1000:1)."""
    available = _memory.physical_memory()
    if available is not None and total > available:
        raise _bad(path, f"its arrays would take {_memory.gib(total)}, more than this "
                         f"machine's {_memory.gib(available)} of memory")


def _read_entries(path):
    """Every entry of the ``.npz`` file at ``path`` as a dict of arrays."""
    with open(path, "rb") as fh:
        if fh.read(4) != b"PK\x03\x04":
            raise _bad(path, "not a .npz (zip) file")
        fh.seek(0)
        try:
            with np.load(fh, allow_pickle=False) as npz:
                _check_total_size(sum(_check_member(npz, key, path) for key in npz.files),
                                  path)
                return {key: npz[key] for key in npz.files}
        except _BadFile:
            raise
        except (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile, zlib.error,
                MemoryError, UnicodeError) as exc:
            raise _bad(path, f"cannot read it ({type(exc).__name__}: {exc})") from None


def _text(entries, key, path):
    value = entries.get(key)
    if value is None or value.shape != () or value.dtype.kind != "U":
        raise _bad(path, f"no string entry {key!r}")
    return str(value)


def _json(entries, key, kind, path):
    try:
        value = json.loads(_text(entries, key, path))
    except (ValueError, RecursionError):
        raise _bad(path, f"entry {key!r} is not valid JSON") from None
    if not isinstance(value, kind):
        raise _bad(path, f"entry {key!r} is not a JSON {kind.__name__}")
    return value


def _read_header(entries, path):
    """``(class, params, manifest)`` from the header entries, checked."""
    if _text(entries, "format", path) != FORMAT_NAME:
        raise _bad(path, f"the entry 'format' is not {FORMAT_NAME!r}")
    version = entries.get("format_version")
    if version is None or version.shape != () or version.dtype.kind not in "iu":
        raise _bad(path, "no integer entry 'format_version'")
    if int(version) != FORMAT_VERSION:
        raise _bad(path, f"format version {int(version)}; this sklearn-clda reads "
                         f"version {FORMAT_VERSION}")
    name = _text(entries, "class_name", path)
    if name not in _CLASSES:
        raise _bad(path, f"unknown class {name!r}; expected one of {sorted(_CLASSES)}")
    _json(entries, "notes", list, path)
    return _CLASSES[name], _json(entries, "params", dict, path), _json(
        entries, "attributes", dict, path
    )


def _read_fingerprint(entries, path):
    """The optional ``data_fingerprint`` entry as the fit keeps it, checked."""
    if "data_fingerprint" not in entries:
        return None
    value = _json(entries, "data_fingerprint", list, path)

    def count(v):
        return type(v) is int and v >= 0

    def digest(v):
        return isinstance(v, str) and _DIGEST.match(v) is not None

    try:
        (shape, n_tokens, counts), groups = value
        valid = (isinstance(shape, list) and len(shape) == 2 and all(map(count, shape))
                 and count(n_tokens) and digest(counts) and digest(groups))
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise _bad(path, "entry 'data_fingerprint' is not [[[rows, columns], tokens, "
                         "digest], digest]")
    return (tuple(shape), n_tokens, counts), groups


def _build_estimator(cls, params, path):
    known = cls().get_params(deep=False)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise _bad(path, f"unknown parameters {unknown} for {cls.__name__}")
    scalar = (type(None), bool, int, float, str)
    for name, value in params.items():
        if not isinstance(value, scalar) and not (
            isinstance(value, list) and all(isinstance(v, scalar) for v in value)
        ):
            raise _bad(path, f"the parameter {name} is neither a scalar nor a list of them")
    estimator = cls(**params)
    try:
        estimator._validate_params()
    except (ValueError, TypeError) as exc:
        raise _bad(path, f"invalid parameters ({exc})") from None
    return estimator


def _decode(name, kind, array, path):
    """The attribute value stored as ``kind`` in ``array``, checked."""
    if kind in ("array", "str_array"):
        if kind == "str_array":
            if array.dtype.kind != "U":
                raise _bad(path, f"{name} is not an array of strings")
            return array.astype(object)
        return array
    if kind not in _SCALAR_KINDS or array.shape != ():
        raise _bad(path, f"{name} is not stored as a known kind of scalar or array")
    allowed = {"int": "iu", "float": "iuf", "bool": "b", "str": "U"}[kind]
    if array.dtype.kind not in allowed:
        raise _bad(path, f"{name} is stored as {kind} with dtype {array.dtype}")
    return {"int": int, "float": float, "bool": bool, "str": str}[kind](array[()])


def _read_attributes(manifest, entries, path):
    """Every fitted attribute named in ``manifest``, decoded; no entry left over."""
    attributes, used = {}, set()

    def take(key, name, kind):
        if not isinstance(kind, str):
            raise _bad(path, f"{name} has an invalid kind {kind!r}")
        if kind == "none":
            return None
        if key not in entries:
            raise _bad(path, f"no entry {key!r} for {name}")
        used.add(key)
        return _decode(name, kind, entries[key], path)

    for name, kind in manifest.items():
        if not _ATTRIBUTE_NAME.match(name):
            raise _bad(path, f"{name!r} is not the name of a fitted attribute")
        if isinstance(kind, dict):
            if not all(_KEY_NAME.match(key) for key in kind):
                raise _bad(path, f"{name} has an invalid key")
            attributes[name] = {
                key: take(f"{_PREFIX}{name}/{key}", f"{name}[{key!r}]", sub)
                for key, sub in kind.items()
            }
        else:
            attributes[name] = take(_PREFIX + name, name, kind)
    extra = sorted(set(entries) - used - set(_HEADER_KEYS))
    if extra:
        raise _bad(path, f"unexpected entries {extra[:5]}")
    return attributes


def _array(attrs, name, ndim, kinds, path):
    value = attrs.get(name)
    if not isinstance(value, np.ndarray) or value.ndim != ndim or (
        value.dtype.kind not in kinds
    ):
        raise _bad(path, f"{name} must be a {ndim}-d array of dtype kind {kinds!r}")
    return value


#: The range of a fitted prior (a Dirichlet concentration), as the
#: estimators' parameters allow it.
CONCENTRATION = (MIN_CONCENTRATION, MAX_CONCENTRATION)
#: The largest pseudo-count of ``components_`` taken: far above what a fit
#: gives (tokens plus a prior), far below what overflows a row's sum.
MAX_PSEUDO_COUNT = 1e100


def _values(name, value, path, *, positive=False, nonnegative=False, within=None):
    """``value`` (array or scalar) after checking it is finite (and its sign,
    and that it lies in the closed interval ``within``)."""
    a = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise _bad(path, f"{name} has NaN or infinite values")
    if positive and not np.all(a > 0):
        raise _bad(path, f"{name} must be positive")
    if nonnegative and not np.all(a >= 0):
        raise _bad(path, f"{name} must not be negative")
    if within is not None and not np.all((a >= within[0]) & (a <= within[1])):
        raise _bad(path, f"{name} must be in [{within[0]:g}, {within[1]:g}], as a fit "
                         "gives it")
    return value


def _scalar(attrs, name, kind, path, *, positive=False, minimum=None, within=None):
    value = attrs.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise _bad(path, f"{name} must be a {kind.__name__}")
    _values(name, value, path, positive=positive, within=within)
    if minimum is not None and value < minimum:
        raise _bad(path, f"{name} must be at least {minimum}")
    return value


def _distributions(array):
    """Whether the last axis of ``array`` holds probabilities summing to 1
    (to float32's precision: a float32 model is saved as float32)."""
    return bool(np.allclose(array.sum(axis=-1), 1.0, rtol=0, atol=1e-5))


def _check_common(attrs, n_components, path):
    """Checks shared by both estimators; the arrays are cast to their dtypes."""
    # float32 as saved (a model fitted on float32 counts keeps them), else float64
    saved = getattr(attrs.get("components_"), "dtype", None)
    dtype = np.float32 if saved == np.float32 else np.float64
    comp = _array(attrs, "components_", 2, "f", path).astype(dtype)
    attrs["components_"] = _values("components_", comp, path, positive=True,
                                   within=(0.0, MAX_PSEUDO_COUNT))
    if comp.shape[0] != n_components or comp.shape[1] < 1:
        raise _bad(path, f"components_ has shape {comp.shape}, expected "
                         f"(n_components={n_components}, n_features >= 1)")
    if _scalar(attrs, "n_features_in_", int, path) != comp.shape[1]:
        raise _bad(path, "n_features_in_ differs from the columns of components_")
    if attrs.get("feature_names_in_") is not None:
        names = _array(attrs, "feature_names_in_", 1, "O", path)
        if names.shape != (comp.shape[1],):
            raise _bad(path, "feature_names_in_ has not one name per feature")
    doc_topic = _array(attrs, "doc_topic_", 2, "f", path).astype(dtype)
    attrs["doc_topic_"] = _values("doc_topic_", doc_topic, path, nonnegative=True)
    if doc_topic.shape[1] != n_components:
        raise _bad(path, "doc_topic_ has not n_components columns")
    if not _distributions(doc_topic):
        raise _bad(path, "doc_topic_ must hold topic proportions (rows summing to 1)")
    n_iter = _scalar(attrs, "n_iter_", int, path, minimum=1)
    if not 0 <= _scalar(attrs, "burn_in_", int, path) < n_iter:
        raise _bad(path, "burn_in_ must be in [0, n_iter_)")
    _scalar(attrs, "n_tokens_", int, path, minimum=0)
    times = _array(attrs, "sweep_times_", 1, "f", path).astype(np.float64)
    attrs["sweep_times_"] = _values("sweep_times_", times, path, nonnegative=True)
    trace = attrs.get("trace_")
    if not isinstance(trace, dict) or not all(
        isinstance(v, np.ndarray) and v.ndim == 1 and v.dtype.kind in "biuf"
        for v in trace.values()
    ) or len({v.shape for v in trace.values()}) > 1:
        raise _bad(path, "trace_ must map names to 1-d numeric arrays of one length")


def _check_lda(attrs, n_components, path):
    prior = attrs.get("doc_topic_prior_")
    if isinstance(prior, np.ndarray):
        prior = _array(attrs, "doc_topic_prior_", 1, "f", path).astype(np.float64)
        if prior.shape != (n_components,):
            raise _bad(path, "doc_topic_prior_ has not n_components values")
        attrs["doc_topic_prior_"] = _values("doc_topic_prior_", prior, path,
                                            within=CONCENTRATION)
    else:
        _scalar(attrs, "doc_topic_prior_", float, path, within=CONCENTRATION)
    _scalar(attrs, "topic_word_prior_", float, path, within=CONCENTRATION)


def _check_clda(attrs, n_components, path):
    for name in ("alpha_", "gamma_", "eta_"):
        _scalar(attrs, name, float, path, within=CONCENTRATION)
    pi = _array(attrs, "collection_topic_", 2, "f", path).astype(np.float64)
    attrs["collection_topic_"] = _values("collection_topic_", pi, path, nonnegative=True)
    n_groups = pi.shape[0]
    if n_groups < 1 or pi.shape[1] != n_components or not _distributions(pi):
        raise _bad(path, "collection_topic_ must hold one mixture (summing to 1) of "
                         "n_components topics per collection")
    draws = _array(attrs, "collection_topic_samples_", 3, "f", path).astype(np.float64)
    attrs["collection_topic_samples_"] = _values(
        "collection_topic_samples_", draws, path, nonnegative=True
    )
    if draws.shape[0] < 1 or draws.shape[1:] != pi.shape:
        raise _bad(path, "collection_topic_samples_ does not match collection_topic_")
    if not _distributions(draws):
        raise _bad(path, "collection_topic_samples_ must hold mixtures (summing to 1)")
    groups = attrs.get("groups_")
    if groups is None:
        if n_groups != 1:
            raise _bad(path, "groups_ is None but there are several collections")
    else:
        groups = _array(attrs, "groups_", 1, "iuU", path)
        if groups.dtype.kind in "iu":
            groups = attrs["groups_"] = groups.astype(np.int64)
        if groups.shape != (n_groups,) or not np.all(groups[1:] > groups[:-1]):
            raise _bad(path, "groups_ must list one label per collection, sorted, "
                             "without repeats")
    sizes = _array(attrs, "collection_sizes_", 1, "iu", path).astype(np.int64)
    if sizes.shape != (n_groups,) or np.any(sizes < 0) or sizes.sum() <= 0:
        raise _bad(path, "collection_sizes_ must count the documents of each collection")
    attrs["collection_sizes_"] = sizes
    if "acceptance_rate_" in attrs:
        rate = _scalar(attrs, "acceptance_rate_", float, path)
        if not 0 <= rate <= 1:
            raise _bad(path, "acceptance_rate_ must be in [0, 1]")
    if "step_size_" in attrs:  # MGS: one step per collection
        steps = _array(attrs, "step_size_", 1, "f", path).astype(np.float64)
        if steps.shape != (n_groups,):
            raise _bad(path, "step_size_ must hold one step per collection")
        attrs["step_size_"] = _values("step_size_", steps, path, positive=True)


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_model(path):
    """Rebuild a model saved by :func:`save_model`, without pickle.

    The file is read with ``np.load(path, allow_pickle=False)``, so no code
    from it runs, and everything in it is checked before the model is
    built: the format and its version, the class, the parameters, and
    every fitted attribute (shapes consistent with each other and with
    ``n_components``, values finite, positive where the model needs them).
    A file that fails any check raises ``ValueError`` and builds nothing.

    Parameters
    ----------
    path : str or path-like
        A ``.npz`` file written by :func:`save_model`.

    Returns
    -------
    estimator : CompoundLDA or LDAGibbs
        The fitted model: ``transform``, ``score`` and ``perplexity`` give
        the same results as the saved model's.

    Raises
    ------
    ValueError
        If the file is not a valid model file of this format version.
    OSError
        If the file cannot be read.

    See Also
    --------
    save_model : Write the file.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_clda import CompoundLDA, load_model, save_model
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> corpus = make_compound_corpus(n_collections=2, n_topics=2, n_features=20,
    ...                               docs_per_collection=15, doc_length=30,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=2, max_iter=20, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     copy = load_model(save_model(clda, Path(folder) / "clda.npz"))
    >>> copy.perplexity(corpus.data, groups=corpus.groups) == clda.perplexity(
    ...     corpus.data, groups=corpus.groups)
    True
    """
    return _model_from_entries(_read_entries(path), path)


def _model_from_entries(entries, path):
    """The model that the entries of a model file describe, each checked (the
    file at ``path``, named in the errors)."""
    cls, params, manifest = _read_header(entries, path)
    estimator = _build_estimator(cls, params, path)
    attrs = _read_attributes(manifest, entries, path)
    fingerprint = _read_fingerprint(entries, path)
    missing = sorted(_REQUIRED[cls.__name__] - set(attrs))
    if missing:
        raise _bad(path, f"missing fitted attributes {missing}")
    for name in attrs:
        if hasattr(cls, name):
            raise _bad(path, f"{name!r} would hide an attribute of {cls.__name__}")
    _check_common(attrs, estimator.n_components, path)
    (_check_clda if cls is CompoundLDA else _check_lda)(attrs, estimator.n_components, path)
    for name, value in attrs.items():
        setattr(estimator, name, value)
    if fingerprint is not None:
        estimator._data_fingerprint = fingerprint
    return estimator
