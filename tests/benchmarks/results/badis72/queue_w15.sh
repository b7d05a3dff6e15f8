#!/bin/bash
# Stop 72: W1-W5 static and dynamic (bench_badis, 10 s steps, none and
# badis in each invocation), the stop-71 defaults then [badis]
# shortage_ramp. Run from this directory.
. ./lib.sh
wrun w15_def W1,W2,W3,W4,W5 s,d --badis-option shortage_ramp=false
wrun w15_ramp W1,W2,W3,W4,W5 s,d --badis-option shortage_ramp=true
