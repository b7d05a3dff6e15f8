#!/bin/bash
# Issue 13, stop 85: a second pair set of the oracle on phases and
# phases up at 512 MiB, on an idle machine (tcg512_rise ran beside the
# model). Run from this directory: T=<tree> bash queue_oracle_r2.sh
. ../badis66/lib.sh
run tcg512_oracle_r2 phases,phases_up --booked-mib 512 --data-mib 320 \
    --estimators oracle
