// SPDX-License-Identifier: MIT
// `lockstep demo`: the end-to-end job that exists today. A projectile is
// launched, spins and falls for N ticks under the fixed-point integrator; every
// tick's state goes through the canonical checksum, printed once per second.
#include "cli.h"
#include "ls/checksum.h"
#include "ls/fx_text.h"
#include "ls/quat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_command cmd_demo_def = {
    "demo", "integrate a spinning projectile and print its per-tick checksums",
    "[--ticks N]\n\n"
    "  --ticks N   ticks to integrate, 1..1000000 (default 600, at 60 Hz)",
    cmd_demo, NULL};

int cmd_demo(int argc, char **argv)
{
    long ticks = 600;
    for (int i = 1; i < argc; i++) {
        const char *v;
        uint64_t n;
        if (cli_option(&cmd_demo_def, argc, argv, &i, "--ticks", &v)) {
            if (!v || !cli_parse_u64(&cmd_demo_def, "--ticks", v, 1, 1000000, &n)) {
                return CLI_EXIT_USAGE;
            }
            ticks = (long)n;
        } else {
            return cli_unexpected(&cmd_demo_def, argv[i]);
        }
    }
    const ls_fx dt = ls_fx_from_ratio(1, 60);
    const ls_vec3 gravity = ls_vec3_make(0, ls_fx_from_ratio(-981, 100), 0);
    ls_vec3 pos = ls_vec3_make(0, ls_fx_from_int(10), 0);
    ls_vec3 vel = ls_vec3_make(ls_fx_from_int(3), ls_fx_from_int(12), ls_fx_from_int(-1));
    ls_vec3 spin = ls_vec3_make(ls_fx_from_int(2), LS_FX_ONE, ls_fx_from_ratio(1, 2));
    ls_quat rot = ls_quat_identity();
    printf("tick checksum          position (x y z)\n");
    for (long t = 1; t <= ticks; t++) {
        vel = ls_vec3_mad(vel, gravity, dt);
        pos = ls_vec3_mad(pos, vel, dt);
        rot = ls_quat_integrate(rot, spin, dt);
        ls_hasher h;
        ls_hasher_init(&h);
        ls_hasher_put_u32(&h, (uint32_t)t);
        ls_hasher_put_vec3(&h, pos);
        ls_hasher_put_vec3(&h, vel);
        ls_hasher_put_quat(&h, rot);
        uint64_t sum = ls_hasher_digest(&h);
        if (t % 60 == 0 || t == ticks) {
            char x[LS_FX_TEXT_MAX], y[LS_FX_TEXT_MAX], z[LS_FX_TEXT_MAX];
            ls_fx_format(pos.x, x);
            ls_fx_format(pos.y, y);
            ls_fx_format(pos.z, z);
            printf("%4ld %016llx %s %s %s\n", t, (unsigned long long)sum, x, y, z);
        }
    }
    return CLI_EXIT_OK;
}
