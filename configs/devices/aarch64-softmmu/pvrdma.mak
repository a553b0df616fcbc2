# SPDX-License-Identifier: GPL-2.0-or-later
# Device set of the pvrdma build for qemu-system-aarch64 (configure
# --with-devices-aarch64=pvrdma): the virt machine, whose PCIe root bus
# takes the two functions of the RDMA NIC (vmxnet3 at function 0, pvrdma
# at function 1); the lane arm64 boots an arm64 Debian guest on it.
CONFIG_ARM_VIRT=y
CONFIG_VMXNET3_PCI=y
CONFIG_PVRDMA=y
