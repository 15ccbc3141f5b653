// SPDX-License-Identifier: MIT
// Ed25519 signatures over recordings (SPEC.md §16.11) with libsodium: never
// hand-written cryptography. The signed message for a SIGN chunk at offset N
// is "LSRP-SIGN-v1" padded to 16 bytes, N as u64 little-endian, and the
// BLAKE2b-256 of file bytes [0, N).
#include "../src/reader_impl.h"
#include "ls/replay_sign.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOMAIN      "LSRP-SIGN-v1\0\0\0\0"
#define DOMAIN_SIZE 16
#define HASH_SIZE   32
#define MSG_SIZE    (DOMAIN_SIZE + 8 + HASH_SIZE)

static const char PUBLIC_LABEL[] = "lockstep ed25519 public key";
static const char SECRET_LABEL[] = "lockstep ed25519 secret key";

static bool sodium_ready(ls_error *err)
{
    if (sodium_init() < 0) {
        ls_error_set(err, LS_ERR_IO, "libsodium failed to initialise");
        return false;
    }
    return true;
}

static void message(uint8_t msg[MSG_SIZE], uint64_t covered, const uint8_t hash[HASH_SIZE])
{
    memcpy(msg, DOMAIN, DOMAIN_SIZE);
    ls_put_u64le(msg + DOMAIN_SIZE, covered);
    memcpy(msg + DOMAIN_SIZE + 8, hash, HASH_SIZE);
}

ls_result ls_replay_key_generate(uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                 uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE], ls_error *err)
{
    if (!sodium_ready(err)) {
        return LS_ERR_IO;
    }
    crypto_sign_keypair(public_key, secret_key);
    ls_error_clear(err);
    return LS_OK;
}

void ls_replay_key_public(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                          uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE])
{
    crypto_sign_ed25519_sk_to_pk(public_key, secret_key);
}

void ls_replay_key_fingerprint(const uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE], char out[32])
{
    memcpy(out, "ed25519:", 8);
    for (int i = 0; i < 8; i++) {
        snprintf(out + 8 + 2 * i, 3, "%02x", public_key[i]);
    }
}

