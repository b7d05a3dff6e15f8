#!/bin/bash
# A third 256 MiB twin pair set of `scan` (Badis alone), after queue.sh's
# two gave 1.025 and 1.045 from boot. T=<tree> bash queue_r3.sh
. ../badis66/lib.sh
run tcg_scan_r3 scan
