#!/bin/bash
# Install what memmut's functional tests need on a Debian 12 machine:
# QEMU + libvirt (real guests), the Debian kernel the guests boot, busybox and
# gcc for the guest initramfs, nbdkit and fio (swap-disk baselines),
# RabbitMQ and PostgreSQL (control plane), python3-dev (uWSGI, built by
# pip for the keystone and memmut-api tests), iproute2 (ip and tc: the
# multi-host test bed in network namespaces, tests/harness/netns.py).
# Idempotent.
#
# It needs root: run it as root, or as a user with sudo (it re-executes
# itself through sudo). It STOPS the system's RabbitMQ, PostgreSQL and
# libvirtd services if they run: the tests start private instances.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "tools/test-setup.sh: run as root (it installs Debian" \
            "packages), or install sudo" >&2
        exit 1
    fi
    # HOME kept: the rustup toolchain in ~/.cargo builds memstore
    exec sudo --preserve-env=HOME -- bash "$0" "$@"
fi

PACKAGES=(
    qemu-system-x86 qemu-utils qemu-block-extra
    libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev
    pkg-config libssl-dev linux-image-amd64 busybox-static gcc libc6-dev
    nbdkit fio rabbitmq-server postgresql dkms linux-headers-amd64
    python3-dev redis-server redis-tools iproute2 sqlite3
)

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' \
        || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian starts these services at install time where it can; the tests run
# private instances on their own ports, so stop any that run (the system's
# own instances included: say so).
for svc in rabbitmq-server postgresql libvirtd redis-server; do
    if service "$svc" status >/dev/null 2>&1; then
        echo "Stopping the system's $svc (the tests run their own)"
    fi
    service "$svc" stop >/dev/null 2>&1 || true
done
python3 -m pip install -q 'tox>=4'

# memmut-memstore (Rust, memstore/): build the release binary the tests and
# the Python side use (memstore/target/release/memmut-memstore) and run the
# crate's own tests.  Its crates (serde_json, libc, ...) need the Rust
# version in memstore/Cargo.toml's rust-version, newer than Debian 12's
# cargo: the rustup toolchain (on PATH or in ~/.cargo) is used.
MEMSTORE_DIR="$(cd "$(dirname "$0")/.." && pwd)/memstore"
NEED=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' "$MEMSTORE_DIR/Cargo.toml")
CARGO=
FOUND=
for c in "$(command -v cargo || true)" "$HOME/.cargo/bin/cargo"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    v=$("$c" --version 2>/dev/null | awk '{print $2}')
    FOUND="$FOUND $c ($v)"
    if [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$NEED" "$v" | sort -V | head -n1)" = "$NEED" ]; then
        CARGO=$c
        break
    fi
done
if [ -z "$CARGO" ]; then
    echo "tools/test-setup.sh: memstore/ needs cargo >= $NEED; found:${FOUND:- none}." >&2
    echo "Install the stable Rust toolchain with rustup, then run this again." >&2
    exit 1
fi
echo "Building memmut-memstore with $("$CARGO" --version)"
"$CARGO" build --release --locked --manifest-path "$MEMSTORE_DIR/Cargo.toml"
"$CARGO" test --release --locked --manifest-path "$MEMSTORE_DIR/Cargo.toml"
echo "test-setup: done"
