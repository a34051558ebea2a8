"""Shared helpers of the inspection functions: unwrapping, names, pandas."""

import inspect
from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = []

#: Fewest kept draws of ``pi`` that posterior intervals and ESS are computed from.
MIN_DRAWS = 4


def require_pandas(caller, via=None):
    """Import pandas, or raise an ImportError that says how to install it
    (``via``: the inspection function that ``caller``, a display, runs)."""
    try:
        import pandas
    except ImportError as exc:
        why = ("returns a pandas DataFrame" if via is None
               else f"draws the pandas DataFrame of {via}")
        raise ImportError(
            f"{caller} {why}, but pandas could not be "
            'imported. Install it with `pip install "sklearn-clda[inspect]"` '
            "(or `pip install pandas`)."
        ) from exc
    return pandas


def real_draws(draws, caller):
    """``draws`` as a float64 array; a ValueError naming ``caller`` for
    what is not an array of real numbers (strings, complex, ragged)."""
    try:
        x = np.asarray(draws)
    except ValueError as exc:  # ragged nested sequences
        raise ValueError(f"{caller} needs an array of draws: {exc}") from None
    if x.dtype.kind not in "biuf":
        raise ValueError(
            f"{caller} needs real-valued draws, got an array of dtype {x.dtype}."
        )
    return x.astype(np.float64)


def unwrap(estimator):
    """``(model, preprocessor, feature_names)`` of an estimator or a Pipeline.

    For a Pipeline, ``model`` is its last step and ``preprocessor`` the
    steps before it (e.g. a CountVectorizer), whose output vocabulary gives
    ``feature_names`` when it can be computed. For a bare estimator,
    ``preprocessor`` and ``feature_names`` are None.
    """
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        pre = estimator[:-1]
        try:
            names = pre.get_feature_names_out()
        except (AttributeError, TypeError, ValueError):
            names = None
        return estimator[-1], pre, names
    return estimator, None, None


def topic_word(model, caller):
    """The ``components_`` of a fitted topic model, shape (K, V), as float64,
    checked: finite, non-negative, a positive weight in every row."""
    check_is_fitted(model, "components_")
    components = np.asarray(model.components_, dtype=np.float64)
    if components.ndim != 2 or not np.all(np.isfinite(components)):
        raise ValueError(
            f"{caller} needs a fitted topic model whose components_ is a finite "
            f"2-d array, got {type(model).__name__} with components_ of shape "
            f"{components.shape}."
        )
    if (components < 0).any() or (components.max(axis=1) <= 0).any():
        raise ValueError(
            f"{caller} needs non-negative components_ with a positive sum in "
            f"every row (topic-word weights); {type(model).__name__} has others."
        )
    return components


def topic_shares(components):
    """Each topic's share of the weight of ``components`` (of the training
    tokens, for the Gibbs models), scaled by the largest weight first so
    that weights near 1e308 do not overflow the sum."""
    scaled = components / components.max()
    return scaled.sum(axis=1) / scaled.sum()


def resolve_feature_names(model, given, from_pipeline, n_features, caller, *,
                          placeholders=True):
    """The vocabulary: ``given``, else the Pipeline's, else ``feature_names_in_``,
    else ``"word 0"``, ``"word 1"``, ... (None with ``placeholders=False``:
    the displays then leave the words out)."""
    names = given
    if names is None:
        names = from_pipeline
    if names is None:
        names = getattr(model, "feature_names_in_", None)
    if names is None:
        if not placeholders:
            return None
        return np.array([f"word {i}" for i in range(n_features)], dtype=object)
    names = np.asarray(names, dtype=object)
    if names.ndim != 1 or names.shape[0] != n_features:
        raise ValueError(
            f"feature_names passed to {caller} has shape {names.shape} but the "
            f"model has {n_features} features (columns of components_)."
        )
    return np.array([str(name) for name in names], dtype=object)


def accepts(method, name):
    """Whether ``method`` takes a parameter called ``name``."""
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False


