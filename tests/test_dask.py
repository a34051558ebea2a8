"""sklearn_clda.dask on a real two-process LocalCluster.

One cluster for the module (two single-threaded worker processes, as CI
runs it). The tests compare the distributed fit with the threaded
in-memory estimator on news16, kill a worker process in the middle of a
fit, check reproducibility, metadata routing of ``groups`` and the errors
on wrong input.
"""

import contextlib
import gc
import os
import pickle
import subprocess
import sys
import threading
import time
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import dask  # noqa: E402
import sklearn  # noqa: E402
from distributed import Client, LocalCluster, Worker  # noqa: E402
from distributed.client import _wait  # noqa: E402
from distributed.core import Status  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402

import sklearn_clda  # noqa: E402
from sklearn_clda import _memory  # noqa: E402
from sklearn_clda.datasets import load_news16, make_compound_corpus  # noqa: E402
from sklearn_clda.dask import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda.dask import _cluster, _fit, _input  # noqa: E402
from sklearn_clda.dask._client import cluster_workers  # noqa: E402
from sklearn_clda.exceptions import ShardRebuiltWarning  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _SharedCluster:
    """The module's two-process LocalCluster and its client, started anew
    when a worker a test killed does not come back."""

    def __init__(self):
        self._stack = contextlib.ExitStack()
        self.cluster = self.client = None

    def start(self):
        self.cluster = self._stack.enter_context(LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
            silence_logs=50,
        ))
        self.client = self._stack.enter_context(Client(self.cluster, set_as_default=False))

    def close(self):
        self._stack.close()

    def with_both_workers(self):
        """The client once both workers run. A nanny restarts the worker a
        test killed, but gives up when the new process is slow to start (a
        loaded machine), and has closed itself: then the cluster is replaced
        at once, so that one test's kill cannot fail the next. A new cluster
        starts in seconds; a full CI run once waited out a whole minute for
        a nanny."""
        deadline = time.monotonic() + 20
        while len(cluster_workers(self.client)) < 2:
            gone = any(nanny.status in (Status.closing, Status.closed, Status.failed)
                       for nanny in self.cluster.workers.values())
            if gone or time.monotonic() > deadline:
                self.close()
                self.start()
                self.client.wait_for_workers(2, timeout=60)
                break
            time.sleep(0.1)
        return self.client


@pytest.fixture(scope="module")
def shared_cluster():
    cluster = _SharedCluster()
    cluster.start()
    yield cluster
    cluster.close()


@pytest.fixture
def client(shared_cluster):
    """The module's cluster with both workers up: a test that killed one
    does not hand a cluster still restarting it to the next test."""
    return shared_cluster.with_both_workers()


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=4, n_features=50, n_collections=3,
                                docs_per_collection=60, doc_length=50, random_state=0)


def _dask_counts(X, rows=40):
    return da.from_array(sp.csr_matrix(X), chunks=(rows, -1), asarray=False)


def _clda(client, **params):
    return CompoundLDA(**{"n_components": 4, "max_iter": 30, "random_state": 0,
                          "client": client, "timeout": 60, **params})


def _rebuilt(model):
    """The shards a fit rebuilt. A shard is logged once a rebuild, and one
    whose new worker leaves too is rebuilt again: in one CI run a nanny
    closed the worker it had just restarted, which the fit had chosen for a
    lost shard (test_a_shard_lost_again_while_rebuilt_is_rebuilt_again)."""
    return sorted({shard for _, shard in model.rebuilt_shards_})


# ---------------------------------------------------------------- packaging
def _run_python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120)


def test_core_package_does_not_import_dask():
    proc = _run_python(
        "import sys, sklearn_clda, sklearn_clda.metrics, sklearn_clda.datasets\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(bad)\n"
        "assert not bad, bad\n"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_import_without_dask_names_the_extra():
    proc = _run_python(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('dask', 'distributed'):\n"
        "            raise ImportError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, Block())\n"
        "try:\n"
        "    import sklearn_clda.dask\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert 'pip install "sklearn-clda[dask]"' in proc.stdout


# ------------------------------------------------------- against in memory
def test_heldout_perplexity_matches_threaded_estimator_on_news16(client):
    news = load_news16()
    X, groups = sp.csr_matrix(news.data), np.asarray(news.groups)
    test = np.arange(X.shape[0]) % 5 == 0
    params = {"n_components": 20, "max_iter": 60, "thin": 2}
    # One chain's held-out perplexity varies by 0.7% (Dask) and 1.0%
    # (threads) between seeds (nine seeds each). A Dask fit costs 2.5 times
    # a threaded one (its rounds' messages), so the threads get more seeds:
    # the means of four and six differ by 0.54% (one standard deviation)
    # between seed sets, and the 1.5% bound is 2.2 of those away from the
    # mean ratio (1.003 over six seeds each). Fixed seeds: the outcome itself
    # is reproducible. benchmarks/bench_dask.py measures the approximation.
    ppl = {"dask": [], "threads": []}
    for seed in range(6):
        fits = [("threads", sklearn_clda.CompoundLDA(n_jobs=2, random_state=seed, **params))]
        if seed < 4:
            fits.append(("dask", CompoundLDA(client=client, random_state=seed, **params)))
        for name, model in fits:
            model.fit(X[~test], groups=groups[~test])
            ppl[name].append(model.perplexity(X[test], groups=groups[test]))
    ratio = np.mean(ppl["dask"]) / np.mean(ppl["threads"])
    assert abs(ratio - 1) < 0.015, (ppl, ratio)


def test_counts_stay_consistent_and_to_local_is_the_in_memory_model(client, corpus):
    X = _dask_counts(corpus.data)
    model = _clda(client).fit(X, groups=da.from_array(corpus.groups, chunks=40))
    # Every kept state counts every token exactly once.
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())
    assert model.n_shards_ == 2 and model.doc_topic_.shape == (corpus.data.shape[0], 4)
    local = model.to_local()
    assert type(local) is sklearn_clda.CompoundLDA
    assert "client" not in local.get_params()
    np.testing.assert_array_equal(local.components_, model.components_)
    np.testing.assert_array_equal(
        local.transform(corpus.data, groups=corpus.groups),
        model.transform(corpus.data, groups=corpus.groups),
    )
    # partial_fit continues from the collections' table counts.
    local.partial_fit(corpus.data[:50], groups=corpus.groups[:50])
    # Inference is local: a dask array is refused, not computed whole.
    for method, hint in ((model.transform, "X.map_blocks"), (model.score, "add up"),
                         (model.perplexity, "add up")):
        with pytest.raises(ValueError, match=f"dask collection.*{hint}"):
            method(X)
    # So is it by partial_fit, which runs here too, and the model stays as it was.
    before = dict(vars(model))
    with pytest.raises(ValueError, match=r"CompoundLDA.partial_fit is a dask collection.*"
                                         r"for block in X.blocks"):
        model.partial_fit(X, groups=corpus.groups)
    assert vars(model).keys() == before.keys()
    assert all(vars(model)[k] is v for k, v in before.items())


def test_client_by_address_and_embedded_cluster(client, corpus, monkeypatch):
    """A scheduler address connects a client for the fit; ``client=None``
    without a current client starts (and closes) a LocalCluster."""
    from sklearn_clda.dask import _client

    by_address = _clda(client.scheduler.address, max_iter=5)
    by_address.fit(corpus.data, groups=corpus.groups)
    assert by_address.n_shards_ == 2
    with pytest.raises(ValueError):
        Client.current()
    # The embedded cluster's workers in this process (the fixture's cluster
    # already runs worker processes): starting them costs seconds each.
    started = []

    def in_process(**kwargs):
        started.append(kwargs)
        return LocalCluster(**{**kwargs, "processes": False})

    monkeypatch.setattr(_client, "LocalCluster", in_process)
    embedded = _clda(None, max_iter=5).fit(corpus.data, groups=corpus.groups)
    cpus = os.cpu_count() or 1
    assert started[0]["n_workers"] == 1 and started[0]["processes"]
    assert started[0]["threads_per_worker"] == cpus
    # One shard, swept on all of the worker's threads.
    assert embedded.n_shards_ == 1
    np.testing.assert_array_equal(embedded.shard_threads_, [cpus])
    with pytest.raises(ValueError):
        Client.current()


def test_pickle_and_clone_with_a_client(client, corpus):
    model = _clda(client, max_iter=10).fit(corpus.data, groups=corpus.groups)
    again = pickle.loads(pickle.dumps(model))
    assert again.client is None
    np.testing.assert_array_equal(again.components_, model.components_)
    assert clone(model).client is client


# ----------------------------------------------------------------- faults
@pytest.mark.parametrize("worker_threads", [1, 2])
def test_worker_killed_mid_fit_is_rebuilt(client, corpus, monkeypatch, worker_threads):
    """Kill one worker process during round 20 of 40; the fit goes on (also
    with each shard swept on two threads: the rebuilt one too)."""
    sweep = _cluster.ClusterChain.sweep
    killed = {}

    def sweep_and_kill(chain, prior, eta):
        if chain.round == 19 and not killed:
            addr = chain.shards.workers[1]
            pid = client.run(os.getpid, workers=[addr])[addr]
            # Dies while round 20 runs (or just before it is sent).
            timer = threading.Timer(0.01, os.kill, (pid, 9))
            timer.start()
            killed["pid"] = pid
        return sweep(chain, prior, eta)

    monkeypatch.setattr(_cluster.ClusterChain, "sweep", sweep_and_kill)
    X = _dask_counts(corpus.data)
    with pytest.warns(ShardRebuiltWarning, match="shard 1"):
        model = _clda(client, max_iter=40, worker_threads=worker_threads).fit(
            X, groups=corpus.groups)
    assert killed
    assert _rebuilt(model) == [1]
    np.testing.assert_array_equal(model.shard_threads_, [worker_threads] * 2)
    assert model.rebuilt_shards_[0][0] in (20, 21)
    # The global table was recounted: every token once.
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())
    reference = _clda(client, max_iter=40, worker_threads=worker_threads).fit(
        X, groups=corpus.groups)
    ppl = model.perplexity(corpus.data, groups=corpus.groups)
    # Half the documents restart from the current topics and catch up.
    assert ppl < 1.01 * reference.perplexity(corpus.data, groups=corpus.groups)


