// SPDX-License-Identifier: MIT
// The reference push game behind `lockstep replay`: load, advance, checksum,
// and the field-by-field body diff printed at a desync.
#include "ls/fx_text.h"
#include "ls/game.h"
#include "ls/replay_sign.h"
#include "replay_glue.h"

#include <stdlib.h>
#include <string.h>

bool replay_glue_init(replay_glue *g, const ls_replay_header *h, ls_error *err)
{
    memset(g, 0, sizeof *g);
    if (ls_scene_parse((const char *)h->scene, h->scene_size, &g->scene, err) != LS_OK) {
        ls_error_set_path(err, "embedded scene");
        return false;
    }
    // The header's tick rate is a copy for players that do not parse the scene;
    // a file where the two disagree was edited (SPEC.md §16.1).
    if (h->tick_rate != g->scene.world.tick_rate) {
        ls_error_set(err, LS_ERR_CORRUPT,
                     "the header says %u Hz (byte 24) but the embedded scene runs at %u Hz",
                     h->tick_rate, g->scene.world.tick_rate);
        ls_scene_free(&g->scene);
        return false;
    }
    g->players = h->players;
    g->input_size = h->input_size;
    g->max_memory = (size_t)REPLAY_DEFAULT_MAX_MEMORY_MB << 20;
    return true;
}

bool replay_cli_max_memory(const cli_command *cmd, const char *text, size_t *out)
{
    uint64_t mb;
    if (!cli_parse_u64(cmd, "--max-memory", text, 1, 65536, &mb)) {
        return false;
    }
    *out = (size_t)mb << 20;
    return true;
}

int replay_cli_check_signature(const cli_command *cmd, const char *path, const ls_replay_reader *r,
                               const char *key, json_out *j)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "lockstep %s", cmd->name);
    uint8_t pk[LS_REPLAY_PUBLIC_KEY_SIZE];
    ls_error err;
    if (ls_replay_key_read(key, pk, sizeof pk, &err) != LS_OK) {
        cli_print_error(prefix, &err);
        return CLI_EXIT_ERROR;
    }
    ls_replay_signature_report rep;
    char name[32];
    ls_replay_key_fingerprint(pk, name);
    if (ls_replay_reader_check_signatures(r, pk, &rep, &err) != LS_OK) {
        cli_print_error_at(prefix, path, &err);
        if (j) {
            json_key(j, "signature"), json_object_begin(j);
            json_key(j, "key"), json_str(j, name);
            json_key(j, "valid"), json_bool(j, false);
            json_key(j, "message"), json_str(j, err.message);
            json_object_end(j);
        }
        return CLI_EXIT_MISMATCH;
    }
    if (j) {
        json_key(j, "signature"), json_object_begin(j);
        json_key(j, "key"), json_str(j, name);
        json_key(j, "valid"), json_bool(j, true);
        json_key(j, "signatures"), json_u64(j, rep.signatures);
        json_key(j, "signed_ticks"), json_u64(j, rep.signed_ticks);
        json_key(j, "complete"), json_bool(j, rep.complete);
        json_object_end(j);
    } else {
        printf("signed by %s: %u signatures verified, ticks 0..%u%s\n", name, rep.signatures,
               rep.signed_ticks ? rep.signed_ticks - 1 : 0,
               rep.complete ? " (every tick)" : " only: the rest of the file is not signed");
    }
    return CLI_EXIT_OK;
}

ls_replay_signer *replay_cli_signer(const cli_command *cmd, const char *key_path)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "lockstep %s", cmd->name);
    uint8_t sk[LS_REPLAY_SECRET_KEY_SIZE];
    ls_error err;
    ls_replay_signer *s = NULL;
    if (ls_replay_key_read(key_path, sk, sizeof sk, &err) != LS_OK ||
        !(s = ls_replay_signer_create(sk, &err))) {
        cli_print_error(prefix, &err);
    }
    memset(sk, 0, sizeof sk);
    return s;
}

void replay_glue_free(replay_glue *g)
{
    ls_scene_free(&g->scene);
}

ls_world *replay_glue_load(const replay_glue *g, const uint8_t *keyframe, size_t size,
                           ls_error *err)
{
    ls_world *w = ls_scene_instantiate_within(&g->scene, g->max_memory, err);
    if (w && keyframe && ls_world_snapshot_restore(w, keyframe, size, err) != LS_OK) {
        ls_world_destroy(w);
        w = NULL;
    }
    return w;
}

