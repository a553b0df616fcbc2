#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Follow a QEMU's pvrdma RoCE counters until the QEMU exits.

    roce-counters.py QMP-SOCKET-PATH

Connects to the QMP socket (waiting up to 120 s for it to appear), asks
query-pvrdma every half second, and when QEMU closes the socket prints the
last "roce" member it saw as one line:
    roce: netdev n0 mtu 1500 tx-frames N tx-dropped N rx-frames N rx-dropped N
          timeouts N retransmits N seq-naks N duplicates N
(on one line), or "roce: none" if the device never had a port.
"""

import json
import os
import socket
import sys
import time


def main():
    path = sys.argv[1]
    end = time.monotonic() + 120
    while not os.path.exists(path):
        if time.monotonic() > end:
            print("roce: none (no QMP socket)")
            return 0
        time.sleep(0.2)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        print("roce: none (%s)" % e)
        return 0
    f = s.makefile("rw")
    last = None
    try:
        f.readline()                            # the greeting
        f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
        f.flush()
        f.readline()
        while True:
            f.write(json.dumps({"execute": "query-pvrdma"}) + "\n")
            f.flush()
            while True:
                line = f.readline()
                if not line:
                    raise EOFError
                msg = json.loads(line)
                if "return" in msg or "error" in msg:
                    break
            for dev in msg.get("return", []):
                if "roce" in dev:
                    last = dev["roce"]
            time.sleep(0.5)
    except (EOFError, OSError, ValueError):
        pass
    if last is None:
        print("roce: none")
    else:
        print("roce: " + " ".join("%s %s" % (k, v) for k, v in last.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
