// SPDX-License-Identifier: MIT
// Which lockstep release wrote a build fingerprint (SPEC.md §16.8), and the
// words a verifier uses to refuse a recording of another engine: "recorded by
// lockstep 0.2 (Solver v2: snapshot LSSN-3, physics solver-v2); this is
// lockstep 0.3 (...): its physics differ, ...". The table below is the one
// place that maps fingerprints to releases; the fingerprint itself is
// ls_game_fingerprint (fixmath_phys/src/world/game.c), and a test requires it
// in this table under the library's own MAJOR.MINOR. The module still knows
// nothing of physics: fingerprints are strings to it.
#include "ls/replay.h"

#include <stdio.h>
#include <string.h>

typedef struct ls_replay_release {
    const char *fingerprint; // exactly what that release's builds wrote
    const char *version;     // "MAJOR.MINOR"
    const char *solver;      // its solver, in words
} ls_replay_release;

// The fields every release so far shares (number format, libfixmath build, checksum).
#define LSR_FP_BASE "fx=Q16.16;libfixmath=0~20220222,no-FIXMATH-defines;checksum=xxh3-64,SPEC-8+12;"

// Every fingerprint a lockstep release wrote, oldest first (SPEC.md §16.8).
// A change of ls_game_fingerprint adds a row here.
static const ls_replay_release releases[] = {
    // 0.1, and 0.2.0 before Solver v2: no physics tag yet.
    {LSR_FP_BASE "snapshot=LSSN-1;game=push-20N-v1", "0.1", "Solver v1"},
    {LSR_FP_BASE "snapshot=LSSN-3;physics=solver-v2;game=push-20N-v1", "0.2", "Solver v2"},
    {LSR_FP_BASE "snapshot=LSSN-6;physics=solver-v3;game=push-20N-v1", "0.3", "Solver v3"},
};

static const ls_replay_release *release_of(const char *fingerprint)
{
    for (size_t i = 0; fingerprint && i < sizeof releases / sizeof releases[0]; i++) {
        if (strcmp(releases[i].fingerprint, fingerprint) == 0) {
            return &releases[i];
        }
    }
    return NULL;
}

// The value of `key=` in a `;`-separated fingerprint, copied into out (cut to
// fit). False (out "") when the fingerprint has no such field.
static bool field(const char *fp, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    out[0] = '\0';
    for (const char *p = fp; p && *p;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > klen && memcmp(p, key, klen) == 0 && p[klen] == '=') {
            size_t n = len - klen - 1;
            n = n < size - 1 ? n : size - 1;
            memcpy(out, p + klen + 1, n);
            out[n] = '\0';
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

ls_replay_engine ls_replay_fingerprint_engine(const char *fingerprint)
{
    ls_replay_engine e;
    memset(&e, 0, sizeof e);
    const ls_replay_release *rel = release_of(fingerprint);
    if (rel) {
        e.known = true;
        snprintf(e.version, sizeof e.version, "%s", rel->version);
        snprintf(e.solver, sizeof e.solver, "%s", rel->solver);
    }
    field(fingerprint, "snapshot", e.snapshot, sizeof e.snapshot);
    field(fingerprint, "physics", e.physics, sizeof e.physics);
    return e;
}

static size_t result(int n)
{
    return n < 0 ? 0 : (size_t)n;
}

// The engine in words; compact leaves out the field names ("Solver v3: LSSN-6,
// solver-v3"), for the second engine of a sentence that named them already.
static size_t describe(const char *fingerprint, bool compact, char *buf, size_t size)
{
    char tmp[1];
    if (!buf || size == 0) {
        buf = tmp;
        size = sizeof tmp;
    }
    ls_replay_engine e = ls_replay_fingerprint_engine(fingerprint);
    char snapshot[48], physics[48];
    snprintf(snapshot, sizeof snapshot, "%s%s", compact ? "" : "snapshot ",
             e.snapshot[0] ? e.snapshot : "none");
    snprintf(physics, sizeof physics, "%s%s", e.physics[0] && !compact ? "physics " : "",
             e.physics[0] ? e.physics : "no physics tag");
    if (e.known) {
        return result(snprintf(buf, size, "lockstep %s (%s: %s, %s)", e.version, e.solver, snapshot,
                               physics));
    }
    if (e.snapshot[0] || e.physics[0]) {
        return result(snprintf(buf, size, "an unknown engine (%s, %s)", snapshot, physics));
    }
    // Nothing to name it by but the string: its first 40 characters.
    const char *fp = fingerprint ? fingerprint : "";
    return result(snprintf(buf, size, "an unknown engine (fingerprint '%.40s%s')", fp,
                           strlen(fp) > 40 ? "..." : ""));
}

size_t ls_replay_fingerprint_describe(const char *fingerprint, char *buf, size_t size)
{
    return describe(fingerprint, false, buf, size);
}

// The fields a recording's bits depend on, in the order a refusal names the
// first that differs (physics before the snapshot layout: a new solver brings
// a new layout, and the solver is what a user knows).
static const struct {
    const char *key;
    const char *words; // "its ... differ(s)"
} fields[] = {
    {"fx", "number format differs"},         {"libfixmath", "libfixmath build differs"},
    {"checksum", "checksum differs"},        {"physics", "physics differ"},
    {"snapshot", "snapshot layout differs"}, {"game", "game rules differ"},
};

// Why the two fingerprints differ, in words ("physics differ"): the first
// field of the table whose values differ (a missing field differs from a
// present one), or "build differs" when the recording has none of them.
static const char *difference(const char *recorded, const char *expected)
{
    enum { N = sizeof fields / sizeof fields[0] };
    char a[N][LS_REPLAY_FINGERPRINT_MAX + 1], b[LS_REPLAY_FINGERPRINT_MAX + 1];
    bool named = false;
    for (size_t i = 0; i < N; i++) {
        named = field(recorded, fields[i].key, a[i], sizeof a[i]) || named;
    }
    for (size_t i = 0; named && i < N; i++) {
        field(expected, fields[i].key, b, sizeof b);
        if (strcmp(a[i], b) != 0) {
            return fields[i].words;
        }
    }
    return "build differs";
}

size_t ls_replay_fingerprint_refusal(const char *recorded, const char *expected, char *buf,
                                     size_t size)
{
    char tmp[1];
    if (!buf || size == 0) {
        buf = tmp;
        size = sizeof tmp;
    }
    recorded = recorded ? recorded : "";
    expected = expected ? expected : "";
    if (strcmp(recorded, expected) == 0) {
        buf[0] = '\0';
        return 0;
    }
    char here[256]; // room for the longest description (no truncation warning at -O3)
    describe(expected, true, here, sizeof here);
    const ls_replay_release *rec = release_of(recorded), *cur = release_of(expected);
    char advice[64] = "";
    if (rec && (!cur || strcmp(rec->version, cur->version) != 0)) {
        snprintf(advice, sizeof advice, "; verify it with lockstep %s", rec->version);
    }
    return result(snprintf(buf, size, "this is %s: its %s, so it cannot be verified here%s", here,
                           difference(recorded, expected), advice));
}
