# Device set of the pvrdma build (configure --with-devices-x86_64=pvrdma):
# a PC machine, the two functions of the RDMA NIC, and what the test lanes
# use (virtio-net and virtio-9p for the host VM of the ibverbs lane).
CONFIG_I440FX=y
CONFIG_Q35=y
CONFIG_VMXNET3_PCI=y
CONFIG_PVRDMA=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_E1000_PCI=y
