# badis41: the suite with --twin references (stop 52), tree /tmp/b68/t (18680e7)
cd /work/main/tests/benchmarks/results/badis41
T=/tmp/b68/t
REF=$T SECONDS_RUN=120 SKIP_REF=1 BENCH_ARGS="--twin --booked-mib 512 --data-mib 320" flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/twin512 "badis $T"
REF=$T SECONDS_RUN=120 SKIP_REF=1 BENCH_ARGS="--twin" flock /tmp/memmut-tcg.lock bash ../badis18/slots.sh $PWD/twin256 "badis $T" "norp $T calibration_reprobe=false"
