#!/bin/bash
# Issue 13, stop 81: the held-out periodic pattern beside the one-poll-late
# oracle on the TCG bed (what saving that memory at all costs there),
# twin pairs as in ../badis66, both starts, 120 s, 256 MiB.
# Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg_oracle periodic --estimators badis,oracle
run tcg_oracle_r2 periodic --estimators badis,oracle
