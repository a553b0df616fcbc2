#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build contrib/rdmacm-mux and its test client with gcc alone, outside the
# QEMU tree (the QEMU build has contrib/rdmacm-mux/meson.build).
#
# Usage: build.sh OUTDIR
#   OUTDIR/rdmacm-mux       the daemon
#   OUTDIR/mux-test         the test client (run-tests.sh)
# Environment: CFLAGS_EXTRA     added to the compiler flags (e.g. -fsanitize=)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUTDIR}
src=$top/contrib/rdmacm-mux

bash "$top/scripts/apt-setup.sh" gcc libibumad-dev >/dev/null
mkdir -p "$out"

# QEMU's warning set, so that the in-tree build stays clean too.
cflags=(-O2 -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
    -fno-strict-aliasing -fno-common -fwrapv -Werror
    -Wall -Wextra -Wempty-body -Wendif-labels -Wexpansion-to-defined
    -Wformat-security -Wformat-y2k -Wignored-qualifiers
    -Wimplicit-fallthrough=2 -Winit-self -Wmissing-format-attribute
    -Wmissing-prototypes -Wnested-externs -Wold-style-declaration
    -Wold-style-definition -Wredundant-decls -Wshadow=local
    -Wstrict-prototypes -Wtype-limits -Wundef -Wvla -Wwrite-strings)
# shellcheck disable=SC2206
extra=(${CFLAGS_EXTRA:-})

gcc "${cflags[@]}" "${extra[@]}" -o "$out/rdmacm-mux" \
    "$src/main.c" "$src/client.c" "$src/log.c" "$src/port.c" "$src/route.c" \
    -libumad
gcc "${cflags[@]}" "${extra[@]}" -I "$src" -o "$out/mux-test" \
    "$here/mux-test.c"
printf '[rdmacm-mux] built rdmacm-mux and mux-test in %s\n' "$out"
