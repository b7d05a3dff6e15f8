#!/bin/bash
# Build the memmut-wss kernel helper (kmod/memmut_wss) with DKMS, from this
# tree, for every kernel that has headers under /lib/modules/<ver>/build
# (or only for the versions given as arguments), and fail on any compiler
# warning (the module's Makefile also passes -Werror).
#
#   tools/build-kmod.sh [KERNEL_VERSION...]
#
# Idempotent: an earlier `dkms add` of the same version is removed first.
# Needs root, dkms and linux-headers-amd64 (tools/test-setup.sh installs
# them). Prints the path of each built .ko; with --install it also runs
# `dkms install` (not needed by the tests: they take the .ko from the DKMS
# tree and load it inside a guest).
set -euo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$HERE/kmod/memmut_wss"
NAME=memmut-wss
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$SRC/dkms.conf")
INSTALL=0
KERNELS=()
for a in "$@"; do
    case "$a" in
        --install) INSTALL=1 ;;
        *) KERNELS+=("$a") ;;
    esac
done

command -v dkms >/dev/null || {
    echo "build-kmod: dkms not found (apt-get install dkms" \
         "linux-headers-amd64, or tools/test-setup.sh)" >&2; exit 1; }
if [ ${#KERNELS[@]} -eq 0 ]; then
    for d in /lib/modules/*/build; do
        [ -e "$d/Makefile" ] && KERNELS+=("$(basename "$(dirname "$d")")")
    done
fi
if [ ${#KERNELS[@]} -eq 0 ]; then
    echo "build-kmod: no kernel headers under /lib/modules/*/build" \
         "(apt-get install linux-headers-amd64)" >&2
    exit 1
fi

# dkms copies the source tree on `add`: give it a clean copy (no objects
# from a developer's `make` in kmod/memmut_wss).
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/$NAME-$VERSION"
cp "$SRC"/dkms.conf "$SRC"/Makefile "$SRC"/*.c "$SRC"/*.h \
   "$STAGE/$NAME-$VERSION/"

if dkms status -m "$NAME" -v "$VERSION" 2>/dev/null | grep -q .; then
    dkms remove -m "$NAME" -v "$VERSION" --all >/dev/null
fi
rm -rf "/usr/src/$NAME-$VERSION"
dkms add "$STAGE/$NAME-$VERSION" >/dev/null

fail=0
for k in "${KERNELS[@]}"; do
    # dkms 3 keeps make.log beside the module (success) or in build/
    ok=1
    dkms build -m "$NAME" -v "$VERSION" -k "$k" >"$STAGE/dkms.out" 2>&1 \
        || ok=0
    log=$(ls -t "/var/lib/dkms/$NAME/$VERSION/$k"/*/log/make.log \
              "/var/lib/dkms/$NAME/$VERSION/build/make.log" 2>/dev/null \
          | head -n 1 || true)
    if [ "$ok" = 0 ]; then
        cat "$STAGE/dkms.out" >&2
        [ -n "$log" ] && cat "$log" >&2
        echo "build-kmod: dkms build failed for $k" >&2
        fail=1
        continue
    fi
    if [ -z "$log" ]; then
        echo "build-kmod: no make.log for $k: cannot check for warnings" >&2
        fail=1
        continue
    fi
    if grep -E -i 'warning:|error:' "$log" >&2; then
        echo "build-kmod: compiler warnings for $k (see above): failing" >&2
        fail=1
        continue
    fi
    ko=$(find "/var/lib/dkms/$NAME/$VERSION/$k" -name 'memmut_wss.ko*' \
         | head -n 1)
    [ -n "$ko" ] || { echo "build-kmod: no .ko for $k" >&2; fail=1; continue; }
    echo "built $ko"
    if [ "$INSTALL" = 1 ]; then
        dkms install -m "$NAME" -v "$VERSION" -k "$k"
    fi
done
exit $fail
