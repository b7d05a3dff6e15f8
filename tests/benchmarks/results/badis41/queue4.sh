# badis41 part 6b: shrink_slow_start_kb=4096 at 256 MiB with twins (load-then-idle, its known interaction at
# stop 43; Zipf 0.8; the hot set), tree /tmp/b68/t2 (e5260ae)
cd /work/main/tests/benchmarks/results/badis41
T=/tmp/b68/t2
REF=$T SECONDS_RUN=120 SKIP_REF=1 PATTERNS=load_idle,zipf0.8,hotset BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/slow256 "slow4 $T shrink_slow_start_kb=4096"
