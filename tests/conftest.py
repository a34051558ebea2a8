"""Test-session hooks shared by every test module."""


def pytest_collection_modifyitems(config, items):
    """Modules with a test marked ``slow`` first, the rest after, each in
    collection order.

    ``-n`` with ``--dist loadfile`` hands whole modules to the workers in
    this order (``--no-loadscope-reorder``; the default order puts the
    modules with the most tests first, which left the one-test docs build
    for the end of a run): the long modules start at once and the many
    short ones fill in behind them, so the workers finish together.
    """
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)
