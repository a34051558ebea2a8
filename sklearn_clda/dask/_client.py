"""The Dask client of a fit: the one given, the current one, or a local cluster."""

import logging
import os
from contextlib import contextmanager

from distributed import Client, LocalCluster

__all__ = ["cluster_workers", "fit_client"]


@contextmanager
def fit_client(client, timeout):
    """The client a fit runs on.

    ``client`` is a ``distributed.Client``, a scheduler address, or
    ``None``: the current client if there is one, else a ``LocalCluster``
    started for the fit and closed after it: one worker process with a
    thread per CPU, whose shard's sweep (``worker_threads=None``) is
    partitioned over all of them. On one machine that beats one
    single-threaded process per CPU, which each hold a copy of the
    word-topic table and merge their changes every round (user guide,
    "Choosing how to run a large fit").
    """
    if client is not None and not isinstance(client, str):
        yield client
        return
    if client is None:
        try:
            current = Client.current()
        except ValueError:
            current = None
        if current is not None:
            yield current
            return
        with LocalCluster(
            n_workers=1, threads_per_worker=os.cpu_count() or 1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR,
        ) as cluster, Client(cluster, set_as_default=False, timeout=timeout) as own:
            yield own
        return
    with Client(client, set_as_default=False, timeout=timeout) as own:
        yield own


def cluster_workers(client):
    """``{address: info}`` of the workers in the cluster now, asked of the
    scheduler.

    Not ``client.scheduler_info()``: that fetches the same and then returns
    the client's cached copy, which the client's own refresh (every 2 s,
    without the workers) may replace in between. A fit that read no worker
    there counted its shards as lost and rebuilt them, or left them on the
    workers at its end.

    Asked without arguments: the scheduler's ``identity`` lists every
    worker by default (``n_workers=-1`` since distributed 2025.4, which
    added the argument; before it, always), while a scheduler older than
    2025.4 refuses ``n_workers``.
    """
    return client.sync(client.scheduler.identity)["workers"]
