#!/bin/bash
# Issue 13, stop 85: the rises at 512 MiB with the time slice's held
# peak taken without what the rise rules ask ahead (the tree of the
# commit that does it), at the defaults: one twin pair set of the three
# rises, a second of periodic, phases up and growth.
# Twin pairs, both starts, 120 s.
# Run from this directory: T=<tree> bash queue_peak.sh
. ../badis66/lib.sh
run tcg512_peak phases,phases_up,periodic --booked-mib 512 --data-mib 320
run tcg512_peak_r2 periodic,phases_up,growth --booked-mib 512 --data-mib 320
