#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# QEMU 10.0 needs meson >= 1.5; bookworm has 1.0, bookworm-backports newer.
set -euo pipefail
ver=$(meson --version 2>/dev/null || echo 0)
if ! printf '1.5.0\n%s\n' "$ver" | sort -V -C; then
    printf '[deps] meson %s is older than 1.5, installing it from bookworm-backports\n' "$ver"
    bash "$(dirname "$0")/apt-setup.sh" >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports meson >/dev/null ||
        { echo "[deps] error: cannot install meson from bookworm-backports" >&2; exit 1; }
fi
