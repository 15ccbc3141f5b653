// SPDX-License-Identifier: MIT
// The browser peer's libsodium (wasm32 build only; sodium/sodium.h says why).
// Each cryptographic function is one call into the JavaScript import module
// "ls_sodium" (peer.js), which runs libsodium-wrappers on copies of the bytes:
// nothing here computes a cipher, a MAC or a hash. The hex and zeroing helpers
// follow libsodium's documented behaviour (they are not cryptography).
#include "sodium/sodium.h"

#include <errno.h>
#include <string.h>

#define LS_SODIUM_IMPORT(name) __attribute__((import_module("ls_sodium"), import_name(#name)))

// tag = ChaCha20-Poly1305 IETF tag of the empty message with ad as associated data.
LS_SODIUM_IMPORT(aead_tag)
int32_t ls_sodium_aead_tag_(uint8_t *tag, const uint8_t *ad, uint32_t adlen, const uint8_t *npub,
                            const uint8_t *key);
// 0 when tag is the tag of the empty message with ad, -1 otherwise.
LS_SODIUM_IMPORT(aead_verify)
int32_t ls_sodium_aead_verify_(const uint8_t *tag, const uint8_t *ad, uint32_t adlen,
                               const uint8_t *npub, const uint8_t *key);
// BLAKE2b of in (inlen bytes) into out (outlen bytes), keyed when keylen > 0.
LS_SODIUM_IMPORT(generichash)
int32_t ls_sodium_generichash_(uint8_t *out, uint32_t outlen, const uint8_t *in, uint32_t inlen,
                               const uint8_t *key, uint32_t keylen);
// 0 when a and b (n bytes) are equal, -1 otherwise, in constant time (sodium.memcmp).
LS_SODIUM_IMPORT(memcmp)
int32_t ls_sodium_memcmp_(const uint8_t *a, const uint8_t *b, uint32_t n);
// n random bytes into buf (libsodium's randombytes_buf).
LS_SODIUM_IMPORT(random)
void ls_sodium_random_(uint8_t *buf, uint32_t n);
// 1 when the JavaScript side's libsodium is ready.
LS_SODIUM_IMPORT(ready)
int32_t ls_sodium_ready_(void);

int sodium_init(void)
{
    return ls_sodium_ready_() ? 0 : -1;
}

// The peer only ever authenticates (an empty message; SPEC.md §17.3): a message
// would need the cipher too, which the JavaScript side does not offer, so it fails.
int crypto_aead_chacha20poly1305_ietf_encrypt_detached(
    unsigned char *c, unsigned char *mac, unsigned long long *maclen_p, const unsigned char *m,
    unsigned long long mlen, const unsigned char *ad, unsigned long long adlen,
    const unsigned char *nsec, const unsigned char *npub, const unsigned char *k)
{
    (void)c, (void)m, (void)nsec;
    if (mlen != 0 || adlen > UINT32_MAX ||
        ls_sodium_aead_tag_(mac, ad, (uint32_t)adlen, npub, k) != 0) {
        if (maclen_p) {
            *maclen_p = 0;
        }
        return -1;
    }
    if (maclen_p) {
        *maclen_p = crypto_aead_chacha20poly1305_ietf_ABYTES;
    }
    return 0;
}

int crypto_aead_chacha20poly1305_ietf_decrypt_detached(
    unsigned char *m, unsigned char *nsec, const unsigned char *c, unsigned long long clen,
    const unsigned char *mac, const unsigned char *ad, unsigned long long adlen,
    const unsigned char *npub, const unsigned char *k)
{
    (void)m, (void)nsec, (void)c;
    if (clen != 0 || adlen > UINT32_MAX) {
        return -1;
    }
    return ls_sodium_aead_verify_(mac, ad, (uint32_t)adlen, npub, k) == 0 ? 0 : -1;
}

void crypto_aead_chacha20poly1305_ietf_keygen(unsigned char *k)
{
    ls_sodium_random_(k, crypto_aead_chacha20poly1305_ietf_KEYBYTES);
}

int crypto_generichash(unsigned char *out, size_t outlen, const unsigned char *in,
                       unsigned long long inlen, const unsigned char *key, size_t keylen)
{
    if (outlen < 16 || outlen > 64 || inlen > UINT32_MAX || keylen > 64 || (keylen && !key)) {
        return -1;
    }
    return ls_sodium_generichash_(out, (uint32_t)outlen, in, (uint32_t)inlen, key,
                                  key ? (uint32_t)keylen : 0);
}

int sodium_memcmp(const void *b1, const void *b2, size_t len)
{
    return len <= UINT32_MAX && ls_sodium_memcmp_(b1, b2, (uint32_t)len) == 0 ? 0 : -1;
}

void sodium_memzero(void *pnt, size_t len)
{
    volatile unsigned char *p = pnt;
    while (len--) {
        *p++ = 0;
    }
}

char *sodium_bin2hex(char *hex, size_t hex_maxlen, const unsigned char *bin, size_t bin_len)
{
    static const char digits[] = "0123456789abcdef";
    if (hex_maxlen == 0) {
        return hex;
    }
    size_t n = bin_len < (hex_maxlen - 1) / 2 ? bin_len : (hex_maxlen - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[bin[i] >> 4];
        hex[2 * i + 1] = digits[bin[i] & 15];
    }
    hex[2 * n] = '\0';
    return hex;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

// As libsodium's: decode pairs of digits until a non-digit; an odd digit left over
// (EINVAL) or a full bin (ERANGE) is an error, and *bin_len is then 0; *hex_end is
// where decoding stopped (without hex_end, stopping before hex_len is an error).
// `ignore` (separators to skip) is not supported: auth.c passes NULL.
int sodium_hex2bin(unsigned char *bin, size_t bin_maxlen, const char *hex, size_t hex_len,
                   const char *ignore, size_t *bin_len, const char **hex_end)
{
    size_t i = 0, n = 0;
    int ret = 0;
    (void)ignore;
    while (i < hex_len && hex_digit(hex[i]) >= 0) {
        if (n >= bin_maxlen) {
            ret = -1;
            errno = ERANGE;
            break;
        }
        if (i + 1 >= hex_len || hex_digit(hex[i + 1]) < 0) {
            ret = -1; // an odd digit
            errno = EINVAL;
            break;
        }
        bin[n++] = (unsigned char)(hex_digit(hex[i]) * 16 + hex_digit(hex[i + 1]));
        i += 2;
    }
    if (ret != 0) {
        n = 0;
    }
    if (hex_end) {
        *hex_end = hex + i;
    } else if (i != hex_len) {
        ret = -1;
        errno = EINVAL;
    }
    if (bin_len) {
        *bin_len = n;
    }
    return ret;
}
