# Sourced by queue.sh: stop 66's bench_patterns twin pair (both starts,
# 120 s, 256 MiB, under the TCG lock, times and load in load.txt) from
# this stop's tree.
T=${T:-/tmp/t71/tree}
. "$(dirname "${BASH_SOURCE[0]}")/../badis66/lib.sh"
