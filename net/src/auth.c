// SPDX-License-Identifier: MIT
// Datagram authentication and credentials (SPEC.md §17.2, §17.3), on libsodium.
//
// Why a MAC and not encryption: the relay hands every input to every player of
// the session anyway, so what must be protected is who may speak for a slot
// (authenticity), that nothing was changed on the way (integrity) and that
// nothing is played twice (freshness), not the content. The tag is the
// ChaCha20-Poly1305 (IETF, RFC 8439) AEAD tag over an empty plaintext with the
// whole datagram but its tag as associated data: one standard primitive, one
// nonce per datagram, bodies stay readable by the keyless codec (fuzzing,
// packet dumps, conformance tests), and the cost is the same as encrypting.
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

LS_STATIC_ASSERT(crypto_aead_chacha20poly1305_ietf_ABYTES == LS_NET_TAG_SIZE, "tag size");
LS_STATIC_ASSERT(crypto_aead_chacha20poly1305_ietf_KEYBYTES == LS_NET_KEY_SIZE, "key size");
LS_STATIC_ASSERT(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12, "nonce size");

#define LABEL "lockstep-credential 2"

bool ls_net_auth_init_(void)
{
    return sodium_init() >= 0;
}

// nonce = direction, role, slot, 0, sequence (u64 little-endian): unique per key,
// since a key belongs to one slot and each direction counts its own sequence.
static void nonce_of(const uint8_t *datagram, ls_net_dir dir, uint8_t nonce[12])
{
    nonce[0] = (uint8_t)dir;
    nonce[1] = datagram[9];
    nonce[2] = datagram[8];
    nonce[3] = 0;
    memcpy(nonce + 4, datagram + 12, 8);
}

void ls_net_auth_seal_(uint8_t *datagram, size_t len, const uint8_t *key, ls_net_dir dir)
{
    uint8_t nonce[12], none[1] = {0};
    unsigned long long tag_len = 0;
    nonce_of(datagram, dir, nonce);
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(none, datagram + len - LS_NET_TAG_SIZE,
                                                       &tag_len, none, 0, datagram,
                                                       len - LS_NET_TAG_SIZE, NULL, nonce, key);
}

bool ls_net_auth_verify_(const uint8_t *datagram, size_t len, const uint8_t *key, ls_net_dir dir)
{
    uint8_t nonce[12], none[1] = {0};
    nonce_of(datagram, dir, nonce);
    return crypto_aead_chacha20poly1305_ietf_decrypt_detached(
               none, NULL, none, 0, datagram + len - LS_NET_TAG_SIZE, datagram,
               len - LS_NET_TAG_SIZE, nonce, key) == 0;
}

void ls_net_auth_new_key_(uint8_t key[LS_NET_KEY_SIZE])
{
    crypto_aead_chacha20poly1305_ietf_keygen(key);
}

void ls_net_auth_wipe_(void *p, size_t n)
{
    sodium_memzero(p, n);
}

ls_result ls_net_seal(uint8_t *datagram, size_t len, const uint8_t key[LS_NET_KEY_SIZE],
                      ls_net_dir dir)
{
    ls_net_header h;
    if (!datagram || !key || !ls_net_auth_init_() ||
        ls_net_decode_header(datagram, len, &h, NULL) != LS_OK) {
        return LS_ERR_CORRUPT;
    }
    ls_net_auth_seal_(datagram, len, key, dir);
    return LS_OK;
}

bool ls_net_verify(const uint8_t *datagram, size_t len, const uint8_t key[LS_NET_KEY_SIZE],
                   ls_net_dir dir)
{
    ls_net_header h;
    return datagram && key && ls_net_auth_init_() &&
           ls_net_decode_header(datagram, len, &h, NULL) == LS_OK &&
           ls_net_auth_verify_(datagram, len, key, dir);
}

// ---- replay window ----

ls_net_fresh ls_net_replay_check_(const ls_net_replay *w, uint64_t seq)
{
    if (seq > w->newest) {
        return LS_NET_FRESH;
    }
    if (w->newest - seq >= LS_NET_REPLAY_WINDOW || seq == 0) {
        return LS_NET_STALE;
    }
    uint64_t bit = seq % LS_NET_REPLAY_WINDOW;
    return (w->seen[bit / 64] >> (bit % 64)) & 1u ? LS_NET_REPLAYED : LS_NET_FRESH;
}

void ls_net_replay_accept_(ls_net_replay *w, uint64_t seq)
{
    if (seq > w->newest) {
        uint64_t ahead = seq - w->newest;
        if (ahead >= LS_NET_REPLAY_WINDOW) {
            memset(w->seen, 0, sizeof w->seen);
        } else {
            for (uint64_t s = w->newest + 1; s <= seq; s++) { // forget what the window leaves
                uint64_t bit = s % LS_NET_REPLAY_WINDOW;
                w->seen[bit / 64] &= ~((uint64_t)1 << (bit % 64));
            }
        }
        w->newest = seq;
    }
    uint64_t bit = seq % LS_NET_REPLAY_WINDOW;
    w->seen[bit / 64] |= (uint64_t)1 << (bit % 64);
}

// ---- credentials ----