uint64_t replay_glue_advance(const replay_glue *g, ls_world *w, const uint8_t *inputs)
{
    return ls_game_tick(w, &g->scene, inputs, g->players, g->input_size);
}

// The scene bytes are the ones the glue was initialised from (the replay's own).
static void *sim_load(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *keyframe,
                      size_t keyframe_size, ls_error *err)
{
    (void)scene, (void)scene_size;
    return replay_glue_load(user, keyframe, keyframe_size, err);
}

static uint64_t sim_advance(void *user, void *state, uint32_t tick, const uint8_t *inputs)
{
    (void)tick;
    return replay_glue_advance(user, state, inputs);
}

static uint64_t sim_checksum(void *user, const void *state)
{
    (void)user;
    return ls_world_checksum(state);
}

// Keyframes are ls_world_snapshot_save bytes; the verifier compares them with
// the re-simulated world's.
static size_t sim_save(void *user, const void *state, uint8_t *buf, size_t size)
{
    (void)user;
    size_t need = ls_world_snapshot_size(state);
    return buf && size >= need ? ls_world_snapshot_save(state, buf, size) : need;
}

static void sim_destroy(void *user, void *state)
{
    (void)user;
    ls_world_destroy(state);
}

static void sim_progress(void *user, uint32_t ticks)
{
    const replay_glue *g = user;
    if (g->progress) {
        g->progress(g->progress_ctx, ticks);
    }
}

ls_replay_sim replay_glue_sim(replay_glue *g)
{
    ls_replay_sim s = {g, sim_load, sim_advance, sim_checksum, sim_destroy, sim_progress, sim_save};
    return s;
}

// Bodies printed field by field; the rest are listed by id.
#define REPLAY_DIFF_FULL_BODIES 4u

typedef struct field_line {
    const char *name;
    ls_fx a, b;
} field_line;

static uint32_t body_fields(const ls_world *a, const ls_world *b, ls_body_id id, field_line *out)
{
    ls_vec3 pa = ls_body_position(a, id), pb = ls_body_position(b, id);
    ls_quat qa = ls_body_orientation(a, id), qb = ls_body_orientation(b, id);
    ls_vec3 va = ls_body_linear_velocity(a, id), vb = ls_body_linear_velocity(b, id);
    ls_vec3 wa = ls_body_angular_velocity(a, id), wb = ls_body_angular_velocity(b, id);
    const field_line all[] = {
        {"position.x", pa.x, pb.x},
        {"position.y", pa.y, pb.y},
        {"position.z", pa.z, pb.z},
        {"orientation.x", qa.x, qb.x},
        {"orientation.y", qa.y, qb.y},
        {"orientation.z", qa.z, qb.z},
        {"orientation.w", qa.w, qb.w},
        {"linear_velocity.x", va.x, vb.x},
        {"linear_velocity.y", va.y, vb.y},
        {"linear_velocity.z", va.z, vb.z},
        {"angular_velocity.x", wa.x, wb.x},
        {"angular_velocity.y", wa.y, wb.y},
        {"angular_velocity.z", wa.z, wb.z},
        {"asleep", (ls_fx)ls_body_is_asleep(a, id), (ls_fx)ls_body_is_asleep(b, id)},
    };
    uint32_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i].a != all[i].b) {
            out[n++] = all[i];
        }
    }
    return n;
}

static const char *player_label(const replay_glue *g, uint32_t slot, char *buf, size_t size)
{
    buf[0] = '\0';
    for (uint32_t p = 0; p < g->scene.player_count; p++) {
        if (g->scene.player_body[p] == slot) {
            snprintf(buf, size, ", player %u", p);
        }
    }
    return buf;
}

static void print_body_diff(const replay_glue *g, uint32_t rank, uint32_t slot, const field_line *f,
                            uint32_t n, const char *const labels[2], FILE *out)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    char who[32];
    const ls_body_def *def = slot < g->scene.body_count ? &g->scene.bodies[slot] : NULL;
    fprintf(out, "%s divergent body: body %u (slot %u%s%s%s), %u field%s differ:\n",
            rank == 0 ? "first" : "next", slot + 1, slot, player_label(g, slot, who, sizeof who),
            def ? ", " : "", def ? types[def->type] : "", n, n == 1 ? "" : "s");
    fprintf(out, "  %-20s %-14s %s\n", "field", labels[0], labels[1]);
    for (uint32_t i = 0; i < n; i++) {
        char a[LS_FX_TEXT_MAX], b[LS_FX_TEXT_MAX];
        if (strcmp(f[i].name, "asleep") == 0) {
            snprintf(a, sizeof a, "%s", f[i].a ? "yes" : "no");
            snprintf(b, sizeof b, "%s", f[i].b ? "yes" : "no");
        } else {
            ls_fx_format(f[i].a, a);
            ls_fx_format(f[i].b, b);
        }
        fprintf(out, "  %-20s %-14s %s\n", f[i].name, a, b);
    }
}

