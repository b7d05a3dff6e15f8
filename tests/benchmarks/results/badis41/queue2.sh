# badis41 part 5 as it ran (first version of the script: its pgrep pattern never matched, so it queued on the lock
# at once and took it at 06:42 between queue.sh's two slots): at 512 MiB with twins, tree /tmp/b68/t2 (e5260ae),
# the load from boot: calibration_defer_rounds=10 and no_shrink_while_allocating=true
cd /work/main/tests/benchmarks/results/badis41
T=/tmp/b68/t2
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=zipf0.8,zipf1.2,phases BENCH_ARGS="--twin --booked-mib 512 --data-mib 320 --starts boot" flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/load512 "defer10 $T calibration_defer_rounds=10" "nsa $T no_shrink_while_allocating=true"
