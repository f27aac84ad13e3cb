/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSCALE_CONTEXT_H
#define KSCALE_CONTEXT_H

#include "options.h"
#include "../sys/topology.h"

void context_add_system(const struct topology *t,
			const struct kscale_options *o);
void context_add_model(const struct kscale_model *m,
		       const struct kscale_options *o);

#endif
