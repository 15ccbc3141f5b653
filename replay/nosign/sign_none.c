// SPDX-License-Identifier: MIT
// ls/replay_sign.h for builds without libsodium (the Windows build, mk/windows.mk;
// replay/sign/sign.c is the real one):
// every function that needs cryptography fails with LS_ERR_INCOMPATIBLE and
// says so, so a tool linked with it reads, verifies and records unsigned
// files and refuses signing and signature checks by name.
#include "ls/replay_sign.h"

#include <stdio.h>
#include <string.h>

static ls_result unavailable(ls_error *err)
{
    return ls_error_set(err, LS_ERR_INCOMPATIBLE,
                        "replay signatures need libsodium, which this build of lockstep lacks");
}

ls_result ls_replay_key_generate(uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                 uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE], ls_error *err)
{
    (void)public_key, (void)secret_key;
    return unavailable(err);
}

void ls_replay_key_public(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                          uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE])
{
    // libsodium's Ed25519 secret key is the seed followed by the public key.
    memcpy(public_key, secret_key + LS_REPLAY_SECRET_KEY_SIZE - LS_REPLAY_PUBLIC_KEY_SIZE,
           LS_REPLAY_PUBLIC_KEY_SIZE);
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
    (void)path, (void)key, (void)size;
    return unavailable(err);
}

ls_result ls_replay_key_read(const char *path, uint8_t *key, size_t size, ls_error *err)
{
    (void)path, (void)key, (void)size;
    return unavailable(err);
}

ls_replay_signer *ls_replay_signer_create(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                                          ls_error *err)
{
    (void)secret_key;
    unavailable(err);
    return NULL;
}

void ls_replay_signer_destroy(ls_replay_signer *s)
{
    (void)s;
}

ls_result ls_replay_reader_check_signatures(const ls_replay_reader *r,
                                            const uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                            ls_replay_signature_report *out, ls_error *err)
{
    (void)r, (void)public_key;
    if (out) {
        memset(out, 0, sizeof *out);
    }
    return unavailable(err);
}
