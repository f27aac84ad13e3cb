// SPDX-License-Identifier: GPL-2.0
/* The torture hooks' pointer (torture.h): NULL until kscale torture runs. */
#include "torture.h"

const struct torture_hooks *torture_hooks;
