// SPDX-License-Identifier: MIT
// `lockstep keygen --out NAME`: an Ed25519 key pair for signed recordings
// (SPEC.md §16.11): NAME.key (secret, mode 0600) and NAME.pub. The user names
// the files; existing files are never replaced.
#include "cli.h"
#include "ls/replay_sign.h"

#include <stdio.h>
#include <string.h>

const cli_command cmd_keygen_def = {
    "keygen", "make an Ed25519 key pair for signing recordings (relay --sign-key)",
    "--out NAME\n\n"
    "  --out NAME   write NAME.key (secret key, mode 0600) and NAME.pub (public key);\n"
    "               existing files are never overwritten\n\n"
    "The relay signs its recordings with NAME.key (lockstep relay --sign-key NAME.key);\n"
    "anyone checks them with NAME.pub (lockstep replay verify FILE --pubkey NAME.pub).",
    cmd_keygen, NULL};

int cmd_keygen(int argc, char **argv)
{
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_option(&cmd_keygen_def, argc, argv, &i, "--out", &v)) {
            if (!v) {
                return CLI_EXIT_USAGE;
            }
            out = v;
        } else {
            return cli_unexpected(&cmd_keygen_def, argv[i]);
        }
    }
    if (!out || !out[0]) {
        return cli_usage_error(&cmd_keygen_def, "--out NAME is required (no default path)");
    }
    char secret_path[4096], public_path[4096];
    if (snprintf(secret_path, sizeof secret_path, "%s.key", out) >= (int)sizeof secret_path ||
        snprintf(public_path, sizeof public_path, "%s.pub", out) >= (int)sizeof public_path) {
        return cli_usage_error(&cmd_keygen_def, "--out: name too long");
    }
    uint8_t pk[LS_REPLAY_PUBLIC_KEY_SIZE], sk[LS_REPLAY_SECRET_KEY_SIZE];
    ls_error err;
    int status = CLI_EXIT_ERROR;
    if (ls_replay_key_generate(pk, sk, &err) != LS_OK ||
        ls_replay_key_write(secret_path, sk, sizeof sk, &err) != LS_OK) {
        cli_print_error("lockstep keygen", &err);
    } else if (ls_replay_key_write(public_path, pk, sizeof pk, &err) != LS_OK) {
        cli_print_error("lockstep keygen", &err);
        remove(secret_path); // no half pair left behind
    } else {
        char name[32];
        ls_replay_key_fingerprint(pk, name);
        printf("wrote %s (secret, keep it private) and %s (public): %s\n", secret_path, public_path,
               name);
        status = CLI_EXIT_OK;
    }
    memset(sk, 0, sizeof sk);
    return status;
}
