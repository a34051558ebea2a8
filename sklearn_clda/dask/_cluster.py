"""The client side of a distributed fit: where the shards live, how they are
called, and what happens when a worker dies.

:class:`ShardSet` places one shard per worker, submits pinned tasks to
them (the functions of :mod:`sklearn_clda.dask._shard`) and waits for the
answers with a deadline, noticing workers that left the cluster.
:class:`ClusterChain` is the sampler state and sweeper that the in-memory
estimators' sampling loop drives: it holds the global word-topic counts,
runs a synchronization round per ``sweep`` and rebuilds lost shards.
"""

import asyncio
import copy
import time
import warnings
from concurrent.futures import CancelledError

import dask
import numpy as np
from distributed import Future
from distributed.client import _wait

from .. import _sampling
from .._chunking import positive_csr
from . import _shard
from ._client import cluster_workers
from ._messages import DeltaMerger, merge_histograms, nbytes

__all__ = ["ClusterChain", "ShardSet"]

# Seconds between checks for lost workers while waiting for shards.
_POLL_SECONDS = 0.2
# Messages larger than this are scattered to the workers, not put in tasks.
_SCATTER_BYTES = 1 << 18
# Rebuild attempts per lost shard before the fit gives up.
_MAX_REBUILDS = 3
# Seconds a worker may stay paused (its memory above the pause fraction of
# its memory_limit) while a shard's task waits on it, and between checks.
_PAUSED_SECONDS = 60.0
_PAUSE_CHECK_SECONDS = 2.0
# Drop tasks, held until done: the task of a released future is forgotten,
# so a drop still queued when the fit stops waiting (a busy or paused
# worker) would never run. (distributed's fire_and_forget would keep the
# result of a task that finished before the request reached the scheduler.)
_LEFT_DROPS = set()


async def _gather_within(client, futures, seconds):
    """The results of finished ``futures``; ``TimeoutError`` after ``seconds``.

    The gather itself is never cancelled: it runs on, and its late result is
    dropped. distributed's client shares one in-flight gather between its
    callers, and cancelling a gather the moment it started that request
    (which a timeout on a busy event loop does) leaves every later gather of
    that client failing.
    """
    task = asyncio.ensure_future(client._gather(futures))
    task.add_done_callback(_retrieve)
    try:
        return await asyncio.wait_for(asyncio.shield(task), seconds)
    except asyncio.TimeoutError:  # not the builtin one before Python 3.11
        raise TimeoutError(f"gather not done within {seconds:g} s") from None


def _retrieve(task):
    """Mark a dropped gather's exception seen (a worker that died with the
    result, say): the wait that gave it up checks the workers itself."""
    if not task.cancelled():
        task.exception()


class _PausedWatch:
    """Notices a worker that stays paused while a shard's task waits on it.

    A worker pauses when its memory passes the ``distributed.worker.memory.pause``
    fraction of its ``memory_limit``, and starts no task until it drops
    below. A shard's arrays are not Dask data that the worker could spill,
    so a worker paused by them would never resume: after
    ``_PAUSED_SECONDS`` (at most the fit's timeout) the wait raises,
    naming the worker, instead of waiting out the timeout.
    """

    def __init__(self, shards, what):
        self.shards, self.what = shards, what
        self.since = {}
        self.checked = time.monotonic()

    def check(self, pending):
        now = time.monotonic()
        if not pending or now - self.checked < _PAUSE_CHECK_SECONDS:
            return
        self.checked = now
        info = cluster_workers(self.shards.client)
        waited_on = {self.shards.workers[i] for i in pending}
        paused = {a for a, w in info.items() if w.get("status") == "paused"} & waited_on
        self.since = {a: self.since.get(a, now) for a in paused}
        limit = min(_PAUSED_SECONDS, self.shards.timeout)
        stuck = sorted(a for a, t in self.since.items() if now - t >= limit)
        if not stuck:
            return
        ShardSet._cancel(pending)
        shards = sorted(i for i in pending if self.shards.workers[i] in stuck)
        raise RuntimeError(
            f"{self.shards.caller}: {self.what} of shard(s) {shards} is held up: Dask "
            f"worker(s) {stuck} have been paused for over {limit:g} s, their memory above the "
            "'distributed.worker.memory.pause' fraction of their memory_limit; a paused "
            "worker starts no task, and a shard's arrays stay in memory, so they would not "
            "resume. Give the workers more memory, or use more workers (smaller shards), "
            "fewer topics or a smaller vocabulary."
        )


