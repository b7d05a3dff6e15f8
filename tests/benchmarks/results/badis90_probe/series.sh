#!/bin/bash
# The stop 90 series, alternating this tree's defaults (badis) with its
# three changes off (badis_old) set by set: bash series.sh ROUND PATTERNS
set -u
cd "$(dirname "$0")"
R=$1; P=$2
OLD="--badis-option calibration_probe_warm_budget=false
     --badis-option probe_evicts_one_step=false
     --badis-option probe_owns_readback=false --label badis_old"
bash run.sh "tcg_new_$R" "$P" badis
# shellcheck disable=SC2086
bash run.sh "tcg_old_$R" "$P" badis $OLD
