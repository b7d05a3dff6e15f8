#!/bin/bash
# Issue 13, stop 84: the held-out `scan` pattern on the TCG bed beside the
# one-poll-late oracle, twin pairs as in ../badis66, both starts, 120 s,
# 256 MiB, then one pair set at 512 MiB with 320 MiB of data.
# Run from this directory: T=<tree> bash queue.sh
. ../badis66/lib.sh
run tcg_scan scan --estimators badis,oracle
run tcg_scan_r2 scan --estimators badis,oracle
run tcg512_scan scan --booked-mib 512 --data-mib 320
