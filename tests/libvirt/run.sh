#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane "libvirt": the device under Debian's real libvirt daemon (libvirtd
# 9.0 of bookworm).  QEMU is installed into a DESTDIR, libvirtd runs in
# session mode as an unprivileged user with every directory it uses under
# <build-dir>/libvirt (no systemd, nothing in /etc, /run or /var touched),
# and a domain written as docs/pvrdma.txt section 3.2 says (domain.xml)
# boots the lane-2 test guest, whose init runs RDMA scenarios on the device
# and powers off (or, when the guest can, waits for virsh shutdown's ACPI
# power button); tests/guest/check.sh judges the console log.  README.md
# has the details.
#   run.sh <project-dir> <build-dir>
# Prints "ok N what" / "not ok N what" and "libvirt: N passed, N failed",
# progress as "[libvirt] ..." lines.
# Environment: LIBVIRT_LANE_USER (default nobody; the daemon's and QEMU's
# user, its primary group is used), LIBVIRT_LANE_TIMEOUT (seconds the
# guest may run, default 240).
# shellcheck disable=SC2317  # functions run through check()
set -euo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
here=$top/tests/libvirt
lv=$build/libvirt
dest=$lv/root                    # DESTDIR of the installed QEMU
emulator=$dest/usr/bin/qemu-system-x86_64
guest=$build/guest
user=${LIBVIRT_LANE_USER:-nobody}
group=$(id -gn "$user")
guest_timeout=${LIBVIRT_LANE_TIMEOUT:-240}
name=pvrdma-libvirt
mac=52:54:00:12:34:56            # tests/guest/run-guest.sh's
scenarios=probe,devinfo,gids,rc_pingpong
# what tests/guest/check.sh asserts on for those scenarios
verdicts=boot,modules,net,probe,devinfo,gid-roce-v2,rc-pingpong
verdicts+=,device-errors,kernel-clean,shutdown
cmdline="console=ttyS0 panic=-1 quiet pvrdma.test=$scenarios pvrdma.shell=0 pvrdma.timeout=30"
kernel=$guest/vmlinuz
initrd=$guest/initrd.img
# The pvrdma function as <qemu:arg>, as docs/pvrdma.txt 3.2 writes it.
# QEMU creates all key=value -device options before the JSON ones libvirt
# writes, so it is realized before its vmxnet3 at function 0 and must
# accept that (the JSON form is checked too, below).
pvrdma_arg='pvrdma,addr=10.1'
quot='&quot;'
pvrdma_xml=${pvrdma_arg//\"/"$quot"}     # as virsh dumpxml writes it

# Private directories of the daemon, owned by $user
home=$lv/home config=$lv/config cache=$lv/cache run=$lv/run logd=$lv/log
sock=$run/libvirt/libvirt-sock
qemu_log=$cache/libvirt/qemu/log/$name.log
qemu_pidfile=$run/libvirt/qemu/run/$name.pid
console=$logd/console.log
out=$lv/check.out
daemon_pid=
daemon_killed=0
start=$SECONDS
mkdir -p "$lv"

say() { printf '[libvirt] %3ds %s\n' $((SECONDS - start)) "$*"; }

# shellcheck source=../tap.sh
. "$top/tests/tap.sh"
# shellcheck source=domain.sh
. "$here/domain.sh"
tap_out=$out

finish() {
    tap_summary libvirt
    exit 0
}

# as_user COMMAND...: run COMMAND as $user with the daemon's private
# environment (libvirt 9.0 in session mode reads HOME and the XDG
# directories: config, cache and runtime; the data directory is unused).
# setpriv and env exec, so a command started in the background with
# "${as_user[@]}" keeps the pid $! names.
as_user=(setpriv --reuid="$user" --regid="$group" --clear-groups
         env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
         HOME="$home" XDG_CONFIG_HOME="$config" XDG_CACHE_HOME="$cache"
         XDG_RUNTIME_DIR="$run" XDG_DATA_HOME="$home/.local/share"
         LIBVIRT_AUTOSTART=0)
as_user() { "${as_user[@]}" "$@"; }
# virsh as the daemon's user on its session socket; LIBVIRT_AUTOSTART=0:
# never spawn a daemon of its own
virsh_() { as_user virsh -q -c qemu:///session "$@"; }

# Processes whose environment points into $lv: the daemon, QEMU and
# anything they spawned.  Prints "pid command" lines.
lane_procs() {
    local p e
    for p in /proc/[0-9]*; do
        e=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
        if grep -qxF "XDG_RUNTIME_DIR=$run" <<<"$e"; then
            echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-120)"
        fi
    done
}

# Stop what this run started, by pid: the domain, then the daemon.
cleanup() {
    local i p
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        if [ "$(virsh_ domstate "$name" 2>/dev/null | head -1)" != "shut off" ]; then
            virsh_ destroy "$name" >/dev/null 2>&1 || true
        fi
        kill -TERM "$daemon_pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            kill -0 "$daemon_pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -KILL "$daemon_pid" 2>/dev/null; then
            daemon_killed=1
        fi
        wait "$daemon_pid" 2>/dev/null || true
    fi
    daemon_pid=
    # a QEMU the daemon did not reap (it runs as $user, its pid in the pidfile)
    p=$(cat "$qemu_pidfile" 2>/dev/null) || p=
    if [ -n "$p" ] && [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$emulator" ]; then
        kill -KILL "$p" 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- packages, the guest, QEMU in a DESTDIR ---------------------------------
daemons() {
    local d
    for d in libvirtd virtqemud virtlogd virtlockd; do pgrep -x "$d" || true; done | sort
}
before=$(daemons)
say "packages: libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients"
check "apt-setup.sh libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients" \
    bash "$top/scripts/apt-setup.sh" libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
no_new_daemon() {
    local after
    after=$(daemons)
    [ "$after" = "$before" ] || { echo "running now: $after (before: $before)"; return 1; }
}
check "the package install started no libvirt daemon" no_new_daemon
[ $fail = 0 ] || finish

say "the test guest (tests/guest/build-guest.sh $guest)"
build_guest() {
    bash "$top/tests/guest/build-guest.sh" "$guest" >"$lv/build-guest.log" 2>&1 ||
        { tail -15 "$lv/build-guest.log"; return 1; }
}
check "build-guest.sh $guest" build_guest

say "QEMU into DESTDIR=$dest (PREFIX=/usr)"
rm -rf "$dest"
check "install.sh install into DESTDIR=${dest#"$build"/} PREFIX=/usr" \
    env PREFIX=/usr DESTDIR="$dest" bash "$top/scripts/install.sh" install "$top" "$build/qemu"
[ $fail = 0 ] || finish

# --- the daemon's private directories and configuration ---------------------
# (a run killed with SIGKILL leaves its daemon; the last check then fails)
stale=$(lane_procs)
[ -z "$stale" ] || say "warning: processes of an earlier run still use $run: $stale"
rm -rf "$home" "$config" "$cache" "$run" "$logd"
mkdir -p "$home" "$config/libvirt" "$cache" "$run" "$logd"
chmod 700 "$run"
# Only what differs from the session defaults: the log in logd, and QEMU's
# stdio and file chardevs written by the daemon itself instead of virtlogd
# (which session mode would spawn and leave running).
cat >"$config/libvirt/libvirtd.conf" <<EOF
log_outputs = "3:file:$logd/libvirtd.log"
EOF
cat >"$config/libvirt/qemu.conf" <<EOF
stdio_handler = "file"
EOF
chown -R "$user:$group" "$home" "$config" "$cache" "$run" "$logd"
[ ${#sock} -lt 108 ] || say "warning: $sock is longer than a socket path may be"

# The kernel and the initramfs of the guest, the emulator and its firmware
# (links to /usr/share) must be readable by the daemon's user.
readable() {
    # shellcheck disable=SC2016  # expanded by that sh
    as_user sh -c 'test -r "$1" && test -r "$2" && test -x "$3" && test -r "$4"' sh \
        "$kernel" "$initrd" "$emulator" "$dest/usr/share/qemu/bios-256k.bin" ||
        { ls -lL "$kernel" "$initrd" "$emulator"; return 1; }
}
check "$user reads the guest kernel, its initramfs and the installed QEMU" readable
[ $fail = 0 ] || finish

stamp=$lv/start.stamp
touch "$stamp"
say "libvirtd in session mode as $user, socket $sock"
"${as_user[@]}" libvirtd >"$logd/libvirtd.out" 2>&1 &
daemon_pid=$!
waited() {   # waited SECONDS COMMAND...: poll COMMAND every 0.2 s
    local i=$(($1 * 5))
    shift
    until "$@" >/dev/null 2>&1; do
        i=$((i - 1))
        [ "$i" -gt 0 ] || return 1
        kill -0 "$daemon_pid" 2>/dev/null || return 1
        sleep 0.2
    done
}
daemon_up() {
    # (virsh version would look for a default emulator in PATH: there is none)
    waited 30 virsh_ list --all ||
        { cat "$logd/libvirtd.out"; tail -5 "$logd/libvirtd.log"; return 1; }
    virsh_ uri && libvirtd --version
}
check "libvirtd (session, user $user) answers on its private socket" daemon_up
[ $fail = 0 ] || finish
sed 's/^/  # /' "$out"

# --- the domain ---------------------------------------------------------------
# domain_xml PVRDMA-ARG: domain.xml with its fields filled in
domain_xml() {
    fill_domain "$here/domain.xml" NAME="$name" EMULATOR="$emulator" \
        KERNEL="$kernel" INITRD="$initrd" CMDLINE="$cmdline" MAC="$mac" \
        CONSOLE="$console" PVRDMA="$1"
}

# The JSON form of the <qemu:arg>, created after libvirt's vmxnet3: the
# order of the main run reversed.
say "the JSON <qemu:arg>"
domain_xml '{"driver":"pvrdma","addr":"10.1"}' >"$logd/domain-keyval.xml"
check "virsh define (JSON <qemu:arg>)" virsh_ define "$logd/domain-keyval.xml"
start_keyval() {
    virsh_ start "$name" || return 1
    virsh_ destroy "$name"
}
check "virsh start with the JSON form: QEMU accepts vmxnet3 and pvrdma in either order" \
    start_keyval
virsh_ undefine "$name" >/dev/null 2>&1 || true
rm -f "$console" "$qemu_log"

# virsh shutdown needs a guest that reacts to the ACPI power button: init
# with pvrdma.acpi=1 (it then waits for the button after its scenarios)
# and the button and evdev modules in the initramfs.  Without them the
# guest powers off by itself, and the power-button check is skipped.
acpi=
files=$(gzip -dc "$initrd" | cpio -it --quiet 2>/dev/null) || true
if ! grep -q 'pvrdma\.acpi=' "$top/tests/guest/init"; then
    acpi="tests/guest/init has no pvrdma.acpi=1"
elif ! grep -q '/drivers/acpi/button\.ko' <<<"$files"; then
    acpi="the guest's initramfs has no button.ko (GUEST_MODULES of build-guest.sh)"
else
    cmdline+=" pvrdma.acpi=1"
fi

say "domain $name: define and start (guest scenarios $scenarios)"
domain_xml "$pvrdma_arg" >"$logd/domain.xml"
check "virsh define $logd/domain.xml" virsh_ define "$logd/domain.xml"
check "virsh start $name" virsh_ start "$name"
boot_start=$SECONDS

# While it runs (the guest needs several seconds to boot): the live XML,
# the command line libvirt gave QEMU, the QEMU process, QMP through libvirt.
virsh_ dumpxml "$name" >"$logd/dumpxml.xml" 2>&1 || true
live_xml() {
    local w
    for w in "<domain type='qemu' id=" "<emulator>$emulator</emulator>" \
             "<model type='vmxnet3'/>" "<mac address='$mac'/>" \
             "slot='0x10' function='0x0' multifunction='on'/>" \
             "<qemu:arg value='$pvrdma_xml'/>"; do
        grep -qF -- "$w" "$logd/dumpxml.xml" ||
            { echo "no \"$w\" in the live XML:"; cat "$logd/dumpxml.xml"; return 1; }
    done
}
check "virsh dumpxml: running, our emulator, vmxnet3 at 00:10.0 multifunction, the pvrdma arg" \
    live_xml
# The domain log holds the command line, one argument per line: our
# emulator, the vmxnet3 at 0x10 with multifunction, then the pvrdma arg.
qemu_cmdline() {
    awk -v q="$emulator" '
        index($0, q) == 1 { seen = 1 }
        /"driver":"vmxnet3"/ && /"addr":"0x10"/ && /"multifunction":true/ { vmx = NR }
        /^-device .*pvrdma/ { pv = NR }
        END { if (seen && vmx && pv > vmx) exit 0
              print "emulator " (seen ? "found" : "not found") ", vmxnet3 at line " vmx \
                    ", pvrdma at line " pv; exit 1 }' "$qemu_log"
}
check "QEMU's command line in the daemon's log: our QEMU, -device pvrdma after vmxnet3" qemu_cmdline
qpid=$(cat "$qemu_pidfile" 2>/dev/null) || qpid=
qemu_proc() {
    if [ -z "$qpid" ] || [ "$(readlink "/proc/$qpid/exe")" != "$emulator" ] ||
       [ "$(stat -c %U "/proc/$qpid")" != "$user" ]; then
        echo "pid ${qpid:-? (no $qemu_pidfile)}"
        ls -l "/proc/$qpid/exe"
        return 1
    fi
}
check "the QEMU process is the installed one and runs as $user" qemu_proc
hmp_info() {
    virsh_ qemu-monitor-command "$name" --hmp 'info pvrdma' >"$logd/info-pvrdma.txt" 2>&1
    cat "$logd/info-pvrdma.txt"
    grep -q ': backend soft' "$logd/info-pvrdma.txt"
}
check "virsh qemu-monitor-command --hmp 'info pvrdma': the device on the soft backend" hmp_info

# libvirt's migration to a file and back, once the guest's driver is up:
# the guest goes on with its scenarios in the restored QEMU.
say "virsh save and virsh restore once the guest's device is active"
seen() { tr -d '\r' <"$console" | grep -aq "$1"; }
waited_boot() {   # waited_boot PATTERN: until the console has it (or the guest ended)
    until seen "$1"; do
        [ $((SECONDS - boot_start)) -lt "$guest_timeout" ] || { echo "no '$1' on the console"; return 1; }
        [ "$(virsh_ domstate "$name" 2>/dev/null | head -1)" = running ] ||
            { echo "the guest ended before '$1'"; return 1; }
        sleep 0.2
    done
}
save_restore() {
    local s
    waited_boot '^GUEST-RESULT: devinfo ' || return 1
    virsh_ save "$name" "$logd/save.img" || return 1
    s=$(virsh_ domstate --reason "$name")
    ls -l "$logd/save.img"
    [ "$s" = 'shut off (saved)' ] || { echo "after save: $s"; return 1; }
    virsh_ restore "$logd/save.img" || return 1
    s=$(virsh_ domstate --reason "$name")
    echo "after restore: $s"
    case $s in running*) ;; *) return 1 ;; esac
}
check "virsh save, virsh restore after the guest's devinfo scenario" save_restore
rm -f "$logd/save.img"
qpid2=$(cat "$qemu_pidfile" 2>/dev/null) || qpid2=

# --- the guest runs its scenarios and powers off ------------------------------
say "waiting for the guest to power off (at most ${guest_timeout}s)"
state=
last=0
pressed=
while :; do
    state=$(virsh_ domstate --reason "$name" 2>&1 | head -1) || true
    case $state in "shut off"*) break ;; esac
    el=$((SECONDS - boot_start))
    if [ -z "$acpi" ] && [ -z "$pressed" ] &&
       grep -aq '^GUEST-ACPI: waiting for the power button' "$console"; then
        say "${el}s: the guest waits for the power button: virsh shutdown --mode acpi"
        pressed=$el
        check "virsh shutdown --mode acpi $name" virsh_ shutdown --mode acpi "$name"
    fi
    if [ "$el" -ge "$guest_timeout" ]; then
        say "timeout: $state after ${el}s; destroying $name"
        virsh_ destroy "$name" >/dev/null 2>&1 || true
        break
    fi
    if [ $((el - last)) -ge 10 ]; then
        last=$el
        say "${el}s: $state, console: $(tr -d '\r' <"$console" 2>/dev/null | grep -a '^GUEST-' | tail -1)"
    fi
    sleep 1
done
say "guest done after $((SECONDS - boot_start))s: $state"
powered_off() { echo "domstate: $state"; [ "$state" = 'shut off (shutdown)' ]; }
check "virsh domstate --reason: shut off (shutdown), the guest powered off" powered_off
button() {
    [ -n "$pressed" ] || { echo "the guest never waited for the power button"; return 1; }
    tr -d '\r' <"$console" | grep -a '^GUEST-ACPI:'
    tr -d '\r' <"$console" | grep -aq '^GUEST-ACPI: power button pressed$'
}
if [ -n "$acpi" ]; then
    n=$((n + 1))
    pass=$((pass + 1))
    echo "ok $n virsh shutdown: the guest reacts to the power button # SKIP $acpi"
else
    check "virsh shutdown: the guest's acpid saw the power button, then it powered off" button
fi
check "libvirt saw the guest's shutdown and stopped QEMU ('reason=shutdown' in the domain log)" \
    grep -q 'shutting down, reason=shutdown' "$qemu_log"

# The console log, judged as tests/guest/check.sh judges its own boots;
# QEMU's status for its "shutdown" verdict: 0 when libvirt recorded the
# guest's own shutdown.
if [ "$state" = 'shut off (shutdown)' ]; then echo 0; else echo 1; fi >"$console.rc"
GUEST_DIR=$guest bash "$top/tests/guest/check.sh" --console "$console" \
    --tests "$verdicts" >"$logd/verdicts.txt" 2>/dev/null || true
# Each of check.sh's verdicts is one of ours, its "#" lines the evidence.
detail=()
flush() {
    [ -n "${v:-}" ] || return 0
    printf '%s\n' "${detail[@]}" >"$out"
    tap_result "$([ "$v" = PASS ] && echo OK || echo FAIL)" "guest: $t" "$out"
    v='' detail=()
}
v=
while IFS= read -r l; do
    case $l in
    PASS:*|FAIL:*) flush; v=${l%%:*} t=${l#*: } ;;
    '#'*) detail+=("$l") ;;
    esac
done <"$logd/verdicts.txt"
flush
all_judged() {
    local want got
    want=$(tr ',' '\n' <<<"$verdicts" | wc -l)
    got=$(grep -cE '^(PASS|FAIL):' "$logd/verdicts.txt")
    [ "$got" = "$want" ] || { echo "$got of $want verdicts:"; cat "$logd/verdicts.txt"; return 1; }
}
check "check.sh judged every verdict ($verdicts)" all_judged

# --- teardown -----------------------------------------------------------------
qemu_gone() {
    local p
    for p in $qpid $qpid2; do
        [ "$(readlink "/proc/$p/exe" 2>/dev/null)" != "$emulator" ] ||
            { ps -o pid,user,etime,args -p "$p"; return 1; }
    done
}
check "no QEMU process left (pids ${qpid:-?} ${qpid2:-?}, before and after restore)" qemu_gone
undefined() {
    local l
    virsh_ undefine "$name" || return 1
    l=$(virsh_ list --all --name) || return 1
    [ -z "$(tr -d '[:space:]' <<<"$l")" ] || { echo "still defined: $l"; return 1; }
}
check "virsh undefine $name; virsh list --all is empty" undefined
say "stopping libvirtd (pid $daemon_pid)"
dpid=$daemon_pid
cleanup
all_gone() {
    local left
    ! kill -0 "$dpid" 2>/dev/null || { echo "libvirtd (pid $dpid) still runs"; return 1; }
    [ "$daemon_killed" = 0 ] || { echo "libvirtd needed SIGKILL (10 s after SIGTERM)"; return 1; }
    left=$(lane_procs)
    [ -z "$left" ] || { echo "left: $left"; return 1; }
}
check "libvirtd ended on SIGTERM; no process of the lane left" all_gone
untouched() {
    local f
    f=$(find /etc/libvirt /run/libvirt /var/lib/libvirt /var/log/libvirt /var/cache/libvirt \
        -newer "$stamp" 2>/dev/null)
    [ -z "$f" ] || { echo "$f"; return 1; }
}
check "nothing written to /etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/log/libvirt, /var/cache/libvirt" \
    untouched
say "done in $((SECONDS - start))s; logs in $logd, the daemon's in $cache/libvirt/qemu/log"
finish
