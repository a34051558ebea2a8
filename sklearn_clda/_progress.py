"""One channel for progress and messages: the ``sklearn_clda`` logger, and a
tqdm bar over sweeps when ``verbose``.

Every message (evaluations of the log-likelihood, VEM bounds) goes to
``logging.getLogger("sklearn_clda")``: at INFO level during a fit with
``verbose > 0``, at DEBUG level otherwise, so that an application logging
at INFO hears nothing from a quiet fit (as from scikit-learn's). A verbose
fit shows its messages once: through the application's handlers where one
of them takes INFO records (``logging.basicConfig``, say), else on stdout
(above the bar) for the fit's duration. The bar is drawn only on a
terminal: in a redirected log it would be one line per update.
"""

import logging
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["LOGGER", "log", "progress", "verbose_logging"]

LOGGER = logging.getLogger("sklearn_clda")
_LEVEL = ContextVar("sklearn_clda_message_level", default=logging.DEBUG)


def log(message, *args):
    """Log a fit's message: INFO inside a verbose fit, else DEBUG."""
    LOGGER.log(_LEVEL.get(), message, *args)


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


def _shown_above():
    """Whether a handler of a logger above ours takes INFO records, as
    ``logging.basicConfig``'s does (a propagated record meets only the
    handlers' levels, not their loggers')."""
    logger = LOGGER
    while logger.propagate and logger.parent is not None:
        logger = logger.parent
        if any(h.level <= logging.INFO for h in logger.handlers):
            return True
    return False


@contextmanager
def verbose_logging(verbose):
    """With ``verbose``, log the fit's messages at INFO and show them once
    for the fit's duration: through the user's handlers (their levels
    left alone when they are on our logger), else on stdout."""
    if not verbose:
        yield
        return
    token = _LEVEL.set(logging.INFO)
    own = bool(LOGGER.handlers)
    handler = None if own or _shown_above() else _TqdmHandler()
    level = LOGGER.level
    if handler is not None:
        LOGGER.addHandler(handler)
    if not own:
        LOGGER.setLevel(logging.INFO)
    try:
        yield
    finally:
        if handler is not None:
            LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)
        _LEVEL.reset(token)