def test_every_worker_killed_in_one_round(client, corpus, monkeypatch):
    """Kill both worker processes before round 20 of 30: their nannies start
    new ones, the fit waits for them, rebuilds both shards, and that round's
    Antoniak table counts still cover every document (drawn from the
    rebuilt shards' topics), not just the shards that answered (none).

    A nanny restarts its worker in 1-4 s here, even beside three busy
    processes, but in one CI run in about eight no worker registered
    within the fit's 60 s wait (one did a few seconds later): the fit
    waits up to 300 s, which costs nothing when the workers return."""
    from sklearn_clda import _pi_update

    sweep = _cluster.ClusterChain.sweep
    step = _pi_update.AGSUpdate.step
    killed, table_totals = {}, {}

    def sweep_and_kill(chain, prior, eta):
        if chain.round == 19 and not killed:
            pids = client.run(os.getpid)
            for pid in pids.values():
                os.kill(pid, 9)
            killed.update(pids)
        return sweep(chain, prior, eta)

    def recording_step(update, run, sweep_no, tables, rng, state):
        table_totals[state.round] = int(np.sum(tables))
        return step(update, run, sweep_no, tables, rng, state)

    monkeypatch.setattr(_cluster.ClusterChain, "sweep", sweep_and_kill)
    monkeypatch.setattr(_pi_update.AGSUpdate, "step", recording_step)
    with pytest.warns(ShardRebuiltWarning):
        model = _clda(client, max_iter=30, timeout=300).fit(corpus.data,
                                                            groups=corpus.groups)
    assert len(killed) == 2
    assert _rebuilt(model) == [0, 1]
    assert sorted(model.rebuilt_shards_[:2]) == [(20, 0), (20, 1)]
    # every document holds at least one table in every round
    n_docs = corpus.data.shape[0]
    assert len(table_totals) == 30 and min(table_totals.values()) >= n_docs
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


def _shard_tables_now():
    """In a worker: its shards' copies of the word-topic table."""
    from sklearn_clda.dask import _shard

    return [np.array(shard["state"].nwk) for shard in _shard._SHARDS.values()]


def _checking_sole_copies(client, monkeypatch):
    """Have every round of a one-shard fit first check that the shard's copy
    of the table is the client's (it kept its own change: the round's sync
    is then empty); returns the list of rounds checked."""
    sweep = _cluster.ClusterChain.sweep
    checked = []

    def checking_sweep(chain, prior, eta):
        if chain.sync[0] == "kept":
            [copies] = client.run(_shard_tables_now).values()
            assert len(copies) == 1 and chain.sync[1].size == 0
            np.testing.assert_array_equal(copies[0], chain.nwk)
            checked.append(chain.round + 1)
        return sweep(chain, prior, eta)

    monkeypatch.setattr(_cluster.ClusterChain, "sweep", checking_sweep)
    return checked


def test_one_shard_is_sent_no_table_change(corpus, monkeypatch):
    """With one worker (the embedded cluster's layout) the shard keeps its
    own change in its copy and the client sends it no change of the table:
    the same chain as sending the change back, with a round's message down
    the size of the priors."""
    X = _dask_counts(corpus.data)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as c:
        checked = _checking_sole_copies(c, monkeypatch)
        kept = _clda(c, max_iter=20).fit(X, groups=corpus.groups)
        assert checked == list(range(2, 21))
        monkeypatch.setattr(_cluster.ClusterChain, "sole_shard_keeps_change", False)
        sent_back = _clda(c, max_iter=20).fit(X, groups=corpus.groups)
        assert checked == list(range(2, 21))
    assert kept.n_shards_ == 1
    np.testing.assert_array_equal(kept.components_, sent_back.components_)
    np.testing.assert_array_equal(kept.doc_topic_, sent_back.doc_topic_)
    np.testing.assert_array_equal(kept.collection_topic_, sent_back.collection_topic_)
    np.testing.assert_array_equal(kept.sync_bytes_[:, 1], sent_back.sync_bytes_[:, 1])
    # Rounds 2 on: the change received the round before (with the table
    # counts) is not sent back.
    saved = sent_back.sync_bytes_[1:, 0] - kept.sync_bytes_[1:, 0]
    assert (saved > 0).all() and (saved <= sent_back.sync_bytes_[:-1, 1]).all()
    assert (kept.sync_bytes_[1:, 0] < 1000).all()


