#!/bin/bash
# Stop 74: the slice (15 slices: 60 s on the bench's 4 s slice) with a
# balloon probe's swap-ins left out of its recurrences (8d62759), on the
# cases where probes made recurrences in tcg_slice_hot: load-then-idle,
# the slow hot set, and the hot set. Run from this directory after
# queue.sh: T=<tree> bash queue_probe.sh [R]
. ../badis72/lib.sh
R=${1:-}
run tcg_probe_hot$R hotset,hotset_slow,load_idle \
    --badis-option time_slice_max_slices=15 --label slice15
