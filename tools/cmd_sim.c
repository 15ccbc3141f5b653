// SPDX-License-Identifier: MIT
// `lockstep sim SCENE`: run a scene headless, optionally printing the canonical
// checksum of every tick, then a summary.
#define _POSIX_C_SOURCE 200809L // clock_gettime (the profile clock)
#include "cli.h"
#include "json.h"
#include "ls/fx_text.h"
#include "ls/particles.h"
#include "ls/scene.h"
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const cli_command cmd_sim_def = {
    "sim", "run a scene file and print per-tick checksums and a summary",
    "SCENE [--ticks N] [--checksums] [--trace I] [--max-memory MB] [--threads N]\n"
    "      [--simd auto|scalar|avx2|avx512] [--profile] [--json] [--no-progress]\n\n"
    "  SCENE          a .scene file; if missing, the installed scenes are searched\n"
    "                 ($LOCKSTEP_DATA/scenes, else the install prefix's share/lockstep/scenes)\n"
    "  --ticks N      ticks to run, 0..100000000 (default: the scene's `ticks`)\n"
    "  --checksums    print `tick checksum` (hex) for every tick\n"
    "  --trace I      print body I's position and velocity every tick (I = 1-based file order)\n"
    "  --max-memory MB refuse a scene whose world needs more than MB MiB (default 1024)\n"
    "  --threads N    step with N workers, 1..64 (default 1); the results are the same\n"
    "  --simd PATH    the solver's vector path (default auto: the fastest this CPU has);\n"
    "                 the results are the same on every path\n"
    "  --profile      time the stages of every step (ls_world_profile) and print their\n"
    "                 mean, ms/tick; timing changes no result\n"
    "  --json         one JSON document: summary, and per_tick records with --checksums/--trace\n"
    "  --no-progress  no progress line (it is only drawn when stderr is a terminal)\n\n"
    "Exit status 3 when a fixed-point overflow happened during the run, or when the world\n"
    "needed more than its capacity (a pair, contact or particle-contact buffer was full:\n"
    "contacts were left out; raise the scene's max_contacts / max_particles).",
    cmd_sim, NULL};

typedef struct sim_opts {
    const char *path;
    long ticks;
    bool checksums, json, progress, profile;
    uint64_t trace;
    uint64_t max_memory_mb;
    uint64_t threads;
    ls_simd simd;
} sim_opts;

// Particle systems (only when the scene has some): systems, particles,
// constraints and how many of them tore.
static void print_particles(const ls_world *w)
{
    uint32_t systems = ls_world_particle_system_count(w);
    if (systems == 0) {
        return;
    }
    uint64_t particles = 0, constraints = 0, torn = 0;
    for (uint32_t i = 0; i < systems; i++) {
        ls_particle_system_id id = ls_world_particle_system_at(w, i);
        particles += ls_particle_count(w, id);
        uint32_t n = ls_particle_constraint_count(w, id);
        constraints += n;
        for (uint32_t k = 0; k < n; k++) {
            torn += ls_particle_constraint_is_torn(w, id, k);
        }
    }
    printf("\nparticle_systems %u  particles %llu  constraints %llu  torn %llu", systems,
           (unsigned long long)particles, (unsigned long long)constraints,
           (unsigned long long)torn);
}

static void print_summary(const ls_world *w)
{
    ls_step_info info = ls_world_info(w);
    char pen[LS_FX_TEXT_MAX];
    ls_fx_format(info.max_penetration, pen);
    printf(
        "ticks %u  bodies %u  awake %u  asleep %u  contacts %u  max_penetration %s m  overflows %u",
        info.tick, ls_world_body_count(w), info.awake_bodies, info.asleep_bodies, info.contacts,
        pen, info.overflow_count);
    if (info.overflow_count) {
        printf(" (first: body %u at tick %u)", info.overflow_body.index1, info.overflow_tick);
    }
    print_particles(w);
    printf("\nfinal checksum %016llx\n", (unsigned long long)ls_world_checksum(w));
}

static void json_summary(json_out *j, const ls_world *w)
{
    ls_step_info info = ls_world_info(w);
    json_key(j, "ticks"), json_u64(j, info.tick);
    json_key(j, "bodies"), json_u64(j, ls_world_body_count(w));
    json_key(j, "awake"), json_u64(j, info.awake_bodies);
    json_key(j, "asleep"), json_u64(j, info.asleep_bodies);
    json_key(j, "contacts"), json_u64(j, info.contacts);
    json_key(j, "max_penetration_m"), json_fx(j, info.max_penetration);
    json_key(j, "overflows"), json_u64(j, info.overflow_count);
    json_key(j, "first_overflow");
    if (info.overflow_count) {
        json_object_begin(j);
        json_key(j, "body"), json_u64(j, info.overflow_body.index1);
        json_key(j, "tick"), json_u64(j, info.overflow_tick);
        json_object_end(j);
    } else {
        json_null(j);
    }
    json_key(j, "final_checksum"), json_hex64(j, ls_world_checksum(w));
}