def test_the_only_worker_killed_mid_fit_is_rebuilt(corpus, monkeypatch):
    """Kill the only worker process during round 10 of 20: its nanny starts
    a new one, the shard is rebuilt there and sent the whole table, and the
    rounds after it again send nothing of the table to a copy that is the
    client's."""
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as c:
        sweep = _cluster.ClusterChain.sweep
        killed = {}

        def sweep_and_kill(chain, prior, eta):
            if chain.round == 9 and not killed:
                killed.update(c.run(os.getpid))
                for pid in killed.values():
                    os.kill(pid, 9)
            return sweep(chain, prior, eta)

        monkeypatch.setattr(_cluster.ClusterChain, "sweep", sweep_and_kill)
        checked = _checking_sole_copies(c, monkeypatch)  # (before the kill)
        with pytest.warns(ShardRebuiltWarning, match="shard 0"):
            model = _clda(c, max_iter=20, timeout=300).fit(corpus.data, groups=corpus.groups)
    assert len(killed) == 1 and _rebuilt(model) == [0]
    (round_lost, _), = model.rebuilt_shards_
    # the rounds after the rebuild's "full" sync keep the change again
    assert set(range(round_lost + 2, 21)) <= set(checked)
    assert round_lost + 1 not in checked
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


def test_a_shard_lost_again_while_rebuilt_is_rebuilt_again(corpus, monkeypatch):
    """The worker chosen for a lost shard leaves just after the shard's data
    reached it (in one CI run a nanny closed the worker it had just
    restarted, and the fit chose it): the shard is rebuilt again on another
    worker in the same round, logged once a rebuild, and that round's table
    counts still cover every document. In this process: the one-thread
    worker leaves before round 6, a spare worker joins, takes the lost
    shard's data and leaves too."""
    from sklearn_clda import _pi_update

    sweep, ship = _cluster.ClusterChain.sweep, _cluster.ShardSet._ship_shard
    step = _pi_update.AGSUpdate.step
    events, table_totals = {}, {}
    with _cluster_and_one_thread_worker(threads_per_worker=1) as (c, single):
        def sweep_after_leaving(chain, prior, eta):
            if chain.round == 5 and not events:
                events["shard"] = next(i for i, a in chain.shards.workers.items()
                                       if a == single.address)
                events["spare"] = _start_one_thread_worker(c)
                c.wait_for_workers(3, timeout=60)
                c.sync(single.close)
            return sweep(chain, prior, eta)

        def ship_then_leave(shards, i):
            sent = ship(shards, i)
            spare = events.get("spare")
            if spare is not None and shards.workers[i] == spare.address:
                events["spare"] = None
                c.sync(spare.close)
            return sent

        def recording_step(update, run, sweep_no, tables, rng, state):
            table_totals[state.round] = int(np.sum(tables))
            return step(update, run, sweep_no, tables, rng, state)

        monkeypatch.setattr(_cluster.ClusterChain, "sweep", sweep_after_leaving)
        monkeypatch.setattr(_cluster.ShardSet, "_ship_shard", ship_then_leave)
        monkeypatch.setattr(_pi_update.AGSUpdate, "step", recording_step)
        with pytest.warns(ShardRebuiltWarning, match=r"(round 6.*){2}"):
            model = _clda(c, max_iter=10).fit(corpus.data, groups=corpus.groups)
    assert "spare" in events and events["spare"] is None  # the spare took the shard
    assert model.rebuilt_shards_ == [(6, events["shard"])] * 2
    assert len(table_totals) == 10 and min(table_totals.values()) >= corpus.data.shape[0]
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


def test_a_result_lost_between_finishing_and_its_gather_is_a_lost_shard(corpus, monkeypatch):
    """A shard's build finishes, and its worker leaves before the result is
    fetched: the gather finds the task cancelled (the blocks it was built
    from left with the worker), and the shard is built again elsewhere like
    any lost one; the fit does not fail with distributed's CancelledError.
    In this process: the one-thread worker leaves inside the first gather
    of a result it holds."""
    gather = _cluster._gather_within
    events = {}
    with _cluster_and_one_thread_worker(threads_per_worker=1) as (c, single):
        tasks = c.cluster.scheduler.tasks

        def on_single(future):
            task = tasks.get(future.key)
            return task is not None and any(w.address == single.address for w in task.who_has)

        async def leave_then_gather(client, futures, seconds):
            if not events and any(on_single(f) for f in futures):
                events["left"] = True
                await single.close()
            return await gather(client, futures, seconds)

        monkeypatch.setattr(_cluster, "_gather_within", leave_then_gather)
        with pytest.warns(ShardRebuiltWarning, match="while building"):
            model = _clda(c, max_iter=10).fit(corpus.data, groups=corpus.groups)
    assert events == {"left": True}
    assert [r for r, _ in model.rebuilt_shards_] == ["build"]
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


