// SPDX-License-Identifier: MIT
// The build fingerprint (SPEC.md §16.8): everything a recording's bits depend
// on, in one string a replay's header carries.
#include "ls/game.h"
#include "state.h"

const char *ls_game_fingerprint(void)
{
    // Everything a replay's bits depend on: number format, libfixmath build,
    // checksum definition, snapshot layout (keyframes) and the game rules.
    // `game=` names the push game's rules only: the rules a replay is played
    // with are the recorded scene's `game` statement (SPEC.md §15, §16.8), and
    // the embedded scene is part of the replay, so a soccer recording needs no
    // other string and every push recording (crosscheck's arena.lsr) still verifies.
    // `snapshot=` is made from the version the snapshot code writes, so the two
    // cannot drift apart (tests: replay_game/fingerprint_names_the_snapshot_version).
    return "fx=Q16.16;libfixmath=0~20220222,no-FIXMATH-defines;checksum=xxh3-64,SPEC-8+12;"
           "snapshot=LSSN-" LS_SNAPSHOT_VERSION_TEXT ";physics=solver-v3;game=push-20N-v1";
}
