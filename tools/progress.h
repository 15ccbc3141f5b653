// SPDX-License-Identifier: MIT
// Private to the tool: the one progress line of long commands (sim, replay
// record, replay verify, match). Drawn on stderr, and only when stderr is a
// terminal: pipes, files and CI logs get nothing. Appears after half a second,
// redraws at most ten times a second, and is erased when done.
#ifndef LS_TOOLS_PROGRESS_H
#define LS_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cli_progress {
    bool enabled;      ///< Allowed (no --no-progress) and stderr is a terminal.
    bool drawn;        ///< Something is on the line (erase it when done).
    const char *label; ///< e.g. "verify".
    const char *unit;  ///< e.g. "ticks".
    uint64_t total;    ///< 0: unknown (no bar).
    double start, last;
} cli_progress;

/// Start; `allowed` is false under --no-progress (or --json to a terminal is fine:
/// the line goes to stderr).
void cli_progress_init(cli_progress *p, const char *label, const char *unit, uint64_t total,
                       bool allowed);
/// Report `done` units; draws if due. Cheap enough to call every tick.
void cli_progress_update(cli_progress *p, uint64_t done);
/// Erase the line (if drawn). Call before printing results.
void cli_progress_done(cli_progress *p);
/// True when progress lines would be drawn (stderr is a terminal).
bool cli_progress_available(void);

#endif