@contextlib.contextmanager
def _cluster_and_one_thread_worker(threads_per_worker):
    """``(client, worker)``: a cluster in this process of a worker with
    ``threads_per_worker`` threads and a one-thread ``worker`` that a test
    may close."""
    with LocalCluster(n_workers=1, threads_per_worker=threads_per_worker, processes=False,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as c:
        worker = _start_one_thread_worker(c)
        c.wait_for_workers(2, timeout=60)
        yield c, worker


def _start_one_thread_worker(client):
    """A one-thread worker in this process, in ``client``'s cluster."""
    async def start_worker():
        return await Worker(client.scheduler.address, nthreads=1, dashboard_address=":0")

    return client.sync(start_worker)


def test_default_worker_threads_are_each_workers_and_kept_on_rebuild(corpus, monkeypatch):
    """``worker_threads=None`` sweeps each shard on the threads of the worker
    that first built it, and a shard rebuilt on a worker with another
    thread count keeps its own (its count decides its draws). A cluster of
    a two-thread and a one-thread worker, in this process; the one-thread
    worker leaves between rounds 5 and 6."""
    with _cluster_and_one_thread_worker(threads_per_worker=2) as (c, single):
        X = _dask_counts(corpus.data)
        sweep = _cluster.ClusterChain.sweep
        left = {}

        def sweep_after_leaving(chain, prior, eta):
            if chain.round == 5 and not left:
                left["shard"] = next(i for i, a in chain.shards.workers.items()
                                     if a == single.address)
                c.sync(single.close)
            return sweep(chain, prior, eta)

        monkeypatch.setattr(_cluster.ClusterChain, "sweep", sweep_after_leaving)
        with pytest.warns(ShardRebuiltWarning):
            model = _clda(c, max_iter=10).fit(X, groups=corpus.groups)
    assert [shard for _, shard in model.rebuilt_shards_] == [left["shard"]]
    expected = [2, 2]
    expected[left["shard"]] = 1
    np.testing.assert_array_equal(model.shard_threads_, expected)
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


@pytest.mark.parametrize("phase", ["build", "finish"])
def test_worker_killed_while_building_or_gathering(client, corpus, monkeypatch, phase):
    """The other phases that wait on the workers recover too: the first
    shard build (or final gather) task submitted ends its worker process
    instead. (Not "shard 1's": under load the nanny of a worker killed by
    the test before can close the worker it restarted, the fit then has
    one shard, and in one run nothing died and nothing warned.)"""

    def die(*args):
        os._exit(1)

    died = []
    if phase == "build":
        submit_build = _cluster.ShardSet.submit_build

        def build_or_die(shards, i, seed, topics=None):
            if not died:
                died.append(i)
                return shards.client.submit(die, workers=[shards.workers[i]], pure=False)
            return submit_build(shards, i, seed, topics)

        monkeypatch.setattr(_cluster.ShardSet, "submit_build", build_or_die)
    else:
        submit = _cluster.ShardSet.submit

        def submit_or_die(shards, fn, i, *args):
            if fn is _cluster._shard.shard_finish and not died:
                died.append(i)
                fn = die
            return submit(shards, fn, i, *args)

        monkeypatch.setattr(_cluster.ShardSet, "submit", submit_or_die)
    with pytest.warns(ShardRebuiltWarning):
        model = _clda(client, max_iter=10).fit(_dask_counts(corpus.data), groups=corpus.groups)
    # The killed shard is rebuilt; the other too if its worker leaves
    # meanwhile: in one CI run the nanny of the killed worker closed itself
    # and the cluster lost both ("Lost all workers"), and the fit, rightly,
    # rebuilt both. That only the lost shard is rebuilt is held by
    # test_worker_killed_mid_fit_is_rebuilt.
    assert died and died[0] in _rebuilt(model)
    assert model.doc_topic_.shape == (corpus.data.shape[0], 4)
    np.testing.assert_allclose(model.doc_topic_.sum(axis=1), 1.0)
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


def test_a_worker_gone_before_its_shard_is_sent_is_replaced(corpus, monkeypatch):
    """A worker that leaves the cluster after the fit chose it for a shard,
    before the shard's data reached it, is replaced: the data goes to a
    live worker (a KeyError from the scheduler's scatter used to end the
    fit, as when every worker was killed on a loaded machine)."""
    with _cluster_and_one_thread_worker(threads_per_worker=1) as (c, leaving):
        ship = _cluster.ShardSet._ship
        shipped_to = []

        def leave_then_ship(shards, blocks, addr):
            if addr == leaving.address and leaving.status.name == "running":
                c.sync(leaving.close)
            shipped_to.append(addr)
            return ship(shards, blocks, addr)

        monkeypatch.setattr(_cluster.ShardSet, "_ship", leave_then_ship)
        model = _clda(c, max_iter=3).fit(corpus.data, groups=corpus.groups)
    assert leaving.address in shipped_to
    assert model.n_shards_ == 2 and not model.rebuilt_shards_
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


def test_fit_without_workers_waits_then_says_so(client, corpus, monkeypatch):
    """A fit on a cluster with no worker waits up to ``timeout`` for one and
    says so; and when the workers leave between the start of a fit and
    the building of its shards (their nannies restarting them, say), the
    build waits for them too instead of failing at once."""
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                      silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as empty:
        with pytest.raises(TimeoutError, match=r"CompoundLDA.fit: no Dask worker joined"):
            _clda(empty, max_iter=2, timeout=0.5).fit(corpus.data, groups=corpus.groups)
    alive = _cluster.ShardSet.alive
    calls = []

    def none_at_first(shards):  # the build's first look finds no worker
        calls.append(1)
        return [] if len(calls) == 1 else alive(shards)

    monkeypatch.setattr(_cluster.ShardSet, "alive", none_at_first)
    model = _clda(client, max_iter=2).fit(corpus.data, groups=corpus.groups)
    assert len(calls) >= 2
    assert model.components_.shape == (4, corpus.data.shape[1])


def test_every_wait_has_a_timeout(client):
    shards = _cluster.ShardSet(client, [([], None, 0)], (1, 1), "Test.fit", 0.5, "t")
    shards.workers = {0: shards.alive()[0]}
    future = shards.submit(_sleep, 0, 1.5)
    with pytest.raises(TimeoutError, match=r"shard\(s\) \[0\].*timeout=0.5"):
        shards.wait({0: future}, "a test")
    time.sleep(1.5)  # the worker's thread runs the cancelled task out: leave it idle


def _sleep(key, seconds):
    import time

    time.sleep(seconds)


def test_fetches_given_up_on_a_stalling_loop_leave_the_client_working():
    """Fetching finished shards' results with short limits while the client's
    event loop stalls now and then (a loaded machine) never breaks the client.
    Giving up on distributed's gather just as it sent its request used to
    leave every later gather of the client failing (an UnboundLocalError
    from ``distributed.utils.sync``); it broke within about 4 s here."""
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as c:
        shards = _cluster.ShardSet(c, [([], None, 0)], (1, 1), "Test.fit", 30, "t")
        stop = threading.Event()
        staller = threading.Thread(target=_stall_loop, args=(c.loop, stop))
        staller.start()
        rng = np.random.default_rng(0)
        deadline, gave_up = time.monotonic() + 8, 0
        try:
            while time.monotonic() < deadline:
                futures = dict(enumerate(c.map(_double, range(2), pure=False)))
                c.sync(_wait, list(futures.values()))
                results = {}
                shards._collect(futures, results, rng.uniform(5e-4, 1e-2), deadline)
                gave_up += not results
        finally:
            stop.set()
            staller.join()
        assert gave_up > 0
        assert c.gather(c.submit(_double, 21, pure=False)) == 42


def _double(x):
    return 2 * x


def _stall_loop(loop, stop):
    """Blocks ``loop`` for up to 20 ms at random moments until ``stop``."""
    rng = np.random.default_rng(1)
    while not stop.is_set():
        ran = threading.Event()
        loop.add_callback(lambda s=rng.uniform(0, 0.02): (time.sleep(s), ran.set()))
        ran.wait(1)
        time.sleep(rng.uniform(0, 0.002))


# --------------------------------------------------------- reproducibility
def test_same_seed_and_workers_same_result(client, corpus):
    X = _dask_counts(corpus.data)
    groups = da.from_array(corpus.groups, chunks=40)
    a = _clda(client, learn_priors=True, max_iter=20).fit(X, groups=groups)
    b = _clda(client, learn_priors=True, max_iter=20).fit(X, groups=groups)
    c = _clda(client, learn_priors=True, max_iter=20, random_state=1).fit(X, groups=groups)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.collection_topic_samples_, b.collection_topic_samples_)
    assert a.gamma_ == b.gamma_ and a.eta_ == b.eta_
    assert not np.array_equal(a.components_, c.components_)


def test_worker_threads_partition_each_shard_reproducibly(client, corpus):
    X = _dask_counts(corpus.data)
    groups = da.from_array(corpus.groups, chunks=40)
    a = _clda(client, worker_threads=2, max_iter=20).fit(X, groups=groups)
    b = _clda(client, worker_threads=2, max_iter=20).fit(X, groups=groups)
    one = _clda(client, max_iter=20).fit(X, groups=groups)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    assert not np.array_equal(a.components_, one.components_)
    total = a.components_.sum() - a.components_.size * a.eta_
    assert np.isclose(total, corpus.data.sum())
    assert a.perplexity(corpus.data, groups=corpus.groups) < 1.05 * one.perplexity(
        corpus.data, groups=corpus.groups)
    assert "worker_threads" not in a.to_local().get_params()


