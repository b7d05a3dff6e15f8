# badis41 part 6 (after queue.sh): at 512 MiB with twins, tree /tmp/b68/t2 (e5260ae):
# shrink_slow_start_kb against the first descent's overshoot on Zipf, with load-then-idle (its known
# interaction). (Part 5, load512/, ran from a first version of this script whose wait failed: it took the lock
# at 06:42 between queue.sh's two slots, before twin256.)
cd /work/main/tests/benchmarks/results/badis41
while pgrep -f "bash queue.sh" >/dev/null; do sleep 15; done
T=/tmp/b68/t2
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=zipf0.8,zipf1.2,load_idle BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/slow512 "slow4 $T shrink_slow_start_kb=4096"
