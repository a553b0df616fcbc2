/*
 * rdmacm-mux logging: everything goes to stderr with the daemon's name;
 * debug lines only with --verbose.  Apart from main.c so that the client
 * and routing code can be linked into other programs (the fuzzer).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>

#include "mux.h"

bool mux_verbose;

static void __attribute__((format(printf, 1, 0)))
mux_vlog(const char *fmt, va_list ap)
{
    char buf[1024];

    vsnprintf(buf, sizeof(buf), fmt, ap);
    fprintf(stderr, "rdmacm-mux: %s\n", buf);
}

void mux_log(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    mux_vlog(fmt, ap);
    va_end(ap);
}

void mux_debug(const char *fmt, ...)
{
    va_list ap;

    if (!mux_verbose) {
        return;
    }
    va_start(ap, fmt);
    mux_vlog(fmt, ap);
    va_end(ap);
}

const char *mux_gid_str(const uint8_t *gid, char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, gid, buf, len)) {
        snprintf(buf, len, "?");
    }
    return buf;
}