def test_lda_learns_its_priors_on_the_cluster(client, corpus):
    params = {"n_components": 4, "max_iter": 60, "learn_priors": True, "random_state": 0}
    dist = LDAGibbs(client=client, **params).fit(_dask_counts(corpus.data))
    mem = sklearn_clda.LDAGibbs(n_jobs=2, **params).fit(corpus.data)
    # Gibbs-EM estimates from one short chain vary by about 25% between
    # chains here (0.08 to 0.13 over seeds and n_jobs); both leave the
    # start 1 / K = 0.25 for the same region.
    for name in ("doc_topic_prior_", "topic_word_prior_"):
        assert getattr(dist, name) == pytest.approx(getattr(mem, name), rel=0.7), name
    assert dist.doc_topic_prior_ < 0.2


def test_shard_histograms_give_the_in_memory_m_step():
    """Gibbs-EM statistics merged from shards are those of the whole corpus."""
    from sklearn_clda._hyper import (
        collapse_topics, count_histogram, group_topic_histogram, update_concentration,
        update_symmetric,
    )
    from sklearn_clda.dask._messages import merge_histograms

    rng = np.random.default_rng(0)
    ndk = rng.poisson(1.5, size=(300, 6)).astype(np.int32)
    doc_group = rng.integers(0, 3, size=300)
    lengths = ndk.sum(axis=1)
    parts = [slice(0, 90), slice(90, 200), slice(200, 300)]
    hist = merge_histograms([group_topic_histogram(ndk[p], doc_group[p], 3) for p in parts])
    whole = group_topic_histogram(ndk, doc_group, 3)
    for merged, expected in zip(hist, whole):
        np.testing.assert_array_equal(merged, expected)
    length_hist = merge_histograms([count_histogram(lengths[p]) for p in parts])
    np.testing.assert_array_equal(length_hist[1], count_histogram(lengths)[1])
    pi = rng.dirichlet(np.ones(6), size=3)
    assert update_concentration([(*hist, pi)], [length_hist], 2.0) == update_concentration(
        [(*whole, pi)], [count_histogram(lengths)], 2.0)
    one = merge_histograms([group_topic_histogram(ndk[p], np.zeros(300)[p].astype(int), 1)
                            for p in parts])
    cells = collapse_topics(one)
    assert update_symmetric([cells], [length_hist], 6, 0.3) == update_symmetric(
        [count_histogram(ndk)], [count_histogram(lengths)], 6, 0.3)


def test_local_sweeps_between_synchronizations(client, corpus):
    model = _clda(client, local_sweeps=3, max_iter=10).fit(corpus.data, groups=corpus.groups)
    assert model.n_iter_ == 10 and model.sync_bytes_.shape == (10, 2)
    total = model.components_.sum() - model.components_.size * model.eta_
    assert np.isclose(total, corpus.data.sum())


# ------------------------------------------------------------------ routing
def test_groups_routed_through_a_pipeline(client, corpus):
    X = _dask_counts(corpus.data)
    labels = np.array(["abc"[g] for g in corpus.groups])
    groups = da.from_array(labels, chunks=40)
    pipe = Pipeline([("identity", FunctionTransformer()), ("clda", _clda(client, max_iter=10))])
    with sklearn.config_context(enable_metadata_routing=True):
        pipe.fit(X, groups=groups)
    model = pipe[-1]
    assert model.groups_.tolist() == ["a", "b", "c"]
    assert model.collection_sizes_.tolist() == np.bincount(corpus.groups).tolist()


def test_text_through_dask_ml_vectorizer(client):
    pytest.importorskip("dask_ml")
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    from dask_ml.feature_extraction.text import HashingVectorizer

    rng = np.random.default_rng(0)
    themes = {"sport": "ball goal team match coach", "space": "orbit rocket planet moon star"}
    rows = [(name, " ".join(rng.choice(words.split(), 8)))
            for name, words in themes.items() for _ in range(30)]
    frame = dd.from_pandas(pd.DataFrame(rows, columns=["outlet", "text"]), npartitions=3)
    X = HashingVectorizer(n_features=256, alternate_sign=False, norm=None).transform(
        frame["text"].to_bag()
    )
    model = _clda(client, n_components=2, max_iter=20).fit(X, groups=frame["outlet"])
    assert model.groups_.tolist() == ["space", "sport"]
    assert model.collection_sizes_.tolist() == [30, 30]


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make, match",
    [
        (lambda X, g: (X, da.from_array(g, chunks=30)), "not aligned"),
        (lambda X, g: (X, g[:-1]), "labels but X has"),
        (lambda X, g: (X.map_blocks(lambda b: b * 0.5, meta=X._meta), g), "non-integer"),
        (lambda X, g: (X.map_blocks(lambda b: -b, meta=X._meta), g), "negative"),
        (lambda X, g: (X.map_blocks(lambda b: b.toarray(), meta=np.zeros((0, 0))), g), "not a scipy.sparse CSR"),
        (lambda X, g: (X.rechunk((40, 25)), g), "chunked along its columns"),
        (lambda X, g: (X.map_blocks(lambda b: b * 0, meta=X._meta), g), "no tokens"),
    ],
    ids=["unaligned-chunks", "wrong-length", "non-integer", "negative", "dense-chunks",
         "column-chunks", "no-tokens"],
)
def test_wrong_input_raises_a_clear_error(client, corpus, make, match):
    X, groups = make(_dask_counts(corpus.data), corpus.groups)
    model = _clda(client)
    with pytest.raises(ValueError, match=match):
        model.fit(X, groups=groups)
    assert not hasattr(model, "components_")


def test_a_failed_fit_leaves_nothing_on_the_client(client, corpus):
    # Raising the exception the client keeps for a failed task would tie
    # this fit's frames (futures, X, the estimator) to the client.
    import gc
    import weakref

    X = _dask_counts(corpus.data).map_blocks(lambda b: b * 0.5, meta=_dask_counts(
        corpus.data)._meta)
    model = _clda(client)
    alive = weakref.ref(model)
    with pytest.raises(ValueError, match="non-integer"):
        model.fit(X, groups=corpus.groups)
    del model
    gc.collect()
    assert alive() is None
    deadline = time.monotonic() + 10  # (futures are released on the client's loop)
    while dict(client.refcount) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not dict(client.refcount)


def test_empty_blocks_and_list_input_fit_as_the_rest(client, corpus):
    # An empty block's labels are no str labels; in-memory counts may be
    # lists of rows, as in memory.
    X, groups = corpus.data, corpus.groups
    plain = _clda(client, max_iter=6).fit(X, groups=groups)
    blocks = da.concatenate([_dask_counts(X[:0]), _dask_counts(X), _dask_counts(X[:0])])
    labels = da.concatenate([da.from_array(groups[:0]), da.from_array(groups, chunks=40),
                             da.from_array(groups[:0])])
    padded = _clda(client, max_iter=6).fit(blocks, groups=labels)
    assert padded.groups_.dtype.kind == "i" and padded.groups_.tolist() == [0, 1, 2]
    listed = _clda(client, max_iter=6).fit(X.toarray().tolist(), groups=groups)
    np.testing.assert_array_equal(listed.components_, plain.components_)


