#!/bin/bash
# issue 13 session 7, second version (df5fc31): the affected patterns
# (random left out: no bad shrinks there), main vs shrink_floor,
# alternated, each slot its own lock hold; none starts after the cutoff
CUT=${CUT:-08:55}
F="floor=shrink_floor=true"
slot() {
  flock /tmp/memmut-tcg.lock bash -c '
    now=$(date -u +%H:%M); if [[ "$now" > "'$CUT'" ]]; then echo "skip $* at $now"; exit 0; fi
    echo "start $* at $now"; exec "$@"' _ "$@"
}
export SRC=/tmp/b17/src2 PATTERNS=load_idle,hotset,zipf0.8,zipf1.2,phases
slot /tmp/b17/slot.sh patterns /tmp/b17/res/v2-patterns-1 floor-first "$F"
slot /tmp/b17/slot.sh patterns /tmp/b17/res/v2-patterns-2 main-first "$F"
echo chain done $(date -u)
