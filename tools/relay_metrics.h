// SPDX-License-Identifier: MIT
// Private to the tool: GET /metrics of `lockstep relay --api` (SPEC.md
// §17.13), the relay's counters for Prometheus.
#ifndef LS_TOOLS_RELAY_METRICS_H
#define LS_TOOLS_RELAY_METRICS_H
#include "relay_api.h"

#include <stdbool.h>

/// Register GET /metrics (wants the bearer token) on the API; false when its
/// route table is full.
bool relay_metrics_register(relay_api *a);

#endif
