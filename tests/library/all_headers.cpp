// SPDX-License-Identifier: MIT
// Every public header in one C++ translation unit, compiled as C++11 and C++17
// with g++ and clang++ (-Wall -Wextra -pedantic -Werror) and linked against
// liblockstep: the headers are C++-safe and the symbols have C linkage.
#include "ls/base.h"
#include "ls/checksum.h"
#include "ls/fx.h"
#include "ls/fx_text.h"
#include "ls/game.h"
#include "ls/hull.h"
#include "ls/joint.h"
#include "ls/mat3.h"
#include "ls/mesh.h"
#include "ls/net_fault.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "ls/net_rollback.h"
#include "ls/net_spectator.h"
#include "ls/net_synctest.h"
#include "ls/net_uv.h"
#include "ls/net_wire.h"
#include "ls/particles.h"
#include "ls/quat.h"
#include "ls/query.h"
#include "ls/render_float.h"
#include "ls/replay.h"
#include "ls/replay_sign.h"
#include "ls/rng.h"
#include "ls/scene.h"
#include "ls/trig.h"
#include "ls/vec3.h"
#include "ls/world.h"

#include <cstdio>
#include <cstring>
#include <vector>

int main()
{
    // One function from each module, so the link proves C linkage everywhere.
    ls_error err;
    ls_world_def wd = ls_default_world_def();
    ls_world *w = ls_world_create(&wd, &err);
    if (!w) {
        std::printf("world: %s\n", err.message);
        return 1;
    }
    ls_body_def bd = ls_default_body_def();
    bd.position = ls_vec3_make(0, ls_fx_from_int(5), 0);
    ls_body_id id = ls_body_create(w, &bd, &err);
    ls_body_def sd = ls_default_body_def();
    sd.type = LS_BODY_STATIC;
    sd.position = ls_vec3_make(0, ls_fx_from_int(7), 0);
    ls_joint_def jd = ls_default_joint_def();
    jd.type = LS_JOINT_DISTANCE;
    jd.body_a = ls_body_create(w, &sd, &err);
    jd.body_b = id;
    jd.anchor = sd.position;
    jd.anchor_b = bd.position;
    jd.max_length = ls_fx_from_int(3); // a 3 m rope: the body still falls 1 m
    if (ls_joint_create(w, &jd, &err).index1 == 0) {
        std::printf("joint: %s\n", err.message);
        return 1;
    }
    for (int t = 0; t < 30; t++) {
        ls_world_step(w);
    }
    ls_body_state st;
    if (ls_body_get_state(w, id, &st, &err) != LS_OK || st.position.y >= ls_fx_from_int(5)) {
        std::printf("body did not fall\n");
        return 1;
    }
    std::vector<uint8_t> snap(ls_world_snapshot_size(w));
    ls_world_snapshot_save(w, snap.data(), snap.size());
    char text[LS_FX_TEXT_MAX];
    ls_fx_format(st.position.y, text);
    ls_replay_recorder_def rd = ls_default_replay_recorder_def();
    ls_peer_def pd = ls_default_peer_def();
    ls_relay_def reld = ls_default_relay_def();
    ls_hasher h;
    ls_hasher_init(&h);
    float model[16]; // the body's pose as a renderer's column-major model matrix
    ls_render_transformf(st.position, st.orientation, model);
    if (model[13] != ls_render_float(st.position.y) || model[15] != 1.0f) {
        std::printf("render_float: translation not in model[12..14]\n");
        return 1;
    }
    std::printf("c++%ld: y after 30 ticks %s, checksum %016llx, snapshot %zu bytes, "
                "fingerprint %zu chars, defaults %u %u %u, %u joint, %s\n",
                (long)__cplusplus, text, (unsigned long long)ls_world_checksum(w), snap.size(),
                std::strlen(ls_game_fingerprint()), rd.players, pd.max_lead, reld.max_sessions,
                ls_world_joint_count(w), ls_result_name(LS_ERR_INVALID_ID));
    ls_world_destroy(w);
    return 0;
}