size_t ls_net_credential_format(const ls_net_credential *c, char *buf, size_t size)
{
    if (!c || !buf || size < LS_NET_CREDENTIAL_TEXT_SIZE) {
        if (buf && size) {
            buf[0] = '\0';
        }
        return 0;
    }
    int n = snprintf(buf, size, "%s session=%u slot=%u role=%s key=", LABEL, c->session, c->slot,
                     c->role == LS_NET_ROLE_SPECTATOR ? "spectator" : "player");
    sodium_bin2hex(buf + n, size - (size_t)n, c->key, LS_NET_KEY_SIZE);
    n += 2 * LS_NET_KEY_SIZE;
    buf[n++] = '\n';
    buf[n] = '\0';
    return (size_t)n;
}

// Parse "NAME=" then a decimal number below limit; advances *p.
static bool field_u32(const char **p, const char *name, uint64_t limit, uint32_t *out)
{
    size_t n = strlen(name);
    if (strncmp(*p, name, n) != 0) {
        return false;
    }
    const char *s = *p + n;
    uint64_t v = 0;
    size_t digits = 0;
    while (*s >= '0' && *s <= '9' && digits < 11) {
        v = v * 10 + (uint64_t)(*s - '0');
        s++, digits++;
    }
    if (digits == 0 || digits > 10 || v >= limit) {
        return false;
    }
    *out = (uint32_t)v;
    *p = s;
    return true;
}

ls_result ls_net_credential_parse(const char *text, ls_net_credential *out, ls_error *err)
{
    ls_net_credential c;
    memset(&c, 0, sizeof c);
    const char *p = text ? text : "";
    uint32_t session = 0, slot = 0;
    const char *what = NULL;
    if (strncmp(p, LABEL " ", strlen(LABEL) + 1) != 0) {
        what = "it must start with '" LABEL " ' (a credential written by lockstep relay)";
    } else if (p += strlen(LABEL) + 1,
               !field_u32(&p, "session=", (uint64_t)UINT32_MAX + 1, &session) || session == 0) {
        what = "session=ID wants a session id 1..4294967295";
    } else if (*p++ != ' ' || !field_u32(&p, "slot=", LS_NET_MAX_SLOTS, &slot)) {
        what = "slot=K wants a slot 0..15";
    } else if (strncmp(p, " role=player ", 13) == 0) {
        p += 13;
        c.role = LS_NET_ROLE_PLAYER;
    } else if (strncmp(p, " role=spectator ", 16) == 0) {
        p += 16;
        c.role = LS_NET_ROLE_SPECTATOR;
    } else {
        what = "role= wants player or spectator";
    }
    size_t hex_len = 0;
    if (!what) {
        const char *end = NULL;
        if (strncmp(p, "key=", 4) != 0 ||
            sodium_hex2bin(c.key, sizeof c.key, p + 4, strlen(p + 4), NULL, &hex_len, &end) != 0 ||
            hex_len != LS_NET_KEY_SIZE || end != p + 4 + 2 * LS_NET_KEY_SIZE ||
            !(end[0] == '\0' || (end[0] == '\n' && end[1] == '\0'))) {
            what = "key= wants 64 hex digits and nothing after them";
        }
    }
    if (what) {
        ls_net_auth_wipe_(&c, sizeof c);
        return ls_error_set(err, LS_ERR_PARSE, "not a credential: %s", what);
    }
    c.session = session;
    c.slot = (uint8_t)slot;
    *out = c;
    ls_net_auth_wipe_(&c, sizeof c);
    ls_error_clear(err);
    return LS_OK;
}

ls_result ls_net_credential_write(const char *path, const ls_net_credential *c, ls_error *err)
{
    char text[LS_NET_CREDENTIAL_TEXT_SIZE];
    size_t n = ls_net_credential_format(c, text, sizeof text);
    if (n == 0) {
        return ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no credential to write");
    }
    // O_EXCL: an existing file is never replaced; 0600: only the owner reads a secret.
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        ls_error_set(err, LS_ERR_IO, "cannot create: %s", strerror(errno));
        ls_error_set_path(err, path);
        ls_net_auth_wipe_(text, sizeof text);
        return LS_ERR_IO;
    }
    bool ok = write(fd, text, n) == (ssize_t)n;
    int e = errno;
    ok = close(fd) == 0 && ok;
    ls_net_auth_wipe_(text, sizeof text);
    if (!ok) {
        ls_error_set(err, LS_ERR_IO, "cannot write: %s", strerror(e));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    ls_error_clear(err);
    return LS_OK;
}

ls_result ls_net_credential_read(const char *path, ls_net_credential *out, ls_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ls_error_set(err, LS_ERR_IO, "cannot open: %s", strerror(errno));
        ls_error_set_path(err, path);
        return LS_ERR_IO;
    }
    char text[LS_NET_CREDENTIAL_TEXT_SIZE + 2];
    size_t n = fread(text, 1, sizeof text - 1, f);
    bool too_long = n == sizeof text - 1;
    fclose(f);
    text[n] = '\0';
    ls_result r = too_long ? ls_error_set(err, LS_ERR_PARSE,
                                          "not a credential: the file is too "
                                          "long for one")
                           : ls_net_credential_parse(text, out, err);
    ls_net_auth_wipe_(text, sizeof text);
    if (r != LS_OK) {
        ls_error_set_path(err, path);
    }
    return r;
}

void ls_net_credential_wipe(ls_net_credential *c)
{
    if (c) {
        ls_net_auth_wipe_(c->key, sizeof c->key);
    }
}
