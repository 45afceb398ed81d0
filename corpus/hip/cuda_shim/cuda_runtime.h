/* hipcc builds of corpus/cuda/: see ../zlb_hip_port.h. */
#include "../zlb_hip_port.h"
