// SPDX-License-Identifier: MIT
// ls_data_dir (ls/scene.h): where the installed scenes are. The Makefile
// compiles this file alone with -DLS_DATADIR="PREFIX/share/lockstep" (and
// rebuilds it when PREFIX changes), and keeps it out of the crosscheck and
// browser builds, which have no install.
#include "ls/scene.h"

#include <stdlib.h>

#ifndef LS_DATADIR
#define LS_DATADIR "/usr/local/share/lockstep"
#endif

const char *ls_data_dir(void)
{
    const char *data = getenv("LOCKSTEP_DATA");
    return data && data[0] ? data : LS_DATADIR;
}
