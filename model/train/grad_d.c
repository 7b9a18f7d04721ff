/* grad_d.c — grad_ops.h's operations in double precision, plain loops in a fixed order: the
 * oracle of the gradient check (tests/t_grad.c). The code is model/grad_impl.h's. */
#define R double
#define S _d
#define GB_FLOAT 0
#include "model/train/grad_impl.h"
