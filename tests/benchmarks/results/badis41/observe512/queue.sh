while pgrep -f /tmp/b68/loop.sh >/dev/null; do sleep 10; done
OUT=/work/main/tests/benchmarks/results/badis41/observe512
mkdir -p $OUT
cd /tmp/b68/t
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH
{ echo "== $(date -u +%FT%TZ) none,observe 512/320 commit $(cat COMMIT)"; uptime; } >> $OUT/load.txt
PYTHONPATH=/tmp/b68/t flock /tmp/memmut-tcg.lock /work/main/.tox/functional/bin/python -m tests.benchmarks.bench_patterns --patterns zipf0.8,zipf1.2,phases --starts boot --seconds 120 --booked-mib 512 --data-mib 320 --estimators none,observe --out $OUT --keep-other-runs --log $OUT/observe.log > $OUT/observe.stdout 2>&1
echo "rc=$?" >> $OUT/load.txt; { echo "== $(date -u +%FT%TZ) end"; uptime; } >> $OUT/load.txt
