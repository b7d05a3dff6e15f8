#!/bin/bash
# Issue 13, stop 76: vg_entry_grow on TCG, twin pairs as ../badis75_suite
# (both starts, 120 s, 256 MiB, under the TCG lock), on the rises (phases,
# phases up, growth, periodic) and the hot set (where a sample reaching the
# allocation is no rise). Beside the defaults' pairs of ../badis75_suite
# and ../badis76_repeats. Run from this directory: T=<tree> bash queue.sh
. ../badis72/lib.sh
run tcg_vgentry phases,phases_up,growth,periodic,hotset \
    --badis-option vg_entry_grow=true --label vgentry