static void print_trace(const ls_world *w, ls_body_id id)
{
    ls_vec3 p = ls_body_position(w, id), v = ls_body_linear_velocity(w, id);
    char t[6][LS_FX_TEXT_MAX];
    ls_fx_format(p.x, t[0]), ls_fx_format(p.y, t[1]), ls_fx_format(p.z, t[2]);
    ls_fx_format(v.x, t[3]), ls_fx_format(v.y, t[4]), ls_fx_format(v.z, t[5]);
    printf("%u pos %s %s %s vel %s %s %s%s\n", ls_world_tick(w), t[0], t[1], t[2], t[3], t[4], t[5],
           ls_body_is_asleep(w, id) ? " asleep" : "");
}

static void json_vec3(json_out *j, const char *key, ls_vec3 v)
{
    json_key(j, key);
    json_array_begin(j);
    json_fx(j, v.x), json_fx(j, v.y), json_fx(j, v.z);
    json_array_end(j);
}

// One per_tick record: {"tick", ["checksum"], ["position", "velocity", "asleep"]}.
static void json_tick(json_out *j, const ls_world *w, const sim_opts *o, ls_body_id id)
{
    json_object_begin(j);
    json_key(j, "tick"), json_u64(j, ls_world_tick(w));
    if (o->checksums) {
        json_key(j, "checksum"), json_hex64(j, ls_world_checksum(w));
    }
    if (o->trace) {
        json_vec3(j, "position", ls_body_position(w, id));
        json_vec3(j, "velocity", ls_body_linear_velocity(w, id));
        json_key(j, "asleep"), json_bool(j, ls_body_is_asleep(w, id));
    }
    json_object_end(j);
}