def test_labels_of_both_kinds_in_one_shard_are_refused():
    from sklearn_clda.dask._shard import _check_labels

    blocks = [sp.csr_matrix((3, 2)), sp.csr_matrix((3, 2))]
    with pytest.raises(ValueError, match=r"mixes str and int labels \(blocks 4 to 5 of X\)"):
        _check_labels([np.array(["a"] * 3, dtype=object), np.array([1] * 3, dtype=object)],
                      blocks, 4, "CompoundLDA.fit")


def test_a_missing_label_names_its_block():
    from sklearn_clda.dask._shard import _check_labels

    blocks = [sp.csr_matrix((3, 2)), sp.csr_matrix((3, 2))]
    with pytest.raises(ValueError, match=r"missing labels .* at positions \[1\]\. \(In "
                                         r"block 5 of X: positions count from its first"):
        _check_labels([np.array(["a"] * 3), np.array(["a", None, "b"], dtype=object)],
                      blocks, 4, "CompoundLDA.fit")


def test_a_closed_client_is_named(corpus):
    closed = Client(processes=False, n_workers=1, threads_per_worker=1,
                    dashboard_address=None)
    closed.close()
    with pytest.raises(ValueError, match="the client passed as client= is closed"):
        _clda(closed).fit(corpus.data, groups=corpus.groups)


def _wide_counts(n_docs=60, n_features=30000, doc_len=15):
    """Few tokens and many words: the client's (V, K) tables dominate."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(doc_len / n_features, size=(n_docs, n_features)))
    X[np.asarray(X.sum(axis=1)).ravel() == 0, 0] = 1
    return X.astype(np.int64)


def test_client_memory_estimate_is_a_close_lower_bound_of_its_peak(client, monkeypatch):
    """The client's traced peak against ``_memory.dask_client_phases``
    (V = 30,000, K = 200). Measured: 17.3 bytes per topic and word, 0.98
    of it the estimate; 33.3 when the count tables lived until the end and
    components_ was made through two (K, V) temporaries. The chain is held
    from outside during the fit, as a caught exception's traceback can hold
    a frame of one of its rounds until the garbage collector runs: a CI run
    traced 25.3 bytes (0.67) when its tables went only with the chain."""
    held = []
    init = _cluster.ClusterChain.__init__

    def init_and_hold(chain, *args, **kwargs):
        init(chain, *args, **kwargs)
        held.append(chain)

    monkeypatch.setattr(_cluster.ClusterChain, "__init__", init_and_hold)
    X = _wide_counts()
    model = LDAGibbs(n_components=200, max_iter=4, random_state=0, client=client, timeout=60)
    phases = _memory.dask_client_phases(*X.shape, 200)
    estimate = max(sum(p.values()) for p in phases.values())
    tracemalloc.start()
    try:
        model.fit(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert 0.8 * peak <= estimate <= peak, estimate / peak


def test_fit_the_client_cannot_hold_is_refused_before_its_sweeps(client, monkeypatch):
    X = _wide_counts(30, 3000)
    phases = _memory.dask_client_phases(*X.shape, 200)
    estimate = max(sum(p.values()) for p in phases.values())
    real = os.sysconf
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": estimate // 4096 - 1}
    monkeypatch.setattr(os, "sysconf", lambda name: pages.get(name) or real(name))
    model = LDAGibbs(n_components=200, max_iter=4, random_state=0, client=client, timeout=60)
    with pytest.raises(ValueError, match=r"LDAGibbs\(n_components=200\) on 30 documents "
                       r"and 3000 words needs at least .* on the client while sampling"):
        model.fit(X)
    assert not hasattr(model, "components_")
    assert set(client.run(_count_shards).values()) == {0}
    pages["SC_PHYS_PAGES"] = -(-estimate // 4096)
    model.fit(X)
    # Rows not known before the shards are built (chunks of unknown size):
    # the (V, K) tables alone are checked before the build.
    counts = _dask_counts(X, rows=10)
    unknown = counts.map_blocks(lambda b: b, chunks=((np.nan,) * 3, (3000,)),
                                meta=counts._meta)
    tables = max(sum(p.values()) for p in _memory.dask_client_phases(0, 3000, 200).values())
    pages["SC_PHYS_PAGES"] = tables // 4096 - 1
    monkeypatch.setattr(_cluster.ShardSet, "build_all",
                        lambda *args: pytest.fail("the shards were built first"))
    with pytest.raises(ValueError, match=r"on documents and 3000 words needs at least"):
        model.fit(unknown)
    assert set(client.run(_count_shards).values()) == {0}


@contextlib.contextmanager
def _limited_worker(memory_config):
    """A client of one worker process with a 400 MiB memory_limit, the
    worker's memory settings (pause, spill, ...) set by ``memory_config``."""
    config = {f"distributed.worker.memory.{k}": v for k, v in memory_config.items()}
    with dask.config.set(config), \
            LocalCluster(n_workers=1, processes=True, threads_per_worker=1,
                         memory_limit="400MiB", dashboard_address=None,
                         silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


_NO_PAUSE = dict.fromkeys(("target", "spill", "pause", "terminate"), False)


def test_fit_a_worker_cannot_hold_is_refused_before_the_build(monkeypatch):
    """A shard's word-topic table larger than a worker's memory_limit: the
    nanny would restart the worker at every build until the fit gave up;
    the fit is refused before any shard is built, naming the worker. A
    fit that fits runs on the same cluster: its worker neither pauses nor
    stops near the limit (a worker process with the package imported
    holds about 260 MiB, past the default pause at 80% of 400 MiB on some
    machines), so the limit is only the number the check reads."""
    n_features = 1 << 20  # HashingVectorizer's default; 416 MiB of table at K = 100
    X = _wide_counts(30, n_features)
    with _limited_worker(_NO_PAUSE) as c:
        build_all = _cluster.ShardSet.build_all
        monkeypatch.setattr(_cluster.ShardSet, "build_all",
                            lambda *args: pytest.fail("the shards were built first"))
        model = LDAGibbs(n_components=100, max_iter=2, random_state=0, client=c, timeout=60)
        with pytest.raises(ValueError, match=(
                r"LDAGibbs\(n_components=100\) on 30 documents and 1048576 words needs at "
                r"least 0\.41 GiB on a Dask worker \(the shard's word-topic counts: 0\.41 "
                r"GiB\), more than the 0\.39 GiB memory_limit of Dask worker tcp://.*give the "
                r"workers more memory")):
            model.fit(X)
        assert not hasattr(model, "components_")
        monkeypatch.setattr(_cluster.ShardSet, "build_all", build_all)
        small = LDAGibbs(n_components=3, max_iter=2, random_state=0, client=c, timeout=60)
        assert small.fit(X[:, :2000]).components_.shape == (3, 2000)


def test_a_shard_that_fits_the_limit_but_not_beside_the_worker_is_refused_by_its_build():
    """The check before the build compares a shard's table with the whole
    memory_limit; the build itself compares what it still allocates with
    what the worker has left (a worker process with the package imported
    holds well over 100 MiB): a 0.30 GiB table passes the first against
    400 MiB and is refused by the second, naming the shard, the worker and
    what it holds, before the table is allocated (pause and terminate are
    off, so without the check the fit would run)."""
    X = _wide_counts(30, 1 << 19)  # K = 150: 304 MiB of table
    with _limited_worker(_NO_PAUSE) as c:
        model = LDAGibbs(n_components=150, max_iter=2, random_state=0, client=c, timeout=60)
        with pytest.raises(ValueError, match=(
                r"LDAGibbs\.fit: shard 0 \(30 documents, \d+ tokens\) needs 0\.30 GiB more "
                r"on a Dask worker \(the shard's word-topic counts: 0\.30 GiB\), but Dask "
                r"worker tcp://\S+ holds 0\.\d\d GiB already of its 0\.39 GiB memory_limit; "
                r"use more workers")):
            model.fit(X)
        assert not hasattr(model, "components_")
        assert set(c.run(_count_shards).values()) == {0}


def test_a_worker_paused_for_memory_is_named_not_waited_out(monkeypatch):
    """A worker whose memory passes the pause fraction of its memory_limit
    starts no task, and a shard's arrays (not Dask data) never let it
    resume: the fit raises, naming the worker, once it has been paused for
    _PAUSED_SECONDS, not after its whole timeout. Here the worker pauses at
    30% of 400 MiB, which the package's imports by the first build pass."""
    monkeypatch.setattr(_cluster, "_PAUSED_SECONDS", 2.0)
    monkeypatch.setattr(_cluster, "_PAUSE_CHECK_SECONDS", 0.5)
    drop, dropping = _cluster.ShardSet.drop, []

    def timed_drop(shards):
        start = time.monotonic()
        drop(shards)
        dropping.append(time.monotonic() - start)

    monkeypatch.setattr(_cluster.ShardSet, "drop", timed_drop)
    X = _wide_counts(30, 2000)
    with _limited_worker({**_NO_PAUSE, "pause": 0.3}) as c:
        model = LDAGibbs(n_components=3, max_iter=2, random_state=0, client=c, timeout=40)
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=r"is held up: Dask worker\(s\) \['tcp://.*"
                           r"paused for over 2 s.*memory_limit.*more memory"):
            model.fit(X)
        assert time.monotonic() - start < 30
        assert not hasattr(model, "components_")
        # The failed fit's cleanup did not wait on the paused worker (it
        # used to wait out 10 s).
        assert dropping and dropping[0] < 5


