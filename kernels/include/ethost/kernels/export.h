// export.h: symbol visibility of the fused kernels (compiled into libethost_toolkit, versioned with the
// toolkit).
#pragma once

#define ET_KERNEL_API __attribute__((visibility("default")))
