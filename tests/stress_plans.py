#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stress_plans.py: random problems under random forced plans, each checked
row by row against OpenBLAS (make check-stress; not in make check).

make check runs fixed cases chosen to reach each path of the planner and the
pipeline. This draws N problems from a seeded generator, each with a random
mix of the options that force a plan (a small --device-mem and --host-mem,
--block-rows, --ring, --streams, --a-pieces, --b-chunks, --tail,
--stage-chunk, --stage-c, --staging-threads, pinned or pageable memory, a
trace, several simulated devices on the host backend) over odd sizes, every
element type, layout, op and a beta of 0 or not (a quarter of the
DGEMMs column-major NT, op(B) then transposed on the device, with the host
backend's ops delayed at random), and runs `oocgemm run
--check-rows M` on each: every row of C is compared with OpenBLAS's. Paths
that the fixed cases meet one at a time meet here together, with remainder
blocks everywhere.

A case passes when its check passes, or when oocgemm refuses its budgets
cleanly: exit 3, saying that no plan (or no useful one) fits them. Anything
else fails: a check that fails, a crash, any other exit status or message. At least half the cases must run (else the draw tests nothing).
Each failure prints the command that reproduces it.

With --files, each case is a job on files instead (`oocgemm multiply`): A,
B and C0 written by `oocgemm gen` as .npy or raw, each stored row- or
column-major, C written in either layout and format, under the same forced
options (less those of memory only). Its C is checked against numpy (every
element, within 4k eps of |alpha| |op(A)| |op(B)| + |beta| |C0|); then the
job runs again with a fault injected at a random point (OOC_FAULT: a
multiply, a read or a write fails; half the time early, half the time at a
fraction of the blocks its plan has; in a fifth of the jobs at the end
instead: the journal's complete record unflushed, or the commit's rename)
and is resumed (--resume) until it
finishes (half the time a byte of the data its temporary file holds
changed first: a block recorded done must be found changed by its digest,
and computed again), and that C must be byte-identical to the first; then it is
killed with kill -9 at random times, 1 to 3 times (its operations slowed
by OOC_HOST_JITTER_US on the host backend; in place half the time; two
kills in five are a stop signal instead, TERM, INT, HUP or USR1 as a batch
system sends before the wall time, which must end the job within 60 s with
exit 7), and after each C must be absent or whole (in place: C0 or the
result), then resumed: byte-identical too (under --mpi half the kills and
signals take one rank's process alone, as a node that fails: mpirun must
stop the others); when beta != 0,
once more in place (--c-in C -o C), byte-identical too. Then 3 or 4 runs of
the job with --resume switch journals (C's default, JA, JB: one, another,
the first again) and forced options (the second set with a small device
budget: op(B) often in k-panels, its uninterrupted run checked against
numpy too), each but the last failed part-way (mostly at a fraction of its
plan's blocks, so that it leaves blocks recorded and C written; a third of
them killed with kill -9 at a random time instead): every
C one of them commits must be numpy's.

With --files --mpi, the same jobs run split across the ranks of mpirun
(1 to 4 ranks, drawn for each run): the job by one process is checked
against numpy, then by mpirun must be byte-identical to it; the fault
strikes one rank drawn, and each resume draws its own number of ranks
(or one process without mpirun), so that a job is stopped split one way
and finished split another; a kill -9 kills every rank at once, as a
wall-time limit does; in place too; half the jobs run the second
switching run split by mpirun. After each job no temporary
file and no rank's journal may be left.

    tests/stress_plans.py [--cases N] [--seed S] [--oocgemm PATH] [--backend B]
                          [--max-mb MB] [--files [--mpi]] [--list]

The backend is the tool's default (--backend auto): CUDA on a GPU machine,
the host backend (OpenBLAS, with OOC_HOST_DEVICES devices simulated) on one
without. --backend custom adds our own kernels for s and d.
"""
import argparse
import json
import math
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time

SIZES = {"s": 4, "d": 8, "c": 8, "z": 16}

# what a clean refusal says (exit 3: no plan, or no useful one, fits the
# budgets drawn; every option is drawn within its bounds); anything else,
# another message or exit 2 included, is a failure
REFUSALS = ("memory budget too small for any plan, or for a useful one",)


def log_int(rng, lo, hi):
    return int(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def forced(rng, args, op_bytes, dtype, memory):
    """Options that force a plan, each drawn or not (memory: also those of
    operands in memory: --stage-chunk, --stage-c, and 0 staging threads)."""
    o = []
    # a device budget from a fraction of the operands (many blocks, panels of op(B)) to all of them
    if rng.random() < 0.8:
        o += ["--device-mem", str(max(1 << 16, int(op_bytes * rng.uniform(0.02, 1.2))))]
    if rng.random() < 0.3:
        o += ["--host-mem", str(max(1 << 16, int(op_bytes * rng.uniform(0.05, 1.0))))]
    if rng.random() < 0.4:
        o += ["--block-rows", str(32 * rng.randrange(2, 64))]
    if rng.random() < 0.3:
        o += ["--ring", str(rng.randrange(2, 17))]
    if rng.random() < 0.3:
        o += ["--streams", str(rng.randrange(3, 9))]
    if rng.random() < 0.3:
        o += ["--a-pieces", str(rng.choice([1, 2, 3, 4, 7]))]
    if rng.random() < 0.3:
        o += ["--b-chunks", str(rng.randrange(1, 9))]
    if rng.random() < 0.2:
        o += ["--tail", str(rng.randrange(1, 5))]
    if memory and rng.random() < 0.4:
        o += ["--stage-chunk", rng.choice(["off", "65536", "262144", "1048576", "4194304"])]
    if memory and rng.random() < 0.3:
        o += ["--stage-c", rng.choice(["auto", "off"])]
    if rng.random() < 0.3:
        o += ["--staging-threads", str(rng.randrange(0 if memory else 1, 6))]
    if args.backend != "auto":
        o += ["--backend", args.backend if args.backend != "custom" or dtype in "sd" else "auto"]
    return o


def draw(rng, args):
    """One case: the problem, the forced options, the environment."""
    while True:
        dtype = rng.choice("ssddcz")
        e = SIZES[dtype]
        m, n, k = log_int(rng, 1, 4000) | 1, log_int(rng, 1, 1500) | 1, log_int(rng, 1, 1500) | 1
        if rng.random() < 0.1:  # a dimension of one
            one = rng.choice("mnk")
            m, n, k = (1 if one == "m" else m, 1 if one == "n" else n, 1 if one == "k" else k)
        op_bytes = e * (m * k + k * n + m * n)
        if op_bytes <= args.max_mb << 20:
            break
    ops = "NTC" if dtype in "cz" else "NT"
    cmd = ["run", "-m", str(m), "-n", str(n), "-k", str(k), "--dtype", dtype,
           "--layout", rng.choice(["col", "col", "row"]),
           "--transa", rng.choice(ops), "--transb", rng.choice(ops),
           "--beta", rng.choice(["0", "0", "1", "-0.5"]), "--alpha", rng.choice(["1", "1", "-2", "0.5"]),
           "--memory", rng.choice(["pinned", "pageable", "pageable"]),
           "--seed", str(rng.randrange(1, 1 << 30)), "--check-rows", str(m), "--no-floor", "--json"]
    cmd += forced(rng, args, op_bytes, dtype, memory=True)
    if dtype in "sc" and rng.random() < 0.3:
        cmd += ["--tf32"]
    trace = rng.random() < 0.15
    env = {"OOC_HOST_DEVICES": str(rng.choice([1, 1, 2, 3]))}
    # a quarter of the DGEMMs column-major NT (by the case's seed: the draws
    # stay those of earlier versions): op(B) transposed on the device where
    # the plan keeps it resident (n odd), its copies, transposes and
    # multiplies on three streams; on the host backend with its ops delayed
    # at random, so that a multiply that does not wait for a transpose shows
    seed = int(cmd[cmd.index("--seed") + 1])
    if dtype == "d" and seed % 4 == 0:
        for opt, val in (("--layout", "col"), ("--transa", "N"), ("--transb", "T")):
            cmd[cmd.index(opt) + 1] = val
        env["OOC_HOST_JITTER_US"] = "500"
    return cmd, env, trace


def draw_files(rng, args):
    """One job on files: the operands to write, the multiply's options."""
    while True:
        dtype = rng.choice("sdcz")
        e = SIZES[dtype]
        m, n, k = log_int(rng, 1, 3000) | 1, log_int(rng, 1, 1200) | 1, log_int(rng, 1, 1200) | 1
        op_bytes = e * (m * k + k * n + 2 * m * n)
        if op_bytes <= args.max_mb << 20:
            break
    ops = "NTC" if dtype in "cz" else "NT"
    ta, tb = rng.choice(ops), rng.choice(ops)
    out_layout = rng.choice(["row", "col"])
    beta = rng.choice(["0", "0", "1", "-0.5"])
    job = dict(dtype=dtype, m=m, n=n, k=k, ta=ta, tb=tb, alpha=rng.choice(["1", "-2", "0.5"]), beta=beta,
               out_layout=out_layout, out_raw=rng.random() < 0.3, operands={},
               # TF32 (single precision): its device tiles are padded (plan.h pad_lines), as
               # float64's are but for cuBLAS's op pair NT (backend.h ooc_tiles_aligned)
               tf32=dtype in "sc" and rng.random() < 0.3)
    for name, rows, cols, op in (("A", m, k, ta), ("B", k, n, tb), ("C0", m, n, "N")):
        if name == "C0" and beta == "0":
            continue
        if op != "N":
            rows, cols = cols, rows
        # C0, and an operand whose op is C, are stored in C's layout
        layout = out_layout if name == "C0" or op == "C" else rng.choice(["row", "col"])
        job["operands"][name] = dict(rows=rows, cols=cols, layout=layout, raw=rng.random() < 0.3,
                                     seed=rng.randrange(1, 1 << 30))
    job["opts"] = forced(rng, args, op_bytes, dtype, memory=False)
    job["fault"] = "%s:%d" % (rng.choice(["gemm", "gemm", "read", "write"]), rng.randrange(1, 40))
    # half the time the fault strikes at a fraction of the run's blocks (its
    # plan's, a rank's share) instead: part-way through a job of any size
    job["fault_frac"] = rng.uniform(0.05, 0.95) if rng.random() < 0.5 else None
    job["env"] = {"OOC_HOST_DEVICES": str(rng.choice([1, 1, 2, 3]))}
    # runs of the same job switching journals (None: C's default) and forced
    # options, all but the last failed part-way (the last also on ranks):
    # one journal, another, the first again, ...; the other options' device
    # budget a fraction of op(B)'s bytes, so that op(B) is often in k-panels
    # (C read back: a block cut short holds partial sums)
    opts2 = forced(rng, args, op_bytes, dtype, memory=False)
    small = str(max(1 << 12, int(e * k * n * rng.uniform(0.1, 0.8))))
    if "--device-mem" in opts2:
        opts2[opts2.index("--device-mem") + 1] = small
    else:
        opts2 += ["--device-mem", small]
    job["opts2"] = opts2
    pair = rng.sample([None, "JA", "JB"], 2)
    runs = rng.randrange(3, 5)
    job["switch"] = [dict(journal=pair[t % 2], opts=rng.choice([1, 2]) if t != 1 else 2,
                          fault=None if t == runs - 1 else "%s:%d" % (rng.choice(["gemm", "write", "write"]),
                                                                     log_int(rng, 2, 24)),
                          ranks=rng.randrange(0, 5) if args.mpi else 0, rank=rng.randrange(0, 4),
                          frac=rng.uniform(0.1, 0.9) if rng.random() < 0.7 else None)
                     for t in range(runs)]
    if args.mpi and rng.random() < 0.5:  # the second run split by mpirun (it restarts a C the first left)
        job["switch"][1]["ranks"] = rng.randrange(2, 5)
    if args.mpi:
        # ranks of each run (0: one process, no mpirun): the split run, the
        # faulted run, its resumes, in place; the rank the fault strikes
        job["ranks"] = dict(split=rng.randrange(2, 5), fault=rng.randrange(1, 5),
                            resumes=[rng.randrange(0, 5) for _ in range(3)], inplace=rng.randrange(0, 5))
        job["fault_rank"] = rng.randrange(0, job["ranks"]["fault"])
        # a rank has a share of the job's multiplies, reads and writes: strike early
        job["fault"] = "%s:%d" % (job["fault"].split(":")[0], log_int(rng, 1, 16))
        # and the first resume, half the time, on a rank of its own
        if rng.random() < 0.5:
            job["fault2"] = "%d:OOC_FAULT=%s:%d" % (rng.randrange(0, max(1, job["ranks"]["resumes"][0])),
                                                    rng.choice(["gemm", "read", "write"]), log_int(rng, 1, 16))
    # half the jobs: a byte of C.ooc-tmp's data changed before the first
    # resume, at this fraction of it (a block recorded done then changed
    # must be found by its digest and computed again)
    job["flip"] = rng.random() if rng.random() < 0.5 else None
    return job


def blocks_of(p):
    """The blocks of a multiply's plan (its --json), or None."""
    try:
        plan = json.loads(p.stdout)["plan"]
        return max(1, plan["blocks"] * plan["panels"])
    except (ValueError, KeyError, TypeError):
        return None


def fault_at(fault, frac, blocks, ranks):
    """OOC_FAULT KIND:N as drawn, or with frac, KIND at that fraction of a
    run's blocks (one rank's share of them)."""
    if frac is None or not blocks:
        return fault
    return "%s:%d" % (fault.split(":")[0], max(1, int(frac * blocks / max(1, ranks))))


def spec_of(path, o, dtype):
    """How multiply names an operand: a .npy path, or PATH:RxC:T:L for raw."""
    return "%s:%dx%d:%s:%s" % (path, o["rows"], o["cols"], dtype, "C" if o["layout"] == "row" else "F") \
        if o["raw"] else path


def load(np, path, rows, cols, dtype, layout, raw):
    if not raw:
        return np.load(path)
    t = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}[dtype]
    return np.fromfile(path, dtype=t).reshape((rows, cols), order="C" if layout == "row" else "F")


def stat_fields(path):
    """A /proc stat file: (command name, the fields after it), or None when
    it is gone."""
    try:
        with open(path) as f:
            st = f.read()
    except (OSError, ValueError):
        return None
    return st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()


def threads_live(pid):
    """Whether a thread of process pid is not yet a zombie. A process killed
    with kill -9 shows its main thread as a zombie ("Z") as soon as that
    thread has exited, while its other threads may still be ending (one in
    a write to disk, say): their open files, and the output's lock with
    them, are only let go when the last thread has exited."""
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return False
    for t in tasks:
        sf = stat_fields("/proc/%d/task/%s/stat" % (pid, t))
        if sf is not None and sf[1][0] not in ("Z", "X"):
            return True
    return False


def session_procs(sid):
    """(pid, command name) of each live process of session sid, by pid: one
    with a thread that is not a zombie yet."""
    procs = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        sf = stat_fields("/proc/%s/stat" % e)
        if sf is None or int(sf[1][3]) != sid:
            continue
        if sf[1][0] != "Z" or threads_live(int(e)):
            procs.append((int(e), sf[0]))
    return sorted(procs)


def kill_session(sid, patience=30.0):
    """kill -9 every process of session sid until none is left, for at most
    patience s (a process in uninterruptible I/O dies when that ends): the
    (pid, name) of those still alive then, else []."""
    end = time.time() + patience
    while True:
        procs = session_procs(sid)
        if not procs or time.time() > end:
            return procs
        for q, _name in procs:
            try:
                os.kill(q, 9)
            except OSError:
                pass
        time.sleep(0.02)


def session_tools(sid):
    """The pids of the oocgemm processes (ranks) of session sid, sorted: the
    tool itself, not a libtool wrapper script of that name (a shell, which
    handles SIGINT and would lose it as it execs the tool)."""
    pids = []
    for q, name in session_procs(sid):
        try:
            exe = os.path.basename(os.readlink("/proc/%d/exe" % q))
        except OSError:
            continue
        if name in ("oocgemm", "lt-oocgemm") and exe in ("oocgemm", "lt-oocgemm"):
            pids.append(q)
    return pids


def catches(pid, sig):
    """Whether process pid has a handler for signal sig now (/proc's SigCgt);
    None when it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except (OSError, ValueError):
        return None
    return False


def stop_signal(pr, pids, sig, patience=10.0):
    """Send sig to each process of pids once it has its handler (a signal
    before that would kill it as kill -9 does, which the kills test
    already): what was signalled, as "pid" strings."""
    sent, end = [], time.time() + patience
    for q in pids:
        while catches(q, sig) is False and time.time() < end and pr.poll() is None:
            time.sleep(0.005)
        if catches(q, sig):
            try:
                os.kill(q, sig)
                sent.append(str(q))
            except OSError:
                pass
    return sent


def flip_byte(d, out, ref, job):
    """job["flip"]: a byte of the data in the temporary file a faulted run
    left (the finished C's bytes, the header and the trailer apart) changed,
    when its journal is not complete (a complete one is refused then: a
    test of its own); what was done, for the failure's message."""
    tmp, journal = os.path.join(d, out + ".ooc-tmp"), os.path.join(d, out + ".ooc-journal")
    if job["flip"] is None or not os.path.exists(tmp) or not os.path.exists(journal):
        return ""
    with open(journal, "rb") as f:
        if any(line.startswith(b"complete ") for line in f):
            return ""
    data = job["m"] * job["n"] * SIZES[job["dtype"]]
    at = os.path.getsize(os.path.join(d, ref)) - data + min(data - 1, int(job["flip"] * data))
    with open(tmp, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0xFF]))
    return ", byte %d of %s changed" % (at, out + ".ooc-tmp")


def files_case(i, args, job, np):
    """0: passed, 1: refused cleanly, 2: failed (printed)."""
    d = os.path.join(args.dir, "case%d" % i)
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, **job["env"])
    tool = os.path.abspath(args.oocgemm)
    log = []

    def command(argv, extra_env, ranks, note=""):
        if ranks:  # under mpirun, through rank.sh (each rank's own environment)
            argv = ["mpirun", "--oversubscribe", "-np", str(ranks), "-x", "RANK_ENV", "-x", "OOC_HOST_DEVICES",
                    "-x", "OPENBLAS_NUM_THREADS", "-x", "OOC_HOST_JITTER_US", "./rank.sh"] + argv[1:]
        log.append(note + " ".join("%s=%s" % kv for kv in (extra_env or {}).items()) + " " +
                   " ".join(shlex.quote(a) for a in argv))
        return argv, dict(env, **(extra_env or {}))

    def sh(argv, extra_env=None, ranks=0):
        argv, e = command(argv, extra_env, ranks)
        return subprocess.run(argv, cwd=d, env=e, capture_output=True, text=True, timeout=args.timeout)

    def stop_job(pr, rank, sig):
        """killed()'s stop signal to the running job pr: its exit status,
        "hung" or "lingering" as killed() says."""
        end = time.time() + 10
        pids = session_tools(pr.pid)
        while not pids and pr.poll() is None and time.time() < end:  # (mpirun starting its ranks)
            time.sleep(0.005)
            pids = session_tools(pr.pid)
        if rank is not None and pids:
            pids = [pids[rank % len(pids)]]
        sent = stop_signal(pr, pids, sig)
        if not sent and pr.poll() is None:  # no process took it in time: killed instead
            log.append("  (no process handled it within 10 s: the job was killed instead)")
            left = kill_session(pr.pid)
            pr.wait()
            return "lingering" if left else None
        log.append("  (signalled: %s)" % (", ".join(sent) or "none: the job had ended"))
        try:
            rc = pr.wait(timeout=60)
        except subprocess.TimeoutExpired:
            kill_session(pr.pid)
            pr.wait()
            return "hung"
        # the job's processes end with it (mpirun waits for its ranks)
        end = time.time() + 10
        while session_procs(pr.pid) and time.time() < end:
            time.sleep(0.02)
        left = session_procs(pr.pid)
        if left:
            log.append("  (still alive 10 s after the job ended: %s)" % ", ".join("%d %s" % q for q in left))
            kill_session(pr.pid)
            return "lingering"
        return rc

    def killed(argv, extra_env, ranks, delay, rank=None, sig=9):
        """argv run, and kill -9 after delay s: every process of its session
        (mpirun gives each rank a process group of its own), as a wall-time
        limit kills a job; or with rank (under mpirun), one rank's process
        alone, as a node that fails, and mpirun stops the others (what is
        left after 60 s is killed, and is a failure). Its exit status when it
        ended before, else None; "stuck" when mpirun did not stop, "lingering"
        when a process of the session outlived 30 s of kill -9 (it could hold
        the job's locks into the next run). A rank's kill that comes before
        any rank exists kills the whole job, and the log says so.
        With sig another signal (a stop: TERM, INT, HUP, USR1, as a batch
        system sends before the wall time), sent to every rank's process
        (or to rank's alone) once it handles it: the job's exit status,
        which must come within 60 s (else "hung", and it is killed)."""
        what = "the job" if rank is None else "rank process %d" % rank
        argv, e = command(argv, extra_env, ranks, "(%s %s after %.3f s) " % (
            "kill -9" if sig == 9 else signal.Signals(sig).name, what, delay))
        with open(os.path.join(d, "killed.err"), "w") as err:
            pr = subprocess.Popen(argv, cwd=d, env=e, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
            try:
                return pr.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                pass
            if sig != 9:
                return stop_job(pr, rank, sig)
            pids = session_tools(pr.pid) if rank is not None else []
            stuck = None
            if pids:
                try:
                    os.kill(pids[rank % len(pids)], 9)
                except OSError:
                    pass
                try:
                    pr.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    stuck = "stuck"
            elif rank is not None:
                log.append("  (no rank process yet at %.3f s: the whole job was killed instead)" % delay)
            left = kill_session(pr.pid)
            pr.wait()
            if left:
                log.append("  (still alive after 30 s of kill -9: %s)" %
                           ", ".join("%d %s" % q for q in left))
            return stuck or ("lingering" if left else None)

    def fail(why, p=None):
        print("FAIL case %d (files): %s\n  in %s:\n  %s%s" % (i, why, d, "\n  ".join(log),
              "\n  stderr: " + p.stderr.strip()[-2000:] if p is not None else ""))
        return 2

    if args.mpi:
        with open(os.path.join(d, "rank.sh"), "w") as f:
            f.write('#!/bin/sh\n# RANK_ENV=R:VAR=VALUE: VAR set for rank R alone\n'
                    'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n'
                    'if [ -n "${RANK_ENV:-}" ] && [ "$r" = "${RANK_ENV%%%%:*}" ]; then export "${RANK_ENV#*:}"; fi\n'
                    'exec %s "$@"\n' % shlex.quote(tool))
        os.chmod(os.path.join(d, "rank.sh"), 0o755)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    ranks = job.get("ranks", {})

    def same(a, b):
        with open(os.path.join(d, a), "rb") as f1, open(os.path.join(d, b), "rb") as f2:
            return f1.read() == f2.read()

    specs = {}
    for name, o in job["operands"].items():
        path = name + (".bin" if o["raw"] else ".npy")
        p = sh([tool, "gen", path, "--rows", str(o["rows"]), "--cols", str(o["cols"]), "--dtype", job["dtype"],
                "--layout", o["layout"], "--seed", str(o["seed"]), "-q"])
        if p.returncode != 0:
            return fail("gen %s: exit %d" % (name, p.returncode), p)
        specs[name] = spec_of(path, o, job["dtype"])
    out = "C.bin" if job["out_raw"] else "C.npy"
    head = [tool, "multiply", specs["A"], specs["B"], "--dtype", job["dtype"], "--transa", job["ta"],
            "--transb", job["tb"], "--alpha", job["alpha"], "--out-layout", job["out_layout"],
            "--no-progress", "--no-floor", "-q"]
    if job["beta"] != "0":
        head += ["--c-in", specs["C0"], "--beta", job["beta"]]
    if job["tf32"]:
        head += ["--tf32"]
    base = head + job["opts"]
    p = sh(base + ["-o", "REF" + out[1:], "--json"])
    if p.returncode == 3 and any(r in p.stderr for r in REFUSALS):
        if args.verbose:
            print("case %d (files) refused: %s" % (i, p.stderr.strip()[:300]))
        shutil.rmtree(d, ignore_errors=True)
        return 1
    if p.returncode != 0:
        return fail("the first multiply: exit %d" % p.returncode, p)
    ref = "REF" + out[1:]
    blocks = blocks_of(p)
    # every element against numpy
    m, n, k = job["m"], job["n"], job["k"]
    ops = {}
    for name in ("A", "B"):
        o = job["operands"][name]
        x = load(np, os.path.join(d, name + (".bin" if o["raw"] else ".npy")), o["rows"], o["cols"], job["dtype"],
                 o["layout"], o["raw"]).astype(np.complex128 if job["dtype"] in "cz" else np.float64)
        op = job["ta" if name == "A" else "tb"]
        ops[name] = x if op == "N" else x.T if op == "T" else x.conj().T
    alpha, beta = float(job["alpha"]), float(job["beta"])
    want = alpha * (ops["A"] @ ops["B"])
    scale = abs(alpha) * (np.abs(ops["A"]) @ np.abs(ops["B"]))
    if beta != 0:
        o = job["operands"]["C0"]
        c0 = load(np, os.path.join(d, "C0" + (".bin" if o["raw"] else ".npy")), m, n, job["dtype"], o["layout"],
                  o["raw"])
        want = want + beta * c0
        scale = scale + abs(beta) * np.abs(c0)
    eps = 2.0 ** -23 if job["dtype"] in "sc" else 2.0 ** -52
    tol = 4.0 * (k + 2) * eps * scale + 1e-30
    if job["tf32"]:  # the inputs rounded to 10 bits of mantissa (on a GPU; the host backend's FP32 is within)
        tol = tol + 2.0 ** -10 * scale

    def numpy_differs(name):
        """None when C in file name is numpy's within tol, else why not."""
        got = load(np, os.path.join(d, name), m, n, job["dtype"], job["out_layout"], job["out_raw"])
        if got.shape != (m, n):
            return "C is %s, not %d x %d" % (got.shape, m, n)
        bad = np.abs(got - want) > tol
        if bad.any() or not np.isfinite(got).all():
            r, c = np.argwhere(bad | ~np.isfinite(got))[0]
            return ("C differs from numpy at %d elements, first (%d, %d): %r against %r (tolerance %.3g)"
                    % (int(bad.sum()), r, c, got[r, c], want[r, c], tol[r, c]))
        return None

    why = numpy_differs(ref)
    if why:
        return fail(why)
    # split across ranks, uninterrupted: byte-identical to one process's
    if ranks:
        p = sh(base + ["-o", "S" + out[1:]], ranks=ranks["split"])
        if p.returncode != 0:
            return fail("the job on %d ranks: exit %d" % (ranks["split"], p.returncode), p)
        if not same(ref, "S" + out[1:]):
            return fail("the job on %d ranks differs from one process's" % ranks["split"])
    # a fault part-way, then --resume until done: byte-identical
    job["fault"] = fault_at(job["fault"], job["fault_frac"], blocks, ranks["fault"] if ranks else 1)
    if ranks:
        fault_env = {"RANK_ENV": "%d:OOC_FAULT=%s" % (job["fault_rank"], job["fault"])}
        p = sh(base + ["-o", out], fault_env, ranks=ranks["fault"])
    else:
        p = sh(base + ["-o", out], {"OOC_FAULT": job["fault"]})
    if p.returncode not in (0, 3, 4, 6):
        return fail("the run with OOC_FAULT=%s: exit %d" % (job["fault"], p.returncode), p)
    flipped = flip_byte(d, out, ref, job) if p.returncode != 0 and not ranks else ""
    tries = 0
    while p.returncode != 0:
        np_ = ranks["resumes"][tries] if ranks else 0
        tries += 1
        journals = [f for f in os.listdir(d) if f.startswith(out + ".ooc-journal")]
        refault = {}
        if tries == 1 and "fault2" in job:
            refault = {"RANK_ENV": job["fault2"]} if np_ else {"OOC_FAULT": job["fault2"].split("=", 1)[1]}
        p = sh(base + ["-o", out] + (["--resume"] if journals else []), refault, ranks=np_)
        if refault and p.returncode not in (0, 3, 4, 6):
            return fail("the resume with %s: exit %d" % (job["fault2"], p.returncode), p)
        if p.returncode != 0 and not refault and tries >= (3 if ranks else 2):
            return fail("the resume after OOC_FAULT=%s: exit %d" % (job["fault"], p.returncode), p)
    if not same(ref, out):
        return fail("after OOC_FAULT=%s%s and --resume, C differs from the uninterrupted run" % (job["fault"], flipped))
    if args.verbose:
        print("case %d (files): OOC_FAULT=%s%s%s, %d resume(s)%s" % (
            i, job["fault"], " on rank %d of %d" % (job["fault_rank"], ranks["fault"]) if ranks else "", flipped, tries,
            ", the first on %d rank(s) with rank %s" % (ranks["resumes"][0], job["fault2"])
            if "fault2" in job and tries > 1 else ""))
    # (a --resume run keeps the job's journal, marked complete: the same
    # command again does nothing; never a rank's)
    leftovers = [f for f in os.listdir(d) if "ooc-tmp" in f or ("ooc-journal" in f and tries == 0)
                 or ".ooc-journal.r" in f]
    if leftovers:
        return fail("files left behind after the job finished: %s" % leftovers)
    why = kill_and_resume(i, args, job, base, out, ref, ranks, sh, killed, same)
    if why:
        return fail(why)
    # in place: C0 copied to X, then X = alpha op(A) op(B) + beta X
    if job["beta"] != "0":
        o = job["operands"]["C0"]
        x = "X" + (".bin" if o["raw"] else ".npy")
        shutil.copy(os.path.join(d, "C0" + (".bin" if o["raw"] else ".npy")), os.path.join(d, x))
        xs = spec_of(x, o, job["dtype"])
        inplace = [a for a in base]
        inplace[inplace.index("--c-in") + 1] = xs
        fmt = ["--out-format", "raw" if o["raw"] else "npy"]
        p = sh(inplace + fmt + ["-o", x], ranks=ranks.get("inplace", 0))
        if p.returncode != 0:
            return fail("in place: exit %d" % p.returncode, p)
        if o["raw"] == job["out_raw"] and not same(ref, x):
            return fail("in place, C differs from the job writing a new file")
    # runs that switch journals and budgets: each resumes what the journal
    # it names (C's default, JA or JB: absent, another run's, its own)
    # vouches for, under either set of forced options, and all but the last
    # fail part-way; every C committed must be numpy's (a journal vouching
    # for blocks another run overwrote shows as partial sums), and a run
    # without a fault may only be refused for its budgets (a journal's plan
    # that needs the other set's)
    # (the other options' plan, uninterrupted, for its block count: numpy's too)
    w = "W" + out[1:]
    p = sh(head + job["opts2"] + ["-o", "V" + out[1:], "--json"])
    blocks2 = blocks_of(p)
    if args.verbose:
        plan2 = json.loads(p.stdout).get("plan") if p.stdout.strip().startswith("{") else None
        print("case %d (files) other options: exit %d, %s" % (
            i, p.returncode, "%d blocks, k-panels of %d of %d" % (blocks2, plan2["panel_depth"], job["k"])
            if plan2 else "no plan"))
    if p.returncode == 0:
        why = numpy_differs("V" + out[1:])
        if why:
            return fail("the job under the other options: " + why, p)
    elif not (p.returncode == 3 and any(r in p.stderr for r in REFUSALS)):
        return fail("the job under the other options: exit %d" % p.returncode, p)
    done = False
    for t, sw in enumerate(job["switch"]):
        argv = head + job["opts" if sw["opts"] == 1 else "opts2"] + ["-o", w, "--resume"]
        argv += ["--journal", sw["journal"]] if sw["journal"] else []
        fault = {}
        if sw["fault"]:
            sw["fault"] = fault_at(sw["fault"], sw["frac"], blocks if sw["opts"] == 1 else blocks2 or blocks,
                                   sw["ranks"] if ranks and sw["ranks"] else 1)
            fault = {"RANK_ENV": "%d:OOC_FAULT=%s" % (sw["rank"] % max(1, sw["ranks"]), sw["fault"])} \
                if ranks and sw["ranks"] else {"OOC_FAULT": sw["fault"]}
        # a third of the runs to fail are killed instead (kill -9 at a random
        # time; an RNG of their own, so that older seeds draw as before)
        kr = random.Random("switch kill %d %d %d" % (args.seed, i, t))
        if sw["fault"] and kr.random() < 0.3:
            np_ = sw["ranks"] if ranks else 0
            delay = kr.uniform(0.0, 1.2) * job["length"][bool(np_)]
            ended = killed(argv, {"OOC_HOST_JITTER_US": "500"}, np_, delay)
            if ended in ("stuck", "lingering"):
                return fail("switching, run %d: kill -9 after %.3f s: a process of the job %s" % (
                    t + 1, delay, "did not die" if ended == "lingering" else "was left by mpirun"))
            sw["fault"] = "kill -9 after %.3f s" % delay
            if ended is None:
                if args.verbose:
                    print("case %d (files) switching, run %d: killed after %.3f s" % (i, t + 1, delay))
                continue
            with open(os.path.join(d, "killed.err")) as f:
                p = subprocess.CompletedProcess(argv, ended, "", f.read())
        else:
            p = sh(argv, fault, ranks=sw["ranks"] if ranks else 0)
        if args.verbose:
            print("case %d (files) switching, run %d: exit %d %s" % (i, t + 1, p.returncode,
                                                                  p.stderr.strip().split("\n")[0][:160]))
        if p.returncode == 0:
            why = numpy_differs(w)
            if why:
                return fail("switching journals, run %d committed a wrong C: %s" % (t + 1, why), p)
            done = True
        elif not (sw["fault"] and p.returncode in (3, 4, 6)) and \
                not (p.returncode == 3 and any(r in p.stderr for r in REFUSALS)):
            return fail("switching journals, run %d: exit %d" % (t + 1, p.returncode), p)
    if not done:  # the last refused: a fresh run finishes it
        p = sh(base + ["-o", w])
        if p.returncode != 0:
            return fail("switching journals, a fresh run to finish: exit %d" % p.returncode, p)
        why = numpy_differs(w)
        if why:
            return fail("switching journals, the fresh run: " + why, p)
    shutil.rmtree(d, ignore_errors=True)
    return 0


def kill_and_resume(i, args, job, base, out, ref, ranks, sh, killed, same):
    """The job (in place half the time when beta != 0) run with the host
    backend's operations slowed (OOC_HOST_JITTER_US: nothing on a GPU) and
    killed with kill -9 at random times up to 3 times (under --mpi, split by
    1 to 4 ranks drawn for each run), then --resume until it finishes: C
    must be byte-identical to the uninterrupted run's, and nothing may be
    left but the job's journal. None, or what went wrong. (An RNG of its
    own: the kill times vary from run to run anyway.)"""
    kr = random.Random("kill %d %d" % (args.seed, i))
    d = os.path.join(args.dir, "case%d" % i)
    jitter = {"OOC_HOST_JITTER_US": str(kr.choice([100, 500, 2000]))}
    o = job["operands"].get("C0")
    inplace = job["beta"] != "0" and o["raw"] == job["out_raw"] and kr.random() < 0.5
    if inplace:  # K = alpha op(A) op(B) + beta K, from a copy of C0
        k = "K" + (".bin" if o["raw"] else ".npy")
        shutil.copy(os.path.join(d, "C0" + (".bin" if o["raw"] else ".npy")), os.path.join(d, k))
        argv = [a for a in base]
        argv[argv.index("--c-in") + 1] = spec_of(k, o, job["dtype"])
        argv += ["--out-format", "raw" if o["raw"] else "npy", "-o", k]
    else:
        k = "K" + out[1:]
        argv = base + ["-o", k]
    # the run's length, uninterrupted and slowed, by one process and under
    # mpirun (J: byte-identical too)
    length = {}
    for np_ in ([0, ranks["split"]] if args.mpi else [0]):
        t0 = time.time()
        p = sh(base + ["-o", "J" + out[1:]], jitter, np_)
        length[bool(np_)] = time.time() - t0
        if p.returncode != 0:
            return "the run slowed by %s on %d ranks: exit %d: %s" % (jitter, np_, p.returncode,
                                                                     p.stderr.strip()[-500:])
        if not same(ref, "J" + out[1:]):
            return "the run slowed by %s on %d ranks differs from the uninterrupted run" % (jitter, np_)
        os.remove(os.path.join(d, "J" + out[1:]))
    job["length"] = dict(length)
    if True not in job["length"]:
        job["length"][True] = length[False] + 0.5  # (mpirun's own start)
    c0 = "C0" + (".bin" if o and o["raw"] else ".npy")
    kills, ended = [], None
    for n in range(kr.randrange(1, 4)):
        np_ = kr.choice([0, 1, 2, 3, 4]) if args.mpi else 0
        delay = kr.uniform(0.0, 1.2) * length[bool(np_)]
        rank = kr.randrange(0, np_) if np_ > 1 and kr.random() < 0.5 else None  # a node lost
        # two kills in five are a stop signal instead, as a batch system
        # sends before the wall time (an RNG of its own: older seeds kill
        # at the same times)
        sr = random.Random("signal %d %d %d" % (args.seed, i, n))
        sig = sr.choice([signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1]) if sr.random() < 0.4 else 9
        how = "kill -9" if sig == 9 else signal.Signals(sig).name
        ended = killed(argv + ["--resume"], jitter, np_, delay, rank, sig)
        if ended == "stuck":
            return "kill -9 of rank process %d of %d after %.3f s: mpirun did not stop the others within 60 s" % (
                rank, np_, delay)
        if ended == "lingering":
            return "%s after %.3f s: a process of the job outlived it (see the log)" % (how, delay)
        if ended == "hung":
            return "%s after %.3f s%s: the job did not stop within 60 s" % (
                how, delay, "" if rank is None else " to rank process %d" % rank)
        if sig != 9 and ended not in (0, 7):
            with open(os.path.join(d, "killed.err")) as f:
                return "%s after %.3f s: exit %s (expected 7: stopped, or 0: done first): %s" % (
                    how, delay, ended, f.read().strip()[-500:])
        kills.append("%s %.3f s%s%s%s" % (how, delay, " on %d ranks" % np_ if np_ else "",
                                          "" if rank is None else " (one rank)",
                                          "" if ended is None else " (exit %d)" % ended))
        # nothing half-written, whenever it stopped: C is absent or the
        # whole result (in place: C0 as it was, or the whole result)
        if os.path.exists(os.path.join(d, k)) and not same(ref, k) and not (inplace and same(c0, k)):
            return "%s after %.3f s: %s is there, neither %s nor the result" % (
                how, delay, k, "C0" if inplace else "absent")
        if ended == 0:
            break
        if ended == 7:
            ended = None  # stopped: resumed as after a kill
        if ended is not None:
            with open(os.path.join(d, "killed.err")) as f:
                return "a run to be killed ended first with exit %d: %s" % (ended, f.read().strip()[-500:])
    kept = 0  # blocks the journals (the job's, the ranks') record at the end
    for f in os.listdir(d):
        if f.startswith(k + ".ooc-journal"):
            with open(os.path.join(d, f), "rb") as jf:
                kept += sum(1 for line in jf if line.startswith(b"done "))
    if ended != 0:  # one --resume must finish it
        p = sh(argv + ["--resume"], None, kr.choice([0, 1, 2, 3, 4]) if args.mpi else 0)
        ended = p.returncode
    if ended != 0:
        return "killed (%s), then --resume: exit %d: %s" % (", ".join(kills), ended, p.stderr.strip()[-500:])
    if not same(ref, k):
        return "killed (%s), then --resume: C differs from the uninterrupted run%s" % (
            ", ".join(kills), " (in place)" if inplace else "")
    left = [f for f in os.listdir(d) if "ooc-tmp" in f or ".ooc-journal.r" in f]
    if left:
        return "killed (%s), then --resume: files left behind: %s" % (", ".join(kills), left)
    if args.verbose:
        print("case %d (files): killed%s: %s; resumed with %d blocks recorded, byte-identical"
              % (i, " in place" if inplace else "", ", ".join(kills), kept))
    return None


def run_case(i, args, cmd, env, trace):
    """0: passed, 1: refused cleanly, 2: failed (printed)."""
    full = [args.oocgemm] + cmd
    if trace:
        full += ["--trace", os.path.join(args.dir, "trace%d.json" % i)]
    shown = " ".join("%s=%s" % kv for kv in env.items()) + " " + " ".join(shlex.quote(a) for a in full)
    p = subprocess.run(full, env=dict(os.environ, **env), capture_output=True, text=True, timeout=args.timeout)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = None
    why = None
    if p.returncode == 0 and out and out.get("check", {}).get("passed") is True:
        if trace and not (os.path.exists(full[-1]) and os.path.getsize(full[-1])):
            why = "the trace is missing or empty"
        else:
            return 0, out
    elif p.returncode == 3 and out and out.get("error"):
        msg = out["error"] if isinstance(out["error"], str) else json.dumps(out["error"])
        if any(r in msg for r in REFUSALS):
            if args.verbose:
                print("case %d refused: %s" % (i, msg))
            return 1, out
        why = "refused with an unexpected message: " + msg
    elif p.returncode == 1:
        why = "the check failed: %s" % json.dumps(out.get("check") if out else None)
    else:
        why = "exit status %d" % p.returncode
    print("FAIL case %d: %s\n  %s\n  stderr: %s" % (i, why, shown, p.stderr.strip()[-2000:]))
    return 2, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=int(os.environ.get("STRESS_CASES", "200")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("STRESS_SEED", "1")))
    ap.add_argument("--oocgemm", default=os.environ.get("OOCGEMM", "tools/oocgemm"))
    ap.add_argument("--backend", default=os.environ.get("STRESS_BACKEND", "auto"),
                    choices=["auto", "cublas", "custom", "host"])
    ap.add_argument("--max-mb", type=int, default=64, help="operands' bytes at most (MiB)")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--files", action="store_true", help="jobs on files (oocgemm multiply), faults, resumes")
    ap.add_argument("--mpi", action="store_true", help="with --files: the jobs split across the ranks of mpirun")
    ap.add_argument("--list", action="store_true", help="print the cases' commands, run nothing")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.mpi and not args.files:
        ap.error("--mpi goes with --files")
    if args.files:
        return main_files(args, rng)
    os.makedirs(args.dir, exist_ok=True)  # (the traces go there)
    cases = [draw(rng, args) for _ in range(args.cases)]
    if args.list:
        for cmd, env, trace in cases:
            print(" ".join("%s=%s" % kv for kv in env.items()), args.oocgemm, " ".join(cmd),
                  "--trace FILE" if trace else "")
        return 0
    counts = [0, 0, 0]
    backends = {}
    t0 = time.time()
    for i, (cmd, env, trace) in enumerate(cases):
        got, out = run_case(i, args, cmd, env, trace)
        counts[got] += 1
        if got == 0:
            backends[out.get("backend")] = backends.get(out.get("backend"), 0) + 1
    ran, refused, failed = counts
    print("stress_plans: seed %d, %d cases in %.0f s: %d passed (%s), %d refused cleanly, %d failed"
          % (args.seed, args.cases, time.time() - t0, ran,
             ", ".join("%s %d" % kv for kv in sorted(backends.items())), refused, failed))
    if failed:
        return 1
    if ran < args.cases / 2:
        print("stress_plans: FAIL: fewer than half the cases ran: the draw tests too little")
        return 1
    return 0


def main_files(args, rng):
    try:
        import numpy as np
    except ImportError:
        print("stress_plans --files: skipped: no numpy for python3 here (apt-get install python3-numpy)")
        return 77
    if args.mpi and not shutil.which("mpirun"):
        print("stress_plans --files --mpi: skipped: no mpirun")
        return 77
    jobs = [draw_files(rng, args) for _ in range(args.cases)]
    # a fifth of the faulted runs fail at their end instead: the journal's
    # "complete" record written but not flushed, or the commit's rename (an
    # RNG of their own, so that the draws above stay those of older seeds)
    for i, job in enumerate(jobs):
        end = random.Random("end %d %d" % (args.seed, i))
        if end.random() < 0.2:
            job["fault"], job["fault_frac"] = end.choice(["complete:1", "commit:1"]), None
    if args.list:
        for j in jobs:
            print(json.dumps(j))
        return 0
    counts = [0, 0, 0]
    t0 = time.time()
    for i, job in enumerate(jobs):
        counts[files_case(i, args, job, np)] += 1
    ran, refused, failed = counts
    print("stress_plans --files%s: seed %d, %d jobs in %.0f s: %d passed, %d refused cleanly, %d failed"
          % (" --mpi" if args.mpi else "", args.seed, args.cases, time.time() - t0, ran, refused, failed))
    if failed:
        return 1
    if ran < args.cases / 2:
        print("stress_plans: FAIL: fewer than half the jobs ran: the draw tests too little")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
