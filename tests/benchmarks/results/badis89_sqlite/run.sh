#!/bin/bash
# bash run.sh OUT ESTIMATORS [more bench_patterns options]: one twin pair
# set of the sqlite programs, both starts, 120 s, 256 MiB (issue 13, stop 89)
set -u
cd "$(dirname "$0")/../../../.."
OUT=$1; EST=$2; shift 2
export MEMMUT_TEST_CACHE=${MEMMUT_TEST_CACHE:-$PWD/tests/.cache}
export PATH=$PWD/memstore/target/release:$PATH
mkdir -p "tests/benchmarks/results/badis89_sqlite/$OUT"
git rev-parse HEAD > "tests/benchmarks/results/badis89_sqlite/$OUT/COMMIT"
flock /tmp/memmut-tcg.lock .tox/functional/bin/python \
    -m tests.benchmarks.bench_patterns --patterns sqlite,sqlite16 \
    --estimators "$EST" --starts boot,loaded --twin --seconds 120 \
    --out "tests/benchmarks/results/badis89_sqlite/$OUT" \
    --log "tests/benchmarks/results/badis89_sqlite/$OUT/agent.log" "$@"
echo "rc=$?"