def test_shard_rows_known_and_unknown():
    X = _wide_counts(60, 500)
    specs, _ = _input.shard_specs(LDAGibbs(), X, None, 3, "LDAGibbs.fit")
    assert _fit._shard_rows(X, specs) == [block[0].shape[0] for block, _, _ in specs]
    counts = _dask_counts(X, rows=10)
    specs, _ = _input.shard_specs(LDAGibbs(), counts, None, 3, "LDAGibbs.fit")
    assert _fit._shard_rows(counts, specs) == [20, 20, 20]
    unknown = counts.map_blocks(lambda b: b, chunks=((np.nan,) * 6, (500,)),
                                meta=counts._meta)
    specs, _ = _input.shard_specs(LDAGibbs(), unknown, None, 3, "LDAGibbs.fit")
    assert _fit._shard_rows(unknown, specs) == [0, 0, 0]


@pytest.mark.parametrize("params, match", [
    ({"algorithm": "mgs"}, "algorithm='ags' only"),
    ({"warm_start": True}, "warm_start"),
    ({"sampler": "mh"}, "dense sampler only, got sampler='mh'"),
    ({"sampler": "sparse"}, "dense sampler only, got sampler='sparse'"),
])
def test_unsupported_settings_raise(client, corpus, params, match):
    with pytest.raises(ValueError, match=match):
        _clda(client, **params).fit(corpus.data, groups=corpus.groups)


def test_no_leftover_shards_on_the_workers(client, corpus):
    _clda(client, max_iter=5).fit(corpus.data, groups=corpus.groups)
    left = client.run(_count_shards)
    assert set(left.values()) == {0}, left


def _worker_keys(dask_worker):
    return sorted(str(k) for k in dask_worker.data)


def test_the_fit_asks_the_scheduler_for_the_workers(client, corpus, monkeypatch):
    """``client.scheduler_info()`` returns the client's cached identity,
    which its refresh every 2 s replaces with one that lists no worker; a
    loaded machine could read that one between the fetch and the return. A
    fit that did found no worker: it rebuilt its shards ([0, 0, 1, 1] in a
    full run) and left them on the workers. The fit must not depend on it:
    here it always lists none."""

    def no_workers(self, n_workers=-1, **kwargs):
        return {**(self._scheduler_identity or {}), "workers": {}}

    monkeypatch.setattr(Client, "scheduler_info", no_workers)
    model = _clda(client, max_iter=5, timeout=5).fit(corpus.data, groups=corpus.groups)
    assert model.n_shards_ == 2 and not model.rebuilt_shards_
    assert set(client.run(_count_shards).values()) == {0}


def test_a_drop_still_queued_when_the_fit_stops_waiting_runs_later(client, corpus,
                                                                    monkeypatch):
    """The fit waits a while for its shards' drops; one queued behind other
    work on its worker when the wait ends still runs (the task of a
    released future is forgotten, and the shard would stay in the
    worker's memory)."""
    drop = _cluster.ShardSet.drop
    busy = []

    def drop_behind_busy_workers(shards):
        busy.extend(client.submit(_sleep, None, 1.0, workers=[addr], pure=False)
                    for addr in sorted(set(shards.workers.values())))
        shards.timeout = 0.1  # the drops' wait ends before the sleeps do
        drop(shards)

    monkeypatch.setattr(_cluster.ShardSet, "drop", drop_behind_busy_workers)
    _clda(client, max_iter=3).fit(corpus.data, groups=corpus.groups)
    assert busy and any(future.status == "pending" for future in busy)
    deadline = time.monotonic() + 30
    while set(client.run(_count_shards).values()) != {0} and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(client.run(_count_shards).values()) == {0}


def test_round_messages_do_not_pile_up_on_the_workers(client, corpus, monkeypatch):
    """Each round's table change, scattered to the workers, is released when
    the round is done: not left to the garbage collector, which kept every
    round's change in the workers' memory (found by bench_dask's memory
    table)."""
    monkeypatch.setattr(_cluster, "_SCATTER_BYTES", 0)  # scatter every message
    # Every round outlasts a poll: a wait that timed out leaves a traceback
    # whose frames hold the message's future in a reference cycle.
    monkeypatch.setattr(_cluster, "_POLL_SECONDS", 0.005)
    gc.collect()
    _wait_for_no_keys(client)
    gc.disable()
    try:
        _clda(client, max_iter=6).fit(corpus.data, groups=corpus.groups)
        _wait_for_no_keys(client)
    finally:
        gc.enable()


