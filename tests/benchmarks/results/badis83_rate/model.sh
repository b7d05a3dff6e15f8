#!/bin/bash
# Issue 13, stop 83: the paged guest model at production's clock
# (bench_model --timing production: 5 s polls, 60 s rounds, 1 h slice,
# 7200 s), KVM's costs, 512 MiB with 320 MiB of data, both starts, seed
# 10, reclaim rule $1 (clock or lru; default clock), patterns $2 (default:
# the 14 of ../badis81_production).
#   bash model.sh clock        -> kvm_clock: 'badis' (the stop-82
#       defaults, both options off) and 'rate' (probe_answer_rate alone)
#   bash model.sh clock '' od  -> kvm_od_clock: 'stop83' (this stop's
#       defaults, both on; the model draws nothing at random in these
#       patterns, so the runs above are its reference)
#   python3 ../badis78_probe_step/compare.py kvm_clock badis kvm_od_clock stop83
cd "$(dirname "$0")/../../../.."
R=tests/benchmarks/results/badis83_rate
C=${1:-clock}
P=${2:-load_idle,load_idle_small,load_idle_half,hotset,hotset_slow,hotset_small,phases,phases_down,phases_up,growth,periodic,seq,random,zipf0.8}
if [ "$3" = od ]; then
    CONFIGS=(--config stop83)
    OUT=$R/kvm_od_$C
else
    CONFIGS=(--config 'badis probe_answer_rate=False probe_over_demand=False'
             --config 'rate probe_answer_rate=True probe_over_demand=False')
    OUT=$R/kvm_$C
fi
.tox/py3/bin/python -m tests.benchmarks.bench_model --seeds 10 \
    --timing production --seconds 7200 --costs kvm --booked-mib 512 \
    --data-mib 320 --reclaim $C --workers 2 --starts boot,loaded \
    "${CONFIGS[@]}" --patterns $P --out $OUT
