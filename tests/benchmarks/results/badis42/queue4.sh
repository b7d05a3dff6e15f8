#!/bin/bash
# badis42, after queue.sh's 512 MiB suite (queue.sh stopped there): the
# 512 MiB slot showed the host's speed moving the dynamics, not only the
# ratio (the defaults' Zipf 0.8 guest made 48.5 M operations with no
# swap-in at all, slow4's twins 30 minutes earlier 44 M), so configurations
# are now interleaved per pattern (minutes apart, not half an hour):
# 256 MiB: per pattern the defaults then slow4 (rebase on load-then-idle);
# 512 MiB: Zipf 0.8 the defaults then slow4, on a quiet host and then
# with one core of the host kept busy (`contended512`: a slow host made
# on purpose, where the defaults dipped in badis41); rebase on
# load-then-idle; then W1-W5 (bench_badis, 256 MiB) of the defaults and
# slow4. Trees: /tmp/b69/t (27c4049) and /tmp/b69/t2 (58ff7e4, the option
# pinned_drop_rebase; its defaults are t's).
set -u
R=/work/main/tests/benchmarks/results/badis42
T=/tmp/b69/t
T2=/tmp/b69/t2
cd $R
while pgrep -f "slots.sh $R/suite512" > /dev/null; do sleep 15; done
export REF=$T SECONDS_RUN=120 SKIP_REF=1
S="slow4 $T shrink_slow_start_kb=4096"
RB="rebase $T2 pinned_drop_rebase=true"
for p in zipf0.8 hotset load_idle phases; do
  extra=""; [ $p = load_idle ] && extra=$RB
  PATTERNS=$p BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock \
      bash ../badis18/slots.sh $R/inter256 "badis $T" "$S" ${extra:+"$extra"}
done
PATTERNS=zipf0.8 BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock \
    bash ../badis18/slots.sh $R/inter512 "badis $T" "$S"
# one core of the host busy (nice 0) while the lock is held
mkdir -p $R/contended512
PATTERNS=zipf0.8 BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock \
    bash -c 'sha256sum /dev/zero & hog=$!
             echo "== $(date -u +%FT%TZ) hog $hog: sha256sum /dev/zero" >> $0/contended512/load.txt
             bash ../badis18/slots.sh $0/contended512 "$1" "$2"; kill $hog' $R "badis $T" "$S"
PATTERNS=load_idle BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock \
    bash ../badis18/slots.sh $R/inter512 "$RB"
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
mkdir -p $R/w15
(cd $T
 { echo "== $(date -u +%FT%TZ) w15 badis"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --out $R/w15/badis > $R/w15/badis.out 2>&1
   echo "== $(date -u +%FT%TZ) w15 slow4"; uptime
   flock /tmp/memmut-tcg.lock $PY -m tests.benchmarks.bench_badis --step 10 --shapes W1,W2,W3,W4,W5 --allocs s,d --estimators badis --parallel 2 --badis-option shrink_slow_start_kb=4096 --out $R/w15/slow4 > $R/w15/slow4.out 2>&1
   echo "== $(date -u +%FT%TZ) end"; uptime; } >> $R/w15/load.txt 2>&1)
echo QUEUE_DONE >> $R/w15/load.txt
