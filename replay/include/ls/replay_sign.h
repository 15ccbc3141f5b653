// SPDX-License-Identifier: MIT
/// @file
/// Signed recordings (SPEC.md §16.11): Ed25519 through libsodium. A signer
/// made here plugs into ls_replay_recorder_def.signer, so the recorder signs
/// every byte it has written after each chunk; a reader's signatures are
/// checked against the signer's public key. Keys live in files the caller
/// names; nothing is generated or stored behind its back.
///
///     uint8_t sk[LS_REPLAY_SECRET_KEY_SIZE];
///     ls_replay_key_read("relay.key", sk, sizeof sk, &err);
///     ls_replay_signer *s = ls_replay_signer_create(sk, &err);
///     def.signer = s;                         // outlives the recorder
///     ...
///     ls_replay_signature_report rep;
///     ls_replay_reader_check_signatures(reader, public_key, &rep, &err);
///
/// Not part of the wasm and cross-compiled builds (the replay module itself
/// has no cryptography); link with libsodium (pkg-config does).
#ifndef LS_REPLAY_SIGN_H
#define LS_REPLAY_SIGN_H

#include "ls/replay.h"

LS_EXTERN_C_BEGIN

/// Bytes of an Ed25519 secret key as libsodium keeps it (seed and public key).
#define LS_REPLAY_SECRET_KEY_SIZE 64

/// A new key pair from the system's randomness.
LS_API ls_result ls_replay_key_generate(uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                        uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                                        ls_error *err);
/// Write a key file: a label line ("lockstep ed25519 public key" or "... secret key",
/// by size) and the key in hex. Never overwrites an existing file; a secret key file
/// gets mode 0600.
LS_API ls_result ls_replay_key_write(const char *path, const uint8_t *key, size_t size,
                                     ls_error *err);
/// Read a key file written by ls_replay_key_write, expecting `size` bytes
/// (LS_REPLAY_PUBLIC_KEY_SIZE or LS_REPLAY_SECRET_KEY_SIZE); a secret key file also
/// yields its public key. `path` may also be the key itself as hex digits.
LS_API ls_result ls_replay_key_read(const char *path, uint8_t *key, size_t size, ls_error *err);
/// The public half of a secret key.
LS_API void ls_replay_key_public(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE],
                                 uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE]);
/// "ed25519:" and the first 8 bytes of the key in hex: how tools name a key.
LS_API void ls_replay_key_fingerprint(const uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
                                      char out[32]);

/// A signer for ls_replay_recorder_def.signer (it must outlive the recorder).
LS_API ls_replay_signer *
ls_replay_signer_create(const uint8_t secret_key[LS_REPLAY_SECRET_KEY_SIZE], ls_error *err);
/// Free a signer (wipes the secret key).
LS_API void ls_replay_signer_destroy(ls_replay_signer *s);

/// What the signatures of a file prove.
typedef struct ls_replay_signature_report {
    uint32_t signatures;   ///< SIGN chunks, all verified.
    uint32_t signed_ticks; ///< Ticks before the last SIGN chunk: proven the signer's.
    uint64_t signed_bytes; ///< Bytes covered by the last SIGN chunk.
    bool complete;         ///< Every tick of the file is covered.
} ls_replay_signature_report;

/// Check every SIGN chunk of a signed file against public_key: LS_OK when the
/// header names this key and each signature verifies over the bytes before it
/// (a file cut by a crash is proven up to its last SIGN chunk: see
/// out->signed_ticks and out->complete). LS_ERR_INCOMPATIBLE when the file is not
/// signed or by another key; LS_ERR_CORRUPT when a signature does not verify (the
/// file was modified), naming its byte offset.
LS_API ls_result ls_replay_reader_check_signatures(
    const ls_replay_reader *r, const uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE],
    ls_replay_signature_report *out, ls_error *err);

LS_EXTERN_C_END

#endif
