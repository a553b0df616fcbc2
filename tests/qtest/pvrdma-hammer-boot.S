# Firmware for /pvrdma/doorbells/two-vcpus (pvrdma-datapath-test.c): both
# vCPUs of a TCG guest write pvrdma doorbells in a loop, the second one
# started by the first with INIT and STARTUP IPIs.  No BIOS runs, so the
# test sets up PCI through qtest as every other qtest does.
#
# The test puts this code at the start of a 64 KiB -bios image, which the
# pc machine maps at 0xf0000, and a jump to it at the reset vector (0xfff0).
# STARTUP vector 0xf0 starts the AP there too; in protected mode each vCPU
# tells from IA32_APIC_BASE whether it is the BSP.
# The BSP sets READY and waits; the test writes the parameter block, then
# sets GO; each vCPU writes its four doorbells per pass and counts its
# passes until the test sets STOP, then marks itself done and halts.
#
# Regenerate pvrdma-hammer-boot.h after a change (binutils, xxd):
#   as --32 -o /tmp/hb.o pvrdma-hammer-boot.S &&
#   ld -m elf_i386 -Ttext=0xf0000 -e start --oformat=binary \
#      -o /tmp/hb.bin /tmp/hb.o &&
#   (printf '/*\n * %s: %s\n' SPDX-License-Identifier GPL-2.0-or-later;
#    printf ' * Generated from pvrdma-hammer-boot.S: see there.\n */\n';
#    echo 'static const unsigned char pvrdma_hammer_boot[] = {';
#    xxd -i </tmp/hb.bin; echo '};') >pvrdma-hammer-boot.h
#
# Copyright (c) 2026 The pvrdma for modern QEMU authors
# SPDX-License-Identifier: GPL-2.0-or-later

# The parameter block (keep in step with HB_* in pvrdma-datapath-test.c)
.set READY,   0x500   # the BSP sets 1 when it waits for GO
.set GO,      0x504   # the test sets 1: start
.set STOP,    0x508   # the test sets 1: stop
.set UAR,     0x50c   # guest-physical address of UAR page 0
.set DB,      0x510   # vCPU n's doorbells: 4 x (offset, value) at DB + 32n
.set COUNT,   0x550   # vCPU n's passes at COUNT + 4n
.set DONE,    0x560   # vCPU n sets DONE + 4n to 1 when it stopped
.set APIC_ICR_LO, 0xfee00300
.set APIC_ICR_HI, 0xfee00310
.set BASE,    0xf0000 # where the image's first 64 KiB appear

.code16
.globl start
start:                          # offset 0: both vCPUs, CS = 0xf000
    cli
    movw $BASE >> 4, %ax
    movw %ax, %ds
    lgdtl gdt_desc - start
    movl %cr0, %eax
    orb $1, %al
    movl %eax, %cr0
    ljmpl $0x08, $pm32

.code32
pm32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl $0x1b, %ecx            # IA32_APIC_BASE: bit 8 is set on the BSP
    rdmsr
    btl $8, %eax
    jc bsp
    movl $0x6000, %esp
    movl $1, %ebx
    jmp hammer

bsp:
    movl $0x7000, %esp
    movl $1, READY
1:  pause
    cmpl $0, GO
    je 1b
    # INIT, then STARTUP at BASE, to APIC ID 1
    movl $0x01000000, APIC_ICR_HI
    movl $0x00004500, APIC_ICR_LO
    movl $0x01000000, APIC_ICR_HI
    movl $0x00004600 + (BASE >> 12), APIC_ICR_LO
    xorl %ebx, %ebx

# %ebx: vCPU index.  %esi: UAR page 0, %edi: this vCPU's doorbells.
hammer:
    movl UAR, %esi
    movl %ebx, %edi
    shll $5, %edi
    addl $DB, %edi
2:  movl 0(%edi), %ecx
    movl 4(%edi), %eax
    movl %eax, (%esi, %ecx)
    movl 8(%edi), %ecx
    movl 12(%edi), %eax
    movl %eax, (%esi, %ecx)
    movl 16(%edi), %ecx
    movl 20(%edi), %eax
    movl %eax, (%esi, %ecx)
    movl 24(%edi), %ecx
    movl 28(%edi), %eax
    movl %eax, (%esi, %ecx)
    incl COUNT(, %ebx, 4)
    cmpl $0, STOP
    je 2b
    movl $1, DONE(, %ebx, 4)
3:  cli
    hlt
    jmp 3b

.p2align 3
gdt:
    .quad 0
    .quad 0x00cf9a000000ffff    # 0x08: code, flat 4 GiB, 32-bit
    .quad 0x00cf92000000ffff    # 0x10: data, flat 4 GiB
gdt_desc:
    .word gdt_desc - gdt - 1
    .long gdt
