#include "trace/trace-hw_rdma_vmw.h"
