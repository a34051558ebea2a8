"""The curated mutations of ``tools/mutation/run.py``.

Each mutation replaces one exact snippet of a source file (it must occur
exactly once, else the runner reports the entry as stale) and names the
tests that should notice. Kinds:

- ``issue``: the bugs that issue 11's mutation audit planted and the
  suite missed (or caught only by a hair), one entry each;
- ``model``: further wrong-model or wrong-protocol bugs of the same style
  (a plausible slip that gives a silently wrong answer);
- ``operator``: single operator, constant or index swaps, the kind a
  generic mutation tool produces.
"""

from collections import namedtuple

Mutation = namedtuple("Mutation", "name kind path old new tests")

CLDA = "sklearn_clda/_clda.py"
PI_UPDATE = "sklearn_clda/_pi_update.py"
BASE = "sklearn_clda/_base.py"
HYPER = "sklearn_clda/_hyper.py"
CORPUS = "sklearn_clda/_corpus.py"
LDA = "sklearn_clda/_lda_gibbs.py"
COHERENCE = "sklearn_clda/metrics/_coherence.py"
PERPLEXITY = "sklearn_clda/metrics/_perplexity.py"
TOPICS = "sklearn_clda/metrics/_topics.py"
PARTITION = "sklearn_clda/_partition.py"
MH = "sklearn_clda/_mh_sweeper.py"
MH_PARTITION = "sklearn_clda/_mh_partition.py"

T_CLDA = ("tests/test_clda.py",)
T_PRIORS = ("tests/test_priors.py",)
T_LDA = ("tests/test_lda_gibbs.py",)
T_CORPUS = ("tests/test_corpus.py", "tests/test_lda_gibbs.py")
T_METRICS = ("tests/metrics/test_metrics.py", "tests/metrics/test_coherence_measures.py")
T_PARTITION = ("tests/test_partition.py",)
T_MH = ("tests/test_mh_geweke.py", "tests/test_mh_estimators.py", "tests/test_mh_partition.py")
T_MH_AUTO = ("tests/test_mh_estimators.py",)

