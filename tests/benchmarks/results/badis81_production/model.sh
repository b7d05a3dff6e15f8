#!/bin/bash
# Issue 13, stop 81: the paged guest model on production's clock (bench_model
# --timing production: 5 s polls, 60 s rounds, 1 h slice; the bench's 120 s
# cases at 60 times, 7200 s), KVM's costs, 512 MiB with 320 MiB of data,
# clock reclaim, both starts, seed $1 (default 10), beside the one-poll-late
# oracle, with [badis] end_round_on_thrashing on (the default since this
# stop) and off. Writes kvm_s$1 here.
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis81_production
S=${1:-10}
P=${2:-load_idle,load_idle_small,load_idle_half,hotset,hotset_slow,hotset_small,phases,phases_down,phases_up,growth,periodic,seq,random,zipf0.8}
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds $S \
    --timing production --seconds 7200 --costs kvm --booked-mib 512 \
    --data-mib 320 --reclaim clock --workers 2 --starts boot,loaded \
    --config badis --config 'thrash_off end_round_on_thrashing=False' \
    --config oracle --patterns $P --out $R/kvm_s$S
