// SPDX-License-Identifier: MIT
/// @file
/// Credentials and datagram authentication of wire v2 (SPEC.md §17.2, §17.3).
/// Each slot of a session has a secret 32-byte key known only to the relay and
/// that slot's peer; it travels inside a credential (a one-line text, usually a
/// file readable by its owner only) and never on the wire. Every datagram ends
/// with a 16-byte ChaCha20-Poly1305 tag over all its other bytes, under the
/// slot's key and a nonce made of the direction, role, slot and the sender's
/// 64-bit sequence number (libsodium). Receivers drop datagrams whose tag or
/// sequence number is wrong before acting on anything in them.
#ifndef LS_NET_AUTH_H
#define LS_NET_AUTH_H

#include "ls/net_wire.h"

LS_EXTERN_C_BEGIN

/// Which way a datagram travels (part of the nonce: a datagram cannot be reflected).
typedef enum ls_net_dir {
    LS_NET_TO_RELAY = 0, ///< Sent by a peer to the relay.
    LS_NET_TO_PEER = 1,  ///< Sent by the relay to a peer.
} ls_net_dir;

/// Everything a peer needs to join its slot: session, slot, role and secret key.
typedef struct ls_net_credential {
    uint32_t session;             ///< Session id (1-based).
    uint8_t slot;                 ///< Slot (0..15).
    uint8_t role;                 ///< ls_net_role (LS_NET_ROLE_PLAYER; spectators reserved).
    uint8_t key[LS_NET_KEY_SIZE]; ///< The slot's secret key.
} ls_net_credential;

/// Bytes that always hold a credential's text form, NUL included.
#define LS_NET_CREDENTIAL_TEXT_SIZE 160

/// Write the text form "lockstep-credential 2 session=S slot=K role=player key=HEX64\n"
/// into buf; returns its length (0 if size < LS_NET_CREDENTIAL_TEXT_SIZE).
LS_API size_t ls_net_credential_format(const ls_net_credential *c, char *buf, size_t size);
/// Parse the text form (a trailing newline is allowed); LS_ERR_PARSE naming what is wrong.
LS_API ls_result ls_net_credential_parse(const char *text, ls_net_credential *out, ls_error *err);
/// Create path (which must not exist yet) readable by its owner only, holding the text form.
LS_API ls_result ls_net_credential_write(const char *path, const ls_net_credential *c,
                                         ls_error *err);
/// Read a credential file written by ls_net_credential_write.
LS_API ls_result ls_net_credential_read(const char *path, ls_net_credential *out, ls_error *err);
/// Overwrite a credential's key with zeros (compilers may not optimise it away).
LS_API void ls_net_credential_wipe(ls_net_credential *c);

/// Fill the last LS_NET_TAG_SIZE bytes of an encoded datagram (ls_net_encode) with
/// its tag under key for direction dir. LS_ERR_CORRUPT if the header does not decode.
LS_API ls_result ls_net_seal(uint8_t *datagram, size_t len, const uint8_t key[LS_NET_KEY_SIZE],
                             ls_net_dir dir);
/// True when the datagram's tag is right for key and dir (constant time). It does
/// not check the sequence number against a replay window: receivers do that.
LS_API bool ls_net_verify(const uint8_t *datagram, size_t len, const uint8_t key[LS_NET_KEY_SIZE],
                          ls_net_dir dir);

LS_EXTERN_C_END

#endif
