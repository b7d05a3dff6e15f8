#!/bin/bash
# Issue 13, stop 84: the held-out `scan` pattern (a quarter of the data
# touched often, all of it swept every third of the run) on the paged
# guest model, at the defaults, both starts.
#   bash model.sh production  -> kvm_clock: production's clock (5 s polls,
#       60 s rounds, 1 h slice, 7200 s: a sweep every 40 minutes, under
#       the swap-in bound, so the working set is the quarter), KVM's
#       costs, 512 MiB with 320 MiB of data, clock reclaim, seed 10
#   bash model.sh bench       -> tcg_lru: the TCG bench's clock (1 s
#       rounds, 4 s slice, 120 s: a sweep every 40 s, over the bound, so
#       the working set is 120 of the 160 MiB), TCG's costs, 256 MiB,
#       LRU reclaim, seeds 0-4
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis84_scan
P=${P:-scan}
# the defaults, then the one-poll-late oracle
CONFIGS=(--config defaults --config oracle)
case "$1" in
production)
    .tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10 \
        --timing production --seconds 7200 --costs kvm --booked-mib 512 \
        --data-mib 320 --reclaim clock --workers 2 --starts boot,loaded \
        "${CONFIGS[@]}" --patterns $P --out $R/kvm_clock ;;
bench)
    .tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 0-4 \
        --workers 2 --starts boot,loaded "${CONFIGS[@]}" \
        --patterns $P --out $R/tcg_lru ;;
*)  echo "usage: bash model.sh production|bench" >&2; exit 2 ;;
esac