ls_result ls_replay_key_write(const char *path, const uint8_t *key, size_t size, ls_error *err)
{
    if (size != LS_REPLAY_PUBLIC_KEY_SIZE && size != LS_REPLAY_SECRET_KEY_SIZE) {
        return ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "a key has 32 or 64 bytes, not %zu",
                            size);
    }
    bool secret = size == LS_REPLAY_SECRET_KEY_SIZE;
    // O_EXCL: an existing key is never replaced; 0600: only the owner reads a secret.
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, secret ? 0600 : 0644);
    if (fd < 0) {
        ls_error_set(err, LS_ERR_IO, "cannot create: %s", strerror(errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    char text[sizeof SECRET_LABEL + 2 * LS_REPLAY_SECRET_KEY_SIZE + 4];
    int n = snprintf(text, sizeof text, "%s\n", secret ? SECRET_LABEL : PUBLIC_LABEL);
    for (size_t i = 0; i < size; i++) {
        n += snprintf(text + n, sizeof text - (size_t)n, "%02x", key[i]);
    }
    n += snprintf(text + n, sizeof text - (size_t)n, "\n");
    bool ok = write(fd, text, (size_t)n) == n;
    ok = close(fd) == 0 && ok;
    sodium_memzero(text, sizeof text);
    if (!ok) {
        ls_error_set(err, LS_ERR_IO, "cannot write: %s", strerror(errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    ls_error_clear(err);
    return LS_OK;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

// Exactly 2*size hex digits, then nothing but a newline.
static bool parse_hex(const char *s, uint8_t *key, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        int hi = hexval(s[2 * i]), lo = hi < 0 ? -1 : hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return false;
        }
        key[i] = (uint8_t)(hi * 16 + lo);
    }
    const char *rest = s + 2 * size;
    return rest[0] == '\0' || (rest[0] == '\n' && rest[1] == '\0');
}

ls_result ls_replay_key_read(const char *path, uint8_t *key, size_t size, ls_error *err)
{
    bool secret = size == LS_REPLAY_SECRET_KEY_SIZE;
    if (!secret && size != LS_REPLAY_PUBLIC_KEY_SIZE) {
        return ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "a key has 32 or 64 bytes, not %zu",
                            size);
    }
    if (strlen(path) == 2 * size && parse_hex(path, key, size)) {
        ls_error_clear(err);
        return LS_OK; // the key itself, given as hex
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        ls_error_set(err, LS_ERR_IO, "cannot open: %s", strerror(errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    char label[64] = "", hex[2 * LS_REPLAY_SECRET_KEY_SIZE + 8] = "";
    bool got = fgets(label, sizeof label, f) && fgets(hex, sizeof hex, f) && fgetc(f) == EOF;
    fclose(f);
    label[strcspn(label, "\n")] = '\0';
    const char *want = secret ? SECRET_LABEL : PUBLIC_LABEL;
    ls_result r = LS_OK;
    if (!got || strcmp(label, want) != 0) {
        r = ls_error_set(err, LS_ERR_PARSE, "not a %s file (first line must be '%s')", want, want);
    } else if (!parse_hex(hex, key, size)) {
        r = ls_error_set(err, LS_ERR_PARSE, "line 2 must be %zu hex digits", 2 * size);
    }
    sodium_memzero(hex, sizeof hex);
    if (r != LS_OK) {
        ls_error_set_path(err, path);
        if (err) {
            err->line = !got || strcmp(label, want) != 0 ? 1 : 2;
            err->column = 1;
        }
        return r;
    }
    ls_error_clear(err);
    return LS_OK;
}

typedef struct signer {
    ls_replay_signer pub; // first: the recorder sees this
    crypto_generichash_state hash;
    uint8_t secret[LS_REPLAY_SECRET_KEY_SIZE];
} signer;

static void signer_absorb(void *user, const uint8_t *bytes, size_t n)
{
    signer *s = user;
    crypto_generichash_update(&s->hash, bytes, n);
}

static bool signer_sign(void *user, uint64_t covered, uint8_t signature[LS_REPLAY_SIGNATURE_SIZE])
{
    signer *s = user;
    crypto_generichash_state copy = s->hash; // the running hash goes on
    uint8_t hash[HASH_SIZE], msg[MSG_SIZE];
    if (crypto_generichash_final(&copy, hash, sizeof hash) != 0) {
        return false;
    }
    message(msg, covered, hash);
    return crypto_sign_detached(signature, NULL, msg, sizeof msg, s->secret) == 0;
}

ls_replay_signer *ls_replay_signer_create(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                                          ls_error *err)
{
    if (!sodium_ready(err)) {
        return NULL;
    }
    signer *s = sodium_malloc(sizeof *s);
    if (!s) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    memcpy(s->secret, secret_key, sizeof s->secret);
    crypto_sign_ed25519_sk_to_pk(s->pub.public_key, s->secret);
    crypto_generichash_init(&s->hash, NULL, 0, HASH_SIZE);
    s->pub.user = s;
    s->pub.absorb = signer_absorb;
    s->pub.sign = signer_sign;
    ls_error_clear(err);
    return &s->pub;
}

void ls_replay_signer_destroy(ls_replay_signer *p)
{
    if (p) {
        sodium_free(p->user); // wipes it
    }
}

ls_result ls_replay_reader_check_signatures(const ls_replay_reader *r,
                                            const uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                            ls_replay_signature_report *out, ls_error *err)
{
    memset(out, 0, sizeof *out);
    if (!sodium_ready(err)) {
        return LS_ERR_IO;
    }
    char want[32], have[32];
    ls_replay_key_fingerprint(public_key, want);
    if (!r->header.is_signed) {
        return ls_error_set(err, LS_ERR_INCOMPATIBLE, "the file is not signed (expected %s)", want);
    }
    if (sodium_memcmp(r->header.public_key, public_key, LS_REPLAY_PUBLIC_KEY_SIZE) != 0) {
        ls_replay_key_fingerprint(r->header.public_key, have);
        ls_error_set(err, LS_ERR_INCOMPATIBLE,
                     "signed by %s, not by %s (the key in the header, after the scene)", have,
                     want);
        return LS_ERR_INCOMPATIBLE;
    }
    crypto_generichash_state hash;
    crypto_generichash_init(&hash, NULL, 0, HASH_SIZE);
    uint64_t done = 0;
    for (uint32_t i = 0; i < r->nsignatures; i++) {
        const ls_replay_signature_entry *g = &r->signatures[i];
        crypto_generichash_update(&hash, r->data + done, g->offset - done);
        done = g->offset;
        crypto_generichash_state copy = hash;
        uint8_t digest[HASH_SIZE], msg[MSG_SIZE];
        crypto_generichash_final(&copy, digest, sizeof digest);
        message(msg, g->offset, digest);
        if (crypto_sign_verify_detached(g->signature, msg, sizeof msg, public_key) != 0) {
            ls_error_set(err, LS_ERR_CORRUPT,
                         "the signature at byte %llu (after tick %u) does not verify: bytes "
                         "0..%llu were modified or signed by another key",
                         (unsigned long long)g->offset, g->ticks, (unsigned long long)g->offset);
            if (err) {
                err->offset = (int64_t)g->offset;
                err->tick = g->ticks;
            }
            return LS_ERR_CORRUPT;
        }
        out->signatures++;
        out->signed_ticks = g->ticks;
        out->signed_bytes = g->offset;
    }
    out->complete = out->signatures > 0 && out->signed_ticks == r->info.ticks;
    ls_error_clear(err);
    return LS_OK;
}
