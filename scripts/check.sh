#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run the test lanes and sum them up (make check).
#   check.sh <project-dir> <build-dir> [lane...]
# Lanes: abi, unit (modules built outside QEMU), qtest (plain build),
# qtest-asan (AddressSanitizer and LeakSanitizer build), guest (real Debian
# guest with the unmodified vmw_pvrdma driver; guest-6.12: the same on
# Debian's 6.12 kernel, build/guest-6.12; guest-driver: the commands and
# refusals of contrib/pvrdma-guest-driver), guest-migration (that guest's
# RDMA programs while the VM migrates to a new QEMU and back, three times
# each: tests/guest/migrate.py, lanes "migration" and "guest-migration"),
# two-guests (two guests, each its own QEMU, on one -netdev dgram link:
# the data-path programs between the two devices over RoCE v2,
# tests/guest/two-guests.sh), interop (the same with Linux rxe in the other
# guest: pvrdma as client, lane "interop-client", and as server, lane
# "interop-server"), workloads (librdmacm's rdma_server/rdma_client, rcopy,
# riostream, qperf, libfabric's fi_pingpong, msg and rdm, UCX's UCP and
# Open MPI over UCX, iSER (LIO target, open-iscsi initiator), between two
# pvrdma guests and with rxe both ways, and NFSv3 and NFSv4.2 over RDMA with
# 64 MiB where pvrdma is the server, lanes "workloads-pvrdma",
# "workloads-client", "workloads-server"), scale (1,000 RDMA-CM
# connections between two pvrdma guests, each with a checked message, an
# ib_write_bw alongside while all are open, QEMU's memory per connection:
# tests/guest/cm-scale.c), jumbo (both guests' vmxnet3 at MTU 9000, so RoCE's
# path MTU is 4096: pvrdma to pvrdma, and with rxe both ways, lanes
# "jumbo-pvrdma", "jumbo-client", "jumbo-server"), stream (the link as
# -netdev stream: pvrdma to pvrdma over TCP, lane "stream-pvrdma", and
# rxe to pvrdma over a UNIX socket, lane "stream-rxe"), lossy (the RC programs
# of those pairs through a relay that drops 3%, duplicates, reorders and
# delays 2% of the RoCE frames:
# pvrdma to pvrdma, with rxe both ways, and rxe to rxe, lanes
# "lossy-pvrdma", "lossy-client", "lossy-server", "lossy-rxe"),
# peer-migration (guest A, pvrdma, migrated to a new QEMU and back during
# ibv_rc_pingpong, ib_write_bw, rping and NVMe over RDMA (A the host, B
# the target) with guest B: B on pvrdma, lane
# "peer-migration-pvrdma", and on rxe, lane "peer-migration-rxe"),
# rxe (lane 3: in a TCG host
# VM with Linux Soft-RoCE rxe0, the rdmacm-mux tests, lane "mux", and the
# qtests on ibdev=rxe0, lane "qtest-rxe"), fuzz (the device's libFuzzer
# build: every committed input replayed, then a minute of fuzzing;
# PVRDMA_CHECK_FUZZ_SECONDS sets it, make fuzz fuzzes for longer) and
# mux-fuzz (rdmacm-mux's fuzz corpus replayed), install (make install into
# a DESTDIR, the installed QEMU runs, make uninstall), libvirt (that
# installed tree run by Debian's libvirtd 9.0 from domain XML: virsh start,
# the guest's RDMA ping-pong, save/restore, virsh shutdown), patches (make patches
# applies to a pristine QEMU 10.0 and passes its checkpatch.pl), hosts
# (scripts/build-hosts.sh: QEMU and the qtests cross-built for s390x, run
# under qemu-user, lane "hosts-s390x", and for i386, run natively, lane
# "hosts-i386"), arm64 (an arm64 Debian guest, tests/guest/build-guest-arm64.sh,
# on qemu-system-aarch64 -M virt with the device: its data-path programs on
# the one device, lane "guest-arm64", and with an x86 guest over the link,
# as client, lane "arm64-x86", and as server, lane "x86-arm64"), v10.2 (QEMU
# 10.2.2 from Debian sid's source in <build-dir>/v10.2, its plain build,
# and on it lanes "qtest-10.2", "guest-10.2" and "two-guests-10.2"; with QEMU_VERSION=10.2, <build-dir> is already
# 10.2's and the default lanes are abi, unit, qtest, qtest-asan, guest and
# two-guests), patches-10.2 (make patches on QEMU 10.2.2, as lane patches; after
# v10.2, which unpacks its source).  make check-slow: patches-build (every
# prefix of the 10.0 series built and QEMU's manual built from the whole
# series, tests/patches/run.sh --prefixes, lane "patches-prefixes"; then the
# qtests of that last build run on it, lane "patches-build"), v10.2-asan
# (10.2's ASan build and the qtests on it, lane "qtest-asan-10.2": its cold
# build is 4 to 5 minutes, and lane qtest-asan runs them under ASan on
# 10.0), workloads-slow
# (NFSv3 and NFSv4.2 over RDMA, 64 MiB written and read back, a pvrdma
# client and an rxe server, lane "workloads-slow-client": 4 to 7 minutes,
# as each side's bursts overrun the other QEMU's socket, docs/pvrdma.txt
# 4.2; make check's workloads lane runs the 64 MiB where pvrdma is the
# server, in about a minute), slow (tests/hostvm/slow.sh) and
# mingw (scripts/build-mingw.sh --wine: qemu-system-x86_64.exe for Windows with
# the device, glib and its needs cross-built from Debian's sources, checked
# for the device's symbols and run under wine; too slow cold for make check).
# Each lane prints
# "<lane>: N passed, N failed"; a progress line precedes each step; at the
# end a table of the lanes (passed, failed, skipped, seconds), and the last
# line is the sum over all lanes, "N passed, N failed".
set -uo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
shift 2
lanes=("$@")
if [ ${#lanes[@]} = 0 ] && [ "${QEMU_VERSION:-10.0}" = 10.2 ]; then
    # make check QEMU_VERSION=10.2: the lanes that run on 10.2's build
    lanes=(abi unit qtest qtest-asan guest two-guests)
fi
[ ${#lanes[@]} -gt 0 ] || lanes=(abi unit qtest qtest-asan fuzz mux-fuzz install libvirt patches hosts guest guest-6.12 guest-driver guest-migration two-guests interop workloads scale jumbo stream lossy peer-migration rxe arm64 v10.2 patches-10.2)

total_pass=0
total_fail=0
# What check.sh asserts on the console of the migrated guest
migration_checks=boot,modules,net,probe,rc-pingpong,ib-write-bw,ib-read-bw
migration_checks+=,ib-send-bw,ib-atomic-bw,rping,nvmeof-rdma,device-errors
migration_checks+=,kernel-clean,shutdown
# The programs of the two-guests lane: two-guests.sh's default data-path
# list and UCX's ucx_perftest over rc_verbs (UCX puts flow label ~0 in
# its QPs' GRH: issue 27).  Not in the interop lanes: ucx_perftest's
# server takes the client's device name (-d), which rxe does not have.
two_programs=ibv_rc_pingpong,ibv_ud_pingpong,ib_write_bw,ib_read_bw,ib_atomic_bw
two_programs+=,ib_send_bw,ib_send_lat,ib_write_lat,rping
two_programs+=,ucx_put_bw,ucx_get,ucx_fadd
# Issue 27's workloads (tests/guest/README.md): each judged on the program's
# own output and data check; IPv4 (rcopy, qperf and the MPI launch take no
# IPv6 address).  UCX at the UCP level (ucx_perftest's tag, put and get,
# our ucp-pattern.c) over rc_verbs and ud_verbs, and Open MPI over UCX with
# two ranks in each guest (tests/guest/mpi-check.c: ring, alltoall with a
# checksum, bandwidth)
workload_programs=rdma_server,rcopy,riostream,riostream_async,qperf,fi_pingpong,fi_pingpong_rdm
workload_programs+=,ucp_tag_lat_rc,ucp_tag_bw_rc,ucp_put_bw_rc,ucp_get_rc
workload_programs+=,ucp_tag_lat_ud,ucp_tag_bw_ud,ucp_put_bw_ud,ucp_get_ud
workload_programs+=,ucp_pattern_rc,ucp_pattern_ud,mpi_rc,mpi_ud
# SMB Direct: a SKIP that names the kernel options Debian leaves unset
workload_programs+=,smb_direct
# iSER: LIO's isert target and open-iscsi's ib_iser, 8 MiB written through
# the disk and read back (a pvrdma target runs on one CPU: docs/pvrdma.txt 4.5)
workload_programs+=,iser
# NFSv3 and NFSv4.2 over RDMA (proto=rdma, port 20049), 16 MiB per version
two_programs+=,nfs_rdma:16777216
# The arm64 guest's scenarios on its one device: lane guest's, but not
# reload: the unmodified vmw_pvrdma crashes when the response interrupt of
# the previous instance's last command, which the GIC still holds pending,
# reaches the new instance before its first command (docs/pvrdma.txt 4.x).
arm64_checks=boot,modules,net,probe,devinfo,gid-roce-v2,device-errors,kernel-clean,shutdown
arm64_checks+=,rc-pingpong,rc-pingpong-4m,ud-pingpong,srq-pingpong,ib-send-bw,ib-send-bw-ud
arm64_checks+=,ib-write-bw,ib-read-bw,ib-atomic-bw,ib-send-lat,ib-send-lat-ud,ib-write-lat
arm64_checks+=,ib-read-lat,rping,nvmeof-rdma
# ... and between it and an x86 guest, each way
arm64_programs=ibv_rc_pingpong,ibv_ud_pingpong,ib_write_bw,ib_read_bw,ib_atomic_bw,ib_send_lat,rping
logdir=$build/logs
mkdir -p "$logdir"

# The table printed at the end: one row per lane sum.
rows=()
step_start=$SECONDS
step_rows=0

# Adds the counts of a lane's "<lane>: N passed, N failed" line, and its
# row: skipped are the passed TAP tests marked "# SKIP" in the lane's log
# (none with a third argument "noskip": the log is another lane's too);
# seconds are the step's (shown once when a step sums several lanes).
count() {
    local lane=$1 out=$2 line p f k=0 secs
    line=$(grep -E "^$lane: [0-9]+ passed, [0-9]+ failed" "$out" | tail -n 1)
    secs=$((SECONDS - step_start))
    [ $step_rows = 0 ] || secs='"'
    step_rows=$((step_rows + 1))
    if [ -z "$line" ]; then
        echo "$lane: 0 passed, 1 failed (the lane printed no summary, see $out)"
        total_fail=$((total_fail + 1))
        rows+=("$lane 0 1 0 $secs")
        return
    fi
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    [ "${3:-}" = noskip ] || k=$(grep -cE '^ *ok [0-9]+ .*# SKIP' "$out" || true)
    total_pass=$((total_pass + p))
    total_fail=$((total_fail + f))
    rows+=("$lane $p $f $k $secs")
}

# pair LANE DIR SHOWN CLIENT-DEV SERVER-DEV [OPTIONS...]: one run of
# tests/guest/two-guests.sh as lane LANE, logs in build/two-guests/DIR;
# besides the TAP results and their evidence, the log lines matching the
# ERE SHOWN (none if empty) are shown.
pair() {
    local lane=$1 dir=$2 shown=$3 cdev=$4 sdev=$5
    shift 5
    bash "$top/tests/guest/two-guests.sh" --no-build --client-dev "$cdev" \
        --server-dev "$sdev" --log-dir "$build/two-guests/$dir" "$@" 2>&1 |
        sed "s/^two-guests: /$lane: /" | tee "$logdir/$lane.log" |
        grep -E "^(not )?ok|^  #${shown:+|$shown}"
    count "$lane" "$logdir/$lane.log"
}

hms() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# qtest output is TAP; sanitizer reports count as failures too (UBSan:
# those in hw/rdma).
run_qtest() {     # run_qtest LANE QEMU [BUILD-DIR-OF-THE-TESTS]
    local lane=$1 qemu=$2 tdir=${3:-$build/qemu} out=$logdir/$1.log p=0 f=0 san t planned tp tf
    : > "$out"
    for t in pvrdma-test pvrdma-datapath-test pvrdma-migration-test \
             pvrdma-wire-test; do
        echo "== $lane: tests/qtest/$t on $qemu"
        QTEST_QEMU_BINARY=$qemu \
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=66 \
        UBSAN_OPTIONS=print_stacktrace=1 \
        LSAN_OPTIONS=suppressions=$top/tests/qtest/lsan.supp:print_suppressions=0 \
            timeout 1200 "$tdir/tests/qtest/$t" --tap -k > "$out.$t" 2>&1
        cat "$out.$t" >> "$out"
        grep -E '^(ok|not ok)' "$out.$t" | sed 's/^/  /'
        tp=$(grep -c '^ok' "$out.$t")
        tf=$(grep -c '^not ok' "$out.$t")
        # A crash ends a run early: tests that never ran are failures too.
        planned=$(grep -E '^1\.\.[0-9]+' "$out.$t" | head -1 | cut -d. -f3)
        if [ -z "$planned" ]; then
            tf=$((tf + 1))
        elif [ $((tp + tf)) -lt "$planned" ]; then
            tf=$((planned - tp))
        fi
        p=$((p + tp))
        f=$((f + tf))
    done
    san=$(grep -c 'ERROR: \(Address\|Leak\|UndefinedBehavior\)Sanitizer' "$out")
    if [ "$san" -gt 0 ]; then
        echo "  $san sanitizer report(s), see $out"
        grep -A12 'ERROR: .*Sanitizer' "$out" | head -40 | sed 's/^/  # /'
    fi
    # UBSan reports and goes on: undefined behaviour in the device's code
    # fails the lane; elsewhere in QEMU it is shown, not counted.
    ub=$(grep 'runtime error:' "$out" | grep -c 'hw/rdma/' || true)
    if grep -q 'runtime error:' "$out"; then
        echo "  undefined behaviour reported ($ub in hw/rdma), see $out"
        grep 'runtime error:' "$out" | sort | uniq -c | head -10 | sed 's/^/  # /'
    fi
    san=$((san + ub))
    echo "$lane: $p passed, $((f + san)) failed" | tee -a "$out"
    count "$lane" "$out"
}

# A lane that is one script: its log, the lines worth showing, its sum.
run_script() {
    local lane=$1 show=$2 what=$3 out=$logdir/$1.log
    shift 3
    echo "== $lane: $what"
    bash "$@" > "$out" 2>&1
    grep -E "$show" "$out" | grep -v "^$lane:" | sed 's/^/  /'
    grep -E "^$lane:" "$out"
    count "$lane" "$out"
}

check_start=$SECONDS
n=0
for lane in "${lanes[@]}"; do
    n=$((n + 1))
    echo "[check] step $n of ${#lanes[@]}: $lane (started after $(hms $((SECONDS - check_start))))"
    step_start=$SECONDS
    step_rows=0
    case $lane in
    abi)
        run_script abi '^(FAIL|abi:|checked)' \
            "pvrdma_abi.h against the kernel's headers" \
            "$top/tests/abi/pvrdma-abi-check.sh" "$build/abi"
        ;;
    unit)
        run_script unit '^(ok|not ok)' "hw/rdma modules outside QEMU" \
            "$top/tests/unit/run.sh" "$build/unit"
        ;;
    qtest)
        run_qtest qtest "$build/qemu/qemu-system-x86_64"
        ;;
    rxe)
        echo "== rxe: host VM with Soft-RoCE rxe0: rdmacm-mux and the qtests on ibdev=rxe0"
        bash "$top/tests/rdmacm-mux/build.sh" "$build/rdmacm-mux" \
            > "$logdir/rxe.log" 2>&1
        bash "$top/tests/hostvm/run-hostvm.sh" --timeout 2400 -- \
            "$top/tests/hostvm/lane3.sh" "$build/rdmacm-mux" "$build/qemu" \
            >> "$logdir/rxe.log" 2>&1
        grep -E '^(ok|not ok)|^\[hostvm\] error' "$logdir/rxe.log" | sed 's/^/  /'
        grep -E '^(mux|qtest-rxe):' "$logdir/rxe.log"
        count mux "$logdir/rxe.log" noskip      # the skips are qtest-rxe's
        count qtest-rxe "$logdir/rxe.log"
        ;;
    qtest-asan)
        run_qtest qtest-asan "$build/qemu-asan/qemu-system-x86_64"
        ;;
    guest)
        echo "== guest: Debian guest, unmodified vmw_pvrdma, on the device"
        QEMU=$build/qemu/qemu-system-x86_64 GUEST_DIR=$build/guest \
            bash "$top/tests/guest/check.sh" --datapath 2>&1 |
            tee "$logdir/guest.log"
        count guest "$logdir/guest.log"
        ;;
    guest-6.12)
        echo "== guest-6.12: the same guest on Debian's 6.12 kernel (linux-image-6.12-amd64)"
        QEMU=$build/qemu/qemu-system-x86_64 GUEST_DIR=$build/guest-6.12 \
            GUEST_KERNEL=linux-image-6.12-amd64 \
            bash "$top/tests/guest/check.sh" --datapath 2>&1 |
            sed 's/^guest: /guest-6.12: /' | tee "$logdir/guest-6.12.log"
        count guest-6.12 "$logdir/guest-6.12.log"
        ;;
    guest-migration)
        echo "== guest-migration: the guest's RDMA programs while the VM migrates"
        mlog=$build/guest/logs/migration.log
        bash "$top/tests/guest/build-guest.sh" "$build/guest" \
            > "$logdir/guest-migration.log" 2>&1
        QEMU=$build/qemu/qemu-system-x86_64 GUEST_DIR=$build/guest \
            python3 "$top/tests/guest/migrate.py" --test probe,migration \
            --log "$mlog" 2>>"$logdir/guest-migration.log" |
            tee -a "$logdir/guest-migration.log"
        GUEST_DIR=$build/guest bash "$top/tests/guest/check.sh" \
            --console "$mlog" --tests "$migration_checks" 2>&1 |
            sed 's/^guest: /guest-migration: /' |
            tee -a "$logdir/guest-migration.log"
        count migration "$logdir/guest-migration.log"
        count guest-migration "$logdir/guest-migration.log"
        ;;
    two-guests)
        echo "== two-guests: pvrdma to pvrdma over RoCE v2, two QEMUs on one link"
        bash "$top/tests/guest/two-guests.sh" --client-dev pvrdma \
            --server-dev pvrdma --log-dir "$build/two-guests/pvrdma-pvrdma" \
            --programs "$two_programs" \
            2>&1 | tee "$logdir/two-guests.log" | grep -E '^(not )?ok|^  #'
        count two-guests "$logdir/two-guests.log"
        ;;
    interop)
        echo "== interop: pvrdma and Linux rxe over RoCE v2, both ways"
        pair interop-client pvrdma-rxe '' pvrdma rxe
        pair interop-server rxe-pvrdma '' rxe pvrdma
        ;;
    workloads)
        echo "== workloads: librdmacm's programs, rsockets, qperf, libfabric, UCX, Open MPI, iSER and NFS between two guests, pvrdma and rxe"
        for p in "pvrdma pvrdma pvrdma" "client pvrdma rxe" "server rxe pvrdma"; do
            read -r name cdev sdev <<<"$p"
            progs=$workload_programs t=120
            # NFS's 64 MiB, pvrdma the server: under a minute here; pvrdma
            # the client of an rxe server: 4 to 7 minutes, lane
            # workloads-slow (docs/pvrdma.txt 4.2)
            [ "$name" = client ] || progs+=,nfs_rdma:67108864 t=300
            pair "workloads-$name" "workloads-$cdev-$sdev" '' "$cdev" "$sdev" --gids ipv4 \
                --timeout "$t" --programs "$progs"
        done
        ;;
    workloads-slow)
        echo "== workloads-slow: NFSv3 and NFSv4.2 over RDMA, 64 MiB, a pvrdma client and an rxe server"
        # (make check-slow has built no guest before this lane)
        if ! bash "$top/tests/guest/build-guest.sh" "$build/guest" > "$logdir/workloads-slow-build.log" 2>&1; then
            tail -n 15 "$logdir/workloads-slow-build.log" | sed 's/^/    /'
            echo "workloads-slow: 0 passed, 1 failed (no guest, see $logdir/workloads-slow-build.log)"
            total_fail=$((total_fail + 1))
            rows+=("workloads-slow 0 1 0 $((SECONDS - step_start))")
            continue
        fi
        pair workloads-slow-client workloads-slow-pvrdma-rxe '' pvrdma rxe --gids ipv4 \
            --timeout 900 --programs nfs_rdma:67108864
        ;;
    scale)
        # issue 24's short form: 1,000 connections fit the default
        # dev-caps-max-qp (1024); make bench runs 10,000
        echo "== scale: 1,000 RDMA-CM connections between two pvrdma guests, each with a checked message, ib_write_bw alongside (tests/guest/cm-scale.c)"
        pair scale scale-pvrdma-pvrdma '^# (cm_scale|peak own)' pvrdma pvrdma --gids ipv4 \
            --timeout 240 --programs cm_scale:1000:200
        ;;
    jumbo)
        echo "== jumbo: vmxnet3 MTU 9000, RoCE v2 path MTU 4096, pvrdma with pvrdma and with rxe"
        for p in "pvrdma pvrdma pvrdma" "client pvrdma rxe" "server rxe pvrdma"; do
            read -r name cdev sdev <<<"$p"
            pair "jumbo-$name" "jumbo-$cdev-$sdev" '' "$cdev" "$sdev" --mtu 9000 \
                --programs ib_write_bw,ib_read_bw,ib_send_bw,ib_atomic_bw,ibv_ud_pingpong,rping
        done
        ;;
    stream)
        echo "== stream: the link as -netdev stream, over TCP (pvrdma to pvrdma) and over a UNIX socket (rxe to pvrdma)"
        for p in "pvrdma stream pvrdma pvrdma" "rxe unix rxe pvrdma"; do
            read -r name link cdev sdev <<<"$p"
            pair "stream-$name" "stream-$link-$cdev-$sdev" '' "$cdev" "$sdev" --link "$link" \
                --programs ibv_rc_pingpong,ibv_ud_pingpong,ib_write_bw,ib_read_bw,ib_send_lat,rping
        done
        ;;
    lossy)
        echo "== lossy: RC programs through a relay that loses, duplicates, reorders and delays frames"
        for p in "pvrdma pvrdma pvrdma" "client pvrdma rxe" "server rxe pvrdma" "rxe rxe rxe"; do
            read -r name cdev sdev <<<"$p"
            pair "lossy-$name" "lossy-$cdev-$sdev" '^# (relay|guest [AB] )' "$cdev" "$sdev" \
                --gids ipv4 --programs ibv_rc_pingpong,rping,ib_write_bw,ib_read_bw,ib_send_bw \
                --lossy 7:0.03:0.02:0.02:0.02
        done
        ;;
    peer-migration)
        echo "== peer-migration: guest A migrates twice during each RDMA program with guest B"
        for sdev in pvrdma rxe; do
            # NVMe over RDMA with an rxe target too: the target's READs of
            # the host's buffers are paced once one lost its tail
            # (docs/pvrdma.txt 5.2); 6 rounds take rxe up to 100 s here
            progs=ibv_rc_pingpong:4096:10000,ib_write_bw:65536:6000,rping:64:3000
            progs+=,nvmeof_rdma::6
            pair "peer-migration-$sdev" "migrate-pvrdma-$sdev" '^# (relay|guest B |migration: )' \
                pvrdma "$sdev" --gids ipv4 --migrate 1 --timeout 180 --programs "$progs"
        done
        ;;
    hosts)
        echo "== hosts: the device's qtests on a big-endian (s390x) and a 32-bit (i386) host"
        for arch in s390x i386; do
            run_script "hosts-$arch" '^(  [a-z-]+: [0-9]+ passed|  not ok|    # )' \
                "cross-built for $arch, run $([ $arch = s390x ] && echo 'under qemu-user' || echo natively)" \
                "$top/scripts/build-hosts.sh" "$top" "$build" "$arch" --run
            step_rows=0 step_start=$SECONDS
        done
        ;;
    arm64)
        echo "== arm64: an arm64 Debian guest on qemu-system-aarch64 -M virt, alone and with an x86 guest"
        alog=$build/guest-arm64/logs/lane.log
        blog=$logdir/arm64-build.log
        # A failed build is shown (its log is not in CI's output) and
        # counted once, rather than as every check of a guest that is not
        # there.
        if ! { bash "$top/tests/guest/build-guest-arm64.sh" "$build/guest-arm64" &&
               bash "$top/tests/guest/build-guest.sh" "$build/guest"; } > "$blog" 2>&1; then
            echo "  the guests' build failed, its last lines ($blog):"
            tail -n 15 "$blog" | sed 's/^/    /'
            echo "arm64: 0 passed, 1 failed (no guests, see $blog)"
            total_fail=$((total_fail + 1))
            rows+=("arm64 0 1 0 $((SECONDS - step_start))")
            continue
        fi
        QEMU=$build/qemu/qemu-system-aarch64 GUEST_DIR=$build/guest-arm64 \
            bash "$top/tests/guest/run-guest.sh" --no-build --quiet --log "$alog" --timeout 900 \
            --test probe,devinfo,gids,datapath --append "pvrdma.timeout=30 pvrdma.iters=100" \
            2>>"$logdir/arm64-build.log"
        GUEST_DIR=$build/guest-arm64 bash "$top/tests/guest/check.sh" \
            --console "$alog" --tests "$arm64_checks" 2>&1 |
            sed 's/^guest: /guest-arm64: /' | tee "$logdir/guest-arm64.log"
        count guest-arm64 "$logdir/guest-arm64.log"
        step_rows=0 step_start=$SECONDS
        pair arm64-x86 arm64-x86 '' pvrdma pvrdma --client-arch arm64 --programs "$arm64_programs"
        step_rows=0 step_start=$SECONDS
        pair x86-arm64 x86-arm64 '' pvrdma pvrdma --server-arch arm64 --programs "$arm64_programs"
        ;;
    v10.2)
        echo "== v10.2: QEMU 10.2.2 (Debian sid's source): builds, qtests, guest, two guests"
        v=$build/v10.2
        if { QEMU_VERSION=10.2 bash "$top/scripts/qemu-tree.sh" "$top" "$v" &&
             QEMU_AARCH64_BUILD=0 QEMU_SRC=$v/qemu-src \
                 bash "$top/scripts/build-qemu.sh" "$top" "$v/qemu"
           } > "$logdir/v10.2-build.log" 2>&1; then
            grep -E '^\[qemu-tree\] qemu|^\[build\] done' "$logdir/v10.2-build.log" |
                sed 's/^/  /'
            run_qtest qtest-10.2 "$v/qemu/qemu-system-x86_64" "$v/qemu"
            step_rows=0 step_start=$SECONDS
            QEMU=$v/qemu/qemu-system-x86_64 GUEST_DIR=$build/guest \
                bash "$top/tests/guest/check.sh" --datapath 2>&1 |
                sed 's/^guest: /guest-10.2: /' | tee "$logdir/guest-10.2.log"
            count guest-10.2 "$logdir/guest-10.2.log"
            step_rows=0 step_start=$SECONDS
            QEMU=$v/qemu/qemu-system-x86_64 \
                bash "$top/tests/guest/two-guests.sh" --client-dev pvrdma \
                --server-dev pvrdma --log-dir "$build/two-guests/v10.2" \
                --programs "$two_programs" 2>&1 |
                sed 's/^two-guests: /two-guests-10.2: /' |
                tee "$logdir/two-guests-10.2.log" | grep -E '^(not )?ok|^  #'
            count two-guests-10.2 "$logdir/two-guests-10.2.log"
        else
            grep -E 'error' "$logdir/v10.2-build.log" | head -20 | sed 's/^/  /'
            echo "v10.2: 0 passed, 1 failed (no build, see $logdir/v10.2-build.log)"
            total_fail=$((total_fail + 1))
            rows+=("v10.2 0 1 0 $((SECONDS - step_start))")
        fi
        ;;
    v10.2-asan)
        # make check-slow: 10.2's sanitizer build (4 to 5 minutes cold) for
        # the qtests; the device's code is the same on both releases, and
        # make check runs them under ASan on 10.0 (lane qtest-asan).
        echo "== v10.2-asan: QEMU 10.2.2 with ASan and UBSan, the qtests"
        v=$build/v10.2
        if { QEMU_VERSION=10.2 bash "$top/scripts/qemu-tree.sh" "$top" "$v" &&
             QEMU_AARCH64_BUILD=0 QEMU_SRC=$v/qemu-src \
                 bash "$top/scripts/build-qemu.sh" "$top" "$v/qemu" &&
             QEMU_SRC=$v/qemu-src bash "$top/scripts/build-qemu.sh" "$top" \
                 "$v/qemu-asan" asan
           } > "$logdir/v10.2-asan-build.log" 2>&1; then
            grep -E '^\[build\] done' "$logdir/v10.2-asan-build.log" | sed 's/^/  /'
            run_qtest qtest-asan-10.2 "$v/qemu-asan/qemu-system-x86_64" "$v/qemu"
        else
            grep -E 'error' "$logdir/v10.2-asan-build.log" | head -20 | sed 's/^/  /'
            echo "v10.2-asan: 0 passed, 1 failed (no build, see $logdir/v10.2-asan-build.log)"
            total_fail=$((total_fail + 1))
            rows+=("v10.2-asan 0 1 0 $((SECONDS - step_start))")
        fi
        ;;
    fuzz)
        run_script fuzz '^(\[fuzz\] (FAIL|replay on)|executions:|crashes:|  /|coverage )' \
            "libFuzzer on the device: committed inputs, then ${PVRDMA_CHECK_FUZZ_SECONDS:-60} s" \
            "$top/tests/fuzz/run.sh" "$top" "$build/fuzz" --replay \
            --seconds "${PVRDMA_CHECK_FUZZ_SECONDS:-60}"
        ;;
    install)
        run_script install '^not ok' \
            "make install into a DESTDIR, the installed QEMU, make uninstall" \
            "$top/tests/install/run.sh" "$top" "$build"
        ;;
    guest-driver)
        run_script guest-driver '^not ok' \
            "contrib/pvrdma-guest-driver on the 6.1 and 6.12 kernels: commands, refusals" \
            "$top/tests/guest-driver/run.sh" "$top" "$build"
        ;;
    libvirt)
        run_script libvirt '^not ok' \
            "the device under Debian's libvirtd 9.0 (session mode, private directories)" \
            "$top/tests/libvirt/run.sh" "$top" "$build"
        ;;
    mingw)
        run_script mingw '^\[mingw\] (ok|FAILED|  (file|wine)|done)' \
            "qemu-system-x86_64.exe for a Windows host, built with mingw-w64, run under wine" \
            "$top/scripts/build-mingw.sh" "$top" "$build" --wine
        ;;
    patches-build)
        # make check-slow: the series as a maintainer would try it: every
        # prefix built, QEMU's manual built, then the whole series' own
        # qtests run on the last prefix's build
        pb=$build/patches-prefixes/build
        PATCHES_LANE=patches-prefixes run_script patches-prefixes '^not ok|^  # +[0-9]+ WARNING' \
            "make patches on QEMU 10.0: every prefix builds, the manual builds" \
            "$top/tests/patches/run.sh" "$top" "$build" --prefixes
        step_rows=0 step_start=$SECONDS
        if grep -qE '^patches-prefixes: [0-9]+ passed, 0 failed' "$logdir/patches-prefixes.log" &&
           [ -x "$pb/qemu-system-x86_64" ]; then
            echo "== patches-build: the qtests of the series' own build ($pb)"
            run_qtest patches-build "$pb/qemu-system-x86_64" "$pb"
        else
            echo "patches-build: 0 passed, 1 failed (no build of the whole series, see $logdir/patches-prefixes.log)"
            total_fail=$((total_fail + 1))
            rows+=("patches-build 0 1 0 0")
        fi
        ;;
    patches-10.2)
        run_script patches-10.2 '^not ok|^  # +[0-9]+ WARNING' \
            "make patches on QEMU 10.2.2: the series applies, checkpatch.pl" \
            "$top/tests/patches/run.sh" "$top" "$build/v10.2"
        ;;
    slow)
        echo "== slow: a guest nested in the host VM on -device pvrdma,ibdev=rxe0"
        bash "$top/tests/hostvm/slow.sh" 2>&1 | tee "$logdir/slow.log" | grep -E '^(PASS|FAIL|#)'
        count slow "$logdir/slow.log"
        ;;
    patches)
        run_script patches '^not ok|^  # +[0-9]+ WARNING' \
            "make patches: the series applies to a pristine QEMU 10.0, checkpatch.pl" \
            "$top/tests/patches/run.sh" "$top" "$build"
        ;;
    mux-fuzz)
        run_script mux-fuzz '^(not ok|coverage)' \
            "rdmacm-mux's fuzz corpus replayed" \
            "$top/tests/rdmacm-mux/fuzz/run.sh" --replay "$build/rdmacm-mux-fuzz"
        ;;
    *)
        echo "unknown lane $lane" >&2
        total_fail=$((total_fail + 1))
        rows+=("$lane 0 1 0 0")
        ;;
    esac
done

echo
echo "lane                   passed  failed skipped  seconds"
for r in "${rows[@]}"; do
    # shellcheck disable=SC2086
    printf '%-22s %6s %7s %7s %8s\n' $r
done
echo "(\" = counted in the step above; skipped tests count as passed; total $(hms $((SECONDS - check_start))))"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
