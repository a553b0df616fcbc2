/*
 * Stand-in for QEMU's qemu/osdep.h, for the programs that compile a hw/rdma
 * module outside QEMU's build (tests/bench/mr-reg-bench.c,
 * tests/unit/rdma-ibv-map-test.c).  Only modules that need nothing from
 * QEMU but glib and libc can be built this way; this header provides the
 * system headers, helpers and host facts QEMU's osdep.h would, and nothing
 * else.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_INCLUDE_QEMU_OSDEP_H
#define TESTS_INCLUDE_QEMU_OSDEP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>
#include <glib.h>

/* What QEMU's config-host.h says of the host, where a module asks. */
#ifdef __x86_64__
#define HOST_X86_64 1
#endif

static inline uintptr_t qemu_real_host_page_size(void)
{
    return getpagesize();
}

#endif
