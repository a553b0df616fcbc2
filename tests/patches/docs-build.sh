#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# QEMU's manual built from the tree the series was applied to, as its
# docs/meson.build builds it (sphinx-build -W: a warning fails), so that
# docs/system/devices/pvrdma.rst is seen rendered, in the toctree of
# "Device Emulation", and linked from removed-features.
#   docs-build.sh <build-dir>
# Needs Debian's python3-sphinx and python3-sphinx-rtd-theme.  Writes
# <build-dir>/patches-docs/manual (system/devices/pvrdma.html) and prints
# one "ok"/"not ok" line per check.
set -uo pipefail

build=$(cd "$1" && pwd)
tree=$build/patches-applied
out=$build/patches-docs
sphinx=/usr/bin/sphinx-build

if [ ! -x "$sphinx" ] || ! /usr/bin/python3 -c 'import sphinx_rtd_theme' 2>/dev/null; then
    echo "not ok 1 no sphinx-build (apt-get install python3-sphinx python3-sphinx-rtd-theme)"
    exit 1
fi
rm -rf "$out"
mkdir -p "$out"
version=$(cat "$tree/VERSION")
start=$SECONDS
if (cd "$tree" && env CONFDIR=/etc/qemu "$sphinx" -q -W -Dkerneldoc_werror=1 \
        -j 2 -Dversion="$version" -Drelease= -b html -d "$out/manual.p" \
        docs "$out/manual") >"$out/sphinx.log" 2>&1; then
    echo "ok 1 QEMU $version manual built with sphinx-build -W in $((SECONDS - start)) s"
else
    echo "not ok 1 QEMU $version manual: sphinx-build -W failed"
    tail -n 20 "$out/sphinx.log" | sed 's/^/  # /'
    exit 1
fi
page=$out/manual/system/devices/pvrdma.html
rc=0
if grep -q 'Paravirtual RDMA (pvrdma)' "$page" 2>/dev/null; then
    echo "ok 2 the page: ${page#"$build"/}"
else
    echo "not ok 2 no rendered page $page"
    rc=1
fi
if grep -q 'href="devices/pvrdma.html"' "$out/manual/system/device-emulation.html" &&
   grep -q 'system/devices/pvrdma.html' "$out/manual/about/removed-features.html"; then
    echo "ok 3 Device Emulation lists it, removed-features links to it"
else
    echo "not ok 3 device-emulation.html or removed-features.html does not link to the page"
    rc=1
fi
exit $rc
