#!/bin/bash
# sqlite16_paced for 360 s (three times the bench's runs: the probes walk
# a correction down over minutes), this tree with
# calibration_probe_warm_budget on (badis_budget) and its changes off
set -u
cd "$(dirname "$0")"
OLD="--badis-option calibration_probe_warm_budget=false
     --badis-option probe_evicts_one_step=false
     --badis-option probe_owns_readback=false --label badis_old"
bash run.sh tcg_new_long sqlite16_paced badis --seconds 360 \
    --badis-option calibration_probe_warm_budget=true --label badis_budget
# shellcheck disable=SC2086
bash run.sh tcg_old_long sqlite16_paced badis $OLD --seconds 360
