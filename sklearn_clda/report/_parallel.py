"""Running several chains at once, each in its own process.

Chains are independent fits, so they run side by side on the machine's
cores with the same result as one after another: each process fits (or
continues) one chain from its own ``random_state``. Processes rather than
threads, so that Ctrl-C stops them at once (joblib ends its workers);
a fit in a thread would run on to its end.
"""

import warnings

import numpy as np

from .. import _memory
from .._sweeper import _effective_n_jobs

#: Share of the machine's memory that chains run at once may take together.
MEMORY_SHARE = 0.5


def chain_jobs(n_jobs, n_chains, X, n_components, n_groups, what="chains"):
    """``(jobs, note)``: how many chains (or other whole fits on ``X``,
    named ``what`` in the note) to run at once, and why fewer than asked
    (or None).

    ``n_jobs`` follows scikit-learn's convention (None means 1, -1 one per
    core, -2 all but one); it is capped by the number of chains and by
    :data:`MEMORY_SHARE` of the machine's memory over a chain's estimated
    peak (:func:`sklearn_clda._memory.gibbs_phases`, a lower bound).
    """
    jobs = max(1, min(_effective_n_jobs(n_jobs), n_chains))
    total = _memory.physical_memory()
    if jobs <= 1 or total is None:
        return jobs, None
    shape = X.shape if hasattr(X, "shape") else np.shape(X)
    n_tokens = int(X.sum()) if hasattr(X, "sum") else int(np.sum(X))
    phases = _memory.gibbs_phases(shape[0], shape[1], n_components, n_groups,
                                  word_table=True, itemsize=8, n_tokens=n_tokens)
    peak = max(_memory.largest_phase(phases)[1], 1)
    fits = max(1, int(MEMORY_SHARE * total // peak))
    if fits >= jobs:
        return jobs, None
    return fits, (f"{jobs} {what} at once would need about {_memory.gib(jobs * peak)} "
                  f"of this machine's {_memory.gib(total)}; running {fits} at a time")


def fit_chain(model, X, groups):
    """``model.fit(X, groups=groups)``, without the warning about many
    collections (the report's loader says it once, in a note)."""
    from ..exceptions import ManyCollectionsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ManyCollectionsWarning)
        model.fit(X, groups=groups)


class ChainProcessError(RuntimeError):
    """A worker process running a chain died (killed, out of memory, ...)."""


def _exit_reason(exc):
    """The exit codes joblib reports for the dead workers, in words."""
    import re

    found = re.findall(r"\{([^}]*)\}", str(exc))
    codes = sorted({code.strip() for group in found for code in group.split(",")})
    return f"exit codes {', '.join(codes)}" if codes else "no exit code reported"


def _call(fn, fit, args):
    fn(fit, *args)
    return fit


def map_chains(fn, fits, n_jobs, *args):
    """Call ``fn(fit, *args)`` on every fit, ``n_jobs`` at once in processes.

    ``fn`` changes its fit in place (fits it, or runs it further); with
    several processes each fit is replaced, in place, by the state its
    process returns, so that callers see the same objects changed as
    after ``for fit in fits: fn(fit, *args)``. ``fn`` must be a
    module-level function (it is pickled). If ``fn`` fails on a fit, every
    fit is put back as it was; a worker that dies (the system killed it for
    memory, ...) raises :class:`ChainProcessError`, with every fit as it
    was.
    """
    if n_jobs <= 1 or len(fits) <= 1:
        # A failed fit leaves its estimator as it was, and ``fn`` may have
        # changed its parameters first; the chains run before it succeeded:
        # put every fit back, so that the chains stay in step.
        before = [dict(vars(fit)) for fit in fits]
        try:
            for fit in fits:
                fn(fit, *args)
        except BaseException:
            for fit, state in zip(fits, before):
                vars(fit).clear()
                vars(fit).update(state)
            raise
        return
    from joblib import Parallel, delayed
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    try:
        done = Parallel(n_jobs=n_jobs, backend="loky")(
            delayed(_call)(fn, fit, args) for fit in fits)
    except TerminatedWorkerError as exc:
        raise ChainProcessError(
            f"a process running a chain ended abruptly ({_exit_reason(exc)}), often "
            "because the system ran out of memory; the chains are unchanged. Run them "
            "one at a time (n_jobs=1, or --n-jobs 1)."
        ) from None
    for fit, new in zip(fits, done):
        state = vars(new)
        vars(fit).clear()
        vars(fit).update(state)
