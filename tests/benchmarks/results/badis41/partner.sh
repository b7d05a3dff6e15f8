cd /tmp/b68/t
export MEMMUT_TEST_CACHE=/work/main/tests/.cache PATH=/work/main/memstore/target/release:$PATH PYTHONPATH=/tmp/b68/t
B=/work/main/tests/benchmarks/results/badis41
for spec in "pair-z08-z12 zipf0.8,zipf1.2 2" "alone-z08 zipf0.8 1" "pair-z08-z12b zipf0.8,zipf1.2 2" "alone-z08b zipf0.8 1"; do
  set -- $spec
  mkdir -p $B/$1; { echo "== $(date -u +%FT%TZ) $1 commit $(cat COMMIT)"; uptime; } >> $B/$1/load.txt
  flock /tmp/memmut-tcg.lock /work/main/.tox/functional/bin/python -m tests.benchmarks.bench_patterns --patterns $2 --starts boot --seconds 120 --booked-mib 512 --data-mib 320 --estimators none --parallel $3 --out $B/$1 > $B/$1/stdout 2>&1
  { echo "rc=$? == $(date -u +%FT%TZ) end"; uptime; } >> $B/$1/load.txt
done
