#!/bin/bash
# Issue 13, stop 77: the VM's own time slice from its first round
# ([badis] time_slice_from_first) and kept while a held peak is used
# again ([badis] time_slice_reuse) on the paged guest model (256 MiB,
# TCG's costs, both starts, seeds 10-14) under reclaim rule $1 (clock or
# lru): the sixteen patterns of ../badis74_slice's screen (whose
# `slice15` is the defaults, run for run) and W1-W5 static and dynamic.
# Writes, here:
#   first/model_$1    from_first alone (the sixteen patterns, W1-W5)
#   model_$1          both, and reuse alone (the same, and the two
#                     held-out patterns periodic and growth)
#   periodic_def/model_$1  the defaults and from_first on periodic and
#                     growth (no stored defaults run of those two)
# time_slice_reuse became a default after these ran: the configurations
# measured without it name it false, so that they run as measured.
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis77_first
P=hotset,load_idle,phases,hotset_slow,hotset_small,load_idle_small,load_idle_half,phases_down,phases_up,seq,random,zipf0.8,zipf1.2,zipf0.6,zipf1.0,zipf1.5
M=".tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10-14 --reclaim $1 --workers 1"
$M --config 'first time_slice_from_first=true time_slice_reuse=false' \
    --patterns $P \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --out $R/first/model_$1
$M --config 'both time_slice_from_first=true time_slice_reuse=true' \
    --config 'reuse time_slice_reuse=true' --patterns $P,periodic,growth \
    --shapes W1,W2,W3,W4,W5 --allocs s,d --out $R/model_$1
$M --config 'def time_slice_reuse=false' \
    --config 'first time_slice_from_first=true time_slice_reuse=false' \
    --patterns periodic,growth --out $R/periodic_def/model_$1
