#!/bin/bash
# Issue 13, stop 85: the defaults before any change here (tree 8a4615e)
# on phases and growth at 512 MiB on an idle machine: this session's
# reference for tcg512_peak_r2 (tcg512_rise ran beside the model).
# Run from this directory: T=<tree> bash queue_idle.sh
. ../badis66/lib.sh
run tcg512_idle phases,growth --booked-mib 512 --data-mib 320
