"""Fixtures shared by the test files."""

import pytest
from _array_api import ArrayApiChild


@pytest.fixture(scope="session")
def array_api_child():
    """The interpreter with ``SCIPY_ARRAY_API=1`` for scikit-learn's
    array-API checks (see ``_array_api``), started once per test process,
    when the first of them runs."""
    child = ArrayApiChild()
    yield child
    child.close()
