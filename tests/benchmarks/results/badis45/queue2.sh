#!/bin/bash
# badis45 part 2: after queue.sh, tree /tmp/b72/g (`new2`: queue.sh's
# candidate plus a probe held off by a hindsight floor going to the
# floor) beside HEAD (`badis`, /tmp/b72/t): load-then-idle at 120 s
# (`inter256b`), then Zipf 0.8 at 300 s (`zipf300`), where a third probe
# comes within the run.
set -u
R=/work/main/tests/benchmarks/results/badis45
T=/tmp/b72/t
G=/tmp/b72/g
cd $R
while ! grep -q QUEUE_DONE $R/inter256/load.txt 2>/dev/null; do sleep 20; done
export REF=$T SKIP_REF=1
SECONDS_RUN=120 PATTERNS=load_idle BENCH_ARGS="--twin" \
    flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/inter256b \
    "badis $T" "new2 $G calibration_reprobe_answers=2"
echo QUEUE_DONE >> $R/inter256b/load.txt
SECONDS_RUN=300 PATTERNS=zipf0.8 BENCH_ARGS="--twin" \
    flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $R/zipf300 \
    "badis $T" "new2 $G calibration_reprobe_answers=2"
echo QUEUE_DONE >> $R/zipf300/load.txt
