/*
 * The QEMU releases the device builds on: 10.0 (Debian trixie) and 10.2.
 *
 * The code is written against 10.2's API; this header supplies it on 10.0.
 * It is the only place with a QEMU version check (scripts/qemu-tree.sh,
 * QEMU_VERSION).  What changed in 10.1:
 *  - the chardev front end: CharBackend became CharFrontend (the
 *    qemu_chr_fe_* functions are otherwise the same);
 *  - TypeInfo.class_init: its data argument became const void *;
 *  - exec/ramblock.h and exec/address-spaces.h moved to system/, included
 *    here by name (#include RDMA_RAMBLOCK_H);
 *  - qemu/compiler.h has QEMU_UNINITIALIZED;
 *  - SaveVMHandlers.save_live_complete_precopy became save_complete.
 * And in 10.2: vmstate_save_state() and vmstate_load_state() take an
 * Error ** (rdma_vmstate_save(), rdma_vmstate_load() report it).
 *
 * Include it after qemu/osdep.h (which brings config-host.h's
 * QEMU_VERSION_MAJOR and QEMU_VERSION_MINOR).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_RDMA_COMPAT_H
#define HW_RDMA_RDMA_COMPAT_H

#include "chardev/char-fe.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "migration/vmstate.h"

#define RDMA_QEMU_AT_LEAST(major, minor) \
    (QEMU_VERSION_MAJOR > (major) || \
     (QEMU_VERSION_MAJOR == (major) && QEMU_VERSION_MINOR >= (minor)))

#if RDMA_QEMU_AT_LEAST(10, 1)

/* void (*class_init)(ObjectClass *klass, RDMA_CLASS_DATA *data) */
#define RDMA_CLASS_DATA     const void
#define RDMA_RAMBLOCK_H         "system/ramblock.h"
#define RDMA_ADDRESS_SPACES_H   "system/address-spaces.h"
/* SaveVMHandlers' hook for a live section's last part */
#define RDMA_SAVE_COMPLETE      save_complete

#else

typedef CharBackend CharFrontend;
#define RDMA_CLASS_DATA     void
#define RDMA_RAMBLOCK_H         "exec/ramblock.h"
#define RDMA_ADDRESS_SPACES_H   "exec/address-spaces.h"
#define RDMA_SAVE_COMPLETE      save_live_complete_precopy

/*
 * 10.1's qemu/compiler.h: the attribute where the compiler has it (GCC 12
 * on; older ones warn).  The test goes through a macro because
 * checkpatch.pl takes any #if on a __ name for an architecture check.
 */
#define RDMA_HAS_ATTR_UNINITIALIZED __has_attribute(uninitialized)
#if RDMA_HAS_ATTR_UNINITIALIZED
#define QEMU_UNINITIALIZED  __attribute__((uninitialized))
#else
#define QEMU_UNINITIALIZED
#endif

#endif

/* One struct's fields through VMState, in a SaveVMHandlers callback */
static inline int rdma_vmstate_save(QEMUFile *f,
                                    const VMStateDescription *vmsd,
                                    void *opaque)
{
#if RDMA_QEMU_AT_LEAST(10, 2)
    Error *err = NULL;
    int ret = vmstate_save_state(f, vmsd, opaque, NULL, &err);

    if (err) {
        error_report_err(err);
    }
    return ret;
#else
    return vmstate_save_state(f, vmsd, opaque, NULL);
#endif
}

static inline int rdma_vmstate_load(QEMUFile *f,
                                    const VMStateDescription *vmsd,
                                    void *opaque, int version_id)
{
#if RDMA_QEMU_AT_LEAST(10, 2)
    Error *err = NULL;
    int ret = vmstate_load_state(f, vmsd, opaque, version_id, &err);

    if (err) {
        error_report_err(err);
    }
    return ret;
#else
    return vmstate_load_state(f, vmsd, opaque, version_id);
#endif
}

#endif
