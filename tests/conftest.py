"""Fixtures and the order of the test files."""

import sys

import pytest
from _array_api import ArrayApiChild

# The test files that take longest, longest first (seconds on two cores,
# from pytest --durations=0 summed by file). pytest-xdist hands out whole
# files (--dist loadfile) in collection order (--no-loadscope-reorder,
# pyproject.toml); its default order, by number of tests, ran the single
# long test of test_docs.py last, alone, while the other worker had
# nothing left to do. Started first, the long files leave the short ones
# to even out the end. The order decides when a file runs, never what it
# checks.
LONGEST_FIRST = (
    "tests/test_dask.py",  # 160
    "tests/test_report.py",  # 105
    "tests/test_docs.py",  # 100
    "tests/test_mh_geweke.py",  # 85
    "tests/test_geweke.py",  # 70
    "tests/test_hardening.py",  # 35
    "tests/test_report_chains.py",  # 35
    "tests/test_fuzz.py",  # 35
    "tests/test_mh_sampling.py",  # 30
    "tests/test_main.py",  # 30
    "tests/test_clda.py",  # 25
)


def pytest_collection_modifyitems(session, config, items):
    """Run the files of :data:`LONGEST_FIRST` first, in its order; every
    other file after them in collection order, and every file's tests in
    theirs."""
    rank = {path: r for r, path in enumerate(LONGEST_FIRST)}

    def key(numbered):
        index, item = numbered
        return rank.get(item.nodeid.split("::")[0], len(rank)), index

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


@pytest.fixture(scope="session")
def array_api_child():
    """The interpreter with ``SCIPY_ARRAY_API=1`` for scikit-learn's
    array-API checks (see ``_array_api``), started once per test process,
    when the first of them runs."""
    child = ArrayApiChild()
    yield child
    child.close()


class _Hidden:
    """A finder that refuses to import ``names`` (and their submodules)."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


@pytest.fixture
def hide_modules(monkeypatch):
    """``hide_modules("pandas", ...)``: from then on until the test ends,
    importing them fails as when they are not installed, and
    ``sys.modules`` holds no entry for them. (Not ``sys.modules[name] =
    None``: scikit-learn 1.6 reads ``sys.modules.get("pandas").DataFrame``.)"""

    def hide(*names):
        for name in names:
            monkeypatch.delitem(sys.modules, name, raising=False)
        monkeypatch.setattr(sys, "meta_path", [_Hidden(names), *sys.meta_path])

    return hide
