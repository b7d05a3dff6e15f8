#!/bin/bash
# Run each memmut-memstore fuzz target (memstore/fuzz, cargo-fuzz and
# libFuzzer) for MEMMUT_FUZZ_SECONDS (default 60), single process, from
# the committed seed corpus; new inputs go to memstore/fuzz/corpus-work/
# (not committed), crashes to memstore/fuzz/artifacts/.  Needs a nightly
# toolchain and cargo-fuzz: rustup toolchain install nightly;
# cargo install cargo-fuzz.  Usage: fuzz-memstore.sh [TARGET...]
set -eu
cd "$(dirname "$0")/../memstore/fuzz"
seconds=${MEMMUT_FUZZ_SECONDS:-60}
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(nbd control)
fi
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus-work/$t"
    echo "fuzz-memstore: $t for $seconds s"
    if ! cargo +nightly fuzz run -O "$t" "corpus-work/$t" "corpus/$t" -- \
            -max_total_time="$seconds" -max_len=65536 -print_final_stats=1; then
        echo "fuzz-memstore: $t FAILED (see memstore/fuzz/artifacts/$t)"
        status=1
    fi
done
exit $status
