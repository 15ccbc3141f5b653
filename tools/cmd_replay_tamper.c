// SPDX-License-Identifier: MIT
// `lockstep replay tamper IN OUT --tick T [--player P] [--xor X]`: rewrite a
// recording with one input byte changed and everything else (checksums,
// keyframes, header) kept. The result is a well-formed file whose verification
// must fail at exactly tick T: the demonstration and test of desync reports.
// A signed file stays signed by the same key with its old signatures, which no
// longer match from the changed chunk on (SPEC.md §16.9, §16.11).
#include "cli.h"
#include "replay_glue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cli_command cmd_replay_tamper_def = {
    "replay tamper", "rewrite a recording with one input byte changed (must then fail verify)",
    "IN OUT --tick T [--player P] [--xor X]\n\n"
    "  --tick T     the tick whose input changes (required, < IN's ticks)\n"
    "  --player P   whose input byte (default 0, < IN's players)\n"
    "  --xor X      the byte is xored with X, 1..255 (default 1)",
    cmd_replay_tamper, NULL};

static ls_result copy_keyframe(const ls_replay_reader *in, uint32_t i, ls_replay_recorder *rec)
{
    ls_replay_keyframe_info k = ls_replay_reader_keyframe_info(in, i);
    uint8_t *buf = malloc(k.size);
    ls_result r = buf ? ls_replay_reader_keyframe(in, i, buf, k.size) : LS_ERR_NO_MEMORY;
    if (r == LS_OK) {
        r = ls_replay_recorder_add_keyframe(rec, buf, k.size);
    }
    free(buf);
    return r;
}

// The signatures of a signed file's SIGN chunks, in file order, handed out
// again by a signer that signs nothing: the tampered copy keeps the header's
// key and a SIGN chunk wherever the recorder writes one, so `verify --pubkey`
// names the first signature that does not verify ("bad signature") instead of
// "not signed". Past the original's last signature: zero bytes.
typedef struct kept_signatures {
    ls_replay_signer signer;
    uint8_t *sig;
    uint32_t count, next;
} kept_signatures;

static void kept_absorb(void *user, const uint8_t *bytes, size_t n)
{
    (void)user, (void)bytes, (void)n;
}

static bool kept_sign(void *user, uint64_t covered, uint8_t signature[LS_REPLAY_SIGNATURE_SIZE])
{
    kept_signatures *k = user;
    (void)covered;
    if (k->next < k->count) {
        memcpy(signature, k->sig + (size_t)k->next * LS_REPLAY_SIGNATURE_SIZE,
               LS_REPLAY_SIGNATURE_SIZE);
    } else {
        memset(signature, 0, LS_REPLAY_SIGNATURE_SIZE);
    }
    k->next++;
    return true;
}

// Walks the chunks of the (already validated) file at `path`: every SIGN
// chunk's payload is u64 offset + 64-byte signature (SPEC.md §16.11).
static bool keep_signatures(const char *path, const ls_replay_header *h, kept_signatures *k)
{
    memset(k, 0, sizeof *k);
    k->signer.user = k;
    memcpy(k->signer.public_key, h->public_key, sizeof k->signer.public_key);
    k->signer.absorb = kept_absorb;
    k->signer.sign = kept_sign;
    FILE *f = fopen(path, "rb");
    if (!f) {
        return false;
    }
    uint8_t head[32];
    uint32_t cap = 0;
    bool ok = true;
    for (long pos = (long)h->header_size; ok && fseek(f, pos, SEEK_SET) == 0;) {
        if (fread(head, 1, sizeof head, f) != sizeof head) {
            break;
        }
        uint32_t tag = ls_get_u32le(head), len = ls_get_u32le(head + 4);
        if (tag == 0x4E474953u && len == 8 + LS_REPLAY_SIGNATURE_SIZE) { // "SIGN"
            if (k->count == cap) {
                cap = cap ? 2 * cap : 64;
                uint8_t *p = realloc(k->sig, (size_t)cap * LS_REPLAY_SIGNATURE_SIZE);
                ok = p != NULL;
                k->sig = p ? p : k->sig;
            }
            uint8_t payload[8 + LS_REPLAY_SIGNATURE_SIZE];
            ok = ok && fread(payload, 1, sizeof payload, f) == sizeof payload;
            if (ok) {
                memcpy(k->sig + (size_t)k->count++ * LS_REPLAY_SIGNATURE_SIZE, payload + 8,
                       LS_REPLAY_SIGNATURE_SIZE);
            }
        }
        pos += 32 + (long)len;
    }
    fclose(f);
    return ok;
}

