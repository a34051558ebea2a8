#!/usr/bin/env bash
# The thread and worker tables on a many-core machine, in commands that
# fit a short lease: build the extension in place, then run the chosen
# part's scripts, each with a time limit, their logs (and JSON where a
# script writes one) into OUTDIR.
#
#   bash benchmarks/many_core.sh OUTDIR threads    # bench_threads.py: about 4 min on 16 cores
#   bash benchmarks/many_core.sh OUTDIR partition  # bench_partition.py: about 3 min
#   bash benchmarks/many_core.sh OUTDIR dask       # bench_dask.py, 1 to cores/2 workers
#   bash benchmarks/many_core.sh OUTDIR weak       # the same with TOKENS per worker, and
#                                                  # as many plain processes at the most
#   bash benchmarks/many_core.sh OUTDIR side       # bench_side_by_side.py, the same
#   bash benchmarks/many_core.sh OUTDIR layouts    # bench_dask.py's worker_threads layouts
#   bash benchmarks/many_core.sh OUTDIR largek     # bench_threads.py, K=1000, the MH samplers
#   bash benchmarks/many_core.sh OUTDIR all        # all seven (more than one 10-minute call)
#   BASELINE=DIR bash benchmarks/many_core.sh OUTDIR ab
#       # news16's threads table for this build and for another build's
#       # source tree DIR (e.g. `git archive REV sklearn_clda setup.py
#       # pyproject.toml | tar -x -C DIR`), built in place there, alternating
#       # twice; not part of all
#
# Several parts, one after the other: separate them by commas (threads,dask).
#
# Needs numpy, scipy, scikit-learn and Cython (the build runs without
# isolation, against what is installed), tomotopy for the peer rows, and
# dask + distributed for the dask part. On a machine without a package
# index, bring them as wheels and name their folder in WHEELS: they are
# installed with --no-index --no-deps into a folder of their own, put on
# PYTHONPATH. For Python 3.12 on x86-64, beside what a scientific image
# usually has (cloudpickle, msgpack, psutil, pyyaml, sortedcontainers,
# toolz, fsspec, jinja2, click): tomotopy, dask, distributed, tornado,
# tblib, zict, partd, locket, e.g.
#
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d .whl \
#       --platform manylinux_2_28_x86_64 tomotopy==0.14.0 dask==2026.8.0 \
#       distributed==2026.8.0 tornado tblib zict partd locket
#
# Environment: PYTHON (default python3), WHEELS (default: none),
# LIMIT (seconds per part, default 330), TOKENS (the synthetic corpus,
# default 10000000; 0 for news16 alone), and for the threads part ROUNDS
# (default 1) and QUALITY_SWEEPS (the perplexity table's sweeps, default
# 300; 0 skips it, and the dask part's perplexity table too: their chains,
# and so their numbers, do not depend on the machine, so a short lease can
# leave them to another) and ISA (tomotopy's build, e.g. a first call's
# threads.json "isa": skips the probe).
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: many_core.sh OUTDIR [threads|partition|dask|side|layouts|largek|all][,...]}
parts=,${2:-all},
[ "$parts" = ,all, ] && parts=,threads,partition,dask,weak,side,layouts,largek,
py=${PYTHON:-python3}
limit=${LIMIT:-330}
tokens=${TOKENS:-10000000}
rounds=${ROUNDS:-1}
quality=${QUALITY_SWEEPS:-300}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# the in-place build, for the scripts and for Dask's worker processes
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

