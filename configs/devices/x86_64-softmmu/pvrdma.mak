# SPDX-License-Identifier: GPL-2.0-or-later
# Device set of the pvrdma build (configure --with-devices-x86_64=pvrdma):
# a PC machine, the two functions of the RDMA NIC, and what the test lanes
# use (virtio-net and virtio-9p for the host VM of the ibverbs lane; PCIe
# root ports and the PCIe-to-PCI bridge for libvirt's q35 layout and the
# bridge-reset qtests).
CONFIG_I440FX=y
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_PCIE_PCI_BRIDGE=y
CONFIG_PCI_BRIDGE=y
CONFIG_VMXNET3_PCI=y
CONFIG_PVRDMA=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_E1000_PCI=y
