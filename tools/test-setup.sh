#!/bin/bash
# Install what memmut's functional tests need on a Debian 12 machine:
# QEMU + libvirt (real guests), the Debian kernel the guests boot, busybox and
# gcc for the guest initramfs, nbdkit and fio (swap-disk baselines),
# RabbitMQ and PostgreSQL (control plane). Run as root. Idempotent.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
    echo "tools/test-setup.sh: run as root (it installs Debian packages)" >&2
    exit 1
fi

PACKAGES=(
    qemu-system-x86 qemu-utils qemu-block-extra
    libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients libvirt-dev
    pkg-config linux-image-amd64 busybox-static gcc libc6-dev
    nbdkit fio rabbitmq-server postgresql dkms linux-headers-amd64
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
# private instances on their own ports, so stop any the packages started.
for svc in rabbitmq-server postgresql libvirtd; do
    service "$svc" stop >/dev/null 2>&1 || true
done
python3 -m pip install -q 'tox>=4'

# memmut-memstore (Rust, memstore/): build the release binary the tests and
# the Python side use (memstore/target/release/memmut-memstore) and run the
# crate's own tests.  The crate needs Rust >= 1.63 and only libc: a rustup
# toolchain (on PATH or in ~/.cargo) is used when there is one, else
# Debian's cargo.
CARGO=$(command -v cargo || true)
if [ -z "$CARGO" ] && [ -x "$HOME/.cargo/bin/cargo" ]; then
    CARGO=$HOME/.cargo/bin/cargo
fi
if [ -z "$CARGO" ]; then
    echo "Installing: cargo (Debian)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends cargo
    CARGO=/usr/bin/cargo
fi
MEMSTORE_DIR="$(cd "$(dirname "$0")/.." && pwd)/memstore"
echo "Building memmut-memstore with $("$CARGO" --version)"
"$CARGO" build --release --locked --manifest-path "$MEMSTORE_DIR/Cargo.toml"
"$CARGO" test --release --locked --manifest-path "$MEMSTORE_DIR/Cargo.toml"
echo "test-setup: done"
