# SPDX-License-Identifier: GPL-2.0-or-later
"""A QMP client for the test harness (migrate.py, soak_sample.py)."""

import json
import socket
import time


class Qmp:
    """A QMP connection: one command at a time, events skipped."""

    def __init__(self, path, timeout=60, poll=0.05):
        end = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > end:
                    raise RuntimeError(f"no QMP socket at {path}")
                time.sleep(poll)
        self.f = self.sock.makefile("rw")
        self.f.readline()                       # greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.f.write(json.dumps(msg) + "\n")
        self.f.flush()
        while True:
            line = self.f.readline()
            if not line:
                raise RuntimeError(f"QMP closed during {name}")
            r = json.loads(line)
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise RuntimeError(f"{name}: {r['error'].get('desc')}")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