if [ -n "${WHEELS:-}" ]; then
  site=$(mktemp -d)/site
  "$py" -m pip install -q --no-index --no-deps --no-compile --target "$site" "$WHEELS"/*.whl
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "cpus: $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  echo "memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "vector ISA: $(grep -m1 -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  lscpu 2>/dev/null | grep -E '^(Socket|Core|Thread|NUMA node\(s\)|L3)' || true
  "$py" -c 'import sys, numpy, scipy, sklearn; print("python", sys.version.split()[0], "numpy", numpy.__version__, "scipy", scipy.__version__, "scikit-learn", sklearn.__version__)'
  "$py" -c 'import tomotopy; print("tomotopy", tomotopy.__version__)' || echo "tomotopy: missing"
  "$py" -c 'import dask, distributed; print("dask", dask.__version__, "distributed", distributed.__version__)' || echo "dask: missing"
} 2>&1 | tee "$out/machine.txt"

"$py" setup.py -q build_ext --inplace -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }

run_part() {  # name, command...: the part's output into OUTDIR/name.log, cut at LIMIT
  local name=$1; shift
  echo "== $name: $*"
  set +e
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  set -e
  [ "$rc" = 124 ] && echo "== $name: stopped after $limit s (the log holds what it printed)"
  return 0
}

case $parts in *,threads,*)
  # One round: on a 16-core Xeon (2026-11-27) a round of the 10M-token
  # corpus took 160 s (the one-thread rows most of it), news16 15 s, the
  # perplexity table 70 s; two rounds do not fit LIMIT.
  run_part threads "$py" benchmarks/bench_threads.py --tokens "$tokens" --rounds "$rounds" \
    --warmup 50 --sweeps 8 --quality-sweeps "$quality" ${ISA:+--tomotopy-isa "$ISA"} --json "$out/threads.json" ;;
esac
case $parts in *,partition,*)
  # where the threads' time goes: in their cells or at the barriers
  run_part partition "$py" benchmarks/bench_partition.py --tokens "$tokens" --sweeps 6 ;;
esac
# 1, 2, 4, ... worker processes up to half the cores (the issue's 8 on 16)
workers=$(w=1; while [ $((w * 4)) -le "$(nproc)" ]; do printf '%s ' $w; w=$((w * 2)); done; echo $w)
skip_perplexity=; [ "$quality" = 0 ] && skip_perplexity=--skip-perplexity
most=${workers##* }
case $parts in *,dask,*)
  # shellcheck disable=SC2086
  run_part dask "$py" benchmarks/bench_dask.py --tokens "$tokens" --workers $workers \
    --seeds 1 $skip_perplexity ;;
esac
case $parts in *,weak,*)
  # TOKENS per worker (the issue's sync target is stated at 10M per worker),
  # then the largest count's shards and one shard in plain processes: the
  # machine's share of the slowdown per token
  # shellcheck disable=SC2086
  run_part dask_weak "$py" benchmarks/bench_dask.py --tokens "$tokens" --workers $workers \
    --tokens-per-worker --skip-perplexity
  run_part side_weak_1 "$py" benchmarks/bench_side_by_side.py --tokens "$tokens" --processes 1
  run_part side_weak_"$most" "$py" benchmarks/bench_side_by_side.py \
    --tokens $((tokens * most)) --processes "$most" ;;
esac
case $parts in *,side,*)
  # the same shards' rounds in as many plain processes at once: machine or Dask?
  # shellcheck disable=SC2086
  run_part side_by_side "$py" benchmarks/bench_side_by_side.py --tokens "$tokens" \
    --processes $workers ;;
esac
case $parts in *,layouts,*)
  # the embedded default (one worker, a thread per core), then one and
  # cores/2 workers of two threads each (`dask worker --nworkers` on all
  # cores), against the single-threaded processes of the dask part
  cores=$(nproc)
  run_part dask_one_worker "$py" benchmarks/bench_dask.py --tokens "$tokens" --workers 1 \
    --worker-threads "$cores" --skip-perplexity
  half=$((cores / 2 > 1 ? cores / 2 : 1))
  # shellcheck disable=SC2046
  run_part dask_two_threads "$py" benchmarks/bench_dask.py --tokens "$tokens" \
    --workers $(printf '%s\n' 1 "$half" | sort -un) --worker-threads 2 --skip-perplexity ;;
esac
case $parts in *,ab,*)
  base=$(cd "${BASELINE:?ab needs BASELINE, a source tree of the other build}" && pwd)
  (cd "$base" && "$py" setup.py -q build_ext --inplace -j "$(nproc)") > "$out/build_baseline.log" 2>&1 \
    || { tail -20 "$out/build_baseline.log"; exit 1; }
  # the same flags as the threads part, news16 only, tomotopy's avx2 build
  for pair in 1 2; do
    for build in this baseline; do
      tree=$PWD; [ "$build" = baseline ] && tree=$base
      PYTHONPATH="$tree:$PYTHONPATH" run_part "ab_${build}_$pair" "$py" benchmarks/bench_threads.py \
        --tokens 0 --rounds 1 --warmup 50 --sweeps 8 --quality-sweeps 0 --tomotopy-isa avx2
    done
  done ;;
esac
case $parts in *,largek,*)
  # the MH samplers' n_jobs (news16, K=1000: "auto" runs the sparse one)
  # against tomotopy's workers at the same K
  for sampler in sparse mh; do
    run_part "largek_$sampler" "$py" benchmarks/bench_threads.py --tokens 0 -K 1000 \
      --sampler "$sampler" --rounds 1 --warmup 20 --sweeps 5 --quality-sweeps 0 \
      --json "$out/largek_$sampler.json"
  done ;;
esac