MUTATIONS = [
    # ------------------------------------------------------------- issue 11
    Mutation(
        "fallback-prior-unweighted-mean", "issue", CLDA,
        "weights = self.collection_sizes_ / self.collection_sizes_.sum()\n"
        "        fallback = ",
        "weights = np.full(n_groups, 1.0 / n_groups)\n        fallback = ",
        T_CLDA,
    ),
    Mutation(
        "alpha-sampled-against-uniform-pi", "issue", CLDA,
        "run.alpha, _ = sample_alpha(run.pi, run.alpha, rng)",
        "run.alpha, _ = sample_alpha(np.full_like(run.pi, 1.0 / run.pi.shape[1]),"
        " run.alpha, rng)",
        T_PRIORS,
    ),
    Mutation(
        "lda-fold-in-with-prior-mean", "issue", LDA,
        "return _prior_row(self.doc_topic_prior_, self.n_components), np.zeros(",
        "return _prior_row(np.mean(self.doc_topic_prior_), self.n_components), np.zeros(",
        T_LDA,
    ),
    Mutation(
        "vem-wrapper-uniform-collection-topic", "issue", CLDA,
        '"collection_topic_": result["collection_topic"],',
        '"collection_topic_": np.full_like(result["collection_topic"], 1.0 / self.n_components),',
        ("tests/test_vem.py",),
    ),
    Mutation(
        "score-fold-in-sees-held-out-half", "issue", BASE,
        "theta = self._fold_in(observed[lo:hi], prior_rows, doc_rows[lo:hi], parts)",
        "theta = self._fold_in(X[lo:hi], prior_rows, doc_rows[lo:hi], parts)",
        T_LDA + T_CLDA,
    ),
    Mutation(
        "gamma-update-no-op", "issue", HYPER,
        "new = gamma * num / den",
        "new = gamma",
        T_PRIORS,
    ),
    Mutation(
        "estimator-gamma-update-no-op", "issue", CLDA,
        'run.gamma = update_concentration(stats["docs"], stats["lengths"], run.gamma)',
        "run.gamma = run.gamma",
        T_PRIORS,
    ),
    Mutation(
        "sample-alpha-without-jacobian", "issue", HYPER,
        "if np.log(rng.random()) < new + np.log(proposal) - current - np.log(alpha):",
        "if np.log(rng.random()) < new - current:",
        T_PRIORS,
    ),
    # ----------------------------------------------------- model / protocol
    Mutation(
        "ags-pi-ignores-table-counts", "model", PI_UPDATE,
        "return _normalized(rng.standard_gamma(run.alpha + tables))",
        "return _normalized(rng.standard_gamma(run.alpha + 0 * tables))",
        ("tests/test_geweke.py",),
    ),
    Mutation(
        "mgs-step-adapted-after-burn-in", "model", PI_UPDATE,
        "adapt=self.adapt and sweep <= run.burn_in,",
        "adapt=self.adapt,",
        ("tests/test_priors.py", "tests/test_geweke.py"),
    ),
    Mutation(
        "clda-fold-in-prior-without-gamma", "model", CLDA,
        "prior = self.gamma_ * self.collection_topic_",
        "prior = self.collection_topic_",
        T_CLDA,
    ),
    Mutation(
        "learned-alpha-is-last-draw", "model", CLDA,
        "alpha = float(np.mean(run.alpha_draws)) if",
        "alpha = float(run.alpha_draws[-1]) if",
        T_PRIORS + T_CLDA,
    ),
    Mutation(
        "eta-update-drops-dimension", "model", HYPER,
        "den = dim * np.dot(tm, _psi_diff(tv, dim * value))",
        "den = np.dot(tm, _psi_diff(tv, dim * value))",
        T_PRIORS,
    ),
    Mutation(
        "completion-split-per-entry", "model", CORPUS,
        "a = (s + data + 1) // 2 - (s + 1) // 2",
        "a = (data + 1) // 2",
        T_CORPUS,
    ),
    Mutation(
        "kept-samples-include-burn-in-sweep", "model", BASE,
        "if it > burn_in and (it - burn_in) % thin == 0:",
        "if it >= burn_in and (it - burn_in) % thin == 0:",
        T_LDA + T_CLDA,
    ),
    Mutation(
        "components-without-eta", "model", BASE,
        "components[sums.indices[a:b], words] = sums.data[a:b] / n + eta",
        "components[sums.indices[a:b], words] = sums.data[a:b] / n + 0.0",
        T_LDA + ("tests/test_parallel.py",),
    ),
    Mutation(
        "doc-topic-estimate-without-prior", "model", BASE,
        "_sampling.doc_proportions(state.ndk, state.doc_group, _as_prior(prior), self.doc_topic,",
        "_sampling.doc_proportions(state.ndk, state.doc_group, 0.0 * _as_prior(prior) + 1e-300,"
        " self.doc_topic,",
        T_CLDA + T_LDA + T_METRICS,
    ),
    Mutation(
        "kept-proportions-overwritten", "model", BASE,
        "                                  add=not first)",
        "                                  add=False)",
        T_CLDA + T_LDA + ("tests/test_memory.py",),
    ),
    Mutation(
        "counts-floored-not-rounded", "model", CORPUS,
        "rounded = np.rint(data)",
        "rounded = np.floor(data)",
        T_CORPUS,
    ),
    Mutation(
        "coherence-scores-self-pairs", "model", COHERENCE,
        "scored = np.tril(np.ones((m, m), dtype=bool), k=-1) & (cond > 0)",
        "scored = np.tril(np.ones((m, m), dtype=bool), k=0) & (cond > 0)",
        T_METRICS + (COHERENCE,),
    ),
    Mutation(
        "topic-sizes-unweighted-by-length", "model", TOPICS,
        "return lengths @ _normalize_rows(theta)",
        "return lengths.mean() * _normalize_rows(theta).sum(axis=0)",
        T_METRICS + (TOPICS,),
    ),
    # ------------------------------------------------------------- operators
    # (alpha - 1) -> (alpha + 1) in the same function is an equivalent
    # mutant: the constant cancels in the Metropolis ratio.
    Mutation(
        "alpha-posterior-one-collection-short", "operator", HYPER,
        "n_groups * (gammaln(K * alpha) - K * gammaln(alpha))",
        "(n_groups - 1) * (gammaln(K * alpha) - K * gammaln(alpha))",
        T_PRIORS,
    ),
    Mutation(
        "alpha-prior-rate", "operator", HYPER,
        "shape=1.0, rate=1.0, step=0.3",
        "shape=1.0, rate=2.0, step=0.3",
        T_PRIORS,
    ),
    Mutation(
        "asymmetric-update-mean-for-sum", "operator", HYPER,
        "den = np.dot(tm, _psi_diff(tv, alpha.sum()))",
        "den = np.dot(tm, _psi_diff(tv, alpha.mean()))",
        T_PRIORS,
    ),
    Mutation(
        "count-histogram-drops-ones", "operator", HYPER,
        "hist = np.bincount(positive)",
        "hist = np.bincount(positive[positive > 1])",
        T_PRIORS,
    ),
    Mutation(
        "pi-log-prior-sign", "operator", CLDA,
        "+ (a - 1.0) * np.log(run.pi).sum()",
        "+ (a + 1.0) * np.log(run.pi).sum()",
        T_CLDA + T_PRIORS,
    ),
    Mutation(
        "unseen-label-lookup-off-by-one", "operator", CLDA,
        "pos_clipped = np.minimum(pos, n_groups - 1)",
        "pos_clipped = np.minimum(pos, max(n_groups - 2, 0))",
        T_CLDA,
    ),
    Mutation(
        "doc-sums-divided-in-place-under-warm-start", "model", BASE,
        "averager.finish(self._eta_value(run), fingerprint is None, dtype)",
        "averager.finish(self._eta_value(run), True, dtype)",
        ("tests/test_online.py", "tests/test_mh_estimators.py"),
    ),
    Mutation(
        "continuation-with-new-n-jobs-restarts-the-chain", "model", BASE,
        "chain.run, None, seed, z=chain.z)",
        "chain.run, np.random.default_rng(1), seed,\n"
        "                                 z=chain.z if same_shards else None)",
        ("tests/test_online.py",),
    ),
    Mutation(
        "count-tables-kept-while-averages-are-made", "model", BASE,
        "        live.release()\n",
        "",
        ("tests/test_memory.py",),
    ),
    Mutation(
        "default-burn-in-third", "operator", BASE,
        "burn_in = max_iter // 2 if self.burn_in is None else int(self.burn_in)",
        "burn_in = max_iter // 3 if self.burn_in is None else int(self.burn_in)",
        T_LDA + T_CLDA,
    ),
    Mutation(
        "joint-log-likelihood-sign", "operator", BASE,
        "return ll + (gammaln(nz + eta) - gammaln(eta)).sum()",
        "return ll + (gammaln(nz + eta) + gammaln(eta)).sum()",
        T_LDA + T_CLDA,
    ),
    Mutation(
        "perplexity-sign", "operator", BASE,
        "return float(np.exp(-ll.sum() / n_tokens))",
        "return float(np.exp(ll.sum() / n_tokens))",
        T_LDA + T_CLDA,
    ),
    Mutation(
        "count-limit-boundary", "operator", CORPUS,
        "if data.size and data.max() > _INT32_MAX:",
        "if data.size and data.max() > _INT32_MAX + 1:",
        T_CORPUS,
    ),
    Mutation(
        "coherence-smoothing-doubled", "operator", COHERENCE,
        "terms[scored] = np.log((pair[scored] + smoothing) / cond[scored])",
        "terms[scored] = np.log((pair[scored] + 2 * smoothing) / cond[scored])",
        T_METRICS + (COHERENCE,),
    ),
    Mutation(
        "perplexity-metric-sign", "operator", PERPLEXITY,
        "return float(np.exp(-ll / n_tokens))",
        "return float(np.exp(ll / n_tokens))",
        T_METRICS + (PERPLEXITY,),
    ),
    Mutation(
        "split-rounding", "operator", PERPLEXITY,
        "n_obs = np.floor(word_share * lengths + 0.5).astype(np.int64)",
        "n_obs = np.floor(word_share * lengths).astype(np.int64)",
        T_METRICS + (PERPLEXITY,),
    ),
    Mutation(
        "hellinger-without-sqrt", "operator", TOPICS,
        "bc = np.sqrt(P) @ np.sqrt(Q).T",
        "bc = P @ Q.T",
        T_METRICS + (TOPICS,),
    ),
    Mutation(
        "top-words-ascending", "operator", TOPICS,
        'order = np.argsort(-components, axis=1, kind="stable")',
        'order = np.argsort(components, axis=1, kind="stable")',
        T_METRICS + (TOPICS,),
    ),
    # ------------------------------------------------------------- issue 10
    Mutation(
        "partition-z-not-written-back", "model", PARTITION,
        "self.state.z = _sampling.cell_restore(",
        "self.state.z = (lambda *args: args[0].copy())(",  # left in cell order
        T_PARTITION + ("tests/test_dask.py",),
    ),
    Mutation(
        "word-blocks-not-snaked", "operator", PARTITION,
        "block = np.where(lap % 2 == 0, pos, n_blocks - 1 - pos).astype(np.int32)",
        "block = pos.astype(np.int32)",
        T_PARTITION,
    ),
    # The threads draw the blocks' tables only once told where they go.
    Mutation(
        "block-tables-never-drawn", "model", PARTITION,
        "            self.kernel.set_tables(doc_bounds, self.tables)",
        "            pass",
        T_PARTITION,
    ),
    # ------------------------------------------------------------- issue 14
    Mutation(
        "mh-tables-not-reset", "model", MH,
        'shard["tables"].fill(0)',
        "pass",
        T_MH,
    ),
    Mutation(
        "mh-auto-threshold-exclusive", "operator", MH,
        "if n_components >= AUTO_MH_MIN_COMPONENTS:",
        "if n_components > AUTO_MH_MIN_COMPONENTS:",
        T_MH_AUTO,
    ),
    Mutation(
        "auto-dense-max-exclusive", "operator", MH,
        "if n_components <= AUTO_DENSE_MAX_COMPONENTS:",
        "if n_components < AUTO_DENSE_MAX_COMPONENTS:",
        T_MH_AUTO,
    ),
    Mutation(
        "auto-sparse-factor-of-the-avx2-crossover", "operator", MH,
        "AUTO_SPARSE_LENGTH_FACTOR = 3.0",
        "AUTO_SPARSE_LENGTH_FACTOR = 2.3",
        T_MH_AUTO,
    ),
    Mutation(
        "auto-length-not-token-weighted", "model", MH,
        "return float((L * L).sum() / total) if total > 0 else 0.0",
        "return float(L.mean()) if total > 0 else 0.0",
        T_MH_AUTO,
    ),
    Mutation(
        "sparse-serial-runs-the-mh-kernel", "model", MH,
        '"sparse": _mh_sampling.sparse_mh_sweep}',
        '"sparse": _mh_sampling.mh_sweep}',
        T_MH_AUTO,
    ),
    Mutation(
        "sparse-weights-of-the-first-collection", "model", MH_PARTITION,
        "return (prior, float(eta), _mh_sampling.sparse_weights(prior, nk, eta, n_features))",
        "return (prior, float(eta), np.repeat(\n"
        "            _mh_sampling.sparse_weights(prior, nk, eta, n_features)[:1], len(prior)))",
        ("tests/test_mh_partition.py",),
    ),
    Mutation(
        "sparse-lists-not-stored-after-block", "model", MH_PARTITION,
        "_mh_sampling.sparse_store_lists(self.lists, doc_ptr, ndk, *block[\"docs\"])",
        "pass",
        ("tests/test_mh_partition.py",),
    ),
    Mutation(
        "sparse-cells-in-document-order", "model", MH_PARTITION,
        "            self.cell_pos[a:b].sort()",
        "            pass",
        ("tests/test_mh_partition.py",),
    ),
    # Without a word-topic table (the sparse kernel's state) the counts come
    # from the topics in word order, which a partitioned sweeper holds.
    Mutation(
        "sparse-partition-holds-no-word-order", "model", MH_PARTITION,
        "        state.held_word_order = (self.word_ptr, self.zw)",
        "        pass",
        ("tests/test_mh_partition.py", "tests/test_mh_estimators.py"),
    ),
    Mutation(
        "sparse-partition-tables-of-the-first-block", "model", MH_PARTITION,
        '        lo, hi = block["docs"]\n        _sampling.list_tables(',
        '        lo, hi = self.sweeper.blocks[0]["docs"]\n        _sampling.list_tables(',
        ("tests/test_mh_partition.py",),
    ),
    # The sparse kernel's packed topic lists hold a document's counts in the
    # bits above the topic's: longer documents go to "mh" (auto) or are
    # refused before the fit ("sparse").
    Mutation(
        "auto-sparse-ignores-document-length", "model", MH,
        '        return "sparse" if longest <= _mh_sampling.sparse_max_document_length(\n'
        '            n_components) else "mh"',
        '        return "sparse"',
        T_MH_AUTO,
    ),
    Mutation(
        "sparse-length-checked-only-by-the-kernel", "model", MH,
        "    if sampler == \"sparse\":\n        _mh_sampling.check_sparse_document_lengths(",
        "    if False:\n        _mh_sampling.check_sparse_document_lengths(",
        T_MH_AUTO,
    ),
    Mutation(
        "memory-check-counts-the-word-table-of-every-sampler", "model", BASE,
        "    needed = rest + table * word_table",
        "    needed = rest + table",
        T_MH_AUTO,
    ),
    Mutation(
        "sparse-state-keeps-its-word-table", "model", BASE,
        'word_table=kernel != "sparse")',
        "word_table=True)",
        T_MH_AUTO,
    ),
    Mutation(
        "sparse-cells-share-stale-totals", "model", MH_PARTITION,
        'np.copyto(b["nk"], start)',
        "pass",
        T_MH,
    ),
    # The MH kernel's document proposal reads the topics in document order.
    Mutation(
        "mh-document-order-topics-not-made", "model", MH_PARTITION,
        "        _mh_sampling.gather(sw.z, sw.doc_tokens, self.zd)",
        "        self.zd[:] = 0",
        T_MH,
    ),
    Mutation(
        "mh-partition-z-not-written-back", "model", MH_PARTITION,
        "self.state.z = _sampling.cell_restore(",
        "self.state.z = (lambda *args: args[0].copy())(",  # left in cell order
        T_MH,
    ),
    # A partitioned sweeper kept its permutation (4 bytes a token) for the
    # whole fit, or copied the words before the topics (a peak of 12 bytes
    # a token instead of 8).
    Mutation(
        "partition-keeps-its-permutation", "model", PARTITION,
        "        del perm\n        if own_tokens:",
        "        self.perm = perm\n        if own_tokens:",
        T_PARTITION,
    ),
    Mutation(
        "partition-copies-words-first", "model", PARTITION,
        "        self.z = state.z[perm]\n        state.z = None\n        self.words = state.words[perm]\n",
        "        self.words = state.words[perm]\n        self.z = state.z[perm]\n        state.z = None\n",
        T_PARTITION,
    ),
    # The fit held its sweeper's token arrays through its last per-token
    # work; the sparse pieces' reference back to their sweeper kept it
    # alive until a garbage collection.
    Mutation(
        "fit-keeps-its-sweeper", "model", BASE,
        "        del sweeper\n        live.drop_sweeper()\n",
        "",
        ("tests/test_memory.py",),
    ),
    Mutation(
        "sparse-pieces-hold-their-sweeper", "model", MH_PARTITION,
        "self.sweeper = sw = weakref.proxy(sweeper)",
        "self.sweeper = sw = sweeper",
        ("tests/test_mh_partition.py",),
    ),
    # The dask estimators accepted sampler="sparse" and ran the dense kernel.
    Mutation(
        "dask-accepts-the-sparse-sampler", "issue", "sklearn_clda/dask/_fit.py",
        'if self.sampler not in ("auto", "dense"):',
        'if self.sampler == "mh":',
        ("tests/test_dask.py",),
    ),
    # worker_threads=None: a rebuilt shard must keep the thread count (its
    # draws) it was first built with, and None means the worker's nthreads.
    Mutation(
        "dask-rebuilt-shard-takes-new-workers-threads", "model", "sklearn_clda/dask/_cluster.py",
        "        if i not in self.shard_threads:\n",
        "        if True:\n",
        ("tests/test_dask.py",),
    ),
    # A round that lost shards summed only the answering shards' table
    # counts (every shard lost: the integer 0, a TypeError in the pi step),
    # and a lost last worker ended the fit while its nanny restarted it.
    Mutation(
        "dask-lost-round-tables-partial", "model", "sklearn_clda/dask/_cluster.py",
        "            tables += self._rebuilt_tables(lost)\n",
        "            pass\n",
        ("tests/test_dask.py",),
    ),
    # The final gather sends the topics as sparse counts and their masses.
    Mutation(
        "dask-final-topic-mass-without-v-eta", "model", "sklearn_clda/dask/_cluster.py",
        "self.nk + self.nwk.shape[0] * self.eta)",
        "self.nk + self.eta)",
        ("tests/test_dask.py",),
    ),
    Mutation(
        "dask-no-wait-for-a-restarted-worker", "model", "sklearn_clda/dask/_cluster.py",
        "                self.client.wait_for_workers(1, timeout=self.timeout)\n",
        "                pass\n",
        ("tests/test_dask.py",),
    ),
    # After its sweeps a shard puts its rows of its table copy back as they
    # were after the sync (the next sync brings its own change with the
    # others'); without that its change would count twice.
    Mutation(
        "dask-shard-rows-not-restored", "model", "sklearn_clda/dask/_shard.py",
        "    _sampling.put_rows(state.nwk, rows, snap)\n",
        "    pass\n",
        ("tests/test_dask.py",),
    ),
    # A threaded shard kept a document-order copy of its tokens beside the
    # sweeper's (3.1x shard + table at 4M tokens).
    Mutation(
        "dask-partitioned-shard-keeps-two-copies", "model", "sklearn_clda/dask/_shard.py",
        "                                    own_tokens=True)",
        "                                    own_tokens=False)",
        ("tests/test_dask_memory.py",),
    ),
    Mutation(
        "partition-doc-tokens-wrong-offsets", "operator", PARTITION,
        "idx = np.repeat(starts - offsets[:-1], lengths)",
        "idx = np.repeat(starts, lengths)",
        ("tests/test_dask_memory.py",),
    ),
    Mutation(
        "dask-default-threads-one", "model", "sklearn_clda/dask/_cluster.py",
        'threads = int(info.get(self.workers[i], {}).get("nthreads") or 1)',
        "threads = 1",
        ("tests/test_dask.py",),
    ),
]
