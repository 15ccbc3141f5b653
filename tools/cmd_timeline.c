// SPDX-License-Identifier: MIT
// `lockstep timeline`: the rollback timeline of a lossy match, as an SVG. The
// match is simulated in one process on a fake clock (a relay and P bots of the
// push game in rollback mode, every datagram through the fault injector, 1 ms
// per step, everyone polled in slot order), so the same arguments give the same
// match and the same bytes. Per frame of bot 0: ticks re-simulated, prediction
// misses (predicted inputs that arrived different), time-sync skips and the
// frames-ahead estimate, and the RTT to the relay. Display code: float is fine.
#include "cli.h"
#include "ls/net_fault.h"
#include "ls/net_peer.h"
#include "ls/net_relay.h"
#include "net_tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TL_MAX_PEERS 4
#define TL_PORT      9000

const cli_command cmd_timeline_def = {
    "timeline",
    "the rollback timeline of a simulated lossy match (SVG: re-simulated ticks, misses, RTT)",
    "[SCENE] [--players P] [--ticks N] [--tick-rate HZ] [--delay D] [--seed S]\n"
    "                       [fault options] --out FILE.svg [--csv FILE]\n\n"
    "A relay and P bots of the push game in rollback mode, in this one process on a\n"
    "fake clock (1 ms steps): no sockets, no wall time, so the same arguments give\n"
    "the same match and the same file. Bot 0's statistics are read after every\n"
    "frame it runs and drawn per frame: ticks re-simulated (rollbacks), prediction\n"
    "misses (predicted inputs that arrived different), time-sync skips with the\n"
    "frames-ahead estimate, and the smoothed RTT to the relay.\n\n"
    "  SCENE          a scene with players (default tools/scenes/arena.scene)\n"
    "  --players P    bots, 2..4 (default 2)\n"
    "  --ticks N      match length, 10..36000 ticks (default 600)\n"
    "  --tick-rate HZ 10..1000 (default 60)\n"
    "  --delay D      input delay in ticks, 0..32 (default 2)\n"
    "  --seed S       input script seed (default 1)\n" NET_FAULT_USAGE
    "  --out FILE.svg the picture (required)\n"
    "  --csv FILE     also the numbers, one row per frame of bot 0:\n"
    "                 frame,tick,resimulated,misses,time_sync_skips,frames_ahead,rtt_us\n\n"
    "Prints one summary line. Exit status: 0 ok, 1 the match did not finish or a\n"
    "file cannot be written, 2 usage error, 3 the bots' checksums disagreed.",
    cmd_timeline,
    NULL,
};

typedef struct tl_packet {
    uint64_t at;
    int dest; // -1: the relay
    ls_net_addr from;
    size_t len;
    uint8_t data[LS_NET_MAX_DATAGRAM];
} tl_packet;

typedef struct tl_frame {
    uint32_t tick;   // bot 0's ticks simulated after the frame
    uint32_t resim;  // ticks re-simulated in the frame
    uint32_t misses; // predictions found wrong in the frame
    uint32_t skips;  // time-sync skips since the previous frame
    int32_t ahead;   // frames-ahead estimate
    uint32_t rtt_us; // smoothed RTT
} tl_frame;

typedef struct tl_sim {
    ls_relay *relay;
    uint32_t n;
    ls_peer *peer[TL_MAX_PEERS];
    net_game game[TL_MAX_PEERS];
    ls_net_fault fault;
    tl_packet *q;
    size_t qlen, qcap;
    uint64_t now;
    uint32_t desyncs;
    bool oom;
} tl_sim;

static ls_net_addr tl_peer_addr(uint32_t i)
{
    return ls_net_addr_ipv4(127, 0, 0, 1, (uint16_t)(20000 + i));
}

static void tl_enqueue(tl_sim *s, int dest, const ls_net_addr *from, const uint8_t *data,
                       size_t len)
{
    uint64_t when[2];
    uint32_t copies = ls_net_fault_apply(&s->fault, s->now, when);
    for (uint32_t c = 0; c < copies; c++) {
        if (s->qlen == s->qcap) {
            size_t cap = s->qcap ? s->qcap * 2 : 1024;
            tl_packet *q = realloc(s->q, cap * sizeof *q);
            if (!q) {
                s->oom = true;
                return;
            }
            s->q = q, s->qcap = cap;
        }
        tl_packet *p = &s->q[s->qlen++];
        p->at = when[c] > s->now ? when[c] : s->now + 1;
        p->dest = dest;
        p->from = *from;
        p->len = len;
        memcpy(p->data, data, len);
        ls_net_fault_corrupt(&s->fault, p->data, len);
    }
}

