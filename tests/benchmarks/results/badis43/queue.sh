#!/bin/bash
# badis43 (stop 54): the new defaults (shrink_slow_start_kb 4096, its first
# step at least the controller's min_change_kb, a swapping round's shrink
# held to the first step) beside the slow start off (`off`:
# shrink_slow_start_kb=0, the old defaults), with twins, interleaved per
# pattern (the defaults then `off`, one lock slot per pattern) at 256
# MiB, then Zipf 0.8 at 512 MiB with one host core kept busy (the slow
# host of badis42/contended512). Tree /tmp/b70/n (its COMMIT).
set -u
R=/work/main/tests/benchmarks/results/badis43
T=/tmp/b70/n
cd $R
# after the functional suite of the same commit (it holds the lock)
while ! grep -qE "passed|failed|error" /tmp/b70/func_full.log 2>/dev/null; do sleep 20; done
export REF=$T SECONDS_RUN=120 SKIP_REF=1
OFF="off $T shrink_slow_start_kb=0"
for p in zipf0.8 hotset load_idle phases seq; do
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/inter256 "badis $T" "$OFF"
done
mkdir -p $R/contended512
PATTERNS=zipf0.8 BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock \
    bash -c 'sha256sum /dev/zero & hog=$!
             echo "== $(date -u +%FT%TZ) hog $hog: sha256sum /dev/zero" >> $0/contended512/load.txt
             bash ../badis18/slots.sh $0/contended512 "$1" "$2"; kill $hog' $R "badis $T" "$OFF"
echo QUEUE_DONE >> $R/contended512/load.txt
