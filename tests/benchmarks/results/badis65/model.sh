#!/bin/bash
# Issue 13, stop 65: the held-out patterns on the paged guest model,
# held-out seeds 10-14, Badis reading every page and sampling 400 pages,
# beside the one-poll-late oracle; the suite's size (256 MiB, 160 MiB of
# data, TCG's costs) and a larger guest with KVM's swap costs.
cd "$(dirname "$0")/../../../.."
P=zipf0.6,zipf1.0,zipf1.5,hotset_slow,hotset_small,load_idle_small
P=$P,load_idle_half,phases_down,phases_up
C=(--config badis --config 'pages sampler=pages' --config oracle)
R=tests/benchmarks/results/badis65
.tox/py3/bin/python -m tests.benchmarks.bench_model "${C[@]}" \
    --patterns $P --seeds 10-14 --workers 2 --out $R/heldout256
.tox/py3/bin/python -m tests.benchmarks.bench_model "${C[@]}" \
    --patterns $P --seeds 10-14 --workers 2 --booked-mib 512 \
    --data-mib 320 --costs kvm --out $R/heldout512kvm
# the suite's own phases beside its held-out orders, same seeds
.tox/py3/bin/python -m tests.benchmarks.bench_model "${C[@]}" \
    --patterns phases --seeds 10-14 --workers 2 --out $R/phases256
# the candidate the slow hot set's TCG log points to (probe_readback_
# fraction, off since stop 44), paired to the defaults on the held-out
# patterns and on the suite
.tox/py3/bin/python -m tests.benchmarks.bench_model --config badis \
    --config 'readback probe_readback_fraction=0.25' --patterns $P \
    --seeds 10-14 --workers 2 --out $R/readback256
.tox/py3/bin/python -m tests.benchmarks.bench_model --config badis \
    --config 'readback probe_readback_fraction=0.25' --seeds 10-14 \
    --shapes W1,W2,W3,W4,W5 --workers 2 --out $R/readback256_suite
