// SPDX-License-Identifier: MIT
// Running programs from a test: start one in the background with its stdout and
// stderr in files, wait for its exit status, read a file whole, wait for the
// relay's "ready". Every test that plays a match through `lockstep relay` and
// `lockstep bot` processes needs these; they live here once (static functions:
// a test file includes this header once).
#ifndef LS_TEST_PROC_H
#define LS_TEST_PROC_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/// The whole file at path, NUL-terminated (malloc'd; "" when it cannot be opened).
static inline char *tp_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    while (f) {
        if (len + 4096 + 1 > cap) {
            cap *= 2;
            text = realloc(text, cap);
            cr_assert_not_null(text);
        }
        size_t got = fread(text + len, 1, 4096, f);
        if (got == 0) {
            break;
        }
        len += got;
    }
    if (f) {
        fclose(f);
    }
    text[len] = '\0';
    return text;
}

/// Start exe with args (NULL-terminated, without argv[0]) in the background, its
/// stdout into out_path and stderr into err_path (created, truncated). cwd: run
/// there (NULL: here). env: NULL or a NULL-terminated list of "NAME=VALUE" (set)
/// and "NAME" (unset), applied in order in the child only.
static inline pid_t tp_spawn(const char *exe, const char *cwd, const char *const *env,
                             const char *out_path, const char *err_path, const char *const *args)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || (cwd && chdir(cwd) != 0)) {
            _exit(126);
        }
        dup2(o, 1);
        dup2(e, 2);
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        char *argv[64];
        int n = 0;
        argv[n++] = (char *)(uintptr_t)exe;
        for (; args[n - 1] && n < 63; n++) {
            argv[n] = (char *)(uintptr_t)args[n - 1];
        }
        argv[n] = NULL;
        execv(exe, argv);
        _exit(127);
    }
    return pid;
}

/// The exit status of pid (128 + the signal if a signal ended it). seconds > 0:
/// killed and the test failed when it still runs after that long; 0: no limit.
static inline int tp_wait_status(pid_t pid, int seconds)
{
    for (int i = 0; seconds <= 0 || i < seconds * 100; i++) {
        int st;
        pid_t got = waitpid(pid, &st, seconds > 0 ? WNOHANG : 0);
        cr_assert_geq(got, 0);
        if (got == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert_fail("pid %ld still ran after %d s", (long)pid, seconds);
    return -1;
}

/// Wait (up to 10 s) until the relay's log at log_path has its `listening
/// 127.0.0.1:PORT` and `ready` lines; "127.0.0.1:PORT" into addr.
static inline void tp_wait_relay_ready(const char *log_path, char *addr, size_t size)
{
    for (int i = 0; i < 1000; i++) {
        char *log = tp_slurp(log_path);
        const char *l = strstr(log, "listening 127.0.0.1:");
        unsigned port = 0;
        if (l && strstr(log, "\nready\n") && sscanf(l, "listening 127.0.0.1:%u", &port) == 1) {
            snprintf(addr, size, "127.0.0.1:%u", port);
            free(log);
            return;
        }
        free(log);
        usleep(10000);
    }
    char *log = tp_slurp(log_path);
    cr_assert_fail("the relay never printed ready: %s", log);
}

#endif
