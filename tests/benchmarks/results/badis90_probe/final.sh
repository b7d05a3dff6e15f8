#!/bin/bash
# the final tree (the probe's shrink judged in hindsight again) on the
# patterns where probes run, from boot: this tree, then the changes off
set -u
cd "$(dirname "$0")"
OLD="--badis-option calibration_probe_warm_budget=false
     --badis-option probe_evicts_one_step=false
     --badis-option probe_owns_readback=false --label badis_old"
bash run.sh tcg_new_r4 load_idle,hotset badis --starts boot
# shellcheck disable=SC2086
bash run.sh tcg_old_r4 load_idle,hotset badis $OLD --starts boot
