#!/bin/bash
# Issue 13, stop 85: the hot set at 512 MiB at the defaults, before
# (tree 8a4615e, T_OLD) and after (T_NEW) the time slice held the need,
# back to back: the hot set from boot read back 254 MiB at 1.082 on the
# new tree in tcg512_peak_jump without making a jump.
# Run from this directory: T_OLD=<tree> T_NEW=<tree> bash queue_hotset.sh
. ../badis66/lib.sh
T=$T_OLD run tcg512_hotset_old hotset --booked-mib 512 --data-mib 320
T=$T_NEW run tcg512_hotset_peak hotset --booked-mib 512 --data-mib 320