uint32_t replay_glue_diff(const replay_glue *g, const ls_world *recorded, const ls_world *computed,
                          const char *const labels[2], FILE *out)
{
    uint32_t differ = 0, shown = 0;
    uint32_t na = ls_world_body_count(recorded), nb = ls_world_body_count(computed);
    if (na != nb) {
        fprintf(out, "body count: %s %u, %s %u\n", labels[0], na, labels[1], nb);
    }
    uint32_t slots = g->scene.world.max_bodies;
    for (uint32_t s = 0; s < slots; s++) {
        ls_body_id ia = ls_world_body_at(recorded, s), ib = ls_world_body_at(computed, s);
        if (ia.index1 == 0 && ib.index1 == 0) {
            continue;
        }
        if (ia.index1 == 0 || ib.index1 == 0 || ia.generation != ib.generation) {
            fprintf(out, "slot %u: the body exists in only one state\n", s);
            differ++;
            continue;
        }
        field_line f[16];
        uint32_t n = body_fields(recorded, computed, ia, f);
        if (n == 0) {
            continue;
        }
        if (differ < REPLAY_DIFF_FULL_BODIES) {
            print_body_diff(g, differ++, s, f, n, labels, out);
        } else if (differ++, shown < 16) {
            fprintf(out, "%s body %u", shown++ ? "," : "also differ:", s + 1);
        }
    }
    if (shown) {
        fprintf(out, "%s\n", differ - REPLAY_DIFF_FULL_BODIES > shown ? " ..." : "");
    }
    if (differ > 1) {
        fprintf(out, "%u bodies differ\n", differ);
    }
    return differ;
}

static void json_field_value(json_out *j, const field_line *f, bool second)
{
    ls_fx v = second ? f->b : f->a;
    if (strcmp(f->name, "asleep") == 0) {
        json_bool(j, v != 0);
    } else {
        json_fx(j, v);
    }
}

uint32_t replay_glue_diff_json(const replay_glue *g, const ls_world *recorded,
                               const ls_world *computed, const char *const labels[2], json_out *j)
{
    static const char *const types[] = {"static", "kinematic", "dynamic"};
    uint32_t differ = 0;
    json_array_begin(j);
    for (uint32_t s = 0; s < g->scene.world.max_bodies; s++) {
        ls_body_id ia = ls_world_body_at(recorded, s), ib = ls_world_body_at(computed, s);
        if (ia.index1 == 0 && ib.index1 == 0) {
            continue;
        }
        bool both = ia.index1 != 0 && ib.index1 != 0 && ia.generation == ib.generation;
        field_line f[16];
        uint32_t n = both ? body_fields(recorded, computed, ia, f) : 0;
        if (both && n == 0) {
            continue;
        }
        differ++;
        json_object_begin(j);
        json_key(j, "body"), json_u64(j, s + 1);
        json_key(j, "slot"), json_u64(j, s);
        json_key(j, "player");
        int64_t player = -1;
        for (uint32_t p = 0; p < g->scene.player_count; p++) {
            player = g->scene.player_body[p] == s ? (int64_t)p : player;
        }
        player >= 0 ? json_u64(j, (uint64_t)player) : json_null(j);
        json_key(j, "type");
        s < g->scene.body_count ? json_str(j, types[g->scene.bodies[s].type]) : json_null(j);
        if (!both) {
            json_key(j, "only_in"), json_str(j, labels[ia.index1 != 0 ? 0 : 1]);
        } else {
            json_key(j, "fields"), json_array_begin(j);
            for (uint32_t i = 0; i < n; i++) {
                json_object_begin(j);
                json_key(j, "field"), json_str(j, f[i].name);
                json_key(j, labels[0]), json_field_value(j, &f[i], false);
                json_key(j, labels[1]), json_field_value(j, &f[i], true);
                json_object_end(j);
            }
            json_array_end(j);
        }
        json_object_end(j);
    }
    json_array_end(j);
    return differ;
}
