#!/bin/bash
# Issue 13, stop 83: the defaults since this stop (probe_answer_rate and
# probe_over_demand on) on the paged guest model at production's clock, as
# model.sh, whose runs are the reference ('badis' there: both off; 'rate':
# the first alone; the model draws nothing at random in these patterns,
# so they are the same runs). Writes kvm_od_$1, label stop83.
#   python3 ../badis78_probe_step/compare.py kvm_clock badis kvm_od_clock stop83
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis83_rate
C=${1:-clock}
P=${2:-load_idle,load_idle_small,load_idle_half,hotset,hotset_slow,hotset_small,phases,phases_down,phases_up,growth,periodic,seq,random,zipf0.8}
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10 \
    --timing production --seconds 7200 --costs kvm --booked-mib 512 \
    --data-mib 320 --reclaim $C --workers 2 --starts boot,loaded \
    --config stop83 \
    --patterns $P --out $R/kvm_od_$C