def _fresh(error):
    """A copy of a shard's exception, to raise here. Raising the one the
    client keeps for the future would attach this fit's frames (its
    futures, X, the estimator) to it, and the client would keep them
    after the fit has failed."""
    try:
        return copy.copy(error)
    except Exception:  # an exception type that does not copy
        return RuntimeError(f"{type(error).__name__}: {error}")


class ShardSet:
    """The shards of one fit on a cluster, and every call to them.

    ``specs[i]`` is ``(x_blocks, group_blocks, first_block)``: shard ``i``'s
    blocks of X and of the labels (NumPy or delayed), from which it is
    built, and rebuilt if its worker is lost. ``build_args`` are the
    remaining arguments of :func:`~sklearn_clda.dask._shard.build_shard`.
    ``threads`` is its keyword, the threads of each shard's sweep, or
    ``None`` for the thread count (``nthreads``) of the worker that first
    builds the shard; either way a shard keeps its count when it is rebuilt
    (the count decides its draws), in :attr:`shard_threads`.
    """

    def __init__(self, client, specs, build_args, caller, timeout, fit_id, threads=1):
        self.client = client
        self.specs = specs
        self.build_args = build_args
        self.threads = None if threads is None else int(threads)
        self.shard_threads = {}
        self.caller = caller
        self.timeout = float(timeout)
        self.fit_id = fit_id
        self.workers = {}
        self.lost_log = []

    def __len__(self):
        return len(self.specs)

    def key(self, i):
        return f"{self.fit_id}-{i}"

    def alive(self):
        """Addresses of the workers now in the cluster, sorted."""
        return sorted(cluster_workers(self.client))

    def alive_or_wait(self, what):
        """:meth:`alive`; with no worker in the cluster, waits up to
        ``timeout`` for one (a nanny restarting the worker it lost, say),
        then raises ``RuntimeError`` saying that ``what`` has no worker."""
        alive = self.alive()
        if not alive:
            try:
                self.client.wait_for_workers(1, timeout=self.timeout)
            except Exception:  # noqa: BLE001 - a TimeoutError, said below
                pass
            alive = self.alive()
        if not alive:
            raise RuntimeError(
                f"{self.caller}: no Dask worker is left in the cluster to hold "
                f"{what} (waited {self.timeout:g} s for one); the fit cannot go on."
            )
        return alive

    def place(self, i):
        """Put shard ``i`` on the live worker that holds the fewest shards
        (see :meth:`alive_or_wait` when none is left)."""
        alive = self.alive_or_wait(f"shard {i}")
        load = {a: 0 for a in alive}
        for j, a in self.workers.items():
            if j != i and a in load:
                load[a] += 1
        self.workers[i] = min(alive, key=lambda a: (load[a], a))

    def _ship(self, blocks, addr):
        """In-memory blocks are sent straight to the worker that builds the
        shard (not through the scheduler in the task graph); dask blocks
        are computed there."""
        if blocks is None or any(dask.is_dask_collection(b) for b in blocks):
            return blocks
        return self.client.scatter(list(blocks), workers=[addr], hash=False,
                                   timeout=self.timeout)

    def _threads_of(self, i):
        """Shard ``i``'s sweep threads, fixed when it is first built."""
        if i not in self.shard_threads:
            threads = self.threads
            if threads is None:
                info = cluster_workers(self.client)
                threads = int(info.get(self.workers[i], {}).get("nthreads") or 1)
            self.shard_threads[i] = max(1, threads)
        return self.shard_threads[i]

    def _ship_shard(self, i):
        """Shard ``i``'s blocks sent to its worker (see :meth:`_ship`); a
        worker that leaves the cluster meanwhile (it died just after the
        fit chose it) is replaced by another (:meth:`place`)."""
        x_blocks, group_blocks, _ = self.specs[i]
        for _ in range(_MAX_REBUILDS):
            addr = self.workers[i]
            try:
                return self._ship(x_blocks, addr), self._ship(group_blocks, addr)
            except Exception:
                if addr in self.alive():
                    raise
            self.place(i)
        raise RuntimeError(f"{self.caller}: the workers chosen for shard {i} kept "
                           "leaving the cluster while its data was sent to them.")

    def submit_build(self, i, seed, topics=None):
        x, groups = self._ship_shard(i)
        addr = self.workers[i]
        info = cluster_workers(self.client).get(addr, {})
        task = dask.delayed(_shard.build_shard, pure=False)(
            self.key(i), x, groups, *self.build_args, seed, self.caller, self.specs[i][2],
            topics, threads=self._threads_of(i), limit=(addr, int(info.get("memory_limit") or 0)),
        )
        return self.client.compute(task, workers=[addr], allow_other_workers=False)

    def submit(self, fn, i, *args):
        return self.client.submit(
            fn, self.key(i), *args, workers=[self.workers[i]], allow_other_workers=False,
            pure=False,
        )

    def share(self, obj):
        """``obj`` for every shard's task: a large one is scattered to the
        workers once (one copy per worker, straight from here) rather than
        sent through the scheduler inside each task; if that fails (a worker
        left meanwhile) it goes inside the tasks."""
        if nbytes(obj) < _SCATTER_BYTES:
            return obj
        workers = sorted(set(self.workers.values()))
        try:
            [future] = self.client.scatter([obj], workers=workers, broadcast=True,
                                           hash=False, timeout=min(self.timeout, 30.0))
        except Exception:  # noqa: BLE001 - the tasks carry it instead
            return obj
        return future

    @staticmethod
    def unshare(shared):
        """Let the workers forget a message given by :meth:`share` once the
        tasks that read it are done (waiting for the garbage collector to
        drop the future kept each round's table change in their memory)."""
        if isinstance(shared, Future):
            shared.release()

    def call(self, fn, args_by_shard, what):
        """``fn(key, *args)`` on each shard given; ``(results, lost)``."""
        futures = {i: self.submit(fn, i, *args) for i, args in args_by_shard.items()}
        return self.wait(futures, what)

    def wait(self, futures, what):
        """Results of ``futures`` (by shard) and the shards whose worker left.

        Waits at most ``timeout`` seconds in all, then raises ``TimeoutError``;
        an exception raised by a shard's task is raised here.
        """
        deadline = time.monotonic() + self.timeout
        pending, results, lost = dict(futures), {}, []
        fetch = _POLL_SECONDS
        paused = _PausedWatch(self, what)
        while pending:
            try:
                self._wait(list(pending.values()), _POLL_SECONDS)
            except TimeoutError:
                pass
            alive = None
            for i, future in list(pending.items()):
                if future.status in ("error", "cancelled", "lost"):
                    alive = self.alive() if alive is None else alive
                    if self.workers[i] not in alive:
                        continue  # counted as lost below
                    del pending[i]
                    self._cancel(pending)
                    error = future.exception() if future.status == "error" else None
                    if error is not None:
                        raise _fresh(error) from error
                    raise RuntimeError(f"{self.caller}: {what} of shard {i} was {future.status}.")
            fetch = self._collect(pending, results, fetch, deadline)
            if not pending:
                break
            alive = self.alive() if alive is None else alive
            for i in [i for i in pending if self.workers[i] not in alive]:
                pending.pop(i).cancel()
                lost.append(i)
            paused.check(pending)
            if pending and time.monotonic() > deadline:
                self._cancel(pending)
                slow = sorted(pending)
                raise TimeoutError(
                    f"{self.caller}: {what} of shard(s) {slow} on worker(s) "
                    f"{sorted({self.workers[i] for i in slow})} did not finish within "
                    f"timeout={self.timeout:g} seconds; the workers are alive but "
                    "busy or stuck. Raise timeout, or check the cluster's dashboard."
                )
        return results, sorted(lost)

    def _collect(self, pending, results, fetch, deadline):
        """Move the finished futures' results from ``pending`` to ``results``,
        fetched together; returns the next fetch's time limit.

        A result may have died with its worker since it was computed: the
        fetch never waits long, or its task is cancelled (its input left
        with the worker); either way the caller then checks the workers and
        the statuses. A large result still on its way gets twice as long
        the next time.
        """
        done = {i: f for i, f in pending.items() if f.status == "finished"}
        if not done:
            return fetch
        try:
            values = self.client.sync(_gather_within, self.client,
                                      list(done.values()), fetch)
        except TimeoutError:
            return min(2 * fetch, max(deadline - time.monotonic(), 0.0))
        except CancelledError:
            return fetch
        for (i, future), value in zip(done.items(), values):
            results[i] = value
            future.release()
            del pending[i]
        return fetch

    def _wait(self, futures, seconds):
        """``distributed.wait`` on this fit's client (which need not be the
        default one); ``TimeoutError`` after ``seconds``. A cancelled future
        ends the wait as a finished one does (recent distributed releases
        raise ``FuturesCancelledError`` for it): the caller reads each
        future's status, and a task cancelled because its worker left with
        its data (a lost shard's blocks, just sent) is a lost shard, not a
        failed fit."""
        try:
            self.client.sync(_wait, futures, timeout=seconds, return_when="ALL_COMPLETED")
        except CancelledError:
            pass
        except asyncio.TimeoutError:  # not the builtin one before Python 3.11
            raise TimeoutError(f"wait not done within {seconds:g} s") from None

    @staticmethod
    def _cancel(pending):
        for future in pending.values():
            future.cancel()

    def build_all(self, seeds):
        """Build every shard (a shard whose worker is lost is built elsewhere)."""
        alive = self.alive_or_wait("the shards")
        for i in range(len(self)):
            self.workers[i] = alive[i % len(alive)]
        todo, summaries = list(range(len(self))), {}
        for _ in range(_MAX_REBUILDS + 1):
            futures = {i: self.submit_build(i, seeds[i]) for i in todo}
            done, todo = self.wait(futures, "building")
            summaries.update(done)
            if not todo:
                return [summaries[i] for i in range(len(self))]
            for i in todo:
                self.lost_log.append(("build", i))
                self.place(i)
        raise RuntimeError(f"{self.caller}: shards {todo} could not be built; workers keep dying.")

    def drop(self):
        """Forget every shard on its worker: never waiting long, nor at all
        on a paused worker (it starts no task until its memory drops below
        the pause fraction). A drop not done when the wait ends runs later:
        its future is held until then (:data:`_LEFT_DROPS`)."""
        info = cluster_workers(self.client)
        futures = []
        for i, addr in self.workers.items():
            if addr not in info:
                continue
            future = self.submit(_shard.drop_shard, i)
            _LEFT_DROPS.add(future)
            future.add_done_callback(_LEFT_DROPS.discard)
            if info[addr].get("status") != "paused":
                futures.append(future)
        try:
            self._wait(futures, min(self.timeout, 10.0))
        except Exception:  # noqa: BLE001 - cleanup must not hide the fit's outcome
            pass


