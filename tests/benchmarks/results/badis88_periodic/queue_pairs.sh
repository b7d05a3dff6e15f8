#!/bin/bash
# Issue 13, stop 88: after queue.sh's first two pair sets (it was stopped
# there), stop 80's tree (adce99d, the tree ../badis81_periodic ran) and
# the current one alternating, pair set by pair set: is periodic's rise
# from 1.033 the defaults' or the bed's spell?
# Run from this directory: T80=<tree of adce99d> T=<tree of HEAD> bash queue_pairs.sh
. ../badis66/lib.sh
TH=$T
T=$T80 run tcg80_r1 periodic
T=$TH run tcg_r3 periodic
T=$T80 run tcg80_r2 periodic
