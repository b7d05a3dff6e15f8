#!/bin/bash
# Issue 13, stop 69: pinned_drop_rebase + probe_chain (label `rc`)
# against the defaults (label `badis`), alternated pattern by pattern,
# one twin pair per run (both starts). R=_r2 for a second round.
cd "$(dirname "$0")"
. ./lib.sh
RC=(--badis-option pinned_drop_rebase=True --badis-option
    probe_chain=True --label rc)
for p in load_idle hotset_slow hotset phases; do
  run tcg_${p}${R} $p
  run tcg_rc_${p}${R} $p "${RC[@]}"
done