static void tl_drain(tl_sim *s)
{
    ls_net_datagram d;
    ls_net_addr ra = ls_net_addr_ipv4(127, 0, 0, 1, TL_PORT);
    while (ls_relay_next_datagram(s->relay, &d)) {
        int dest = (int)d.to.port - 20000;
        if (dest >= 0 && dest < (int)s->n) {
            tl_enqueue(s, dest, &ra, d.data, d.len);
        }
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ls_net_addr pa = tl_peer_addr(i);
        while (ls_peer_next_datagram(s->peer[i], &d)) {
            tl_enqueue(s, -1, &pa, d.data, d.len);
        }
    }
    ls_relay_event ev;
    while (ls_relay_next_event(s->relay, &ev)) {
        s->desyncs += ev.type == LS_RELAY_EV_DESYNC;
    }
}

// 1 ms of fake time: deliver what is due in due order, then poll everyone.
static void tl_step(tl_sim *s)
{
    s->now += 1000;
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < s->qlen; i++) {
            if (s->q[i].at <= s->now && (best == SIZE_MAX || s->q[i].at < s->q[best].at)) {
                best = i;
            }
        }
        if (best == SIZE_MAX) {
            break;
        }
        tl_packet p = s->q[best];
        s->q[best] = s->q[--s->qlen];
        if (p.dest < 0) {
            ls_relay_receive(s->relay, &p.from, p.data, p.len, s->now);
        } else {
            ls_peer_receive(s->peer[p.dest], p.data, p.len, s->now);
        }
        tl_drain(s);
    }
    ls_relay_poll(s->relay, s->now);
    for (uint32_t i = 0; i < s->n; i++) {
        ls_peer_poll(s->peer[i], s->now);
    }
    tl_drain(s);
}

static bool tl_finished(const tl_sim *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (ls_peer_state_get(s->peer[i]) != LS_PEER_FINISHED) {
            return false;
        }
    }
    return true;
}

// ---- the picture: four panels sharing the frame axis ----

typedef struct tl_panel {
    const char *title, *color;
    int kind; // 0 bars of a count, 1 a line
} tl_panel;

static double tl_value(const tl_frame *f, int panel)
{
    switch (panel) {
    case 0:
        return f->resim;
    case 1:
        return f->misses;
    case 2:
        return f->ahead;
    default:
        return f->rtt_us / 1000.0;
    }
}

static bool write_svg(const char *path, const tl_frame *fr, uint32_t n, const char *subtitle,
                      const char *summary)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return false;
    }
    static const tl_panel panels[4] = {
        {"ticks re-simulated per frame", "#4e79a7", 0},
        {"prediction misses per frame", "#e15759", 0},
        {"frames ahead (time sync; ticks: a skipped frame)", "#59a14f", 1},
        {"RTT to the relay, ms", "#b07aa1", 1},
    };
    const int W = 900, left = 60, right = 20, top = 64, ph = 92, gap = 30;
    const int H = top + 4 * (ph + gap) + 20;
    double pw = W - left - right, dx = n ? pw / n : pw;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Rollback timeline of "
            "bot 0, per frame</text>\n"
            "<text x=\"%d\" y=\"40\" fill=\"#555\">%s</text>\n"
            "<text x=\"%d\" y=\"56\" fill=\"#555\">%s</text>\n",
            W, H, left, left, subtitle, left, summary);
    for (int p = 0; p < 4; p++) {
        double y0 = top + p * (ph + gap) + 14, lo = 0, hi = 1;
        for (uint32_t i = 0; i < n; i++) {
            double v = tl_value(&fr[i], p);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double span = hi - lo, base = y0 + ph * hi / span; // y of the value 0
        fprintf(f,
                "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n"
                "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"none\" "
                "stroke=\"#ccc\"/>\n"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                left, y0 - 4, panels[p].title, left, y0, pw, ph, left - 6, y0 + 10, hi, left - 6,
                y0 + ph, lo);
        if (lo < 0) {
            fprintf(f,
                    "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                    "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" "
                    "text-anchor=\"end\">0</text>\n",
                    left, left + pw, base, base, left - 6, base + 4);
        }
        if (panels[p].kind == 0) {
            for (uint32_t i = 0; i < n; i++) {
                double v = tl_value(&fr[i], p);
                if (v > 0) {
                    double h = ph * v / span;
                    fprintf(f,
                            "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                            "fill=\"%s\"/>\n",
                            left + i * dx, base - h, dx > 1.5 ? dx - 0.5 : dx, h, panels[p].color);
                }
            }
        } else {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" points=\"",
                    panels[p].color);
            for (uint32_t i = 0; i < n; i++) {
                fprintf(f, "%s%.2f,%.2f", i ? " " : "", left + (i + 0.5) * dx,
                        base - ph * tl_value(&fr[i], p) / span);
            }
            fprintf(f, "\"/>\n");
            for (uint32_t i = 0; p == 2 && i < n; i++) {
                if (fr[i].skips) {
                    fprintf(
                        f,
                        "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
                        left + (i + 0.5) * dx, left + (i + 0.5) * dx, y0 + ph - 8, y0 + ph);
                }
            }
        }
    }
    // Frame axis under the last panel.
    double ya = top + 3 * (ph + gap) + 14 + ph; // bottom of the last panel
    for (uint32_t k = 0; k <= 4 && n; k++) {
        uint32_t i = (uint32_t)((uint64_t)(n - 1) * k / 4);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">frame %u</text>\n",
                left + (i + 0.5) * dx, ya + 14,
                k == 0   ? "start"
                : k == 4 ? "end"
                         : "middle",
                i + 1);
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0;
}

