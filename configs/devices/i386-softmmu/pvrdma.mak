# SPDX-License-Identifier: GPL-2.0-or-later
# Device set of the pvrdma build for qemu-system-i386, the target a 32-bit
# host builds (QEMU has no 64-bit targets on 32-bit hosts): the x86_64 set.
include ../x86_64-softmmu/pvrdma.mak