static ls_result rewrite(const ls_replay_reader *in, ls_replay_recorder *rec, uint64_t tick,
                         size_t at, uint8_t x)
{
    const ls_replay_header *h = ls_replay_reader_header(in);
    size_t frame = (size_t)h->players * h->input_size;
    uint8_t *buf = malloc(frame);
    ls_replay_cursor *c = ls_replay_cursor_create(in);
    ls_result r = buf && c ? LS_OK : LS_ERR_NO_MEMORY;
    uint32_t k = 0, nk = ls_replay_reader_info(in)->keyframes;
    for (uint32_t t = 0; t < ls_replay_reader_ticks(in) && r == LS_OK; t++) {
        const uint8_t *inputs;
        uint64_t sum;
        r = ls_replay_cursor_read(c, t, &inputs, &sum);
        ls_replay_claims cl; // a relay's recording keeps its claims
        if (r == LS_OK && ls_replay_reader_claims(in, t, &cl) == LS_OK) {
            r = ls_replay_recorder_claims(rec, t, cl.reported, cl.claims, cl.disputed);
        }
        if (r == LS_OK) {
            memcpy(buf, inputs, frame);
            buf[at] = t == tick ? (uint8_t)(buf[at] ^ x) : buf[at];
            r = ls_replay_recorder_append(rec, buf, sum);
        }
        if (r == LS_OK && k < nk && ls_replay_reader_keyframe_info(in, k).tick == t + 1) {
            r = copy_keyframe(in, k++, rec);
        }
    }
    ls_replay_cursor_destroy(c);
    free(buf);
    return r == LS_OK ? ls_replay_recorder_finish(rec) : r;
}

static ls_replay_recorder *create_like(const ls_replay_header *h, const char *path,
                                       const ls_replay_signer *signer)
{
    ls_replay_recorder_def def = ls_replay_recorder_def_like(h);
    def.signer = signer;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    if (!rec) {
        cli_print_error("lockstep replay tamper", &err);
    }
    return rec;
}

int cmd_replay_tamper(int argc, char **argv)
{
    const cli_command *cmd = &cmd_replay_tamper_def;
    uint64_t tick = UINT64_MAX, player = 0, x = 1;
    const char *files[2] = {NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool ok = true;
        if (cli_option(cmd, argc, argv, &i, "--tick", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 0, UINT32_MAX, &tick);
        } else if (cli_option(cmd, argc, argv, &i, "--player", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 0, LS_REPLAY_MAX_PLAYERS - 1, &player);
        } else if (cli_option(cmd, argc, argv, &i, "--xor", &v)) {
            ok = v && cli_parse_u64(cmd, a, v, 1, 255, &x);
        } else if (a[0] != '-' && !files[1]) {
            files[files[0] ? 1 : 0] = a;
        } else {
            return cli_unexpected(cmd, a);
        }
        if (!ok) {
            return CLI_EXIT_USAGE;
        }
    }
    if (!files[1] || tick == UINT64_MAX) {
        return cli_usage_error(cmd, "missing %s",
                               !files[0]   ? "IN and OUT"
                               : !files[1] ? "OUT"
                                           : "--tick T");
    }
    ls_replay_reader *in = replay_cli_open(cmd, files[0]);
    if (!in) {
        return CLI_EXIT_ERROR;
    }
    const ls_replay_header *h = ls_replay_reader_header(in);
    if (tick >= ls_replay_reader_ticks(in) || player >= h->players) {
        bool bad_tick = tick >= ls_replay_reader_ticks(in);
        uint32_t have = bad_tick ? ls_replay_reader_ticks(in) : h->players;
        if (have == 0) {
            cli_usage_error(cmd, "--tick %llu: %s has no ticks", (unsigned long long)tick,
                            files[0]);
        } else {
            cli_usage_error(cmd, "%s %llu: %s has %u %s (0..%u)", bad_tick ? "--tick" : "--player",
                            (unsigned long long)(bad_tick ? tick : player), files[0], have,
                            bad_tick ? "ticks" : "players", have - 1);
        }
        ls_replay_reader_destroy(in);
        return CLI_EXIT_USAGE;
    }
    kept_signatures kept;
    memset(&kept, 0, sizeof kept);
    bool keep = h->is_signed && keep_signatures(files[0], h, &kept);
    if (h->is_signed && !keep) {
        fprintf(stderr, "lockstep replay tamper: %s: cannot read its signatures\n", files[0]);
        free(kept.sig);
        ls_replay_reader_destroy(in);
        return CLI_EXIT_ERROR;
    }
    ls_replay_recorder *rec = create_like(h, files[1], keep ? &kept.signer : NULL);
    ls_result r =
        rec ? rewrite(in, rec, tick, (size_t)player * h->input_size, (uint8_t)x) : LS_ERR_IO;
    if (rec && r != LS_OK) {
        cli_print_error_at("lockstep replay tamper", files[1], ls_replay_recorder_error(rec));
    } else if (rec) {
        printf("wrote %s: input byte of player %llu at tick %llu xor 0x%02llx\n", files[1],
               (unsigned long long)player, (unsigned long long)tick, (unsigned long long)x);
    }
    ls_replay_recorder_destroy(rec);
    ls_replay_reader_destroy(in);
    if (keep) {
        free(kept.sig);
    }
    return r == LS_OK ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}
