#!/bin/bash
# Issue 13, stop 70: the case probe_in_use_evidence is for, made common.
# probe_burst_s = 0 lets the first probe after a load be answered by its
# blind reclaim's burst (stop 68's failure, which left the guest holding
# swap cache for the next probes); here with (`iu`, tcg_iu_*) and
# without (tcg_*) probe_in_use_evidence, load-then-idle, alternated.
# R=_r2 for a second round. Summary: python
# ../../badis68/tcg_summary.py . iu tcg_iu_
cd "$(dirname "$0")"
. ../lib.sh
B0=(--badis-option probe_burst_s=0)
run tcg_load_idle${R} load_idle "${B0[@]}" --label b0
run tcg_iu_load_idle${R} load_idle "${B0[@]}" --badis-option \
    probe_in_use_evidence=True --label iu
