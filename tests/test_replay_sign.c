// SPDX-License-Identifier: MIT
// Signed recordings (SPEC.md §16.11): a recorder with an Ed25519 signer signs
// after every chunk; the signatures prove the file the signer's and unmodified,
// up to the last SIGN chunk when a crash cut it; key files are never
// overwritten and secret ones are private.
#define _POSIX_C_SOURCE 200809L
#include "ls/checksum.h"
#include "ls/replay_sign.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void temp_path(const char *name, char *out, size_t size)
{
    snprintf(out, size, "/tmp/ls_test_sign_%ld_%s", (long)getpid(), name);
    remove(out);
}

// 300 ticks of 2 players, a keyframe every 100, chunks of 60 ticks.
static void record(const char *path, const ls_replay_signer *signer)
{
    ls_replay_recorder_def def = ls_default_replay_recorder_def();
    def.players = 2;
    def.fingerprint = "sign-test";
    def.scene = (const uint8_t *)"toy scene";
    def.scene_size = 9;
    def.keyframe_interval = 100;
    def.signer = signer;
    ls_error err;
    ls_replay_recorder *rec = ls_replay_recorder_create(path, &def, &err);
    cr_assert_not_null(rec, "%s", err.message);
    for (uint32_t t = 0; t < 300; t++) {
        uint8_t in[2] = {(uint8_t)(t / 7), (uint8_t)(t / 13)};
        cr_assert_eq(ls_replay_recorder_append(rec, in, 0x1234567800000000ull + t), LS_OK);
        if (ls_replay_recorder_keyframe_due(rec)) {
            uint8_t state[16] = {(uint8_t)t};
            cr_assert_eq(ls_replay_recorder_add_keyframe(rec, state, sizeof state), LS_OK);
        }
    }
    cr_assert_eq(ls_replay_recorder_finish(rec), LS_OK);
    ls_replay_recorder_destroy(rec);
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(*size);
    cr_assert_eq(fread(d, 1, *size, f), *size);
    fclose(f);
    return d;
}

