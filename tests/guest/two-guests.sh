#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Two guests, each its own QEMU process, on one Ethernet link: RDMA between
# VMs.  Guest A (10.0.3.1, the clients) and guest B (10.0.3.2, the servers)
# boot the lane-2 guest (build-guest.sh, run-guest.sh), each with
#   -device vmxnet3,addr=10.0,multifunction=on,netdev=n0,mac=<its own>
#   -device pvrdma,addr=10.1
# and their netdevs n0 joined by -netdev dgram over 127.0.0.1 (each sends
# to the other's port).  Each side runs its programs on rxe (Linux
# Soft-RoCE: the guest adds rxe0 on its vmxnet3 interface and unloads
# vmw_pvrdma) or on pvrdma (the device's own engine).  The guests run the
# data-path scenarios of tests/guest/init (scenario two): the same command
# lines and success criteria as lane 2's one-device tests, the server in B
# and the client in A, once over the RoCE v2 GIDs of the IPv4 addresses and
# once over those of the IPv6 link-local addresses.  Out-of-band exchange
# over TCP to 10.0.3.2, RDMA-CM (rping) on the address of the GID family.
#
# Usage: two-guests.sh [options]
#   --server-dev rxe|pvrdma   device of guest B, the servers (default rxe)
#   --client-dev rxe|pvrdma   device of guest A, the clients (default rxe)
#   --server-arch amd64|arm64 architecture of guest B (default amd64)
#   --client-arch amd64|arm64 architecture of guest A (default amd64); an
#                     arm64 guest is build-guest-arm64.sh's, booted by
#                     qemu-system-aarch64 on -M virt (QEMU_AARCH64);
#                     its scenarios: the ping-pongs, perftest and rping
#   --programs LIST   comma-separated (default: ibv_rc_pingpong,
#                     ibv_ud_pingpong,ib_write_bw,ib_read_bw,ib_atomic_bw,
#                     ib_send_bw,ib_send_lat,ib_write_lat,rping); also the
#                     other lane-2 scenarios: srq_pingpong, ib_send_bw_ud,
#                     ib_send_lat_ud, ib_read_lat, ucx_put_bw, ucx_get,
#                     ucx_fadd (ucx_perftest, UCT over rc_verbs; both
#                     guests' devices must have one name: the server
#                     takes the client's -d), and nvmeof_rdma (NVMe
#                     over RDMA: the target in B, the host in A; IPv4
#                     GIDs only), nfs_rdma (NFSv3 and NFSv4.2 over RDMA,
#                     proto=rdma, port 20049: nfsd in B, the mounts in
#                     A; 16 and 64 MiB files per version, written, read
#                     back after a remount and compared on both sides;
#                     give it --timeout 300); issue 27's workloads, each
#                     with its own data check: rdma_server (librdmacm's
#                     rdma_server and rdma_client), rcopy (a 4 MiB file
#                     copied, sha256 compared; IPv4 only), riostream and
#                     riostream_async (rsockets' riowrite, -T v verifying
#                     every 64 KiB transfer; _async: -T a, rpoll()),
#                     qperf (-cm1: rc_bw, rc_lat and the verifying
#                     ver_rc_fetch_add and ver_rc_compare_swap; IPv4
#                     only), fi_pingpong (libfabric's verbs provider, msg
#                     endpoint, -c) and fi_pingpong_rdm (ofi_rxm over
#                     verbs, rdm endpoint, -c, FI_UNIVERSE_SIZE=64), and
#                     iser (a LIO iSCSI target with iSER in B, open-iscsi
#                     over iser in A: 8 MiB written through the disk,
#                     read back, found in the target's RAM disk, logout;
#                     IPv4 only), ucp_tag_lat_rc, ucp_tag_bw_rc,
#                     ucp_put_bw_rc, ucp_get_rc and the same with _ud
#                     (ucx_perftest at the UCP level, UCX_TLS=
#                     rc_verbs,ud_verbs or ud_verbs; UCP picks the
#                     device and GID, so either side may be rxe),
#                     ucp_pattern_rc, ucp_pattern_ud (tests/guest/
#                     ucp-pattern.c: tag messages, a put and a get,
#                     every byte checked), mpi_rc and mpi_ud (Open MPI
#                     over UCX, 2 ranks per guest, mpirun in A with a
#                     remote shell of ours in B instead of ssh: ring,
#                     alltoall with a checksum, latency and bandwidth,
#                     every byte checked; IPv4 only; give --timeout
#                     180), and smb_direct (a SKIP naming the SMB Direct
#                     options the guest kernel's configuration leaves
#                     unset, as Debian's do), and cm_scale
#                     (tests/guest/cm-scale.c: SIZE RDMA-CM connections,
#                     default 1000, each with a checked message; held
#                     open while an ib_write_bw of 64 KiB x ITERS runs
#                     alongside; both QEMUs' memory is sampled before
#                     and while they are open and printed per
#                     connection; pvrdma needs --device-opts
#                     dev-caps-max-qp=... above SIZE).  An entry
#                     PROGRAM:[SIZE][:ITERS] has its own size and iterations
#                     (instead of --size, --iters), so that one boot can run
#                     a program several times: its pair is named
#                     PROGRAM@K (K: its place in the list; sections
#                     PROGRAM@K.<gids> in the consoles and PROGRAM@K in
#                     joined-<gids>.log) and is judged after the others
#                     ("ok N ib-write-bw@2 (-s 65536 -n 500) ipv4: ...");
#                     at most 39 entries then (rping: ITERS is its -C
#                     count; nvmeof_rdma: ITERS more rounds of writing
#                     and reading back its 8 MiB, SIZE unused; nfs_rdma:
#                     one file of SIZE bytes (whole MiB) per version
#                     instead of 16 and 64 MiB, ITERS unused; rcopy: a
#                     file of SIZE bytes (whole MiB); riostream,
#                     fi_pingpong: SIZE bytes per transfer, ITERS of them)
#   --gids LIST       GID families: ipv4 (the IPv4-mapped GID), ipv6 (the
#                     link-local GID); default ipv4,ipv6
#   --iters N         iterations (-n; rping -C stays 10; default 100)
#   --size BYTES      message size (-s, rping -S) for the programs that take
#                     one (not ib_atomic_bw); default: lane 2's
#   --args 'ARGS'     more arguments for every program on both sides (no
#                     commas; not -s or -n: use --size, --iters)
#   --timeout SEC     deadline of each side of each pair (default 60)
#   --mtu N           MTU of both guests' vmxnet3 interfaces (default
#                     1500, RoCE path MTU 1024; 9000: path MTU 4096, which
#                     perftest takes from the port; the ping-pongs keep
#                     their -m default of 1024)
#   --log-dir DIR     logs (default build/two-guests): a.log, b.log (the
#                     consoles), joined-<gids>.log (both sides of each pair,
#                     as check.sh judges them), *.err, a.pid and b.pid
#                     (the session of each guest's run-guest.sh and QEMU)
#   --link dgram|stream|unix
#                     the link: -netdev dgram (default: each guest sends
#                     UDP datagrams to the other's port), -netdev stream
#                     over one TCP connection on 127.0.0.1 (B listening, A
#                     connecting), or -netdev stream over a UNIX socket in
#                     the log directory; over a stream each frame goes with
#                     a 4-byte length and a QEMU reads as many frames as
#                     have arrived in one call.  Not with --lossy or
#                     --migrate (the relay forwards datagrams)
#   --pcap FILE       capture guest A's netdev (both directions) to FILE:
#                     -object filter-dump,id=d0,netdev=n0,file=FILE
#   --info            each guest also runs init's scenario info before the
#                     pairs (ibv_devinfo and the GID table: console section
#                     "info", which make run shows)
#   --append 'ARGS'   more kernel command line for both guests (e.g.
#                     pvrdma.verbose=1: --info shows ibv_devinfo -v)
#   --lossy SEED:DROP:DUP:REORDER:DELAY
#                     a lossy link: the guests' netdevs send to a relay
#                     (tests/guest/relay.py) that passes RoCE v2 frames on
#                     but drops, duplicates, reorders and delays the given
#                     fractions of them (e.g. 7:0.03:0.02:0.02:0.02; not
#                     RDMA-CM's messages to QP 1, see relay.py); its
#                     counters, and each QEMU's query-pvrdma RoCE counters
#                     (retransmissions, duplicates; pvrdma only), are
#                     printed, and a TAP line checks that frames were lost
#   --migrate ROUNDS  live-migrate guest A while each of its client programs
#                     runs: A is run by tests/guest/migrate.py, which moves
#                     it to a new QEMU on this machine and back ROUNDS
#                     times per program (2 x ROUNDS migrations), 1 s after
#                     the client started; the link goes through the relay
#                     (lossless unless --lossy), which is told where A is
#                     after each migration.  One TAP line per program says
#                     whether all its migrations completed while it ran; the
#                     programs' own lines say whether they then succeeded.
#                     Give the programs iterations enough to last (e.g.
#                     --programs ibv_rc_pingpong:4096:30000,...)
#   --soak SECONDS    make soak (tests/guest/soak.sh): the guests run the
#                     list in cycles until SECONDS have passed since the
#                     first began (init's pvrdma.soak; at most 19
#                     entries); every pair is then named PROGRAM@N, N
#                     counting through all cycles, and judged as such;
#                     both QEMUs are sampled (soak_sample.py: memory,
#                     descriptors, the device's objects and counters)
#                     into <log-dir>/samples.tsv
#   --soak-migrate S  with --soak: migrate guest A to a new QEMU and on
#                     to another during a cycle's first program, once S
#                     seconds have passed since the last time (implies
#                     --migrate 1)
#   --sample-every S  with --soak: seconds between two samples (default 60)
#   --device-opts P   more properties for both guests' -device pvrdma
#                     (e.g. dev-caps-max-qp=10240,dev-caps-max-cq=512)
#   --mem SIZE        guest RAM of both guests (QEMU -m; default 1G)
#   --no-build        do not run build-guest.sh first
#
# Environment: QEMU (default build/qemu/qemu-system-x86_64), QEMU_AARCH64
# (default: qemu-system-aarch64 beside QEMU), GUEST_DIR
# (default build/guest).
#
# Prints one TAP line per guest (booted, device up, link to the other,
# kernel clean, powered off) and per program and GID family ("ok N
# rc-pingpong ipv4: client A rxe -> server B rxe"), the evidence of a
# failure on "  # " lines, and last "two-guests: N passed, N failed".
# Exits 0 only if everything passed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../tap.sh
. "$top/tests/tap.sh"