def _wait_for_no_keys(client, seconds=5.0):
    deadline = time.monotonic() + seconds
    while any(client.run(_worker_keys).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = client.run(_worker_keys)
    assert not any(left.values()), left


def _count_shards():
    from sklearn_clda.dask import _shard

    return len(_shard._SHARDS)


@pytest.mark.parametrize("Estimator", [CompoundLDA, LDAGibbs])
@pytest.mark.parametrize("check", [
    "check_no_attributes_set_in_init", "check_parameters_default_constructible",
    "check_get_params_invariance", "check_set_params",
])
def test_estimator_conventions(Estimator, check):
    """The scikit-learn checks that need no fit (a fit would start a cluster;
    the fitted behaviour is the in-memory estimator's, checked there)."""
    from sklearn.utils import estimator_checks

    getattr(estimator_checks, check)(Estimator.__name__, Estimator())


def test_init_stores_parameters_only():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = CompoundLDA(client="tcp://nowhere:1", local_sweeps=2, timeout=5)
    assert model.get_params()["local_sweeps"] == 2
    assert set(vars(model)) == set(model.get_params())


def test_user_guide_page_runs(monkeypatch):
    """doc/dask.rst's code runs (its clusters are small, in-process ones)."""
    pytest.importorskip("dask_ml")
    import test_doc_snippets as snippets

    monkeypatch.setitem(snippets.PAGES, "doc/dask.rst", (None, None))
    blocks = snippets.page_blocks("doc/dask.rst")
    assert len(blocks) == 2
    namespace = {"__name__": "__snippets__"}
    for line, code in blocks:
        snippets._run_block("doc/dask.rst", line, code, namespace)
    assert namespace["clda"].groups_.tolist() == ["space", "sport"]


@pytest.mark.parametrize("n_components", [3, 20])
def test_shard_state_is_the_in_memory_state(corpus, n_components):
    """A shard's state, built without per-token 64-bit temporaries, is the
    in-memory sampler's, array for array (same draws of z)."""
    from sklearn_clda._corpus import to_count_csr
    from sklearn_clda._sweeper import _GibbsState
    from sklearn_clda.dask._blocks import block_tokens
    from sklearn_clda.dask._state import shard_state

    X = to_count_csr(sp.csr_matrix(corpus.data), "test")
    groups = corpus.groups.astype(np.int32)
    a = _GibbsState(X, groups, n_components, np.random.default_rng(3))
    words, doc_ptr = block_tokens([X[:70], X[70:]], 0, X.shape[1], "test")
    b = shard_state(words, doc_ptr, X.shape[1], groups, n_components, np.random.default_rng(3))
    for name in ("words", "doc_ptr", "doc_group", "doc_len", "z", "nwk_padded", "ndk", "nk"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert getattr(a, name).dtype == getattr(b, name).dtype, name


@pytest.mark.parametrize("threads", [1, 2])
def test_shard_copies_track_the_global_table(corpus, threads):
    """The worker protocol in one process: after each round's sync every
    shard's copy of the table is the global one, which is the sum of the
    shards' own counts (recounted from their topics: with two threads the
    partitioned sweeper must bring them back in order after each round)."""
    from sklearn_clda._corpus import to_count_csr
    from sklearn_clda._partition import _PartitionedSweeper
    from sklearn_clda.dask import _shard
    from sklearn_clda.dask._messages import DeltaMerger

    X = to_count_csr(sp.csr_matrix(corpus.data), "test")
    V, K = X.shape[1], 4
    keys = ["copy-test-0", "copy-test-1"]
    seeds = np.random.SeedSequence(0).spawn(2)
    for key, seed, rows in zip(keys, seeds, (slice(0, 90), slice(90, None))):
        _shard.build_shard(key, [X[rows]], None, V, K, seed, "Test.fit", threads=threads)
    merger = DeltaMerger(V * K)
    table = np.zeros(V * K, dtype=np.int64)
    try:
        changes = [_shard.shard_setup(key, None, 0) for key in keys]
        sweepers = [_shard._SHARDS[key]["sweeper"] for key in keys]
        assert all(isinstance(s, _PartitionedSweeper) == (threads > 1) for s in sweepers)
        for _ in range(4):
            for idx, vals in changes:
                table[idx] += vals
            sync = ("delta", *merger.merge(changes, np.int32))
            nk = table.reshape(V, K).sum(axis=0).astype(np.int32)
            changes = [
                _shard.shard_round(key, sync, nk, np.full((1, K), 0.5), 0.1, 1, None, False)
                ["delta"] for key in keys
            ]
            for key in keys:
                # Between rounds a copy is the table of the last sync (its
                # own change since is in the message just sent).
                state = _shard._SHARDS[key]["state"]
                np.testing.assert_array_equal(state.nwk.ravel(), table)
        own = np.zeros(V * K, dtype=np.int64)
        for key in keys:
            idx, vals = _shard.shard_counts(key)
            own[idx] += vals
        for idx, vals in changes:
            table[idx] += vals
        np.testing.assert_array_equal(own, table)
    finally:
        for key in keys:
            _shard.drop_shard(key)


@pytest.mark.parametrize("threads", [1, 2])
def test_shard_finish_bound_is_the_dense_formula(corpus, threads):
    """The final gather sends the topics as sparse counts; each shard's
    last-state log-likelihood equals the dense theta . phi formula over its
    documents (up to rounding), with its tokens in either order."""
    from sklearn_clda import _base, _sampling
    from sklearn_clda._corpus import to_count_csr
    from sklearn_clda.dask import _shard
    from sklearn_clda.dask._cluster import ClusterChain

    X = to_count_csr(sp.csr_matrix(corpus.data), "test")
    V, K, eta = X.shape[1], 4, 0.1
    prior = np.random.default_rng(0).gamma(1.0, 0.5, size=(1, K))
    parts = (slice(0, 90), slice(90, None))
    keys = [f"finish-test-{i}" for i in range(2)]
    for key, seed, rows in zip(keys, np.random.SeedSequence(1).spawn(2), parts):
        _shard.build_shard(key, [X[rows]], None, V, K, seed, "Test.fit", threads=threads)
    try:
        changes = [_shard.shard_setup(key, None, 0) for key in keys]
        table = np.zeros(V * K, dtype=np.int64)
        for idx, vals in changes:
            table[idx] += vals
        nwk = table.reshape(V, K).astype(np.int32)
        nk = nwk.sum(axis=0)
        chain = ClusterChain.__new__(ClusterChain)  # the client's side of the gather
        chain.nwk, chain.nk, chain.eta = nwk, nk.astype(np.int32), eta
        topics = chain.final_topics()
        phi = np.ascontiguousarray((nwk + eta) / (nk + V * eta))
        for key, rows in zip(keys, parts):
            state = _shard._SHARDS[key]["state"]
            theta = state.ndk + prior[state.doc_group]
            theta /= theta.sum(axis=1, keepdims=True)
            want = np.empty(theta.shape[0])
            _sampling.doc_log_likelihood(*_base._csr_arrays(X[rows]), theta, phi, want)
            got = _shard.shard_finish(key, None, prior, topics, False)["ll"]
            assert np.isclose(got, want.sum(), rtol=1e-12, atol=0)
            assert not np.isclose(got, want.sum() * (1 + 1e-9), rtol=1e-12, atol=0)
    finally:
        for key in keys:
            _shard.drop_shard(key)