Test(replay_sign, key_files_round_trip_are_never_overwritten_and_secrets_are_private)
{
    uint8_t pk[LS_REPLAY_PUBLIC_KEY_SIZE], sk[LS_REPLAY_SECRET_KEY_SIZE];
    cr_assert_eq(ls_replay_key_generate(pk, sk, NULL), LS_OK);
    char pub[128], sec[128];
    temp_path("k.pub", pub, sizeof pub);
    temp_path("k.key", sec, sizeof sec);
    ls_error err;
    cr_assert_eq(ls_replay_key_write(pub, pk, sizeof pk, &err), LS_OK, "%s", err.message);
    cr_assert_eq(ls_replay_key_write(sec, sk, sizeof sk, &err), LS_OK, "%s", err.message);
    cr_assert_eq(ls_replay_key_write(sec, sk, sizeof sk, &err), LS_ERR_IO, "never overwrites");
    cr_assert_str_eq(err.path, sec);
    struct stat st;
    cr_assert_eq(stat(sec, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600u);
    uint8_t pk2[LS_REPLAY_PUBLIC_KEY_SIZE], sk2[LS_REPLAY_SECRET_KEY_SIZE], pk3[32];
    cr_assert_eq(ls_replay_key_read(pub, pk2, sizeof pk2, &err), LS_OK, "%s", err.message);
    cr_assert_eq(ls_replay_key_read(sec, sk2, sizeof sk2, &err), LS_OK, "%s", err.message);
    cr_assert_eq(memcmp(pk, pk2, sizeof pk), 0);
    cr_assert_eq(memcmp(sk, sk2, sizeof sk), 0);
    ls_replay_key_public(sk2, pk3);
    cr_assert_eq(memcmp(pk, pk3, sizeof pk), 0);
    // The wrong kind of file names the line.
    cr_assert_eq(ls_replay_key_read(pub, sk2, sizeof sk2, &err), LS_ERR_PARSE);
    cr_assert_eq(err.line, 1u);
    cr_assert(strstr(err.message, "secret key") != NULL, "%s", err.message);
    // A public key may be given as hex.
    char hex[65];
    for (int i = 0; i < 32; i++) {
        snprintf(hex + 2 * i, 3, "%02x", pk[i]);
    }
    cr_assert_eq(ls_replay_key_read(hex, pk2, sizeof pk2, &err), LS_OK);
    cr_assert_eq(memcmp(pk, pk2, sizeof pk), 0);
    remove(pub);
    remove(sec);
}

Test(replay_sign, a_signed_file_verifies_and_any_resealed_change_is_caught)
{
    uint8_t pk[32], sk[64], other_pk[32], other_sk[64];
    ls_replay_key_generate(pk, sk, NULL);
    ls_replay_key_generate(other_pk, other_sk, NULL);
    ls_error err;
    ls_replay_signer *signer = ls_replay_signer_create(sk, &err);
    cr_assert_not_null(signer);
    char path[128], plain[128];
    temp_path("signed.lsr", path, sizeof path);
    temp_path("plain.lsr", plain, sizeof plain);
    record(path, signer);
    record(plain, NULL);
    ls_replay_signer_destroy(signer);

    ls_replay_reader *r = ls_replay_reader_open(path, &err);
    cr_assert_not_null(r, "%s", err.message);
    const ls_replay_header *h = ls_replay_reader_header(r);
    cr_assert(h->is_signed);
    cr_assert_eq(memcmp(h->public_key, pk, 32), 0);
    const ls_replay_info *info = ls_replay_reader_info(r);
    cr_assert_eq(info->signatures, 6u + 3u, "one per TICK chunk (6) and KEYF chunk (3)");
    ls_replay_signature_report rep;
    cr_assert_eq(ls_replay_reader_check_signatures(r, pk, &rep, &err), LS_OK, "%s", err.message);
    cr_assert(rep.complete);
    cr_assert_eq(rep.signed_ticks, 300u);
    cr_assert_eq(ls_replay_reader_check_signatures(r, other_pk, &rep, &err), LS_ERR_INCOMPATIBLE);
    cr_assert(strstr(err.message, "signed by ed25519:") != NULL, "%s", err.message);
    ls_replay_reader_destroy(r);

    ls_replay_reader *u = ls_replay_reader_open(plain, NULL);
    cr_assert_eq(ls_replay_reader_check_signatures(u, pk, &rep, &err), LS_ERR_INCOMPATIBLE);
    cr_assert(strstr(err.message, "not signed") != NULL, "%s", err.message);
    ls_replay_reader_destroy(u);

    // Change the checksum of tick 70 (second TICK chunk) and re-seal the chunk's
    // check codes, as anyone can: the reader accepts it, the signature does not.
    size_t n;
    uint8_t *d = slurp(path, &n);
    uint32_t hsize = ls_get_u32le(d + 12);
    size_t pos = hsize, chunk = 0;
    while (!(ls_get_u32le(d + pos) == 0x4B434954u && ls_get_u32le(d + pos + 8) == 60)) {
        pos += 32 + ls_get_u32le(d + pos + 4);
    }
    chunk = pos;
    uint32_t len = ls_get_u32le(d + chunk + 4), enc = ls_get_u32le(d + chunk + 32);
    uint8_t *sum70 = d + chunk + 32 + 4 + enc + 8 * 10;
    sum70[0] ^= 1;
    ls_put_u64le(d + chunk + 16, ls_hash64(d + chunk + 32, len));
    ls_put_u64le(d + chunk + 24, ls_hash64(d + chunk, 24));
    ls_replay_reader *t = ls_replay_reader_open_memory(d, n, &err);
    cr_assert_not_null(t, "resealed: %s", err.message);
    cr_assert_eq(ls_replay_reader_checksum(t, 70), (0x1234567800000000ull + 70) ^ 1);
    cr_assert_eq(ls_replay_reader_check_signatures(t, pk, &rep, &err), LS_ERR_CORRUPT);
    cr_assert(strstr(err.message, "does not verify") != NULL, "%s", err.message);
    cr_assert_eq(err.tick, 100, "the first SIGN after the change (chunk of ticks 60..99)");
    ls_replay_reader_destroy(t);
    sum70[0] ^= 1; // restore, then cut the file inside the SIGN chunk that follows
    // ticks 200..259 (a crash between writing a chunk and its signature)
    ls_put_u64le(d + chunk + 16, ls_hash64(d + chunk + 32, len));
    ls_put_u64le(d + chunk + 24, ls_hash64(d + chunk, 24));
    pos = hsize;
    while (!(ls_get_u32le(d + pos) == 0x4E474953u && ls_get_u32le(d + pos + 8) == 260)) {
        pos += 32 + ls_get_u32le(d + pos + 4);
    }
    t = ls_replay_reader_open_memory(d, pos + 40, &err);
    cr_assert_not_null(t, "%s", err.message);
    cr_assert_eq(ls_replay_reader_ticks(t), 260u);
    cr_assert_eq(ls_replay_reader_check_signatures(t, pk, &rep, &err), LS_OK, "%s", err.message);
    cr_assert(!rep.complete, "ticks 200..259 are readable but not signed");
    cr_assert_eq(rep.signed_ticks, 200u, "signed up to the last SIGN chunk before the cut");
    ls_replay_reader_destroy(t);
    free(d);
    remove(path);
    remove(plain);
}
