#!/bin/bash
# bash run.sh OUT PATTERNS ESTIMATORS [more bench_patterns options]: one
# twin pair set, both starts, 120 s, 256 MiB (issue 13, stop 90)
set -u
cd "$(dirname "$0")/../../../.."
DIR=tests/benchmarks/results/badis90_probe
OUT=$1; PATTERNS=$2; EST=$3; shift 3
export MEMMUT_TEST_CACHE=${MEMMUT_TEST_CACHE:-$PWD/tests/.cache}
export PATH=$PWD/memstore/target/release:$PATH
mkdir -p "$DIR/$OUT"
git rev-parse HEAD > "$DIR/$OUT/COMMIT"
flock /tmp/memmut-tcg.lock .tox/functional/bin/python \
    -m tests.benchmarks.bench_patterns --patterns "$PATTERNS" \
    --estimators "$EST" --starts boot,loaded --twin --seconds 120 \
    --out "$DIR/$OUT" --log "$DIR/$OUT/agent.log" "$@"
echo "rc=$?"
