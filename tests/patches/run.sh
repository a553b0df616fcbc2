#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane "patches": make patches writes the device as a git format-patch
# series against the QEMU of <build-dir> (10.0; 10.2 in build/v10.2); the
# series must apply with git am to a pristine tree (the same .orig.tar.xz,
# unpacked anew) and end with this project's files unchanged, QEMU's own
# scripts/checkpatch.pl must find no error and no warning in any patch, and
# docs/system/devices/pvrdma.rst must agree with docs/pvrdma.txt
# (docs-check.py).  With --prefixes (make check-slow's patches-build, or
# PATCHES_PREFIXES=1), QEMU's manual is built from the applied tree
# (docs-build.sh) and every prefix of the series is built (build-prefixes.sh);
# building the applied tree and running its qtests is patches-build's.
#   run.sh <project-dir> <build-dir> [--prefixes]
# Prints "ok N what" / "not ok N what" and "patches: N passed, N failed"
# ("patches-10.2: ..." on QEMU 10.2; PATCHES_LANE names the lane otherwise).
set -uo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
prefixes=${PATCHES_PREFIXES:-0}
# The lane: "patches" on 10.0, "patches-10.2" on 10.2 (by the QEMU source).
orig=$(ls "$build"/dl/qemu_*.orig.tar.xz 2>/dev/null | tail -n 1)
case ${orig##*/} in
qemu_10.0.*|'') lane=patches ;;
*) v=${orig##*/qemu_}; v=${v%%+*}; lane=patches-${v%.*} ;;
esac
lane=${PATCHES_LANE:-$lane}
[ "${3:-}" = --prefixes ] && prefixes=1
series=$build/patches/series
tree=$build/patches-applied
# shellcheck source=../tap.sh
. "$top/tests/tap.sh"

log=$build/patches.log
# No anonymous default: without AUTHOR, make patches says what to pass.
if env -u AUTHOR python3 "$top/scripts/make-patches.py" "$top" "$build" >"$log" 2>&1 ||
   ! grep -q 'AUTHOR="Your Name <you@example.org>"' "$log"; then
    tap_result FAIL "make patches without AUTHOR refuses and says what to pass" "$log"
else
    tap_result OK "make patches without AUTHOR refuses: $(tail -n 1 "$log" | cut -c1-70)"
fi
# The lane's identity (a reserved domain); users give their own.
author=${AUTHOR:-"pvrdma patches lane <patches-lane@pvrdma.invalid>"}
start=$SECONDS
if AUTHOR=$author python3 "$top/scripts/make-patches.py" "$top" "$build" >"$log" 2>&1; then
    tap_result OK "make patches: $(ls "$series" | wc -l) files in ${series#"$top"/} ($((SECONDS - start)) s)"
else
    tap_result FAIL "make patches" "$log"
    tap_summary "$lane"
    exit 0
fi

# One identity: every patch's From and Signed-off-by, the cover letter's From.
ident=OK
for p in "$series"/*.patch; do
    grep -qxF "From: $author" "$p" || { echo "$p: From is not $author" >>"$log"; ident=FAIL; }
    case ${p##*/} in
    0000-*) ;;
    *) [ "$(grep -c '^Signed-off-by: ' "$p")" = 1 ] &&
           grep -qxF "Signed-off-by: $author" "$p" ||
           { echo "$p: Signed-off-by is not only $author" >>"$log"; ident=FAIL; } ;;
    esac
done
tap_result $ident "every patch and the cover letter from and signed off by $author" "$log"

rm -rf "$tree"
mkdir -p "$tree"
tar -xJf "$orig" -C "$tree" --strip-components=1
git_id=(-c user.name=check -c user.email=check@localhost)
(cd "$tree" && git init -q && git add -A && git "${git_id[@]}" commit -q -m base) >"$log" 2>&1
patches=()
for p in "$series"/*.patch; do
    case ${p##*/} in 0000-*) ;; *) patches+=("$p") ;; esac
done
if (cd "$tree" && git "${git_id[@]}" am -q "${patches[@]}") >"$log" 2>&1; then
    tap_result OK "git am of ${#patches[@]} patches onto a pristine $(basename "$orig")"
else
    tap_result FAIL "git am onto a pristine $(basename "$orig")" "$log"
fi

# The series ends with the project's files as they are.
same=OK
: >"$log"
for d in hw/rdma contrib/rdmacm-mux qapi/pvrdma.json \
         docs/system/devices/pvrdma.rst tests/unit/*.[ch]; do
    diff -r "$top/$d" "$tree/$d" >>"$log" 2>&1 || same=FAIL
done
for d in "$top"/tests/qtest/pvrdma-*; do
    diff "$d" "$tree/${d#"$top"/}" >>"$log" 2>&1 || same=FAIL
done
tap_result $same "the applied tree holds hw/rdma, contrib/rdmacm-mux, the QAPI schema, the docs page and the tests unchanged" "$log"
# The lanes' device sets, which the series does not carry, go in untracked:
# patches-build builds this tree with scripts/build-qemu.sh.
for m in "$top"/configs/devices/*/pvrdma.mak; do
    mkdir -p "$(dirname "$tree/${m#"$top"/}")"
    cp "$m" "$tree/${m#"$top"/}"
done

for p in "${patches[@]}"; do
    out=$build/patches-checkpatch-${p##*/}.log
    (cd "$tree" && perl scripts/checkpatch.pl "$p") >"$out" 2>&1
    tot=$(grep -E '^total: [0-9]+ errors' "$out" | tail -1)
    e=$(echo "$tot" | sed -nE 's/^total: ([0-9]+) errors.*/\1/p')
    w=$(echo "$tot" | sed -nE 's/.* ([0-9]+) warnings.*/\1/p')
    if [ "$e" = 0 ] && [ "$w" = 0 ]; then
        tap_result OK "checkpatch ${p##*/}: 0 errors, 0 warnings"
    else
        grep -E -A3 '^(ERROR|WARNING)' "$out" >"$out.errors"
        tap_result FAIL "checkpatch ${p##*/}: ${tot:-no verdict}" "$out.errors"
    fi
done

# The system's Python: Debian's python3-docutils parses the page.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
if "$py" "$top/tests/patches/docs-check.py" "$top" >"$log" 2>&1; then
    tap_result OK "$(tail -n 1 "$log")"
else
    tap_result FAIL "docs/system/devices/pvrdma.rst against docs/pvrdma.txt" "$log"
fi

if [ "$prefixes" = 1 ]; then
    # QEMU's manual, with the page in it (sphinx-build -W)
    bash "$top/tests/patches/docs-build.sh" "$build" >"$log" 2>&1
    rc=$?
    grep -v '^ok ' "$log" | sed 's/^/  # /'
    if [ $rc = 0 ]; then
        tap_result OK "docs build: $(sed -n 's/^ok 1 //p' "$log"); $(sed -n 's/^ok 2 the page: //p' "$log")"
    else
        tap_result FAIL "docs build" "$log"
    fi
    start=$SECONDS
    bash "$top/tests/patches/build-prefixes.sh" "$top" "$build" >"$log" 2>&1
    rc=$?
    grep -v '^\[prefixes\]' "$log" | sed 's/^/  # /'
    if [ $rc = 0 ]; then
        tap_result OK "every prefix of the series builds: $(grep -c '^ok ' "$log") trees in $((SECONDS - start)) s"
    else
        tap_result FAIL "every prefix of the series builds: $(grep -c '^not ok ' "$log") of $(grep -c 'ok ' "$log") failed" "$log"
    fi
fi
tap_summary "$lane"
