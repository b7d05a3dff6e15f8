#!/bin/bash
# Issue 13, stop 88: W4 static alone on one commit's tree, N runs
# -> c_<commit>/: which commit between stop 77 (9f6caeb) and stop 87
# (f4d9316) raised W4,s's vm_over? Run from this directory:
#     bash run.sh COMMIT FIRST_REPEAT N
# The tree is unpacked under /tmp/bisect/<commit> (git archive); a NAME
# for which /tmp/bisect/NAME/COMMIT exists runs that tree, made by hand
# (-> c_NAME/).
set -u
if [ -f "/tmp/bisect/$1/COMMIT" ]; then c=$1
else c=$(git -C /work/main rev-parse --short=8 "$1"); fi
T=/tmp/bisect/$c
if [ ! -f "$T/COMMIT" ]; then
  mkdir -p "$T" && git -C /work/main archive "$c" | tar -x -C "$T" &&
    git -C /work/main rev-parse "$c" > "$T/COMMIT"   # the full hash: see README
fi
export MEMMUT_TEST_CACHE=/work/main/tests/.cache
export PATH=/work/main/memstore/target/release:$PATH
PY=/work/main/.tox/functional/bin/python
out=$PWD/c_$c
mkdir -p "$out"
for ((r = $2; r < $2 + $3; r++)); do
  {
    echo "== repeat $r $(date -u +%FT%TZ) tree $c"; uptime
    (cd "$T" && PYTHONPATH=$T flock /tmp/memmut-tcg.lock $PY \
        -m tests.benchmarks.bench_badis --step 10 --shapes W4 \
        --allocs s --estimators none,badis --repeats 1 \
        --first-repeat $r --keep-other-runs --out "$out")
    echo "rc=$? $(date -u +%FT%TZ)"
  } >> "$out/load.txt" 2>&1
done
