/* SPDX-License-Identifier: MIT */
/*
 * cli_signal.c: stopping a file command cleanly on a signal (multiply,
 * gen): SIGTERM, SIGINT, SIGHUP and SIGUSR1 are recorded and cancel the
 * handle given, if any (ooc_cancel is async-signal-safe); the command then
 * exits with RC_INTERRUPTED.
 */
#include "config.h"

#include "cli.h"

/* SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's wall-time warning) ask the
 * multiply to stop (ooc_cancel, async-signal-safe): the blocks in flight are
 * finished or abandoned, the journal stays durable, and the command exits with
 * RC_INTERRUPTED. gen installs them with no handle: its writers poll
 * stop_signal_caught() between chunks. A second SIGINT (Ctrl-C twice) kills
 * at once; a process still at work STOP_GRACE_S after the first signal ends
 * then (on_stop_timeout). */
static ooc_handle_t *volatile stop_handle;
static volatile sig_atomic_t stop_signal;
static const int stop_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
#define NSTOP_SIGS (sizeof stop_sigs / sizeof stop_sigs[0])

/* fn for every stop signal */
static void stop_signals_handle(void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    for (size_t i = 0; i < NSTOP_SIGS; i++) sigaction(stop_sigs[i], &sa, NULL);
}

/* Seconds a stop signal leaves the work to stop before the process ends
 * anyway (OOC_STOP_GRACE_S; 0: never) */
#define STOP_GRACE_S 60
static unsigned stop_grace = STOP_GRACE_S;
/* the watchdog is multiply's (stop_signals_watchdog), until every block of
 * its range is in hand (stop_signals_last_block: what is left, the flush, the
 * journal's record and the commit, then completes; gen has no --resume, and
 * its stop removes its file) */
static volatile sig_atomic_t watchdog_on, grace_off;

static void on_stop_signal(int sig)
{
    if (stop_signal && sig == SIGINT) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    if (!stop_signal) {
        stop_signal = sig;
        if (stop_grace && watchdog_on && !grace_off) alarm(stop_grace);
    }
    ooc_handle_t *h = stop_handle;
    if (h) ooc_cancel(h);
}

/* The work has not stopped within the grace after the signal: a call that
 * does not return (OpenBLAS's threads spinning on an allocation under a
 * small ulimit -v, a device that hangs) waits on nothing the signal can
 * reach. The process ends at once with RC_INTERRUPTED, as kill -9 would end
 * it: the journal and the temporary file are consistent at every moment,
 * and --resume continues (a batch system's warning must not be lost while
 * its wall time runs out). */
static void on_stop_timeout(int sig)
{
    (void)sig;
    static const char msg[] = "oocgemm: the work did not stop within the grace after the stop signal (a call that "
                              "does not return): ending now; the same command with --resume continues\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(RC_INTERRUPTED);
}

/* Install the handlers, cancelling h on a stop signal (h may be NULL: the
 * signal is only recorded). Called again with the handle once it exists, it
 * cancels that handle at once when a signal came before (ooc_cancel holds
 * for the next multiply), so that a command may install the handlers before
 * its handle is created and lose no signal. */
void stop_signals_install(ooc_handle_t *h)
{
    stop_handle = h;
    const char *g = getenv("OOC_STOP_GRACE_S");
    if (g && *g) {
        char *end;
        unsigned long v = strtoul(g, &end, 10);
        if (*end == '\0' && g[0] != '-' && v <= 86400) stop_grace = (unsigned)v; /* (else the default) */
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_timeout;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    stop_signals_handle(on_stop_signal, SA_RESTART);
    if (h && stop_signal) ooc_cancel(h); /* a signal before the handle was given */
}

void stop_signals_watchdog(void) { watchdog_on = 1; }

void stop_signals_last_block(void)
{
    grace_off = 1;
    alarm(0); /* (armed by a signal before: the rest completes) */
}

/* Once the work is over: the exit status the process ends with. */
static volatile sig_atomic_t exit_status;

static void on_late_signal(int sig)
{
    (void)sig;
    _exit(exit_status); /* (async-signal-safe; exit handlers skipped) */
}

/* Once nothing is left to stop cleanly (the output flushed): a stop signal
 * ends the process at once with status rc, the command's own, skipping the
 * exit handlers that may hang (a result committed keeps its 0). */
void stop_signals_exit(int rc)
{
    stop_handle = NULL;
    exit_status = rc;
    stop_signals_handle(on_late_signal, 0);
    signal(SIGALRM, on_late_signal); /* (a stop signal's grace running out: the status the work ended with) */
}

/* The signal that asked the command to stop, 0 when none has. */
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

