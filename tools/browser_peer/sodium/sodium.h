// SPDX-License-Identifier: MIT
// The browser peer's <sodium.h> (wasm32 build only: mk/browser_peer.mk puts this
// folder on the include path; the native build never sees it and links Debian's
// libsodium). It declares the few libsodium functions net/src/auth.c, peer.c and
// spectator.c call, with libsodium's own names, signatures and sizes, so those
// files compile unchanged. Why a shim: Debian has no libsodium for wasm32, and
// cryptography is never hand-written here. The primitives (ChaCha20-Poly1305 IETF,
// BLAKE2b, the constant-time comparison, random bytes) are imported from
// JavaScript, where npm's libsodium-wrappers (libsodium itself, compiled to
// WebAssembly by its authors; pinned in tools/browser_peer/package-lock.json)
// computes them: see sodium_shim.c and peer.js. Only the helpers that are not
// cryptography (hex, zeroing) are C here.
#ifndef LS_BROWSER_PEER_SODIUM_SHIM_H
#define LS_BROWSER_PEER_SODIUM_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define crypto_aead_chacha20poly1305_ietf_ABYTES    16U
#define crypto_aead_chacha20poly1305_ietf_KEYBYTES  32U
#define crypto_aead_chacha20poly1305_ietf_NPUBBYTES 12U

/// 0 once the JavaScript side's libsodium is ready (1: already initialised), -1 if not.
int sodium_init(void);
/// libsodium's detached AEAD encryption (the peer passes an empty message: tag only).
int crypto_aead_chacha20poly1305_ietf_encrypt_detached(
    unsigned char *c, unsigned char *mac, unsigned long long *maclen_p, const unsigned char *m,
    unsigned long long mlen, const unsigned char *ad, unsigned long long adlen,
    const unsigned char *nsec, const unsigned char *npub, const unsigned char *k);
/// libsodium's detached AEAD decryption: 0 when the tag verifies, -1 otherwise.
int crypto_aead_chacha20poly1305_ietf_decrypt_detached(
    unsigned char *m, unsigned char *nsec, const unsigned char *c, unsigned long long clen,
    const unsigned char *mac, const unsigned char *ad, unsigned long long adlen,
    const unsigned char *npub, const unsigned char *k);
/// A random key.
void crypto_aead_chacha20poly1305_ietf_keygen(unsigned char *k);
/// BLAKE2b (libsodium's generic hash) of in into out (outlen 16..64), keyed if key.
int crypto_generichash(unsigned char *out, size_t outlen, const unsigned char *in,
                       unsigned long long inlen, const unsigned char *key, size_t keylen);
/// Constant-time comparison: 0 when the len bytes at b1 and b2 are equal, -1 otherwise.
int sodium_memcmp(const void *b1, const void *b2, size_t len);
/// Zero n bytes (not optimised away).
void sodium_memzero(void *pnt, size_t len);
/// Lower-case hex of bin (hex_maxlen >= 2 * bin_len + 1); returns hex.
char *sodium_bin2hex(char *hex, size_t hex_maxlen, const unsigned char *bin, size_t bin_len);
/// libsodium's hex decoder (ignore must be NULL here: no separators are accepted).
int sodium_hex2bin(unsigned char *bin, size_t bin_maxlen, const char *hex, size_t hex_len,
                   const char *ignore, size_t *bin_len, const char **hex_end);

#endif