die() { printf 'two-guests: error: %s\n' "$*" >&2; exit 2; }
note() { printf '# %s\n' "$*"; }

server_dev=rxe
client_dev=rxe
server_arch=amd64
client_arch=amd64
programs=ibv_rc_pingpong,ibv_ud_pingpong,ib_write_bw,ib_read_bw,ib_atomic_bw,ib_send_bw,ib_send_lat,ib_write_lat,rping
gids=ipv4,ipv6
iters=100
size=
args=
dp_timeout=60
logdir=$top/build/two-guests
pcap=
build=1
info=0
kappend=
lossy=
mig_rounds=0
mtu=
link=dgram
device_opts=
mem=
soak=0
soak_mig=0
sample_every=60
while [ $# -gt 0 ]; do
    case $1 in
        --server-dev) server_dev=$2; shift 2 ;;
        --client-dev) client_dev=$2; shift 2 ;;
        --server-arch) server_arch=$2; shift 2 ;;
        --client-arch) client_arch=$2; shift 2 ;;
        --programs) programs=$2; shift 2 ;;
        --gids) gids=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --args) args=$2; shift 2 ;;
        --timeout) dp_timeout=$2; shift 2 ;;
        --mtu) mtu=$2; shift 2 ;;
        --link) link=$2; shift 2 ;;
        --log-dir) logdir=$2; shift 2 ;;
        --pcap) pcap=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --device-opts) device_opts=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --info) info=1; shift ;;
        --append) kappend=$2; shift 2 ;;
        --lossy) lossy=$2; shift 2 ;;
        --migrate) mig_rounds=$2; shift 2 ;;
        --soak) soak=$2; shift 2 ;;
        --soak-migrate) soak_mig=$2; shift 2 ;;
        --sample-every) sample_every=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
