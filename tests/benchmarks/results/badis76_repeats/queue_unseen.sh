#!/bin/bash
# Issue 13, stop 76: the two held-out patterns added this stop (growth,
# periodic; memmut.evaluation.workloads.held_out_suite), never run before
# stop 75's defaults were set, twin pairs as in queue.sh, two pairs each.
# Run from this directory: T=<tree> bash queue_unseen.sh
. ../badis72/lib.sh
run tcg_unseen growth,periodic
run tcg_unseen_r2 growth,periodic
# a third pair, run after the functional tests of the stop
run tcg_unseen_r3 growth,periodic