int cmd_timeline(int argc, char **argv)
{
    const cli_command *cmd = &cmd_timeline_def;
    const char *scene_arg = NULL, *out = NULL, *csv = NULL;
    uint64_t players = 2, ticks = 600, rate = 60, delay = 2, seed = 1;
    ls_net_fault_def fault = {0, 0, 0, 0, 0, 1, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool ok = true;
        if (net_cli_fault_option("timeline", argc, argv, &i, &fault, &ok)) {
            if (!ok) {
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        struct {
            const char *name;
            uint64_t *to, min, max;
        } nums[] = {{"--players", &players, 2, TL_MAX_PEERS},
                    {"--ticks", &ticks, 10, 36000},
                    {"--tick-rate", &rate, 10, 1000},
                    {"--delay", &delay, 0, 32},
                    {"--seed", &seed, 0, UINT64_MAX}};
        bool matched = false;
        for (size_t k = 0; k < sizeof nums / sizeof nums[0] && !matched; k++) {
            if (cli_option(cmd, argc, argv, &i, nums[k].name, &v)) {
                matched = true;
                if (!v ||
                    !cli_parse_u64(cmd, nums[k].name, v, nums[k].min, nums[k].max, nums[k].to)) {
                    return CLI_EXIT_USAGE;
                }
            }
        }
        if (matched) {
            continue;
        }
        if (cli_option(cmd, argc, argv, &i, "--out", &v) ||
            cli_option(cmd, argc, argv, &i, "--csv", &v)) {
            if (!v) {
                return CLI_EXIT_USAGE;
            }
            *(strcmp(a, "--out") == 0 ? &out : &csv) = v;
        } else if (a[0] != '-' && !scene_arg) {
            scene_arg = a;
        } else {
            return cli_unexpected(cmd, a);
        }
    }
    if (!out) {
        return cli_usage_error(cmd, "%s", "missing --out FILE.svg");
    }
    size_t olen = strlen(out);
    if (olen < 5 || strcmp(out + olen - 4, ".svg") != 0) {
        return cli_usage_error(cmd, "--out wants a file name ending in .svg (got '%s')", out);
    }
    char found[4096];
    const char *scene = scene_arg ? cli_find_scene(scene_arg, found, sizeof found)
                                  : cli_default_scene(cmd, found, sizeof found);
    if (!scene) {
        return CLI_EXIT_ERROR;
    }

    tl_sim *s = calloc(1, sizeof *s);
    tl_frame *fr = calloc(ticks * 4 + 64, sizeof *fr);
    uint32_t nfr = 0, cap = (uint32_t)ticks * 4 + 64;
    int status = CLI_EXIT_ERROR;
    if (!s || !fr) {
        fprintf(stderr, "lockstep timeline: out of memory\n");
        free(s);
        free(fr);
        return CLI_EXIT_ERROR;
    }
    s->n = (uint32_t)players;
    s->now = 1000000;
    ls_net_fault_init(&s->fault, &fault);
    uint32_t inited = 0;
    ls_error err;
    ls_relay_def rd = ls_default_relay_def();
    s->relay = ls_relay_create(&rd, &err);
    ls_session_def sd = ls_default_session_def();
    sd.slots = s->n;
    sd.ticks = (uint32_t)ticks;
    sd.delay = (uint32_t)delay;
    sd.tick_rate = (uint32_t)rate;
    uint32_t session = 0;
    if (!s->relay) {
        cli_print_error("lockstep timeline", &err);
        goto done;
    }
    if (ls_relay_session_create(s->relay, &sd, s->now, &session) != LS_OK) {
        fprintf(stderr, "lockstep timeline: cannot create the session\n");
        goto done;
    }
    for (; inited < s->n; inited++) {
        uint32_t i = inited;
        if (!net_game_init(&s->game[i], "timeline", scene, seed, i, LS_SCENE_MAX_PLAYERS)) {
            goto done;
        }
        ls_net_credential cred;
        ls_peer_def pd = ls_default_peer_def();
        if (ls_relay_session_credential(s->relay, session, i, &cred) != LS_OK ||
            ls_peer_def_set_credential(&pd, &cred) != LS_OK) {
            fprintf(stderr, "lockstep timeline: no credential for slot %u\n", i);
            net_game_free(&s->game[i]);
            goto done;
        }
        ls_net_credential_wipe(&cred);
        pd.relay = ls_net_addr_ipv4(127, 0, 0, 1, TL_PORT);
        pd.mode = LS_PEER_ROLLBACK;
        pd.cb.user = &s->game[i];
        pd.cb.local_input = net_game_local_input;
        pd.cb.advance = net_game_advance;
        pd.cb.save = net_game_save;
        pd.cb.load = net_game_load;
        pd.cb.state_checksum = net_game_state_checksum;
        s->peer[i] = ls_peer_create(&pd, &err);
        if (!s->peer[i]) {
            cli_print_error("lockstep timeline", &err);
            net_game_free(&s->game[i]);
            goto done;
        }
    }
    ls_peer_stats prev = ls_peer_stats_get(s->peer[0]);
    uint64_t max_ms = ticks * 1000 / rate * 4 + 20000;
    for (uint64_t ms = 0; ms < max_ms && !tl_finished(s) && !s->oom; ms++) {
        tl_step(s);
        ls_peer_stats st = ls_peer_stats_get(s->peer[0]);
        if (st.frames != prev.frames && nfr < cap) {
            uint64_t missed =
                (st.predicted - st.predicted_hits) - (prev.predicted - prev.predicted_hits);
            fr[nfr++] = (tl_frame){
                ls_peer_ticks(s->peer[0]), (uint32_t)(st.resimulated - prev.resimulated),
                (uint32_t)missed,          (uint32_t)(st.time_sync_skips - prev.time_sync_skips),
                st.frames_ahead,           st.rtt_us};
            prev = st;
        }
    }
    for (int k = 0; k < 200; k++) { // let the relay finalize the last ticks
        tl_step(s);
    }
    if (s->oom || !tl_finished(s)) {
        fprintf(stderr, "lockstep timeline: the match did not finish (%u of %llu ticks)\n",
                ls_peer_ticks(s->peer[0]), (unsigned long long)ticks);
        goto done;
    }
    ls_peer_stats st = ls_peer_stats_get(s->peer[0]);
    char subtitle[512], summary[512];
    snprintf(subtitle, sizeof subtitle,
             "%u bots, %llu ticks at %llu Hz, input delay %llu; loss %.3g, one-way delay %u ms "
             "+ jitter 0..%u ms, fault seed %llu; fake clock (lockstep timeline)",
             s->n, (unsigned long long)ticks, (unsigned long long)rate, (unsigned long long)delay,
             fault.loss_ppm / 1e6, fault.delay_us / 1000, fault.jitter_us / 1000,
             (unsigned long long)fault.seed);
    snprintf(summary, sizeof summary,
             "bot 0: %llu frames, %llu rollbacks, %llu ticks re-simulated (most in one frame %u), "
             "%llu of %llu predictions right, %llu time-sync skips",
             (unsigned long long)st.frames, (unsigned long long)st.rollbacks,
             (unsigned long long)st.resimulated, st.max_resim_frame,
             (unsigned long long)st.predicted_hits, (unsigned long long)st.predicted,
             (unsigned long long)st.time_sync_skips);
    if (!write_svg(out, fr, nfr, subtitle, summary)) {
        fprintf(stderr, "lockstep timeline: cannot write %s\n", out);
        goto done;
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        bool ok = f != NULL;
        if (f) {
            fprintf(f, "frame,tick,resimulated,misses,time_sync_skips,frames_ahead,rtt_us\n");
            for (uint32_t i = 0; i < nfr; i++) {
                fprintf(f, "%u,%u,%u,%u,%u,%d,%u\n", i + 1, fr[i].tick, fr[i].resim, fr[i].misses,
                        fr[i].skips, fr[i].ahead, fr[i].rtt_us);
            }
            ok = fclose(f) == 0;
        }
        if (!ok) {
            fprintf(stderr, "lockstep timeline: cannot write %s\n", csv);
            goto done;
        }
    }
    printf("wrote %s (%u frames; %s)\n", out, nfr, summary + strlen("bot 0: "));
    status = s->desyncs ? CLI_EXIT_MISMATCH : CLI_EXIT_OK;
    if (s->desyncs) {
        fprintf(stderr, "lockstep timeline: the relay saw %u desync(s)\n", s->desyncs);
    }
done:
    for (uint32_t i = 0; i < inited; i++) {
        ls_peer_destroy(s->peer[i]);
        net_game_free(&s->game[i]);
    }
    ls_relay_destroy(s->relay);
    free(s->q);
    free(s);
    free(fr);
    return status;
}
