// SPDX-License-Identifier: MIT
// GET /metrics of `lockstep relay --api` (SPEC.md §17.13): the relay's
// counters in the Prometheus text exposition format (version 0.0.4), for a
// Prometheus server to scrape with the operator's bearer token. One route of
// the control API's table (relay_api_route_add); the figures come from the
// relay core (ls_relay_stats_get) and from what the API knows of its sessions
// (relay_api_counters), summed over every worker thread's core (--workers). Names follow
// Prometheus' conventions: the `lockstep_relay_` prefix, `_total` on counters, base units (bytes,
// seconds). Why every datagram drop is one counter with a `reason` label:
// an operator graphs them together and alerts on any of them.
#include "relay_metrics.h"

#include "ls/net_relay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *p;
    size_t n, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    for (int attempt = 0; attempt < 2 && !t->failed; attempt++) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = (t->cap + (size_t)k + 1) * 2;
        char *p = realloc(t->p, cap);
        if (!p) {
            t->failed = true;
            return;
        }
        t->p = p, t->cap = cap;
    }
}

static void metric(text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(text *t, const char *name, const char *help, uint64_t v)
{
    metric(t, name, "counter", help);
    put(t, "%s %llu\n", name, (unsigned long long)v);
}

static void gauge(text *t, const char *name, const char *help, uint64_t v)
{
    metric(t, name, "gauge", help);
    put(t, "%s %llu\n", name, (unsigned long long)v);
}

static void h_metrics(relay_api *a, relay_api_request *rq)
{
    ls_relay_stats st;
    relay_api_totals tot;
    relay_api_counters(a, &st, &tot); // summed over the worker threads' relay cores
    text t = {malloc(8192), 0, 8192, false};
    t.failed = t.p == NULL;
    metric(&t, "lockstep_relay_sessions", "gauge", "Sessions by state.");
    put(&t, "lockstep_relay_sessions{state=\"waiting\"} %u\n", tot.waiting);
    put(&t, "lockstep_relay_sessions{state=\"running\"} %u\n", tot.running);
    put(&t, "lockstep_relay_sessions{state=\"done\"} %u\n", tot.done);
    gauge(&t, "lockstep_relay_peers", "Player slots joined in running sessions.", tot.peers);
    gauge(&t, "lockstep_relay_draining", "1 while draining (SIGTERM): no new sessions.",
          tot.draining ? 1u : 0u);
    counter(&t, "lockstep_relay_datagrams_received_total", "Datagrams received.", st.packets_in);
    counter(&t, "lockstep_relay_datagrams_sent_total", "Datagrams produced for sending.",
            st.packets_out);
    counter(&t, "lockstep_relay_received_bytes_total", "Bytes received.", st.bytes_in);
    counter(&t, "lockstep_relay_sent_bytes_total", "Bytes produced for sending.", st.bytes_out);
    metric(&t, "lockstep_relay_datagrams_dropped_total", "counter",
           "Datagrams dropped, by reason (SPEC.md 17.11).");
    const struct {
        const char *reason;
        uint64_t v;
    } drops[] = {
        {"malformed", st.malformed},         {"truncated", st.truncated},
        {"wrong_version", st.wrong_version}, {"bad_tag", st.bad_mac},
        {"replayed", st.replayed},           {"stale", st.stale},
        {"unverified", st.unverified},       {"no_session", st.no_session},
        {"rate_limited", st.rate_limited},   {"outbox_full", st.outbox_dropped},
    };
    for (size_t i = 0; i < sizeof drops / sizeof drops[0]; i++) {
        put(&t, "lockstep_relay_datagrams_dropped_total{reason=\"%s\"} %llu\n", drops[i].reason,
            (unsigned long long)drops[i].v);
    }
    counter(&t, "lockstep_relay_challenges_total", "CHALLENGEs sent.", st.challenges);
    counter(&t, "lockstep_relay_desyncs_total",
            "Desynced ticks with a majority (the minority named).", st.desyncs);
    counter(&t, "lockstep_relay_disputes_total", "Desynced ticks without a majority.", st.disputes);
    counter(&t, "lockstep_relay_rejoins_total", "Rejoins accepted.", st.rejoins);
    counter(&t, "lockstep_relay_rejoins_refused_total", "Authentic rejoins refused.",
            st.rejoin_refused);
    counter(&t, "lockstep_relay_spectators_dropped_total", "Spectators dropped.",
            st.spectators_dropped);
    counter(&t, "lockstep_relay_resends_deferred_total",
            "Polls whose re-send budget held re-sends back (past capacity).", st.resends_deferred);
    metric(&t, "lockstep_relay_recordings_total", "counter", "Recordings finished, by result.");
    put(&t, "lockstep_relay_recordings_total{result=\"ok\"} %u\n", tot.recordings_ok);
    put(&t, "lockstep_relay_recordings_total{result=\"error\"} %u\n", tot.recordings_failed);
    metric(&t, "lockstep_relay_datagram_handling_seconds", "histogram",
           "Time from a datagram's arrival to the datagrams it produced being sent: the latency "
           "the relay process adds.");
    uint64_t cum = 0;
    for (int b = 0; b < RELAY_API_LATENCY_BUCKETS; b++) {
        cum += tot.latency[b];
        put(&t, "lockstep_relay_datagram_handling_seconds_bucket{le=\"%g\"} %llu\n",
            relay_api_latency_bounds_us[b] * 1e-6, (unsigned long long)cum);
    }
    cum += tot.latency[RELAY_API_LATENCY_BUCKETS];
    put(&t, "lockstep_relay_datagram_handling_seconds_bucket{le=\"+Inf\"} %llu\n",
        (unsigned long long)cum);
    put(&t, "lockstep_relay_datagram_handling_seconds_sum %.9f\n",
        (double)tot.latency_sum_ns * 1e-9);
    put(&t, "lockstep_relay_datagram_handling_seconds_count %llu\n",
        (unsigned long long)tot.latency_count);
    if (tot.ws) { // --ws: the WebSocket listeners (SPEC.md 17.16)
        const relay_ws_stats *w = &tot.ws_stats;
        gauge(&t, "lockstep_relay_ws_connections", "WebSocket connections open.", w->open);
        counter(&t, "lockstep_relay_ws_connections_accepted_total",
                "WebSocket connections accepted.", w->accepted);
        counter(&t, "lockstep_relay_ws_messages_received_total",
                "WebSocket binary messages received (each one datagram).", w->frames_in);
        counter(&t, "lockstep_relay_ws_messages_sent_total", "WebSocket binary messages sent.",
                w->frames_out);
        counter(&t, "lockstep_relay_ws_received_bytes_total", "WebSocket datagram bytes received.",
                w->bytes_in);
        counter(&t, "lockstep_relay_ws_sent_bytes_total", "WebSocket datagram bytes sent.",
                w->bytes_out);
        counter(&t, "lockstep_relay_ws_send_dropped_total",
                "Datagrams for a WebSocket connection that was gone or cut off.", w->send_dropped);
        metric(&t, "lockstep_relay_ws_refused_total", "counter",
               "WebSocket connections refused or closed by the relay, by reason.");
        const struct {
            const char *reason;
            uint64_t v;
        } why[] = {
            {"origin", w->origin_refused},   {"full", w->full_refused},
            {"text", w->text_closed},        {"too_big", w->oversize_closed},
            {"slow_reader", w->slow_closed},
        };
        for (size_t i = 0; i < sizeof why / sizeof why[0]; i++) {
            put(&t, "lockstep_relay_ws_refused_total{reason=\"%s\"} %llu\n", why[i].reason,
                (unsigned long long)why[i].v);
        }
    }
    if (t.failed) {
        relay_api_error err = {"out of memory", "/metrics"};
        relay_api_respond_error(rq, 500, &err);
    } else {
        relay_api_respond(rq, 200, "text/plain; version=0.0.4; charset=utf-8", t.p, t.n);
    }
    free(t.p);
}

bool relay_metrics_register(relay_api *a)
{
    return relay_api_route_add(a, "GET", "/metrics", true, h_metrics);
}