case $mtu in
    '') ;;
    *[!0-9]*) die "--mtu wants a number (68 to 9000), not '$mtu'" ;;
    *) [ "$mtu" -ge 68 ] && [ "$mtu" -le 9000 ] || die "--mtu wants 68 to 9000 (vmxnet3's range), not $mtu" ;;
esac
for d in "$server_dev" "$client_dev"; do
    case $d in rxe|pvrdma) ;; *) die "a device is rxe or pvrdma, not '$d'" ;; esac
done
for a in "$server_arch" "$client_arch"; do
    case $a in amd64|arm64) ;; *) die "an architecture is amd64 or arm64, not '$a'" ;; esac
done
[ "$client_arch" = amd64 ] || [ "$mig_rounds" = 0 ] ||
    die "--migrate: guest A is amd64 (migrate.py boots the PC machine)"
for v in "$iters" "$dp_timeout" "$mig_rounds" ${size:+"$size"} "$soak" "$soak_mig" "$sample_every"; do
    case $v in ''|*[!0-9]*) die "--iters, --size, --timeout, --migrate, --soak, --soak-migrate and --sample-every want numbers, got '$v'" ;; esac
done
[ "$soak_mig" = 0 ] || [ "$soak" != 0 ] || die "--soak-migrate wants --soak"
[ "$soak_mig" = 0 ] || mig_rounds=1
[ "$sample_every" -gt 0 ] || die "--sample-every wants a positive number"
case $link in dgram|stream|unix) ;; *) die "--link is dgram, stream or unix, not '$link'" ;; esac
case $device_opts in *[!A-Za-z0-9=,_-]*) die "--device-opts: PROP=VALUE[,...], not '$device_opts'" ;; esac
case $mem in ''|[1-9]*[0-9MG]) ;; *) die "--mem wants a size such as 2G or 1536M, not '$mem'" ;; esac
[ $link = dgram ] || { [ -z "$lossy" ] && [ "$mig_rounds" = 0 ]; } ||
    die "--lossy and --migrate need --link dgram (the relay forwards datagrams)"
[ "$mig_rounds" = 0 ] || [ -z "$pcap" ] || die "--pcap and --migrate: not both (guest A's QEMUs come and go)"
case $args in *,*|*\"*|*\'*) die "--args must not hold commas or quotes (they go on the guests' kernel command line)" ;; esac
if [ -n "$lossy" ]; then
    IFS=: read -r l_seed l_drop l_dup l_reorder l_delay <<<"$lossy"
    for v in "$l_drop" "$l_dup" "$l_reorder" "$l_delay"; do
        case $v in 0|0.[0-9]*) ;; *) die "--lossy SEED:DROP:DUP:REORDER:DELAY, fractions below 1, got '$lossy'" ;; esac
    done
    case $l_seed in ''|*[!0-9]*) die "--lossy: the seed is a number, got '$l_seed'" ;; esac
fi
for f in $(echo "$gids" | tr ',' ' '); do
    case $f in ipv4|ipv6) ;; *) die "--gids: ipv4 or ipv6, not '$f'" ;; esac
done

# The programs as init's scenario names (its t_<name>), which are also the
# console sections, and check.sh's test names (_ -> -).  entries: the
# list as init gets it (NAME or NAME:SIZE[:ITERS]); scens: the plain
# entries; tagged: K:NAME:SIZE:ITERS of the others (init's NAME@K).
known=" rc_pingpong ud_pingpong srq_pingpong ib_send_bw ib_send_bw_ud ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_send_lat_ud ib_write_lat ib_read_lat rping nvmeof_rdma nfs_rdma ucx_put_bw ucx_get ucx_fadd rdma_server rcopy riostream riostream_async qperf fi_pingpong fi_pingpong_rdm iser ucp_tag_lat_rc ucp_tag_bw_rc ucp_put_bw_rc ucp_get_rc ucp_tag_lat_ud ucp_tag_bw_ud ucp_put_bw_ud ucp_get_ud ucp_pattern_rc ucp_pattern_ud mpi_rc mpi_ud smb_direct cm_scale "
entries=() scens=() tagged=()
k=0
for p in $(echo "$programs" | tr ',' ' '); do
    k=$((k + 1))
    s=${p%%:*}
    s=${s#ibv_}
    case $known in *" $s "*) ;; *) die "unknown program '${p%%:*}' (see --help)" ;; esac
    if [ "${p%%:*}" = "$p" ]; then
        entries+=("$s") scens+=("$s")
        continue
    fi
    IFS=: read -r _ e_size e_iters e_more <<<"$p"
    [ -z "$e_more" ] || die "--programs: '$p': PROGRAM:SIZE[:ITERS]"
    for v in ${e_size:+"$e_size"} ${e_iters:+"$e_iters"}; do
        case $v in *[!0-9]*) die "--programs: '$p': SIZE and ITERS are numbers" ;; esac
    done
    entries+=("$s:$e_size${e_iters:+:$e_iters}")
    tagged+=("$k:$s:$e_size:${e_iters:-$iters}")
