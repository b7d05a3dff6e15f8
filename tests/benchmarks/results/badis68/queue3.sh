#!/bin/bash
# Issue 13, stop 68: a second round of load_idle and hotset after the
# options became the defaults (tree at the commit in each load.txt):
# `tcg_*_r2` runs the old rule (probe_burst_s = 0, probe_rise_written =
# false, label `old`), `tcg_both_*_r2` today's defaults, alternated.
cd "$(dirname "$0")"
. ./lib.sh
OLD=(--badis-option probe_burst_s=0 --badis-option
     probe_rise_written=False --label old)
for p in load_idle hotset; do
  run tcg_${p}_r2 $p "${OLD[@]}"
  run tcg_both_${p}_r2 $p
done
