"""One channel for progress and messages: the ``sklearn_clda`` logger, and a
tqdm bar over sweeps when ``verbose``.

Every message (evaluations of the log-likelihood, VEM bounds) goes to
``logging.getLogger("sklearn_clda")`` at INFO level, so applications
route it like any other log. With ``verbose > 0`` and no handler of the
user's on that logger, a fit shows those messages on stdout (above the
bar) for its duration. The bar is drawn only on a terminal: in a
redirected log it would be one line per update.
"""

import logging
from contextlib import contextmanager

__all__ = ["LOGGER", "progress", "verbose_logging"]

LOGGER = logging.getLogger("sklearn_clda")


class _NoProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n):
        pass


def progress(total, verbose, name):
    """A tqdm progress bar over sweeps when ``verbose`` and stderr is a terminal.

    ``disable=None`` lets tqdm switch itself off when its stream is not a
    terminal, so a log file gets the evaluation lines but no bar updates.
    """
    if not verbose:
        return _NoProgress()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"{name} sweeps", unit="sweep", leave=False, disable=None)


class _TqdmHandler(logging.Handler):
    """Writes log records above a running progress bar instead of through it."""

    def emit(self, record):
        try:
            from tqdm.auto import tqdm

            tqdm.write(self.format(record))
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


@contextmanager
def verbose_logging(verbose):
    """With ``verbose``, show the package logger's INFO messages on stdout
    for the duration of a fit (unless the user configured its handlers)."""
    if not verbose or LOGGER.handlers:
        yield
        return
    handler = _TqdmHandler()
    level = LOGGER.level
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    try:
        yield
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)