def collection_position(labels, label, name, caller,
                        among="the model; its collections (groups_) are"):
    """Index of collection ``label`` in ``labels`` (a fitted model's
    ``groups_``, or what ``among`` says they are, for the message)."""
    if isinstance(label, (bool, np.bool_)) or not isinstance(label, (str, Integral)):
        raise ValueError(
            f"{name} passed to {caller} must be a collection label (str or int "
            f"as in groups_), got {type(label).__name__} {label!r}."
        )
    hits = [i for i, value in enumerate(labels.tolist()) if value == label]
    if not hits:
        shown = labels.tolist()
        raise ValueError(
            f"{name}={label!r} passed to {caller} is not a collection of "
            f"{among} {shown[:20]}"
            f"{'...' if len(shown) > 20 else ''}."
        )
    return hits[0]


def check_topics(topics, n_components, name="topics"):
    """Validate topic indices: 1-D unique integers in ``0..n_components-1``."""
    arr = np.asarray(topics)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"{name} must be a non-empty list of topic indices, got {topics!r}."
        )
    if arr.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must hold integer topic indices, got {topics!r}."
        )
    bad = arr[(arr < 0) | (arr >= n_components)]
    if bad.size:
        raise ValueError(
            f"{name} contains topic index {int(bad[0])}, out of range for a "
            f"model with {n_components} topics (valid: 0..{n_components - 1})."
        )
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} repeats topic indices: {arr.tolist()}.")
    return arr.astype(np.intp)


def check_clda(model, caller):
    """``model`` must be a fitted CompoundLDA (it has
    ``collection_topic_samples_``); returns those draws as float64, checked:
    shape (n_draws, n_collections, n_components) as ``groups_`` and
    ``components_`` have them, finite and non-negative (they may have been
    set by hand)."""
    if not hasattr(model, "fit"):
        raise ValueError(f"{caller} needs a fitted CompoundLDA, got {type(model).__name__}.")
    check_is_fitted(model, "components_")
    if not hasattr(model, "collection_topic_samples_"):
        raise ValueError(
            f"{caller} needs a fitted CompoundLDA (an estimator with "
            f"collection_topic_samples_), got {type(model).__name__}."
        )
    groups = getattr(model, "groups_", None)
    n_groups = 1 if groups is None else len(groups)
    n_topics = np.shape(model.components_)[0]
    try:
        samples = np.asarray(model.collection_topic_samples_, dtype=np.float64)
    except (TypeError, ValueError):
        samples = None
    if samples is None or samples.ndim != 3 or samples.shape[1:] != (n_groups, n_topics):
        raise ValueError(
            f"{caller} needs collection_topic_samples_ of shape (n_draws, "
            f"n_collections={n_groups}, n_components={n_topics}), got "
            f"{'shape ' + str(samples.shape) if samples is not None else 'no numbers'}."
        )
    if not (np.isfinite(samples).all() and (samples >= 0).all()):
        raise ValueError(
            f"{caller} needs collection_topic_samples_ of finite, non-negative "
            f"topic proportions; {type(model).__name__} has others."
        )
    return samples


def collection_draws(estimator, caller, min_draws=MIN_DRAWS):
    """``(model, samples, labels)``: the kept draws of ``pi`` of a fitted CompoundLDA.

    ``samples`` has shape (n_draws, n_collections, n_components); ``labels``
    are the collection labels (``groups_``, or ``["all"]`` for a model
    fitted without groups). Fewer than ``min_draws`` draws (a VEM fit, or a
    chain that kept too few states) raise a ValueError: there is no
    posterior interval or ESS to compute.
    """
    model, _, _ = unwrap(estimator)
    samples = check_clda(model, caller)
    if samples.shape[0] < min_draws:
        how = (
            "algorithm='vem' gives a point estimate of pi, not posterior draws; "
            "refit with algorithm='ags' (the default)"
            if getattr(model, "algorithm", None) == "vem"
            else "refit keeping more draws (a larger max_iter - burn_in, or a "
            "smaller thin)"
        )
        raise ValueError(
            f"{caller} needs at least {min_draws} posterior draws of pi for "
            f"intervals and effective sample sizes, but the model has "
            f"{samples.shape[0]}: {how}."
        )
    groups = getattr(model, "groups_", None)
    labels = np.array(["all"], dtype=object) if groups is None else np.asarray(groups)
    return model, samples, labels
