/* SPDX-License-Identifier: MIT */
/*
 * cli_signal.c: stopping a file multiply cleanly on a signal (multiply):
 * SIGTERM, SIGINT, SIGHUP and SIGUSR1 cancel the handle (ooc_cancel is
 * async-signal-safe); the command then exits with RC_INTERRUPTED.
 */
#include "config.h"

#include "cli.h"

/* SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's wall-time warning) ask the
 * multiply to stop (ooc_cancel, async-signal-safe): the blocks in flight are
 * finished or abandoned, the journal stays durable, and the command exits with
 * RC_INTERRUPTED. A second SIGINT (Ctrl-C twice) kills at once. */
static ooc_handle_t *volatile stop_handle;
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
    if (stop_signal && sig == SIGINT) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (!stop_signal) stop_signal = sig;
    ooc_handle_t *h = stop_handle;
    if (h) ooc_cancel(h);
}

void stop_signals_install(ooc_handle_t *h)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    stop_handle = h;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

void stop_signals_remove(void)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
    stop_handle = NULL;
}

/* The signal that asked the multiply to stop, 0 when none has. */
int stop_signal_caught(void) { return (int)stop_signal; }

const char *signal_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGUSR1: return "SIGUSR1";
    }
    return "a signal";
}

