#!/bin/bash
# Issue 13, stop 83: [badis] probe_answer_rate on and off on the paged guest
# model at production's clock (bench_model --timing production: 5 s polls,
# 60 s rounds, 1 h slice, 7200 s), KVM's costs, 512 MiB with 320 MiB of
# data, both starts, seed 10, reclaim rule $1 (clock or lru; default clock),
# patterns $2 (default: the 14 of ../badis81_production). Writes kvm_$1.
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis83_rate
C=${1:-clock}
P=${2:-load_idle,load_idle_small,load_idle_half,hotset,hotset_slow,hotset_small,phases,phases_down,phases_up,growth,periodic,seq,random,zipf0.8}
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10 \
    --timing production --seconds 7200 --costs kvm --booked-mib 512 \
    --data-mib 320 --reclaim $C --workers 2 --starts boot,loaded \
    --config badis --config 'rate probe_answer_rate=True' \
    --patterns $P --out $R/kvm_$C