done
[ ${#entries[@]} -gt 0 ] || die "--programs is empty"
# A soak names every pair PROGRAM@N (init's soak_cycles): the pairs are
# known once the guests say how many cycles ran.
soak_list=()
if [ "$soak" != 0 ]; then
    [ ${#entries[@]} -le 19 ] || die "--soak: at most 19 programs (their ports alternate between two banks)"
    for e in "${entries[@]}"; do
        IFS=: read -r s e_size e_iters <<<"$e"
        soak_list+=("$s:$e_size:${e_iters:-$iters}")
    done
    scens=() tagged=()
fi
[ ${#tagged[@]} = 0 ] || [ ${#entries[@]} -le 39 ] || die "--programs: at most 39 entries when one has a size"
scen_list=$(IFS=,; echo "${entries[*]}")

qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}
[ -x "$qemu" ] || die "no QEMU binary at $qemu (build QEMU first, or set QEMU=)"
qemu_arm64=${QEMU_AARCH64:-$(dirname "$qemu")/qemu-system-aarch64}
for a in "$server_arch" "$client_arch"; do
    [ $a = amd64 ] || [ -x "$qemu_arm64" ] ||
        die "no qemu-system-aarch64 at $qemu_arm64 for an arm64 guest (set QEMU_AARCH64=)"
done
# qemu_of ARCH: the QEMU that boots a guest of ARCH (run-guest.sh picks the
# guest's directory and machine from it)
client_show=$client_dev$([ "$client_arch" = amd64 ] || echo " ($client_arch)")
server_show=$server_dev$([ "$server_arch" = amd64 ] || echo " ($server_arch)")
qemu_of() { if [ "$1" = arm64 ]; then echo "$qemu_arm64"; else echo "$qemu"; fi; }
mkdir -p "$logdir" || die "cannot create $logdir"
logdir=$(cd "$logdir" && pwd)
if [ $link = unix ]; then
    # sun_path holds 107 bytes and a NUL
    [ $(( ${#logdir} + 10 )) -le 107 ] || die "--link unix: the log directory's path is too long for a socket (at most 97 bytes): $logdir"
    rm -f "$logdir/link.sock"
fi
if [ -n "$pcap" ]; then
    case $pcap in /*) ;; *) pcap=$PWD/$pcap ;; esac
    case $pcap in *,*) die "--pcap: no commas in the file name (QEMU's option syntax)" ;; esac
    mkdir -p "$(dirname "$pcap")" && rm -f "$pcap" || die "cannot write $pcap"
fi

if [ $build = 1 ]; then
    "$here/build-guest.sh" >"$logdir/build-guest.out" 2>&1 ||
        { tail -n 20 "$logdir/build-guest.out" >&2; die "build-guest.sh failed (log: $logdir/build-guest.out)"; }
    if [ "$server_arch" = arm64 ] || [ "$client_arch" = arm64 ]; then
        "$here/build-guest-arm64.sh" >>"$logdir/build-guest.out" 2>&1 ||
            { tail -n 20 "$logdir/build-guest.out" >&2; die "build-guest-arm64.sh failed (log: $logdir/build-guest.out)"; }
    fi
fi

# free_port [NOT]: a port on 127.0.0.1 that no UDP or TCP socket uses (and not NOT)
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % 40000))
        [ "$p" != "${1:-}" ] || continue
        ss -Hltun "sport = :$p" 2>/dev/null | grep -q . && continue
        echo "$p"
        return 0
    done
    return 1
}
# ll_of_mac MAC: the IPv6 link-local address the kernel gives that MAC (EUI-64)
ll_of_mac() {
    local IFS=:
    # shellcheck disable=SC2086
    set -- $1
    printf 'fe80::%x:%x:%x:%x\n' $(( (0x$1 ^ 2) << 8 | 0x$2 )) $(( 0x$3 << 8 | 0xff )) \
        $(( 0xfe << 8 | 0x$4 )) $(( 0x$5 << 8 | 0x$6 ))
}

port_a=$(free_port) && port_b=$(free_port "$port_a") || die "no free port on 127.0.0.1"
mac_a=52:54:00:0a:03:01 mac_b=52:54:00:0a:03:02
ip_a=10.0.3.1 ip_b=10.0.3.2
ll_a=$(ll_of_mac $mac_a) ll_b=$(ll_of_mac $mac_b)
npairs=$(( ${#entries[@]} * $(echo "$gids" | tr ',' '\n' | grep -c .) ))
# Worst case per pair: the client waits for the server's word (its
# deadline + 60 s) and then runs into its own deadline.
guest_timeout=$((300 + npairs * (2 * dp_timeout + 70)))
# a soak: its time, and then one more cycle (begun just before the end)
[ "$soak" = 0 ] || guest_timeout=$((guest_timeout + soak))

# guest_args ROLE DEV IP PEER PEER6: the guest's scenarios (sc) and kernel
# command line (append)
guest_args() {
    local role=$1 dev=$2 ip=$3 peer=$4 peer6=$5
    if [ "$dev" = rxe ]; then sc=rxe,two; else sc=probe,devinfo,two; fi
    [ $info = 0 ] || sc=${sc%,two},info,two
    # no_timer_check: two TCG guests on a loaded host fail the kernel's
    # IO-APIC timer check now and then ("IO-APIC + timer doesn't work!")
    append="no_timer_check pvrdma.ip=$ip/24 pvrdma.peer=$peer pvrdma.peer6=$peer6 pvrdma.role=$role"
    append+=" pvrdma.two=$scen_list pvrdma.gids=$gids pvrdma.timeout=$dp_timeout pvrdma.iters=$iters"
    [ -z "$size" ] || append+=" pvrdma.size=$size"
    [ -z "$mtu" ] || append+=" pvrdma.mtu=$mtu"
    [ -z "$args" ] || append+=" pvrdma.args=$(echo "$args" | tr -s ' ' ',' | sed 's/^,//; s/,$//')"
    [ "$dev" = pvrdma ] || append+=" pvrdma.ibdev=rxe0"
    [ "$soak" = 0 ] || append+=" pvrdma.soak=$soak"
    [ "$soak_mig" = 0 ] || [ "$role" != client ] || append+=" pvrdma.soakmig=$soak_mig"
    [ -z "$kappend" ] || append+=" $kappend"
}
# boot LETTER ROLE DEV ARCH IP MAC LPORT RPORT PEER PEER6 [QEMU ARGS...]:
# start run-guest.sh in the background, in its own session (so that it and
# its QEMU can be stopped together); sets pid_LETTER
boot() {
    local l=$1 role=$2 dev=$3 arch=$4 ip=$5 mac=$6 lport=$7 rport=$8 peer=$9 peer6=${10} sc append where
    shift 10
    guest_args "$role" "$dev" "$ip" "$peer" "$peer6"
    rm -f "$logdir/$l.log" "$logdir/$l.log.rc" "$logdir/$l.pid"
    QEMU=$(qemu_of "$arch") GUEST_NETDEV=$(netdev_of "$role" "$lport" "$rport") \
    PVRDMA_DEVICE_OPTS=$device_opts \
    GUEST_MAC=$mac setsid "$here/run-guest.sh" --no-build --quiet --log "$logdir/$l.log" \
        --timeout "$guest_timeout" --test "$sc" --append "$append" -- "$@" \
        >"$logdir/$l.run.out" 2>"$logdir/$l.run.err" </dev/null &
    eval "pid_$l=\$!"
    echo $! >"$logdir/$l.pid"
    case $link in
        dgram) where="dgram 127.0.0.1:$lport -> :$rport" ;;
        stream) where="stream $([ "$role" = server ] && echo "listening on 127.0.0.1:$lport" || echo "to 127.0.0.1:$rport")" ;;
        unix) where="stream $([ "$role" = server ] && echo "listening on" || echo "to") $logdir/link.sock" ;;
    esac
    note "guest $l: $role on $dev ($arch), $ip $peer6 (peer), MAC $mac, $where; console $logdir/$l.log"
}
# netdev_of ROLE LPORT RPORT: guest n0's -netdev.  Over a stream the
# server (B) listens and the client (A) connects, retrying every 100 ms
# until B's QEMU is up.
netdev_of() {
    local addr
    case $link in
        dgram)
            echo "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$2,remote.type=inet,remote.host=127.0.0.1,remote.port=$3"
            return ;;
        stream) addr=addr.type=inet,addr.host=127.0.0.1,addr.port=$([ "$1" = server ] && echo "$2" || echo "$3") ;;
        unix) addr=addr.type=unix,addr.path=$logdir/link.sock ;;
    esac
    if [ "$1" = server ]; then
        echo "stream,id=n0,server=on,$addr"
    else
        echo "stream,id=n0,server=off,$addr,reconnect-ms=100"
    fi
}
# boot_migrating: guest A (the clients) under tests/guest/migrate.py, which
# migrates it while each client program runs; as boot, sets pid_a
boot_migrating() {
    local sc append
    guest_args client "$client_dev" $ip_a $ip_b "$ll_b"
    rm -rf "$logdir/a.log" "$logdir/a.log.rc" "$logdir/a-mig"
    setsid python3 "$here/migrate.py" --qemu "$qemu" --test "$sc" \
        --append "$append pvrdma.twomig=1" --mac $mac_a \
        --tool-timeout "$dp_timeout" --timeout "$guest_timeout" \
        --rounds "$mig_rounds" --settle 1 --log "$logdir/a.log" \
        --work "$logdir/a-mig" --keep --peer-port "$port_a" \
        --peer-remote "$peer_a" --peer-relay "$relay_ctl" \
        ${samples:+--sample "$samples" --sample-every "$sample_every"} \
        >"$logdir/a.migrate" 2>"$logdir/a.run.err" </dev/null &
    pid_a=$!
    note "guest a: client on $client_dev, $ip_a (migrating: $mig_rounds round(s) per program, tests/guest/migrate.py), MAC $mac_a, dgram 127.0.0.1:$port_a (then ports of its own) -> :$peer_a; console $logdir/a.log (written at the end), QEMUs' logs $logdir/a-mig"
}
# stop_guests: every process of the guests' sessions (run-guest.sh, and
# timeout with QEMU, which timeout moves to a process group of its own)
stop_guests() {
    local p q
    for p in ${pid_a:-} ${pid_b:-}; do
        for q in $(ps -o pid= -s "$p" 2>/dev/null); do kill -TERM "$q" 2>/dev/null; done
    done
}
trap 'stop_guests; exit 130' INT TERM

# The lossy link: each guest sends to the relay's port for it, the relay
# to the other guest's netdev; the guests' QMP sockets give the counters.
peer_a=$port_b peer_b=$port_a
# Under --migrate, the relay (lossless unless --lossy) follows A's QEMUs.
relay_pid=
relay_ctl=$logdir/relay.ctl
relay=0
[ -z "$lossy" ] && [ "$mig_rounds" = 0 ] || relay=1
[ -n "$lossy" ] || l_seed=1 l_drop=0 l_dup=0 l_reorder=0 l_delay=0
if [ $relay = 1 ]; then
    relay_a=$(free_port "$port_a") && relay_b=$(free_port "$port_b") ||
        die "no free port on 127.0.0.1"
    [ "$relay_a" != "$relay_b" ] && [ "$relay_a" != "$port_b" ] && [ "$relay_b" != "$port_a" ] ||
        die "UDP ports collide; run again"
    # The relay is the link, which does not stop: it runs first
    # (relay.py --priority).
    python3 "$here/relay.py" --priority --port-a "$relay_a" \
        --port-b "$relay_b" --to-a "$port_a" --to-b "$port_b" \
        --seed "$l_seed" --drop "$l_drop" --dup "$l_dup" \
        --reorder "$l_reorder" --delay "$l_delay" \
        --control "$relay_ctl" >"$logdir/relay.log" 2>&1 &
    relay_pid=$!
    peer_a=$relay_a peer_b=$relay_b
    if [ -z "$lossy" ]; then
        note "relay 127.0.0.1:$relay_a (from A), :$relay_b (from B), lossless; control $relay_ctl"
    else
        note "lossy link: relay 127.0.0.1:$relay_a (from A), :$relay_b (from B); seed $l_seed, drop $l_drop, dup $l_dup, reorder $l_reorder, delay $l_delay"
    fi
    trap 'stop_guests; [ -z "$relay_pid" ] || kill "$relay_pid" 2>/dev/null; exit 130' INT TERM
fi

note "programs ${scen_list//,/ } over ${gids//,/ } GIDs; client A on $client_show, server B on $server_show; deadline $dp_timeout s"
dump=()
[ -z "$pcap" ] || dump=(-object "filter-dump,id=d0,netdev=n0,file=$pcap,maxlen=65536")
start=$(date +%s)
counters=()
if [ $relay = 1 ]; then
    # under --migrate, migrate.py reads A's counters itself
    for l in b $([ "$mig_rounds" != 0 ] || echo a); do
        rm -f "$logdir/$l.qmp"
        python3 "$here/roce-counters.py" "$logdir/$l.qmp" >"$logdir/$l.roce" 2>&1 &
        counters+=($!)
    done
    qmp_b=(-qmp "unix:$logdir/b.qmp,server=on,wait=off")
    qmp_a=(-qmp "unix:$logdir/a.qmp,server=on,wait=off")
else
    qmp_a=() qmp_b=()
fi
# make soak: both QEMUs sampled into samples.tsv (B by soak_sample.py on
# a QMP socket of its own, A by migrate.py, or by soak_sample.py too when
# A does not migrate)
samples=
qmp_sa=() qmp_sb=()
if [ "$soak" != 0 ]; then
    samples=$logdir/samples.tsv
    python3 -c "import sys; sys.path.insert(0, '$here'); import soak_sample; print(soak_sample.HEADER)" >"$samples" ||
        die "tests/guest/soak_sample.py does not load"
    qmp_sb=(-qmp "unix:$logdir/b-soak.qmp,server=on,wait=off")
    qmp_sa=(-qmp "unix:$logdir/a-soak.qmp,server=on,wait=off")
    rm -f "$logdir/a-soak.qmp" "$logdir/b-soak.qmp"
fi
# (a second -m replaces run-guest.sh's)
mem_arg=()
[ -z "$mem" ] || mem_arg=(-m "$mem")
boot b server "$server_dev" "$server_arch" $ip_b $mac_b "$port_b" "$peer_b" $ip_a "$ll_a" "${qmp_b[@]}" "${qmp_sb[@]}" "${mem_arg[@]}"
if [ "$mig_rounds" = 0 ]; then
    boot a client "$client_dev" "$client_arch" $ip_a $mac_a "$port_a" "$peer_a" $ip_b "$ll_b" "${dump[@]}" "${qmp_a[@]}" "${qmp_sa[@]}" "${mem_arg[@]}"
else
    boot_migrating
fi
samplers=()
if [ -n "$samples" ]; then
    for l in b $([ "$mig_rounds" != 0 ] || echo a); do
        python3 "$here/soak_sample.py" --qmp "$logdir/$l-soak.qmp" \
            --session "$(cat "$logdir/$l.pid")" --label "$(echo $l | tr ab AB)" \
            --out "$samples" --every "$sample_every" 2>>"$logdir/samples.err" &
        samplers+=($!)
    done
    note "soak: $soak s of cycles${soak_mig:+, A migrating every $soak_mig s}; samples every $sample_every s in $samples"
fi

# cm_scale: both QEMUs' memory at the moments guest A's console names
rss_pid=
case ",$scen_list" in
    *,cm_scale*)
        [ "$mig_rounds" = 0 ] && python3 "$here/qemu-rss.py" "$logdir/a.log" "$pid_a" "$pid_b" \
            "$logdir/rss.txt" 2>"$logdir/rss.err" &
        rss_pid=$! ;;
esac

# Wait for both.  Once one guest is done, the other gets one pair's worth
# of time to finish (it may wait for a peer that is gone).
grace=$((2 * dp_timeout + 90))
first_done=
while :; do
    ra=0 rb=0
    kill -0 "$pid_a" 2>/dev/null && ra=1
    kill -0 "$pid_b" 2>/dev/null && rb=1
    [ $ra = 1 ] || [ $rb = 1 ] || break
    if [ $ra = 0 ] || [ $rb = 0 ]; then
        [ -n "$first_done" ] || first_done=$(date +%s)
        if [ $(( $(date +%s) - first_done )) -gt $grace ]; then
            note "guest $([ $ra = 1 ] && echo A || echo B) still running ${grace} s after the other finished: stopped"
            stop_guests
        fi
    fi
    sleep 1
done
wait "$pid_a"; rc_a=$?
wait "$pid_b"; rc_b=$?
note "both guests done after $(( $(date +%s) - start )) s (run-guest.sh: A $rc_a, B $rc_b)"
for p in "${samplers[@]}"; do wait "$p" 2>/dev/null; done
if [ -n "$rss_pid" ]; then
    wait "$rss_pid" 2>/dev/null
    sed 's/^/# /' "$logdir/rss.txt" 2>/dev/null
fi

for l in a b; do
    tr -d '\r' <"$logdir/$l.log" >"$logdir/$l.txt" 2>/dev/null || : >"$logdir/$l.txt"
done
# section NAME LETTER: the raw output between GUEST-BEGIN/END: NAME
section() {
    if [ -d "$logdir/sections-$2" ]; then
        cat "$logdir/sections-$2/$1" 2>/dev/null || true
        return
    fi
    awk -v n="$1" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                   $0 == "GUEST-END: " n { on = 0 } on' "$logdir/$2.txt" || true
}
# A soak's consoles hold thousands of sections: each cut out once, into
# sections-LETTER/NAME, instead of one pass over the console per section.
if [ "$soak" != 0 ]; then
    for l in a b; do
        rm -rf "$logdir/sections-$l"
        mkdir -p "$logdir/sections-$l"
        awk -v d="$logdir/sections-$l" '
            /^GUEST-BEGIN: / && f == "" { n = substr($0, 14); gsub("/", "_", n)
                                          f = d "/" n; printf "" >> f; next }
            f != "" && $0 == "GUEST-END: " substr(f, length(d) + 2) { close(f); f = ""; next }
            f != "" { print >> f }' "$logdir/$l.txt"
    done
    # the pairs: the cycles guest A told guest B to run
    cycles=$(grep -c '^soak: cycle .*(told the server: yes)' "$logdir/a.txt")
    nl=${#soak_list[@]}
    for ((c = 1; c <= cycles; c++)); do
        for ((k = 1; k <= nl; k++)); do
            IFS=: read -r s e_size e_iters <<<"${soak_list[$((k - 1))]}"
            tagged+=("$(( (c - 1) * nl + k )):$s:$e_size:$e_iters")
        done
    done
    note "soak: guest A ran $cycles cycles of ${nl} programs"
fi
tap_out=$logdir/evidence.txt

# --- the guests ---------------------------------------------------------------
# judge_guest LETTER ROLE DEV RC SHOWN (SHOWN: DEV, and the arch if not amd64)
judge_guest() {
    local l=$1 role=$2 dev=$3 rc=$4 shown=$5 L why=() want bad
    L=$(echo "$l" | tr '[:lower:]' '[:upper:]')
    grep -q 'GUEST-BOOT:' "$logdir/$l.txt" || why+=("the guest's init never started")
    if [ "$dev" = rxe ]; then want=rxe; else want=probe; fi
    grep -q "^GUEST-RESULT: $want PASS" "$logdir/$l.txt" ||
        why+=("device: $(grep -m1 "^GUEST-RESULT: $want " "$logdir/$l.txt" || echo "no GUEST-RESULT for $want")")
    grep -q '^GUEST-RESULT: two PASS' "$logdir/$l.txt" ||
        why+=("link: $(grep -m1 '^GUEST-RESULT: two ' "$logdir/$l.txt" || echo 'no GUEST-RESULT for two')")
    bad=$(grep -nE 'BUG:|Oops|WARNING: CPU|Call Trace|general protection|Kernel panic|RIP: |soft lockup|hung_task|blocked for more than' "$logdir/$l.txt" | head -5)
    [ -z "$bad" ] || why+=("kernel problems:" "$bad")
    grep -q '^GUEST-DONE:' "$logdir/$l.txt" || why+=("no GUEST-DONE: the guest did not finish its scenarios")
    grep -q 'reboot: Power down' "$logdir/$l.txt" || why+=("no 'reboot: Power down' from the guest kernel")
    [ "$rc" = 0 ] || why+=("run-guest.sh exit $rc (QEMU $(cat "$logdir/$l.log.rc" 2>/dev/null || echo '?')): $(tail -n 2 "$logdir/$l.run.err" | tr '\n' ' ')")
    if [ ${#why[@]} = 0 ]; then
        tap_result OK "guest $L: $role on $shown: booted, device up, link to the other guest, kernel clean, powered off"
    else
        printf '%s\n' "${why[@]}" >"$tap_out"
        tap_result FAIL "guest $L: $role on $shown" "$tap_out"
    fi
}
judge_guest a client "$client_dev" "$rc_a" "$client_show"
judge_guest b server "$server_dev" "$rc_b" "$server_show"

# --- the pairs ----------------------------------------------------------------
# Per GID family, one console log in init's pair() layout: for each pair
# B's header and server side, A's header and client side, and A's end line.
# check.sh --console judges it as lane 2 does.  A pair of a PROGRAM:SIZE
# entry is named PROGRAM@K there; check.sh judges it on a log of its own
# (judge-<gids>@K.log) in which it has its program's name.
# join_pair SECTION NAME: the pair of the consoles' SECTION as section NAME
join_pair() {
    local sb sa
    sb=$(section "$1" b)
    sa=$(section "$1" a)
    [ -n "$sb" ] || sb=$'server: (none)\n--- server (exit none: guest B printed no section '"$1"')'
    [ -n "$sa" ] || sa=$'client: (none)\n--- client (exit none: guest A printed no section '"$1"')'
    echo "GUEST-BEGIN: $2"
    echo "$sb" | awk '/^--- / { exit } { print }'
    echo "$sa" | awk '/^--- / { exit } { print }'
    echo "$sb" | awk '/^--- / { on = 1 } /^--- end: / { exit } on'
    echo "$sa" | awk '/^--- / { on = 1 } on'
    echo "GUEST-END: $2"
}
# kernel_logs: both guests' kernel logs as one section kernel-log (what
# check.sh's kernel-log checks read, e.g. NVMe-oF's controller lines)
kernel_logs() {
    echo "GUEST-BEGIN: kernel-log"
    section kernel-log a
    section kernel-log b
    echo "GUEST-END: kernel-log"
}
# judge LOG TESTS [NAME]: check.sh's verdicts on the TESTS (comma-separated)
# of LOG as TAP lines (NAME: the name shown for a single test)
judge() {
    local log=$1 list=$2 shown=${3:-} cur='' judged=" " line t
    echo 0 >"$log.rc"
    flush() {
        [ -n "$cur" ] || return 0
        local what="${shown:-${cur#* }} $fam: client A $client_show -> server B $server_show"
        case ${cur%% *} in
            PASS) tap_result OK "$what" ;;
            SKIP) tap_result SKIP "$what" "$ev" ;;
            *) tap_result FAIL "$what" "$ev" ;;
        esac
        judged+="${cur#* } "
        cur=
    }
    while IFS= read -r line; do
        case $line in
            PASS:*|FAIL:*|SKIP:*) flush; cur="${line%%:*} ${line#*: }"; : >"$ev" ;;
            '#   '*) echo "${line#\#   }" >>"$ev" ;;
        esac
    done < <("$here/check.sh" --console "$log" --ip $ip_b --tests "$list" 2>/dev/null)
    flush
    for t in $(echo "$list" | tr ',' ' '); do
        case $judged in *" $t "*) continue ;; esac
        echo "check.sh gave no verdict (see $log)" >"$ev"
        tap_result FAIL "${shown:-$t} $fam: client A $client_show -> server B $server_show" "$ev"
    done
}
for fam in $(echo "$gids" | tr ',' ' '); do
    joined=$logdir/joined-$fam.log
    ev=$logdir/evidence-$fam.txt
    : >"$joined"
    tests=()
    for s in "${scens[@]}"; do
        tests+=("${s//_/-}")
        join_pair "$s.$fam" "$s" >>"$joined"
    done
    for e in "${tagged[@]}"; do
        IFS=: read -r k s _ _ <<<"$e"
        join_pair "$s@$k.$fam" "$s@$k" >>"$joined"
    done
    kernel_logs >>"$joined"
    echo 0 >"$joined.rc"
    [ ${#tests[@]} = 0 ] || judge "$joined" "$(IFS=,; echo "${tests[*]}")"
    kernel_logs >"$logdir/kernel-logs.sec"
    for e in "${tagged[@]}"; do
        IFS=: read -r k s e_size e_iters <<<"$e"
        one=$logdir/judge-$fam@$k.log
        { join_pair "$s@$k.$fam" "$s"; cat "$logdir/kernel-logs.sec"; } >"$one"
        judge "$one" "${s//_/-}" "${s//_/-}@$k (${e_size:+-s $e_size }-n $e_iters)"
    done
done

# --mtu: perftest takes the port's active MTU, which both devices derive
# from the interface's MTU: the largest IB MTU (256 to 4096) that fits it
# with the largest headers, 96 bytes as rdma_soft_port_ib_mtu() counts
# them (the same IB MTU as Linux rxe's at 1500, 2200 and 9000, the MTUs
# tried).  Every client's "Mtu : N[B]" must say so.
if [ -n "$mtu" ]; then
    want=256
    while [ $want -lt 4096 ] && [ $((want * 2)) -le $((mtu - 96)) ]; do want=$((want * 2)); done
    seen=$(cat "$logdir"/joined-*.log 2>/dev/null | awk '/^--- client \(exit / { on = 1; next }
        /^--- / { on = 0 } on && $1 == "Mtu" { sub(/^.*: */, ""); print }' | sort | uniq -c | sed 's/^ *//')
    if [ -z "$seen" ]; then
        note "path MTU: no perftest client printed one"
    elif [ "$seen" = "$(echo "$seen" | awk '{ print $1 }' | head -1) ${want}[B]" ]; then
        tap_result OK "path MTU $want at MTU $mtu: every perftest client's Mtu line ($seen)"
    else
        echo "perftest clients' Mtu lines (count value): $seen; want ${want}[B] only" >"$logdir/evidence-mtu.txt"
        tap_result FAIL "path MTU $want at MTU $mtu" "$logdir/evidence-mtu.txt"
    fi
fi

if [ $relay = 1 ]; then
    kill -TERM "$relay_pid" 2>/dev/null
    wait "$relay_pid" 2>/dev/null
    for p in "${counters[@]}"; do wait "$p" 2>/dev/null; done
    relay_line=$(grep -E '^relay: [0-9]+ frames' "$logdir/relay.log" |
                 tail -n 1)
    note "${relay_line:-relay: no counters (see $logdir/relay.log)}"
    # how long after A's new QEMU sent its first frame migrate.py named it
    lags=$(sed -nE 's/^relay: told A is at :[0-9]+, ([0-9]+) ms after.*/\1/p' \
           "$logdir/relay.log" | sort -n | tr '\n' ' ')
    [ -z "$lags" ] || note "relay: A's new QEMUs learnt from their first" \
        "frame, named by migrate.py that many ms later: $lags"
    # a side silent while frames went to it: migrated, or its QEMU held up
    # ... or the relay itself (its silences then are its own)
    held=$(sed -nE 's/^relay: held up ([0-9]+) ms .*/\1/p' \
           "$logdir/relay.log" | sort -n)
    [ -z "$held" ] || note "relay: held up itself for 250 ms or more:" \
        "$(echo "$held" | wc -l) times, longest $(echo "$held" | tail -n 1) ms"
    for side in A B; do
        silent=$(sed -nE "s/^relay: $side silent ([0-9]+) ms .*/\1/p" \
                 "$logdir/relay.log" | sort -n)
        [ -z "$silent" ] ||
            note "relay: $side silent for 250 ms or more while frames went" \
                "to it: $(echo "$silent" | wc -l) times, longest" \
                "$(echo "$silent" | tail -n 1) ms (relay.log says when)"
    done
    # (an rxe guest's pvrdma is unloaded: its counters would be zeros)
    [ "$mig_rounds" != 0 ] || [ "$client_dev" != pvrdma ] ||
        note "guest A ($client_dev): $(cat "$logdir/a.roce" 2>/dev/null)"
    [ "$server_dev" != pvrdma ] || note "guest B ($server_dev): $(cat "$logdir/b.roce" 2>/dev/null)"
    dropped=$(echo "$relay_line" | sed -nE 's/.* ([0-9]+) dropped.*/\1/p')
    if [ -z "$lossy" ]; then
        :
    elif [ "${dropped:-0}" -gt 0 ]; then
        tap_result OK "lossy link: the relay lost frames ($relay_line)"
    else
        tap_result FAIL "lossy link: the relay lost frames" "$logdir/relay.log"
    fi
fi
# --- the migrations ------------------------------------------------------------
# migrate.py's verdicts: "PASS: migration-SECTION" when all its migrations
# completed while SECTION's program ran (FAIL with "#   " lines, and
# FAIL: migration-harness when the migrating itself failed)
if [ "$mig_rounds" != 0 ]; then
    grep '^migration: ' "$logdir/a.migrate" | sed 's/^/# /'
    mig_ev=$logdir/evidence-migration.txt
    cur=
    mig_flush() {
        [ -n "$cur" ] || return 0
        if [ "${cur%% *}" = PASS ]; then
            tap_result OK "guest A migrated $((2 * mig_rounds)) times while ${cur#* } ran (client A $client_show, server B $server_show)"
        else
            tap_result FAIL "guest A migrated $((2 * mig_rounds)) times while ${cur#* } ran" "$mig_ev"
        fi
        cur=
    }
    while IFS= read -r line; do
        case $line in
            PASS:\ migration-*|FAIL:\ migration-*)
                mig_flush; cur="${line%%:*} ${line#*: migration-}"; : >"$mig_ev" ;;
            '#   '*) echo "${line#\#   }" >>"$mig_ev" ;;
        esac
    done <"$logdir/a.migrate"
    mig_flush
    if ! grep -qE '^(PASS|FAIL): migration-' "$logdir/a.migrate"; then
        tail -n 5 "$logdir/a.run.err" >"$mig_ev" 2>/dev/null
        tap_result FAIL "guest A migrated while its programs ran: migrate.py gave no verdict" "$mig_ev"
    fi
fi
note "logs: $logdir (a.log, b.log: consoles; joined-<gids>.log: both sides of each pair)"
[ -z "$pcap" ] || note "capture of guest A's netdev: $pcap ($(stat -c %s "$pcap" 2>/dev/null || echo 0) bytes)"
tap_summary two-guests
# shellcheck disable=SC2154   # pass and fail: tests/tap.sh
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