static int parse(int argc, char **argv, sim_opts *o)
{
    *o = (sim_opts){
        .ticks = -1, .progress = true, .max_memory_mb = 1024, .threads = 1, .simd = LS_SIMD_AUTO};
    for (int i = 1; i < argc; i++) {
        const char *v;
        uint64_t n;
        if (cli_option(&cmd_sim_def, argc, argv, &i, "--ticks", &v)) {
            if (!v || !cli_parse_u64(&cmd_sim_def, "--ticks", v, 0, 100000000, &n)) {
                return CLI_EXIT_USAGE;
            }
            o->ticks = (long)n;
        } else if (cli_option(&cmd_sim_def, argc, argv, &i, "--max-memory", &v)) {
            if (!v ||
                !cli_parse_u64(&cmd_sim_def, "--max-memory", v, 1, 65536, &o->max_memory_mb)) {
                return CLI_EXIT_USAGE;
            }
        } else if (cli_option(&cmd_sim_def, argc, argv, &i, "--threads", &v)) {
            if (!v || !cli_parse_u64(&cmd_sim_def, "--threads", v, 1, 64, &o->threads)) {
                return CLI_EXIT_USAGE;
            }
        } else if (cli_option(&cmd_sim_def, argc, argv, &i, "--simd", &v)) {
            if (!v || !cli_parse_simd(&cmd_sim_def, v, &o->simd)) {
                return CLI_EXIT_USAGE;
            }
        } else if (cli_option(&cmd_sim_def, argc, argv, &i, "--trace", &v)) {
            if (!v || !cli_parse_u64(&cmd_sim_def, "--trace", v, 1, UINT32_MAX, &o->trace)) {
                return CLI_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--checksums") == 0) {
            o->checksums = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            o->json = true;
        } else if (strcmp(argv[i], "--profile") == 0) {
            o->profile = true;
        } else if (strcmp(argv[i], "--no-progress") == 0) {
            o->progress = false;
        } else if (argv[i][0] != '-' && !o->path) {
            o->path = argv[i];
        } else {
            return cli_unexpected(&cmd_sim_def, argv[i]);
        }
    }
    if (!o->path) {
        return cli_usage_error(&cmd_sim_def, "missing SCENE");
    }
    return CLI_EXIT_OK;
}

// The profile clock of --profile (ls_world_def.profile_clock): nanoseconds.
static uint64_t sim_clock(void *context)
{
    (void)context;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// The stages of ls_profile in step order, with their names.
#define PROFILE_STAGES 14
static void profile_stages(const ls_profile *p, const char **name, uint64_t *ns)
{
    static const char *const names[PROFILE_STAGES] = {
        "step",    "proxies",  "vehicles",    "pairs",  "narrow",     "contacts",  "wake",
        "prepare", "substeps", "restitution", "finish", "continuous", "particles", "sleep"};
    const uint64_t v[PROFILE_STAGES] = {
        p->step,    p->proxies,  p->vehicles,    p->pairs,  p->narrow,     p->contacts,  p->wake,
        p->prepare, p->substeps, p->restitution, p->finish, p->continuous, p->particles, p->sleep};
    for (int k = 0; k < PROFILE_STAGES; k++) {
        name[k] = names[k];
        ns[k] = v[k];
    }
}

// The mean of each stage over `ticks` steps (sum[k] nanoseconds), ms/tick.
static void print_profile(const uint64_t *sum, long ticks)
{
    const char *name[PROFILE_STAGES];
    uint64_t unused[PROFILE_STAGES];
    ls_profile zero = {0};
    profile_stages(&zero, name, unused);
    printf("profile (ms/tick, mean of %ld ticks):", ticks);
    for (int k = 0; k < PROFILE_STAGES; k++) {
        printf(" %s %.4f", name[k], ticks ? (double)sum[k] / 1e6 / (double)ticks : 0.0);
    }
    printf("\n");
}

static void json_profile(json_out *j, const uint64_t *sum, long ticks)
{
    const char *name[PROFILE_STAGES];
    uint64_t unused[PROFILE_STAGES];
    ls_profile zero = {0};
    profile_stages(&zero, name, unused);
    json_key(j, "profile_ms_per_tick"), json_object_begin(j);
    for (int k = 0; k < PROFILE_STAGES; k++) {
        json_key(j, name[k]), json_double(j, ticks ? (double)sum[k] / 1e6 / (double)ticks : 0, 4);
    }
    json_object_end(j);
}

static int run(const sim_opts *o, const ls_scene *scene, ls_world *w)
{
    ls_body_id id = {0, 0};
    if (o->trace) {
        // Validate before any getter: they assert on an invalid id.
        id = o->trace <= scene->body_count ? ls_world_body_at(w, (uint32_t)(o->trace - 1)) : id;
        if (!ls_body_is_valid(w, id)) {
            return cli_usage_error(&cmd_sim_def, "--trace %llu: %s has %u bodies (1..%u)",
                                   (unsigned long long)o->trace, o->path, scene->body_count,
                                   scene->body_count);
        }
    }
    long n = o->ticks >= 0 ? o->ticks : (long)scene->ticks;
    json_out j;
    if (o->json) {
        json_init(&j, stdout);
        json_object_begin(&j);
        json_key(&j, "scene"), json_str(&j, o->path);
        if (o->checksums || o->trace) {
            json_key(&j, "per_tick"), json_array_begin(&j);
        }
    }
    cli_progress bar;
    cli_progress_init(&bar, "sim", "ticks", (uint64_t)n, o->progress);
    uint32_t full_ticks = 0, first_full = 0;
    uint64_t profile[PROFILE_STAGES] = {0};
    for (long t = 0; t < n; t++) {
        ls_world_step(w);
        if (o->profile) {
            const char *name[PROFILE_STAGES];
            uint64_t ns[PROFILE_STAGES];
            ls_profile p = ls_world_profile(w);
            profile_stages(&p, name, ns);
            for (int k = 0; k < PROFILE_STAGES; k++) {
                profile[k] += ns[k];
            }
        }
        if (ls_world_info(w).capacity_exceeded && full_ticks++ == 0) {
            first_full = ls_world_tick(w);
        }
        if (o->json && (o->checksums || o->trace)) {
            json_tick(&j, w, o, id);
        } else {
            if (o->checksums) {
                printf("%u %016llx\n", ls_world_tick(w), (unsigned long long)ls_world_checksum(w));
            }
            if (o->trace) {
                print_trace(w, id);
            }
        }
        cli_progress_update(&bar, (uint64_t)t + 1);
    }
    cli_progress_done(&bar);
    if (o->json) {
        if (o->checksums || o->trace) {
            json_array_end(&j);
        }
        json_summary(&j, w);
        json_key(&j, "capacity_exceeded_ticks"), json_u64(&j, full_ticks);
        if (o->profile) {
            json_profile(&j, profile, n);
        }
        json_object_end(&j);
        json_finish(&j);
    } else {
        print_summary(w);
        if (o->profile) {
            print_profile(profile, n);
        }
    }
    if (full_ticks) {
        // Why an error and not a warning: a contact left out lets bodies
        // fall through each other (SPEC.md §11, stage 3), so the run is not the
        // physics the scene describes.
        fprintf(stderr,
                "lockstep sim: %s: the world needed more than its capacity on %u tick%s (first: "
                "tick %u): contacts were left out; raise max_contacts (or max_particles)\n",
                o->path, full_ticks, full_ticks == 1 ? "" : "s", first_full);
    }
    return ls_world_info(w).overflow_count || full_ticks ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
}

int cmd_sim(int argc, char **argv)
{
    sim_opts o;
    int bad = parse(argc, argv, &o);
    if (bad) {
        return bad;
    }
    char found[4096];
    o.path = cli_find_scene(o.path, found, sizeof found);
    ls_scene scene;
    ls_error err;
    if (ls_scene_load(o.path, &scene, &err) != LS_OK) {
        cli_print_error("lockstep sim", &err);
        return CLI_EXIT_ERROR;
    }
    // Threads are not part of a scene: its results never depend on them.
    scene.world.worker_count = (uint32_t)o.threads;
    scene.world.simd = o.simd;
    scene.world.profile_clock = o.profile ? sim_clock : NULL;
    ls_world *w = ls_scene_instantiate_within(&scene, (size_t)o.max_memory_mb << 20, &err);
    if (!w) {
        ls_error_set_path(&err, o.path);
        cli_print_error("lockstep sim", &err);
        ls_scene_free(&scene);
        return CLI_EXIT_ERROR;
    }
    int status = run(&o, &scene, w);
    ls_world_destroy(w);
    ls_scene_free(&scene);
    return status;
}