class ClusterChain:
    """Sampler state and sweeper of a distributed fit, for the estimators' loop.

    ``nwk`` (V, K) and ``nk`` are the global word-topic counts, kept here;
    the documents, their topics and counts stay on the shards. Each
    ``sweep`` is one synchronization round: every shard applies the last
    round's merged change of the table, runs ``local_sweeps`` sweeps against
    its own copy, and returns its change (sparse) and its Antoniak table
    counts, summed here. ``doc_histograms`` and ``doc_log_likelihood``
    answer the estimator's hooks from the shards.
    """

    # A fit of one shard sends it no table change (see sweep); False sends
    # its own change back to it as with several (the same chain).
    sole_shard_keeps_change = True

    def __init__(self, shards, summaries, seed, n_components, local_sweeps, hist_rounds,
                 n_table_rows, labels, prior, eta):
        self.shards = shards
        self.seed = seed
        self.local_sweeps = int(local_sweeps)
        self.hist_rounds = hist_rounds
        self.n_table_rows = int(n_table_rows)
        V = shards.build_args[0]
        self.K = int(n_components)
        self.lengths = merge_histograms([s["lengths"] for s in summaries])
        self.index_dtype = np.int32 if V * self.K < 2**31 else np.int64
        self.labels = labels
        self.keep_prior = None
        self.hist = None
        self.round = 0
        self.n_rebuilt = 0
        self.eta = float(eta)
        self.prior = np.ascontiguousarray(prior, dtype=np.float64)
        self.bytes = []
        self.sync_seconds = []
        # Each shard's own counts come with its setup (see shard_setup).
        args = dict.fromkeys(range(len(shards)), (labels, self.n_table_rows))
        counts, lost = shards.call(_shard.shard_setup, args, "setting up")
        counts = [counts[i] for i in sorted(counts) if counts[i] is not None]
        self.nwk = np.zeros((V, self.K), dtype=np.int32)
        for c in counts:
            self._add(self.nwk, c)
        self.nk = self.nwk.sum(axis=0, dtype=np.int64).astype(np.int32)
        self.merger = DeltaMerger(self.nwk.size)
        self.sync = ("delta", *self.merger.merge(counts, self.index_dtype))
        if lost:
            self._recover(lost)

    def release(self):
        """Drop the (V, K) tables: the global counts and the merge's buffers.

        The chain itself may outlive its last use for a while (a frame of
        one of its rounds held by a caught exception's traceback, until the
        garbage collector breaks the cycle), so the fit releases them
        explicitly before it makes ``components_``.
        """
        self.nwk = self.merger = self.sync = None

    @property
    def n_features(self):
        return self.nwk.shape[0]

    def word_topic_counts(self):
        """The global word-topic counts as a CSR matrix (Gibbs-EM's
        histograms read them as they read an in-memory state's)."""
        return positive_csr(self.nwk)

    def _add(self, table, sparse):
        # (compiled, in place, for the cells may repeat across shards' counts)
        idx, vals = sparse
        _sampling.add_cells(table, np.ascontiguousarray(idx),
                            np.ascontiguousarray(vals, dtype=np.int32), self.K)

    # -------------------------------------------------- the sampling loop's API
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def sweep(self, prior, eta):
        """One synchronization round; returns the summed Antoniak table counts."""
        self.round += 1
        self.prior, self.eta = np.ascontiguousarray(prior, dtype=np.float64), float(eta)
        want_hist = self.round in self.hist_rounds
        # The only shard keeps its change in its copy, so that the next
        # round sends it nothing of the table (the change is the round's
        # whole change: the client's table after it is the shard's copy).
        sole = len(self.shards) == 1 and self.sole_shard_keeps_change
        start = time.perf_counter()
        shared = self.shards.share(self.sync)
        args = (shared, self.nk, self.prior, self.eta, self.local_sweeps, self.keep_prior,
                want_hist, sole)
        everyone = dict.fromkeys(range(len(self.shards)), args)
        try:
            results, lost = self.shards.call(_shard.shard_round, everyone, "a sweep")
        finally:
            self.shards.unshare(shared)
        wall = time.perf_counter() - start
        self.keep_prior = None
        sent = len(self.shards) * (sum(nbytes(a) for a in args[1:]) + nbytes(self.sync))
        received = sum(nbytes(r["delta"]) + nbytes(r["tables"]) + nbytes(r["hist"])
                       for r in results.values())
        self.bytes.append((sent, received))
        self.sync_seconds.append(wall - max((r["seconds"] for r in results.values()), default=0.0))
        column_sums = np.zeros(self.K, dtype=np.int64)
        idx, vals = self.merger.merge([r["delta"] for r in results.values()],
                                      self.index_dtype, column_sums)
        self._add(self.nwk, (idx, vals))
        self.nk += column_sums.astype(np.int32)
        self.sync = (("kept", np.empty(0, idx.dtype), np.empty(0, vals.dtype)) if sole
                     else ("delta", idx, vals))
        if want_hist:
            self.hist = merge_histograms([r["hist"] for r in results.values()])
        tables = np.zeros((self.n_table_rows, self.K), dtype=np.int64)
        for r in results.values():
            tables += r["tables"]
        if lost:
            self._recover(lost)
            tables += self._rebuilt_tables(lost)
        return tables

    def _rebuilt_tables(self, rebuilt):
        """The Antoniak table counts of the rebuilt shards' documents, drawn
        from their new topics, so that a round's counts cover every document
        (even when every shard was lost in it); a shard lost again meanwhile
        is rebuilt at once and left out of them."""
        tables = np.zeros((self.n_table_rows, self.K), dtype=np.int64)
        if self.n_table_rows == 0:
            return tables
        args = {
            i: (self.prior, self.n_table_rows,
                np.random.SeedSequence(self.seed, spawn_key=(2, i, self.n_rebuilt)))
            for i in rebuilt
        }
        more, lost = self.shards.call(_shard.shard_tables, args, "the table counts")
        for t in more.values():
            tables += t
        if lost:
            self._recover(lost)
        return tables

    def doc_histograms(self, n_groups):
        """The Gibbs-EM histograms of the last round (see ``_hyper.doc_histograms``)."""
        if self.hist is None:
            raise RuntimeError("doc_histograms asked for outside the Gibbs-EM rounds")
        return self.hist, self.lengths

    def doc_log_likelihood(self, prior):
        """The documents' terms of ``log p(z)``, summed over the shards."""
        args = dict.fromkeys(range(len(self.shards)), (self.keep_prior, prior))
        results, lost = self.shards.call(_shard.shard_log_likelihood, args, "a log-likelihood")
        self.keep_prior = None
        if lost:
            self._recover(lost)
            more, _ = self.shards.call(
                _shard.shard_log_likelihood, {i: (None, prior) for i in lost}, "a log-likelihood"
            )
            results.update(more)
        return sum(results.values())

    def keep(self, prior):
        """Have every shard add its documents' proportions under ``prior`` to
        its average, with the next message (the state is the same until then)."""
        self.keep_prior = np.ascontiguousarray(prior, dtype=np.float64)

    def final_topics(self):
        """The topics for ``shard_finish``: the last state's word-topic
        counts as CSR arrays (int32, 8 bytes a positive cell: never more
        than a dense ``(V, K)`` float64 table of probabilities, and far
        less at many topics; each shard sums over its documents' and the
        words' topics), ``eta`` and ``nk + V eta``."""
        counts = self.word_topic_counts()
        return (counts.indptr.astype(np.int64), counts.indices.astype(np.int32),
                counts.data, self.eta, self.nk + self.nwk.shape[0] * self.eta)

    def finish(self, prior, table_sums):
        """Each shard's final pieces, in row order (see ``shard_finish``)."""
        topics = self.final_topics()
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        shared = self.shards.share(topics)
        args = {i: (self.keep_prior, prior, shared, table_sums) for i in range(len(self.shards))}
        try:
            results, lost = self.shards.call(_shard.shard_finish, args, "the final gather")
        finally:
            self.shards.unshare(shared)
        if lost:
            self._recover(lost)
            more, _ = self.shards.call(
                _shard.shard_finish, {i: (None, prior, topics, table_sums) for i in lost},
                "the final gather",
            )
            results.update(more)
        return [results[i] for i in range(len(self.shards))]

    # ------------------------------------------------------------------ faults
    def _recover(self, lost):
        """Rebuild the lost shards from the input, their topics drawn from the
        current ones, and recount the global table from every shard's own
        counts; the next round sends the whole table."""
        for _ in range(_MAX_REBUILDS):
            for i in lost:
                self.shards.lost_log.append((self.round, i))
                self.shards.place(i)
            self.n_rebuilt += 1
            topics = (self.labels, self.n_table_rows, self._sparse_table(), self.nk.copy(),
                      self.eta, self.prior)
            futures = {
                i: self.shards.submit_build(
                    i, np.random.SeedSequence(self.seed, spawn_key=(1, i, self.n_rebuilt)),
                    topics,
                )
                for i in lost
            }
            built, lost_again = self.shards.wait(futures, "rebuilding")
            others = {i: () for i in range(len(self.shards)) if i not in futures}
            counts, lost_more = self.shards.call(_shard.shard_counts, others, "a recount")
            lost = sorted(set(lost_again) | set(lost_more))
            if not lost:
                self.nwk[...] = 0
                for c in [b["counts"] for b in built.values()] + list(counts.values()):
                    self._add(self.nwk, c)
                self.nk = self.nwk.sum(axis=0, dtype=np.int64).astype(np.int32)
                self.sync = ("full", *self._sparse_table())
                return
        raise RuntimeError(
            f"{self.shards.caller}: workers kept dying while shards {lost} were "
            f"rebuilt ({_MAX_REBUILDS} attempts); the fit cannot go on."
        )

    def _sparse_table(self):
        flat = self.nwk.ravel()
        idx = np.flatnonzero(flat)
        dtype = np.int32 if flat.size < 2**31 else np.int64
        return idx.astype(dtype), flat[idx]

    def warn_if_rebuilt(self, name):
        log = self.shards.lost_log
        if log:
            from ..exceptions import ShardRebuiltWarning

            where = ", ".join(f"shard {i} ({'while building' if r == 'build' else f'round {r}'})"
                              for r, i in log)
            warnings.warn(
                f"{name}.fit lost Dask workers and rebuilt {where} from the input, "
                "its topic assignments drawn again from the topics at that round; "
                "the other shards kept their state.",
                ShardRebuiltWarning,
                stacklevel=4,
            )
