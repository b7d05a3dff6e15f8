#!/bin/bash
# the stop 90 queue: rounds of the sqlite programs, then redis and
# load-then-idle, each alternating this tree (badis) and its three
# changes off (badis_old)
cd "$(dirname "$0")"
bash series.sh r1 sqlite16_paced,sqlite16
bash series.sh r2 sqlite16_paced,sqlite16
bash series.sh r3 redis,load_idle
