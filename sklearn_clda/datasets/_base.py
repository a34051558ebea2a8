"""Loaders for the corpora bundled with sklearn-clda."""

from importlib import resources

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

__all__ = ["load_news16"]

_DATA_MODULE = "sklearn_clda.datasets"
_NEWS16_FILE = "news16.npz"
_NEWS16_DESCR = "news16.rst"


def _read_npz(filename):
    """Read every array of the bundled ``data/<filename>`` into a dict.

    The archive is opened through :mod:`importlib.resources` so that it is
    found wherever (and however) the package is installed, and pickles are
    refused: every array in a bundled file must be a plain NumPy array.
    """
    resource = resources.files(_DATA_MODULE).joinpath("data").joinpath(filename)
    with resource.open("rb") as fh:
        with np.load(fh, allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}


def _read_descr(filename):
    """Return the text of the bundled ``descr/<filename>``."""
    resource = resources.files(_DATA_MODULE).joinpath("descr").joinpath(filename)
    return resource.read_text(encoding="utf-8")


@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
def load_news16(*, return_X_y=False):
    """Load the 16 Newsgroups corpus of the compound LDA paper.

    A bag-of-words corpus of 10,764 newsgroup posts over a vocabulary of
    9,208 terms (777,437 tokens), organised into four collections named
    after the top-level hierarchy of the posts' newsgroups: ``'comp'``
    (3,344 documents), ``'politics'`` (1,976), ``'rec'`` (2,582) and
    ``'sci'`` (2,862). It is the subset ``comp.*``, ``rec.*``, ``sci.*``
    and ``talk.politics.*`` of 20 Newsgroups, tokenized, with stop words
    and rare words removed.

    =================   ==========================
    Documents                               10,764
    Features (terms)                         9,208
    Tokens                                 777,437
    Collections                                  4
    Original groups                             16
    =================   ==========================

    The data ship with the package (about 1.4 MB), so nothing is
    downloaded. Every call reads the file anew and returns fresh arrays.
    See ``DESCR`` for details and provenance: the corpus was converted
    losslessly from the data file ``news.rda`` of the paper's companion R
    package ``clda`` (GPL-3); the bundled archive stores ``categories`` as a
    fixed-width unicode array so that it loads with
    ``numpy.load(..., allow_pickle=False)``.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, groups)`` instead of a Bunch object.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object, with the following attributes.

        data : sparse matrix of shape (10764, 9208)
            Document-term counts, a :class:`scipy.sparse.csr_matrix` of
            dtype ``int32`` in canonical format (sorted indices, no
            duplicates). Every document has at least one token.
        groups : ndarray of shape (10764,)
            The collection of each document, as a string from
            ``group_names`` (e.g. ``'comp'``). Use it as the ``groups``
            argument of the compound LDA estimator.
        group_names : ndarray of shape (4,)
            The collection names in index order: ``'comp'``,
            ``'politics'``, ``'rec'``, ``'sci'``.
        feature_names : ndarray of shape (9208,)
            The term of each column of ``data``.
        categories : ndarray of shape (10764,)
            The original newsgroup of each document (16 distinct values,
            e.g. ``'sci.space'``).
        DESCR : str
            The full description of the corpus.

    (data, groups) : tuple if ``return_X_y`` is True
        ``data`` is the sparse count matrix and ``groups`` the ndarray of
        shape (10764,) holding each document's collection name.

    Examples
    --------
    >>> from sklearn_clda.datasets import load_news16
    >>> news = load_news16()
    >>> news.data.shape
    (10764, 9208)
    >>> int(news.data.sum())
    777437
    >>> news.group_names.tolist()
    ['comp', 'politics', 'rec', 'sci']
    >>> str(news.groups[0]), str(news.categories[0])
    ('politics', 'talk.politics.guns')
    >>> X, groups = load_news16(return_X_y=True)
    >>> X.shape, groups.shape
    ((10764, 9208), (10764,))
    """
    arrays = _read_npz(_NEWS16_FILE)
    shape = tuple(int(n) for n in arrays["shape"])
    X = sp.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape
    )
    group_names = arrays["group_names"]
    groups = group_names[arrays["groups"]]

    if return_X_y:
        return X, groups

    return Bunch(
        data=X,
        groups=groups,
        group_names=group_names,
        feature_names=arrays["vocab"],
        categories=arrays["categories"],
        DESCR=_read_descr(_NEWS16_DESCR),
    )
