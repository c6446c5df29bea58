#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_reliability.sh: regression tests of issue 9 (never a wrong C, never a
# lost file, byte-identical resume), end to end through oocgemm and the host
# backend (make check):
#    1. --ring 14, 15, 16 (run and multiply);
#    2. resume byte-identical with op(B) in chunks (kill -9 at several points,
#       SIGTERM), and the reported 6000 x 2500 x 2000 scenario;
#    3. two jobs writing one output: the second is refused, the first is right;
#       the first with --resume: the second removes nothing of it;
#    4. a symbolic link planted at C.ooc-tmp is never followed;
#    5. -o onto a directory, a FIFO, a character device: refused at once;
#    6. --journal naming an input, a file that is not a journal, or the
#       output or its temporary file before they exist; -o naming an input;
#    7. a FIFO as A, B or C0: exit 4, no hang;
#    8. a journal with a NUL byte: refused, files unchanged;
#    9. edited journals (forged record, block out of range, plan changed):
#       refused, files unchanged; the original journal then resumes;
#   10. disk full (ulimit -f, OOC_FAULT=write), a trace that cannot be written;
#       a hang in the exit handlers under ulimit -v still ended by SIGTERM;
#   11. overflowing raw shape, an empty (0-byte) file, NaN and Inf, a
#       directory as -o, matrices with a zero dimension (a valid, empty or
#       zero product);
#   12. SIGTERM, SIGINT, SIGHUP, SIGUSR1: exit 7, --json, resume, and a resume
#       of the finished job does nothing (nor in place, and an in-place job
#       whose C changed since is refused); a signal with the last block in
#       hand: exit 0, a note; a signal while a call does not return: the
#       process ends once the grace is over (OOC_STOP_GRACE_S), exit 7;
#   13. fault injection (OOC_FAULT) of every kind, and resume after it;
#   14. a copy to the host lost silently (OOC_FAULT=lose) in float32 with k =
#       65536, where the block's stale or zero values lie within the
#       worst-case tolerance: run's check and multiply --verify fail;
#   15. an empty journal (killed between its create and its header): a
#       fresh run and a --resume both take it (they exited 6, forever);
#   16. the same beside the temporary file a failed run kept: --resume;
#   17. a resume naming another journal (absent) over a kept temporary
#       file, then one with the first run's journal: C right (it was
#       committed wrong, exit 0);
#   18. a refused --resume leaves no temporary file it made itself;
#   19. a finished in-place job again with --resume --verify: exit 0;
#   20. --measure-disk leaves what is at C.ooc-disktest alone;
#   21. an output name too long for its default journal, with --journal;
#   22. a finished block's bytes overwritten in C.ooc-tmp between a stop and
#       --resume: the resume computes it again (C right, a warning, JSON
#       blocks_mismatched 1); its journal's records hold digests; a resume
#       that found one and was stopped says so too.
# Run from the build directory; OOCGEMM overrides the tool's path.
set -u

# shellcheck source=tests/testlib.sh
. "$(dirname "$0")/testlib.sh" test_reliability

# oc10: the tool within 10 s (124: it hung)
oc10() { timeout 10 "$OOCGEMM" "$@" >out 2>err; }

have_python=0
command -v python3 >/dev/null 2>&1 && have_python=1

# first line of stderr, for the log
e1() { head -n 1 err | cut -c1-160; }

# nothing_left C: none of C, C.ooc-tmp, C.ooc-journal exists
nothing_left() { [ ! -e "$1" ] && [ ! -L "$1.ooc-tmp" ] && [ ! -e "$1.ooc-tmp" ] && [ ! -e "$1.ooc-journal" ]; }

# nothing_left_tmp C: no temporary file or journal of C
nothing_left_tmp() { [ ! -e "$1.ooc-tmp" ] && [ ! -e "$1.ooc-journal" ]; }

# kept C: the temporary file and the journal are there, C is not
kept() { [ ! -e "$1" ] && [ -f "$1.ooc-tmp" ] && [ -f "$1.ooc-journal" ]; }

# ndone JOURNAL: number of done records
ndone() { grep -a -c '^done ' "$1" 2>/dev/null || true; }

# The host backend with no floor and no progress; small blocks (600 of them)
H=(--backend host --no-floor --no-progress)
S=("${H[@]}" --device-mem 256K)

# ---- background runs (not under timeout(1): the signals must reach the tool
# itself; bg_wait is the watchdog instead) ----
# bg_start OUT ERR ARGS...: start the tool, slowed down by the jitter
bg_start() {
    local o=$1 e=$2
    shift 2
    OOC_HOST_JITTER_US=2000 "$OOCGEMM" "$@" >"$o" 2>"$e" &
    bgpid=$!
}
# bg_wait_done JOURNAL N: until the journal has N done records, or the run
# ended, or 20 s passed
bg_wait_done() {
    for _ in $(seq 1 400); do
        if [ -f "$1" ] && [ "$(ndone "$1")" -ge "$2" ]; then return 0; fi
        kill -0 "$bgpid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
# bg_wait: the exit status of the background run in $bgrc (killed after 60 s)
# (the shell's "Killed" notices go to /dev/null)
bg_wait() {
    {
        for _ in $(seq 1 600); do
            kill -0 "$bgpid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$bgpid" 2>/dev/null
        wait "$bgpid"
        bgrc=$?
    } 2>/dev/null
    bgpid=
}
# bg_kill SIG: send SIG, then bg_wait
bg_kill() {
    {
        kill -"$1" "$bgpid"
        bg_wait
    } 2>/dev/null
}

# ---- inputs and references ----
gen A.npy --rows 2000 --cols 300 --seed 21
gen B.npy --rows 300 --cols 200 --seed 22
gen B2.npy --rows 300 --cols 200 --seed 23
oc multiply A.npy B.npy -o REF1.npy "${S[@]}" -q || { fail "reference run: exit $?"; exit 1; }
oc multiply A.npy B.npy -o REF8.npy "${S[@]}" --b-chunks 8 -q || { fail "reference run, 8 chunks: exit $?"; exit 1; }
oc multiply A.npy B2.npy -o REF2.npy "${S[@]}" -q || { fail "reference run, B2: exit $?"; exit 1; }
if cmp -s REF1.npy REF2.npy; then
    fail "references: B and B2 give the same C"
    exit 1
fi
# a fresh run's plan: 600 blocks
blocks=$(oc multiply A.npy B.npy -o P.npy "${S[@]}" --resume -q && sed -n 's/.* blocks=\([0-9]*\) .*/\1/p' P.npy.ooc-journal)
rm -f P.npy P.npy.ooc-journal
echo "# reference: 2000 x 200 x 300 float64, --device-mem 256K: ${blocks:-?} blocks"

# kill9_run C ARGS...: start a slowed multiply into C, kill -9 it after the
# first done record; true when C.ooc-tmp and the journal are left, C is not
kill9_run() {
    local c=$1
    shift
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
    bg_start bout berr multiply "$@" -o "$c" -q
    bg_wait_done "$c.ooc-journal" 1
    bg_kill 9
    kept "$c"
}

# ====================================================================
# 1. --ring 14..16 (the events array was too small: segfault)
# ====================================================================
for r in 14 15 16; do
    oc run -m 3000 -n 500 -k 400 --backend host --ring "$r" --block-rows 100 --no-floor -q
    rc=$?
    if [ "$rc" -eq 0 ]; then
        pass "1 ring: oocgemm run -m 3000 -n 500 -k 400 --ring $r --block-rows 100: exit 0 (check against OpenBLAS passed)"
    else
        fail "1 ring: oocgemm run --ring $r: exit $rc, expected 0"
    fi
done
gen RA.npy --rows 3000 --cols 400 --seed 31
gen RB.npy --rows 400 --cols 500 --seed 32
oc multiply RA.npy RB.npy -o RC.npy "${H[@]}" --ring 16 --block-rows 100 --verify
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^verify: .*: PASS$' out; then
    pass "1 ring: multiply --ring 16 --block-rows 100 --verify: exit 0, PASS"
else
    fail "1 ring: multiply --ring 16: exit $rc, expected 0 and a PASS line"
fi
rm -f RA.npy RB.npy RC.npy

# ====================================================================
# 2. resume byte-identical with op(B) in chunks
# ====================================================================
for at in 1 100 300; do
    c=K$at.npy
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
    bg_start bout berr multiply A.npy B.npy -o "$c" "${S[@]}" --b-chunks 8 -q
    bg_wait_done "$c.ooc-journal" "$at"
    bg_kill 9
    if ! kept "$c"; then
        fail "2 chunks: kill -9 after $at records: exit $bgrc, no C.ooc-tmp and journal, or C exists (finished before the kill?)"
        continue
    fi
    had=$(ndone "$c.ooc-journal")
    oc multiply A.npy B.npy -o "$c" "${S[@]}" --b-chunks 8 --resume -q
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "2 chunks: resume after kill -9 at $had records: exit $rc"
    elif ! cmp -s "$c" REF8.npy; then
        fail "2 chunks: resume after kill -9 at $had records: C differs from the uninterrupted run ($(cmp "$c" REF8.npy 2>&1))"
    else
        pass "2 chunks: --b-chunks 8, kill -9 after $had of $blocks records, --resume: exit 0, byte-identical"
    fi
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
done
c=KT.npy
rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
bg_start bout berr multiply A.npy B.npy -o "$c" "${S[@]}" --b-chunks 8 -q
bg_wait_done "$c.ooc-journal" 20
bg_kill TERM
had=$(ndone "$c.ooc-journal")
if [ "$bgrc" -ne 7 ] || ! kept "$c"; then
    cp berr err
    fail "2 chunks: SIGTERM: exit $bgrc, expected 7 with C.ooc-tmp and the journal kept"
else
    oc multiply A.npy B.npy -o "$c" "${S[@]}" --b-chunks 8 --resume -q
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s "$c" REF8.npy; then
        pass "2 chunks: SIGTERM after $had records: exit 7 ($(head -n 1 berr | cut -c1-100)); --resume: byte-identical"
    else
        fail "2 chunks: resume after SIGTERM: exit $rc, or C differs"
    fi
fi
rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"

# the reported scenario: 6000 x 2500 x 2000, --device-mem 100M, default plan
gen BA.npy --rows 6000 --cols 2500 --seed 1
gen BB.npy --rows 2500 --cols 2000 --seed 7
t0=$SECONDS
oc multiply BA.npy BB.npy -o BREF.npy "${H[@]}" --device-mem 100M -q
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "2 scenario: reference run 6000 x 2500 x 2000: exit $rc"
else
    rm -f BC.npy BC.npy.ooc-tmp BC.npy.ooc-journal
    "$OOCGEMM" multiply BA.npy BB.npy -o BC.npy "${H[@]}" --device-mem 100M -q >bout 2>berr &
    bgpid=$!
    bg_wait_done BC.npy.ooc-journal 1
    bg_kill 9
    if ! kept BC.npy; then
        fail "2 scenario: kill -9 after the first record: no C.ooc-tmp and journal, or C exists (exit $bgrc)"
    else
        had=$(ndone BC.npy.ooc-journal)
        total=$(sed -n 's/.* blocks=\([0-9]*\) .*/\1/p' BC.npy.ooc-journal)
        oc multiply BA.npy BB.npy -o BC.npy "${H[@]}" --device-mem 100M --resume -q
        rc=$?
        if [ "$rc" -eq 0 ] && cmp -s BC.npy BREF.npy; then
            pass "2 scenario: A 6000x2500 B 2500x2000 --device-mem 100M, kill -9 after $had of $total records, --resume: byte-identical ($((SECONDS - t0)) s)"
        else
            fail "2 scenario: resume: exit $rc, or C differs from the uninterrupted run ($(cmp BC.npy BREF.npy 2>&1))"
        fi
    fi
fi
rm -f BA.npy BB.npy BREF.npy BC.npy BC.npy.ooc-tmp BC.npy.ooc-journal

# ====================================================================
# 3. two jobs, one output
# ====================================================================
rm -f T.npy T.npy.ooc-tmp T.npy.ooc-journal
bg_start o1 e1 multiply A.npy B.npy -o T.npy "${S[@]}" -q
for _ in $(seq 1 400); do
    [ -e T.npy.ooc-tmp ] && break
    kill -0 "$bgpid" 2>/dev/null || break
    sleep 0.02
done
oc multiply A.npy B2.npy -o T.npy "${S[@]}" -q
rc2=$?
bg_wait
if [ "$rc2" -ne 6 ] || ! grep -q 'another job' err; then
    fail "3 two jobs: job 2 exit $rc2, expected 6 and \"another job\" (job 1 exit $bgrc)"
elif [ "$bgrc" -ne 0 ]; then
    fail "3 two jobs: job 1 exit $bgrc, expected 0: $(head -n 1 e1)"
elif ! cmp -s T.npy REF1.npy; then
    fail "3 two jobs: T.npy is not job 1's result"
elif [ -e T.npy.ooc-tmp ] || [ -e T.npy.ooc-journal ]; then
    fail "3 two jobs: temporary file or journal left"
else
    pass "3 two jobs: job 2 exit 6 ($(e1)); job 1 exit 0, C is job 1's"
fi
rm -f T.npy
# 3b. job 1 with --resume (a batch job: it keeps its journal): job 2, a
# fresh start on the same output, is refused before it removes anything:
# job 1's journal, taken away, would let a requeued job 1 compute again
bg_start o1 e1 multiply A.npy B.npy -o T.npy "${S[@]}" -q --resume
bg_wait_done T.npy.ooc-journal 2
oc multiply A.npy B2.npy -o T.npy "${S[@]}" -q
rc2=$?
[ -f T.npy.ooc-journal ] && kept_journal=1 || kept_journal=0
bg_wait
oc multiply A.npy B.npy -o T.npy "${S[@]}" --resume --json
rc3=$?
if [ "$rc2" -eq 6 ] && [ "$kept_journal" = 1 ] && [ "$bgrc" -eq 0 ] && [ "$rc3" -eq 0 ] &&
    grep -q '"already_finished":true' out && cmp -s T.npy REF1.npy; then
    pass "3b job 1 with --resume: job 2 exit 6, job 1's journal kept; job 1 again: finished already"
else
    fail "3b job 1 with --resume: job 2 exit $rc2 (journal kept: $kept_journal), job 1 exit $bgrc, again exit $rc3 (finished already?)"
fi
rm -f T.npy T.npy.ooc-journal

# ====================================================================
# 4. symbolic link at C.ooc-tmp
# ====================================================================
printf 'the victim: must not be written\n' >victim.txt
cp victim.txt victim.orig
ln -s victim.txt V.npy.ooc-tmp
oc multiply A.npy B.npy -o V.npy "${H[@]}"
rc=$?
if [ "$rc" -eq 6 ] && cmp -s victim.txt victim.orig && [ ! -e V.npy ] && [ ! -e V.npy.ooc-journal ]; then
    pass "4 symlink at V.npy.ooc-tmp: exit 6, victim unchanged: $(e1)"
else
    fail "4 symlink at V.npy.ooc-tmp: exit $rc (expected 6), victim $(cmp -s victim.txt victim.orig && echo unchanged || echo CHANGED)"
fi
rm -f V.npy.ooc-tmp V.npy V.npy.ooc-journal

# ====================================================================
# 5. -o onto a directory, a FIFO, a character device
# ====================================================================
# not_regular NAME TEST WORDS: exit 6, message WORDS, node still TEST, nothing left
not_regular() {
    local node=$1 t=$2 words=$3
    oc10 multiply A.npy B.npy -o "$node" "${H[@]}"
    local rc=$?
    if [ "$rc" -ne 6 ]; then
        fail "5 -o $node ($words): exit $rc, expected 6"
    elif ! grep -q "$words" err; then
        fail "5 -o $node: the message does not say \"$words\""
    elif ! test "$t" "$node"; then
        fail "5 -o $node: no longer test $t ($words): replaced"
    elif [ -e "$node.ooc-tmp" ] || [ -e "$node.ooc-journal" ]; then
        fail "5 -o $node: $node.ooc-tmp or the journal left"
    else
        pass "5 -o $node: exit 6, still $words, nothing left: $(e1)"
    fi
}
mkdir Dout.npy
not_regular Dout.npy -d "is a directory"
mkfifo Fout.npy
not_regular Fout.npy -p "is a FIFO"
if [ "$(id -u)" -eq 0 ]; then
    if mknod cdev c 1 3 2>/dev/null; then
        not_regular cdev -c "is a character device"
        rm -f cdev
    else
        echo "# 5: mknod failed (no device nodes here): character device case skipped"
    fi
else
    echo "# 5: not root: character device case skipped"
fi
rmdir Dout.npy
rm -f Fout.npy

# ====================================================================
# 6. --journal naming an input, or a file that is not a journal
# ====================================================================
cp B.npy B.copy
oc multiply A.npy B.npy -o J.npy "${H[@]}" --journal B.npy
rc=$?
if [ "$rc" -eq 2 ] && cmp -s B.npy B.copy && nothing_left J.npy; then
    pass "6 --journal B.npy (an input): exit 2, B unchanged: $(e1)"
else
    fail "6 --journal B.npy: exit $rc (expected 2), B $(cmp -s B.npy B.copy && echo unchanged || echo CHANGED)"
fi
cp B.copy B.npy # whatever happened
# -o naming an input (A or B): refused, the input kept, also with --resume
# (each requeue replaced A with A B again)
cp A.npy A.copy
oc multiply A.npy B.npy -o A.npy "${H[@]}" --resume
rc=$?
oc multiply A.npy B.npy -o ./B.npy "${H[@]}"
rc2=$?
if [ "$rc" -eq 2 ] && [ "$rc2" -eq 2 ] && cmp -s A.npy A.copy && cmp -s B.npy B.copy && nothing_left_tmp A.npy; then
    pass "6 -o A.npy, -o ./B.npy (inputs): exit 2, A and B unchanged: $(e1)"
else
    fail "6 -o naming an input: exit $rc/$rc2 (expected 2), A $(cmp -s A.npy A.copy && echo unchanged || echo CHANGED)"
fi
cp A.copy A.npy
cp B.copy B.npy
# an input that is the output's temporary file: emptied before it is read
# (wrong C, exit 0, the input gone): refused, kept
gen Y0.copy --rows 2000 --cols 200 --seed 25 --format npy
cp Y0.copy Y.npy.ooc-tmp
oc multiply A.npy B.npy --c-in Y.npy.ooc-tmp --beta 1 -o Y.npy "${H[@]}"
rc=$?
oc multiply Y.npy.ooc-tmp A.npy --transa T -o Y.npy "${H[@]}"
rc2=$?
if [ "$rc" -eq 2 ] && [ "$rc2" -eq 2 ] && cmp -s Y.npy.ooc-tmp Y0.copy && [ ! -e Y.npy ]; then
    pass "6 an input named Y.npy.ooc-tmp for -o Y.npy: exit 2, kept: $(e1)"
else
    fail "6 an input named Y.npy.ooc-tmp for -o Y.npy: exit $rc/$rc2 (expected 2), the input $(cmp -s Y.npy.ooc-tmp Y0.copy && echo kept || echo CHANGED)"
fi
rm -f Y.npy Y.npy.ooc-tmp Y.npy.ooc-journal Y0.copy
printf 'my notes\nline 2\n' >notes.txt
cp notes.txt notes.orig
oc multiply A.npy B.npy -o J.npy "${H[@]}" --journal notes.txt
rc=$?
if [ "$rc" -eq 6 ] && cmp -s notes.txt notes.orig && nothing_left J.npy; then
    pass "6 --journal notes.txt (not a journal): exit 6, unchanged, nothing left: $(e1)"
else
    fail "6 --journal notes.txt: exit $rc (expected 6), notes $(cmp -s notes.txt notes.orig && echo unchanged || echo CHANGED)"
fi
rm -f J.npy J.npy.ooc-tmp J.npy.ooc-journal
# a file that is not a journal at the default journal's path, beside a
# temporary file an earlier run left: refused (exit 6) before anything is
# touched, by multiply and by gen (the temporary file was replaced, then
# removed, before the refusal; found by a helper testing as a user)
for cmd in multiply gen; do
    printf 'my notes\n' >J3.npy.ooc-journal
    printf 'left by a run\n' >J3.npy.ooc-tmp
    if [ "$cmd" = multiply ]; then oc multiply A.npy B.npy -o J3.npy "${H[@]}"; else oc gen J3.npy --rows 3 --cols 2; fi
    rc=$?
    if [ "$rc" -eq 6 ] && [ "$(cat J3.npy.ooc-journal)" = "my notes" ] && [ "$(cat J3.npy.ooc-tmp)" = "left by a run" ] &&
        [ ! -e J3.npy ]; then
        pass "6 $cmd: a file that is not a journal at J3.npy.ooc-journal: exit 6, it and J3.npy.ooc-tmp kept: $(e1)"
    else
        fail "6 $cmd: a file that is not a journal at J3.npy.ooc-journal: exit $rc (expected 6), the temporary file $( [ -e J3.npy.ooc-tmp ] && echo kept || echo REMOVED)"
    fi
    rm -f J3.npy J3.npy.ooc-tmp J3.npy.ooc-journal
done
# --journal naming the output before it exists (the journal made there, C
# renamed over it at the commit: exit 0, the record lost), or its
# temporary file, by any spelling: refused at once, nothing made
rm -f J2.npy J2.npy.ooc-*
oc multiply A.npy B.npy -o J2.npy "${H[@]}" --journal J2.npy --resume
rc=$?
oc multiply A.npy B.npy -o J2.npy "${H[@]}" --journal ./J2.npy
rc2=$?
oc multiply A.npy B.npy -o ./J2.npy "${H[@]}" --journal J2.npy.ooc-tmp --resume
rc3=$?
if [ "$rc" -eq 2 ] && [ "$rc2" -eq 2 ] && [ "$rc3" -eq 2 ] && [ -z "$(ls J2.npy* 2>/dev/null)" ]; then
    pass "6 --journal J2.npy, ./J2.npy, J2.npy.ooc-tmp for -o J2.npy (not there yet): exit 2, nothing made: $(e1)"
else
    fail "6 --journal naming the output before it exists: exit $rc/$rc2/$rc3 (expected 2), left: $(ls J2.npy* 2>/dev/null | tr '\n' ' ')"
fi
rm -f J2.npy J2.npy.ooc-*

# ====================================================================
# 7. a FIFO as an operand: exit 4, no hang
# ====================================================================
mkfifo P
gen C0.npy --rows 2000 --cols 200 --seed 24
fifo_in() {
    local name=$1
    shift
    oc10 "$@" -o X7.npy "${H[@]}"
    local rc=$?
    if [ "$rc" -eq 4 ] && nothing_left X7.npy; then
        pass "7 FIFO as $name: exit 4: $(e1)"
    else
        fail "7 FIFO as $name: exit $rc, expected 4 (124: it hung)"
    fi
}
fifo_in A multiply P B.npy
fifo_in B multiply A.npy P
fifo_in "B (raw suffix)" multiply A.npy P:300x200:d
fifo_in "--c-in" multiply A.npy B.npy --c-in P
rm -f P

# ====================================================================
# 8. a journal with a NUL byte
# ====================================================================
if ! kill9_run K.npy A.npy B.npy "${S[@]}"; then
    fail "8/9: the killed run left no C.ooc-tmp and journal (exit $bgrc)"
else
    cp K.npy.ooc-journal K.journal.orig
    cp K.npy.ooc-tmp K.tmp.orig
    had=$(ndone K.npy.ooc-journal)
    echo "# 8/9: killed after $had of $blocks records"
    printf '\0done 5 x\n' >>K.npy.ooc-journal
    cp K.npy.ooc-journal K.journal.edited
    oc multiply A.npy B.npy -o K.npy "${S[@]}" --resume
    rc=$?
    if [ "$rc" -eq 6 ] && cmp -s K.npy.ooc-journal K.journal.edited && cmp -s K.npy.ooc-tmp K.tmp.orig && [ ! -e K.npy ]; then
        pass "8 NUL in the journal: --resume exit 6, files unchanged: $(e1)"
    else
        fail "8 NUL in the journal: --resume exit $rc (expected 6; 134/139: a crash), or files changed"
    fi

    # ================================================================
    # 9. edited journals
    # ================================================================
    # edited NAME SED|APPEND TEXT
    edited() {
        local name=$1 how=$2 text=$3
        cp K.journal.orig K.npy.ooc-journal
        if [ "$how" = append ]; then printf '%s\n' "$text" >>K.npy.ooc-journal; else sed -i "$text" K.npy.ooc-journal; fi
        if cmp -s K.npy.ooc-journal K.journal.orig; then
            fail "9 $name: the edit changed nothing (test error)"
            return
        fi
        cp K.npy.ooc-journal K.journal.edited
        oc multiply A.npy B.npy -o K.npy "${S[@]}" --resume
        local rc=$?
        if [ "$rc" -eq 6 ] && cmp -s K.npy.ooc-journal K.journal.edited && cmp -s K.npy.ooc-tmp K.tmp.orig &&
            [ ! -e K.npy ]; then
            pass "9 $name: --resume exit 6, files unchanged: $(e1)"
        else
            fail "9 $name: --resume exit $rc (expected 6), or files changed"
        fi
    }
    edited "forged record 'done 12 0123456789abcdef'" append "done 12 0123456789abcdef"
    edited "record of block $blocks (>= blocks)" append "done $blocks 0123456789abcdef"
    mb=$(sed -n 's/.* mb=\([0-9]*\) .*/\1/p' K.journal.orig)
    edited "plan mb=$mb changed to mb=7" sed "s/ mb=$mb / mb=7 /"
    cp K.journal.orig K.npy.ooc-journal
    oc multiply A.npy B.npy -o K.npy "${S[@]}" --resume
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s K.npy REF1.npy; then
        pass "9 original journal restored: --resume exit 0, byte-identical ($(grep -o 'resumed after [0-9]* of [0-9]* blocks' out))"
    else
        fail "9 original journal restored: --resume exit $rc, or C differs"
    fi
fi
rm -f K.npy K.npy.ooc-tmp K.npy.ooc-journal

# ====================================================================
# 10. disk full
# ====================================================================
# (a) a file-size limit below C's size (bash counts ulimit -f in KiB; C is
# 57.6 MB > 50000 * 1024 bytes)
gen UA.npy --rows 6000 --cols 50 --seed 41
gen UB.npy --rows 50 --cols 1200 --seed 42
(
    ulimit -f 50000
    timeout 60 "$OOCGEMM" multiply UA.npy UB.npy -o U.npy "${H[@]}" >out 2>err
)
rc=$?
if [ "$rc" -ne 6 ]; then
    fail "10a ulimit -f 50000, C of 57.6 MB: exit $rc, expected 6"
elif ! grep -q 'U\.npy\.ooc-tmp' err || ! grep -q -E 'space|limit' err; then
    fail "10a ulimit -f: the message does not name U.npy.ooc-tmp and space or limit"
elif ! nothing_left U.npy; then
    fail "10a ulimit -f: U.npy, its temporary file or journal left"
else
    pass "10a ulimit -f 50000: exit 6, nothing left: $(e1)"
fi
rm -f UA.npy UB.npy U.npy U.npy.ooc-tmp U.npy.ooc-journal
# (b) ENOSPC writing C part-way
rm -f W.npy W.npy.ooc-tmp W.npy.ooc-journal
OOC_FAULT=write:3 timeout 60 "$OOCGEMM" multiply A.npy B.npy -o W.npy "${S[@]}" >out 2>err
rc=$?
if [ "$rc" -ne 6 ] || ! grep -q 'W\.npy\.ooc-tmp' err || ! kept W.npy; then
    fail "10b OOC_FAULT=write:3: exit $rc (expected 6), W.npy.ooc-tmp named and kept with the journal?"
else
    msg=$(e1)
    had=$(ndone W.npy.ooc-journal)
    oc multiply A.npy B.npy -o W.npy "${S[@]}" --resume -q
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s W.npy REF1.npy; then
        pass "10b OOC_FAULT=write:3: exit 6 ($msg), $had blocks kept; --resume: byte-identical"
    else
        fail "10b OOC_FAULT=write:3: --resume exit $rc, or C differs"
    fi
fi
rm -f W.npy W.npy.ooc-tmp W.npy.ooc-journal
# (c) a trace that cannot be written does not lose the multiply (its write
# fails at the end: /dev/full), and one whose place is wrong is said at once
oc multiply A.npy B.npy -o TR.npy "${S[@]}" --trace /dev/full
rc=$?
if [ "$rc" -eq 0 ] && cmp -s TR.npy REF1.npy && grep -i 'warning' err | grep -q -i 'trace'; then
    pass "10c --trace /dev/full: exit 0, C identical: $(grep -i warning err | head -n 1 | cut -c1-120)"
else
    fail "10c --trace /dev/full: exit $rc (expected 0), C identical and a warning?"
fi
rm -f TR.npy
oc multiply A.npy B.npy -o TR.npy "${S[@]}" --trace /nonexistent/dir/t.json
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e TR.npy ] && [ ! -e TR.npy.ooc-tmp ] && grep -q "cannot be created: No such file or directory" err; then
    pass "10d --trace into a missing directory: exit 2 before any work: $(head -n 1 err | cut -c1-120)"
else
    fail "10d --trace into a missing directory: exit $rc (expected 2 and nothing made)"
fi
rm -f TR.npy

# (e) once the work is over a stop signal ends the process with its own
# status: its libraries' exit handlers may hang (OpenBLAS joins a worker
# that retries a 128 MiB allocation forever under a small ulimit -v), and
# SIGTERM from timeout or a batch system must still end it (it was caught,
# and ignored), keeping exit 0 and the summary printed for a committed C.
# Where the process cannot start under the limit (a sanitizer's shadow
# memory), ends by itself, or hangs before its commit, nothing is checked.
gen VA.npy --rows 10 --cols 10 --seed 43
(ulimit -v 150000 && exec "$OOCGEMM" multiply VA.npy VA.npy -o VC.npy --backend host --no-floor --no-progress) \
    >out 2>err &
vpid=$!
for _ in $(seq 200); do { [ -e VC.npy ] || ! kill -0 $vpid 2>/dev/null; } && break; sleep 0.1; done
sleep 0.5
if ! kill -0 $vpid 2>/dev/null; then
    wait $vpid
    echo "SKIP: 10e (the multiply under ulimit -v 150000 ended by itself, exit $?: no hang to stop here)"
else
    # (again and again: one that came before the work was over is only recorded)
    for _ in $(seq 20); do kill -0 $vpid 2>/dev/null || break; kill -TERM $vpid 2>/dev/null; sleep 0.25; done
    if kill -0 $vpid 2>/dev/null; then
        kill -9 $vpid 2>/dev/null
        wait $vpid 2>/dev/null
        if [ -e VC.npy ]; then fail "10e ulimit -v 150000: hung after the commit, and SIGTERM did not end it"
        else echo "SKIP: 10e (hung before the commit under ulimit -v 150000: $(head -c 200 err))"; fi
    else
        wait $vpid
        rc=$?
        if [ -e VC.npy ] && [ "$rc" -eq 0 ] && grep -q '^time: ' out; then
            pass "10e ulimit -v 150000: hung in its exit handlers after committing C; SIGTERM ended it, exit 0, summary kept"
        elif [ -e VC.npy ]; then
            fail "10e ulimit -v 150000: SIGTERM ended it with exit $rc (expected 0) or its summary was lost"
        else
            echo "SKIP: 10e (no VC.npy under ulimit -v 150000, exit $rc: $(head -c 200 err))"
        fi
    fi
fi
rm -f VA.npy VC.npy VC.npy.ooc-tmp VC.npy.ooc-journal

# ====================================================================
# 11. smaller: overflow, empty, zero-size, NaN/Inf, a directory as -o
# ====================================================================
head -c 1000 /dev/zero >small.bin
oc multiply small.bin:4000000000x4000000000:d B.npy -o X11.npy "${H[@]}"
rc=$?
if [ "$rc" -eq 4 ] && nothing_left X11.npy; then pass "11a raw 4000000000x4000000000: exit 4: $(e1)"; else fail "11a overflowing raw shape: exit $rc, expected 4"; fi
: >zero_bytes.npy
oc multiply zero_bytes.npy B.npy -o X11.npy "${H[@]}"
rc=$?
if [ "$rc" -eq 4 ] && grep -q 'empty' err && nothing_left X11.npy; then
    pass "11b empty (0-byte) A: exit 4: $(e1)"
else
    fail "11b empty A: exit $rc, expected 4 and \"empty\""
fi
if [ "$have_python" -eq 1 ]; then
    python3 - <<'EOF'
import array, random
random.seed(5)
def raw(name, n, bad):
    a = array.array('d', [random.uniform(-1, 1) for _ in range(n)])
    for i, v in bad:
        a[i] = v
    if array.array('d', [1.0]).tobytes() != b'\x00\x00\x00\x00\x00\x00\xf0\x3f':
        a.byteswap()  # raw files are little-endian
    with open(name, 'wb') as f:
        f.write(a.tobytes())
nan, inf = float('nan'), float('inf')
raw('nan.bin', 300 * 200, [(7, nan), (1234, nan), (40000, nan)])
raw('inf.bin', 300 * 200, [(11, inf), (5000, -inf), (59999, inf)])
EOF
    gen BN.npy --rows 200 --cols 150 --seed 43
    for kind in nan inf; do
        oc multiply $kind.bin:300x200:d BN.npy -o N.npy "${H[@]}" --verify
        rc=$?
        if [ "$rc" -eq 0 ] && grep -q '^verify: .*: PASS$' out; then
            pass "11c $kind in A: multiply --verify exit 0: $(grep '^verify:' out | cut -c1-110)"
        else
            fail "11c $kind in A: multiply --verify exit $rc, expected 0 and PASS"
        fi
    done
    oc multiply A.npy inf.bin:300x200:d -o N.npy "${S[@]}" --verify
    rc=$?
    if [ "$rc" -eq 0 ] && grep -q '^verify: .*: PASS$' out; then
        pass "11c inf in B, 600 blocks: multiply --verify exit 0"
    else
        fail "11c inf in B: multiply --verify exit $rc, expected 0 and PASS"
    fi
    rm -f N.npy nan.bin inf.bin BN.npy
else
    echo "# 11c: no python3: NaN/Inf cases skipped"
fi
mkdir Dd.npy
oc multiply A.npy B.npy -o Dd.npy "${H[@]}"
rc=$?
if [ "$rc" -eq 6 ] && grep -q 'is a directory' err && [ -d Dd.npy ] && [ ! -e Dd.npy.ooc-tmp ] && [ ! -e Dd.npy.ooc-journal ] &&
    ! grep -q '^time:' out; then
    pass "11d existing directory as -o: exit 6 before any work: $(e1)"
else
    fail "11d directory as -o: exit $rc, expected 6, \"is a directory\", no tmp"
fi
rmdir Dd.npy 2>/dev/null
# (e) zero-size .npy operands (hand-made headers)
# shellcheck disable=SC2059 # the length bytes are octal escapes in the format
npy_header() { # SHAPE
    local dict="{'descr': '<f8', 'fortran_order': False, 'shape': $1, }"
    local len=$(((10 + ${#dict} + 1 + 63) / 64 * 64 - 10))
    printf '\223NUMPY\001\000'
    printf "\\$(printf '%03o' $((len % 256)))\\$(printf '%03o' $((len / 256)))"
    printf '%s' "$dict"
    printf '%*s\n' $((len - ${#dict} - 1)) ''
}
npy_header '(0, 300)' >Z0x300.npy
npy_header '(300, 0)' >Z300x0.npy
npy_header '(2000, 0)' >Z2000x0.npy
npy_header '(0, 200)' >Z0x200.npy
# An empty matrix is a valid operand (BLAS: m, n or k may be 0): the product
# is an empty C of the right shape, or zeros when k = 0; --verify checks it.
# (It was reported as an output error, exit 6, before.)
zero() { # NAME ROWS COLS A B
    local name=$1 rows=$2 cols=$3
    shift 3
    oc multiply "$@" -o X11e.npy "${H[@]}" --verify
    local rc=$?
    local want=$((128 + rows * cols * 8)) size
    size=$(stat -c %s X11e.npy 2>/dev/null || echo 0)
    if [ "$rc" -eq 0 ] && [ "$size" -eq "$want" ] && grep -q ': PASS$' out && [ ! -e X11e.npy.ooc-tmp ]; then
        pass "11e empty operand ($name): exit 0, C is $rows x $cols ($size bytes), verified"
    else
        fail "11e empty operand ($name): exit $rc, C $size bytes (expected exit 0 and $want bytes, verify PASS)"
    fi
    rm -f X11e.npy X11e.npy.ooc-journal
}
zero "A 0 x 300" 0 200 Z0x300.npy B.npy
zero "B 300 x 0" 2000 0 A.npy Z300x0.npy
zero "A 2000 x 0, B 0 x 200: k = 0, zeros" 2000 200 Z2000x0.npy Z0x200.npy
rm -f Z*.npy X11e.npy X11e.npy.ooc-tmp X11e.npy.ooc-journal

# ====================================================================
# 12. signals: exit 7, JSON, resume, and a resume of a finished job
# ====================================================================
# json_ok PYTHON-ASSERTS GREP-PATTERNS...: check the object in out
json_ok() {
    local py=$1
    shift
    [ "$(wc -l <out)" -eq 1 ] || return 1
    if [ "$have_python" -eq 1 ]; then
        python3 -c "import json, sys
o = json.load(sys.stdin)
$py" <out 2>/dev/null
    else
        local p
        for p in "$@"; do grep -q -- "$p" out || return 1; done
    fi
}
for sig in TERM INT HUP USR1; do
    c=SG$sig.npy
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
    bg_start out err multiply A.npy B.npy -o "$c" "${S[@]}" --json
    bg_wait_done "$c.ooc-journal" 1
    bg_kill "$sig"
    had=$(ndone "$c.ooc-journal")
    if [ "$bgrc" -ne 7 ]; then
        fail "12 SIG$sig: exit $bgrc, expected 7"
        continue
    fi
    if ! json_ok "assert o['interrupted'] is True and o['resumable'] is True and o['signal'] == 'SIG$sig' and o['exit_status'] == 7" \
        '"interrupted":true' '"resumable":true' "\"signal\":\"SIG$sig\""; then
        fail "12 SIG$sig: the JSON object lacks interrupted/resumable true or signal SIG$sig"
        continue
    fi
    if ! grep -q 'interrupted' err || ! kept "$c"; then
        fail "12 SIG$sig: no \"interrupted\" on stderr, or the temporary file and journal not kept"
        continue
    fi
    msg=$(e1)
    oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume --json
    rc=$?
    if [ "$rc" -ne 0 ] || ! cmp -s "$c" REF1.npy; then
        fail "12 SIG$sig: --resume exit $rc, or C differs"
        continue
    fi
    if ! json_ok "assert o['resumed'] is True and o['already_finished'] is False and o['exit_status'] == 0" \
        '"resumed":true' '"already_finished":false'; then
        fail "12 SIG$sig: the resume's JSON lacks resumed true"
        continue
    fi
    if ! tail -n 1 "$c.ooc-journal" | grep -q '^complete '; then
        fail "12 SIG$sig: the journal of the --resume run does not end with a complete record"
        continue
    fi
    before=$(stat -c '%y %s %i' "$c")
    cp "$c" C.before
    oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume --json
    rc=$?
    after=$(stat -c '%y %s %i' "$c")
    if [ "$rc" -ne 0 ]; then
        fail "12 SIG$sig: the second --resume: exit $rc, expected 0"
    elif ! json_ok "assert o['already_finished'] is True and o['exit_status'] == 0 and o['backend'] is None and o['time_s'] is None and o['tflops'] is None and o['floor'] is None" \
        '"already_finished":true' '"backend":null' '"tflops":null'; then
        fail "12 SIG$sig: the second --resume's JSON lacks \"already_finished\":true, or has a backend or a time (nothing ran)"
    elif [ "$before" != "$after" ] || ! cmp -s "$c" C.before; then
        fail "12 SIG$sig: the second --resume changed C ($before -> $after)"
    else
        pass "12 SIG$sig after $had records: exit 7 ($msg); --resume byte-identical; again: already_finished, C untouched"
    fi
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal" C.before
done
# the plain (not --json) message of a finished job
c=SGF.npy
oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume -q && oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'finished already.*nothing to do' out err; then
    pass "12 --resume of a finished job: exit 0: $(grep -h 'finished already' out err | head -n 1 | cut -c1-120)"
else
    fail "12 --resume of a finished job: exit $rc, or no \"finished already...nothing to do\""
fi
rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
# 12d. a stop signal once the last block is in hand (one block, its copy
# out held 2 s, SIGTERM 0.5 s after the job made its temporary file, not at
# a fixed time from launch: a slow start would have the signal come first;
# and the hold was clamped under 1 s, leaving 0.15 s): the job completes, exit 0, C committed and
# an uninterrupted run's, a note on stderr; the JSON's rate measured (signal
# SIGTERM, interrupted false). The summary had a rate of 0 and no note.
c=SGL.npy
rm -f "$c" "$c".ooc-* SGL0.npy
oc multiply A.npy B.npy -o SGL0.npy "${H[@]}" --block-rows 2048 -q
OOC_HOST_D2H_DELAY_US=2000000 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${H[@]}" --block-rows 2048 --json >out 2>err &
bgpid=$!
i=0
while [ ! -e "$c.ooc-tmp" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
bg_kill TERM
if [ "$bgrc" -eq 0 ] && cmp -s "$c" SGL0.npy && grep -q "note: SIGTERM came after the last block: $c is complete and committed" err &&
    json_ok "assert o['signal'] == 'SIGTERM' and o['interrupted'] is False and o['tflops'] > 0 and o['time_s'] > 0.5 and o['exit_status'] == 0" \
        '"interrupted":false' '"signal":"SIGTERM"'; then
    pass "12d SIGTERM with the last block in hand: exit 0, C complete and committed, a note; the JSON's rate measured"
else
    fail "12d SIGTERM with the last block in hand: exit $bgrc (expected 0), C differs, no note or the JSON's rate not measured: $(e1)"
fi
rm -f "$c" "$c".ooc-* SGL0.npy
# 12i. a stop signal while a call does not return (each copy out held 30 s,
# as a library call spinning under a small ulimit -v, or a hung device,
# holds the job): the signal was never acted on, and the job outlived its
# wall time. The process ends once the grace after the signal is over
# (OOC_STOP_GRACE_S, 1 s here: a minute by default), exit 7, saying so; the
# journal is consistent, and --resume gives the uninterrupted run's C
c=SGH.npy
rm -f "$c" "$c".ooc-* SGH0.npy
oc multiply A.npy B.npy -o SGH0.npy "${H[@]}" --block-rows 256 -q
OOC_STOP_GRACE_S=1 OOC_HOST_D2H_DELAY_US=30000000 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${H[@]}" \
    --block-rows 256 >out 2>err &
bgpid=$!
i=0
while [ ! -e "$c.ooc-tmp" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
t0=$(date +%s)
bg_kill TERM
took=$(($(date +%s) - t0))
cp err err12e
oc multiply A.npy B.npy -o "$c" "${H[@]}" --block-rows 256 --resume -q
rc=$?
if [ "$bgrc" -eq 7 ] && [ "$took" -le 10 ] && grep -q 'did not stop within the grace' err12e && [ "$rc" -eq 0 ] &&
    cmp -s "$c" SGH0.npy; then
    pass "12i SIGTERM while a copy is held 30 s: exit 7 after ${took} s (grace 1 s), a message; --resume byte-identical"
else
    fail "12i SIGTERM while a copy is held 30 s: exit $bgrc after ${took} s (expected 7 within 10 s), resume exit $rc: $(tail -n 1 err12e | cut -c1-200)"
fi
rm -f "$c" "$c".ooc-* SGH0.npy err12e
# ... and a floor that could not be measured, with no signal, does not say
# that a signal came (its probe's memory refused)
OOC_FAULT=host_alloc:2 oc multiply A.npy B.npy -o SGL.npy --backend host --no-progress
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^floor: n/a' out && ! grep -q 'signal' out err; then
    pass "12d a floor not measured for want of memory: floor n/a, no word of a signal"
else
    fail "12d a floor not measured for want of memory: exit $rc, or it speaks of a signal: $(grep '^floor' out)"
fi
rm -f SGL.npy SGL.npy.ooc-*
# a finished scaling job (alpha 0: C = 2 C0) computed in place, run again
# with --resume: finished, not C = 4 C0 (it kept no journal before)
c=SGS.npy
cp REF1.npy "$c"
oc multiply A.npy B.npy --alpha 0 --beta 2 --c-in REF1.npy -o SGSref.npy "${S[@]}" -q
oc multiply A.npy B.npy --alpha 0 --beta 2 --c-in "$c" -o "$c" "${S[@]}" --resume -q &&
    oc multiply A.npy B.npy --alpha 0 --beta 2 --c-in "$c" -o "$c" "${S[@]}" --resume
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'finished already' out err && cmp -s "$c" SGSref.npy; then
    pass "12 a scaling job in place, --resume twice: finished already, C = 2 C0 (not 4 C0)"
else
    fail "12 a scaling job in place, --resume twice: exit $rc, not finished already, or C differs from 2 C0"
fi
rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal" SGSref.npy

# ====================================================================
# 13. fault injection
# ====================================================================
# fault SPEC STATUS gone|kept: OOC_FAULT=SPEC gives STATUS and leaves nothing
# (gone) or the temporary file and the journal, which --resume finishes (kept)
fault() {
    local spec=$1 want=$2 what=$3 c=FI.npy
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
    OOC_FAULT=$spec timeout 60 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${S[@]}" >out 2>err
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "13 OOC_FAULT=$spec: exit $rc, expected $want"
    elif [ "$what" = gone ]; then
        if nothing_left "$c"; then
            pass "13 OOC_FAULT=$spec: exit $rc, no file left: $(e1)"
        else
            fail "13 OOC_FAULT=$spec: exit $rc, but files left: $(ls "$c"* 2>/dev/null | tr '\n' ' ')"
        fi
    elif ! kept "$c"; then
        fail "13 OOC_FAULT=$spec: exit $rc, but the temporary file and journal are not kept"
    else
        local msg had
        msg=$(e1)
        had=$(ndone "$c.ooc-journal")
        oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume -q
        rc=$?
        if [ "$rc" -eq 0 ] && cmp -s "$c" REF1.npy; then
            pass "13 OOC_FAULT=$spec: exit $want ($msg), $had of $blocks blocks kept; --resume: byte-identical"
        else
            fail "13 OOC_FAULT=$spec: --resume after $had blocks: exit $rc, or C differs"
        fi
    fi
    rm -f "$c" "$c.ooc-tmp" "$c.ooc-journal"
}
fault dev_alloc:1 3 gone
fault host_alloc:1 3 gone
fault copy:600 3 kept
fault gemm:300 3 kept
fault exec:1000 3 kept
fault read:400 4 kept
fault reserve:1 6 gone
fault journal:3 6 kept
# a fault spec that names nothing (a typo) is refused, so that a test can
# not pass for a fault that never comes; so is a count of simulated devices
# beyond 16 (it was taken as 16)
for spec in bogus:1 write:1:EACCES write:x journal; do
    OOC_FAULT=$spec oc multiply A.npy B.npy -o FI.npy "${S[@]}"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -q "OOC_FAULT='$spec' (for tests only)" err && nothing_left FI.npy; then
        pass "13 OOC_FAULT=$spec: refused (exit 2): $(e1)"
    else
        fail "13 OOC_FAULT=$spec: exit $rc (expected 2, refused), or files left: $(e1)"
    fi
done
# the same on the paths that open no backend: alpha 0 (C = beta*C0, scaled on
# the host) and a job found finished by --resume (they passed a typo unseen)
OOC_FAULT=bogus:1 oc multiply A.npy B.npy --alpha 0 -o FI.npy "${S[@]}"
rc=$?
if [ "$rc" -eq 2 ] && grep -q "OOC_FAULT='bogus:1' (for tests only)" err && nothing_left FI.npy; then
    pass "13 OOC_FAULT=bogus:1 with alpha 0 (nothing multiplied): refused (exit 2)"
else
    fail "13 OOC_FAULT=bogus:1 with alpha 0: exit $rc (expected 2, refused), or files left: $(e1)"
fi
oc multiply A.npy B.npy -o FI.npy "${S[@]}" --resume
cp FI.npy FI.before
OOC_FAULT=bogus:1 oc multiply A.npy B.npy -o FI.npy "${S[@]}" --resume
rc=$?
if [ "$rc" -eq 2 ] && grep -q "OOC_FAULT='bogus:1' (for tests only)" err && cmp -s FI.npy FI.before; then
    pass "13 OOC_FAULT=bogus:1 on a finished job's --resume: refused (exit 2), C untouched"
else
    fail "13 OOC_FAULT=bogus:1 on a finished job's --resume: exit $rc (expected 2), or C changed: $(e1)"
fi
rm -f FI.npy FI.before FI.npy.ooc-journal
# and by gen, whose output's create and commit are fault sites (it passed)
OOC_FAULT=reserve:1:ENOSPc oc gen FI.npy --rows 10 --cols 10
rc=$?
if [ "$rc" -eq 2 ] && grep -q "OOC_FAULT='reserve:1:ENOSPc' (for tests only)" err && nothing_left FI.npy; then
    pass "13 OOC_FAULT=reserve:1:ENOSPc on gen: refused (exit 2), nothing written"
else
    fail "13 OOC_FAULT=reserve:1:ENOSPc on gen: exit $rc (expected 2), or files left: $(e1)"
fi
# and by run (its pinned matrices open the backend), with the same status
# (it exited 3, a run-time failure)
OOC_FAULT=bogus:1 oc run -m 20 -n 10 -k 5 --backend host --no-floor
rc=$?
if [ "$rc" -eq 2 ] && grep -q "OOC_FAULT='bogus:1' (for tests only)" err; then
    pass "13 OOC_FAULT=bogus:1 on run: refused (exit 2)"
else
    fail "13 OOC_FAULT=bogus:1 on run: exit $rc (expected 2): $(e1)"
fi
OOC_HOST_DEVICES=17 oc multiply A.npy B.npy -o FI.npy "${S[@]}"
rc=$?
if [ "$rc" -eq 3 ] && grep -q "OOC_HOST_DEVICES='17' is not a number of devices (1 to 16)" err; then
    pass "13 OOC_HOST_DEVICES=17: refused (exit 3)"
else
    fail "13 OOC_HOST_DEVICES=17: exit $rc (expected 3): $(e1)"
fi
# a fresh run where an earlier one left its temporary file, which cannot be
# removed (EPERM injected; a fresh run makes a new file, so that no journal
# of the old one matches it): exit 6 naming the file, not "another job";
# then a fresh run succeeds
c=FI.npy
rm -f "$c" "$c".ooc-*
OOC_FAULT=journal:3 timeout 60 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${S[@]}" >out 2>err
OOC_FAULT=remove:1 timeout 60 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${S[@]}" >out 2>err
rc=$?
msg=$(grep -o "cannot remove the temporary file $c.ooc-tmp an earlier run left[^:]*: [A-Za-z ]*" err)
if [ $rc -eq 6 ] && [ -n "$msg" ] && [ -f "$c.ooc-tmp" ] &&
    [ ! -e "$c" ] && oc multiply A.npy B.npy -o "$c" "${S[@]}" -q && cmp -s "$c" REF1.npy; then
    pass "13 OOC_FAULT=remove:1: exit 6 ($msg); a fresh run then: byte-identical"
else
    fail "13 OOC_FAULT=remove:1: exit $rc (expected 6 naming the file): $(head -c 300 err)"
fi
rm -f "$c" "$c".ooc-*
# a resume where the output's birth time, which the journal records, cannot
# be read (statx missing or refused: injected) goes by its inode alone: it
# keeps the recorded blocks (it started over, silently)
OOC_FAULT=journal:3 timeout 60 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${S[@]}" >out 2>err
had=$(ndone "$c.ooc-journal")
OOC_FAULT=birth:1 timeout 60 "$OOCGEMM" multiply A.npy B.npy -o "$c" "${S[@]}" --resume >out 2>err
rc=$?
if [ $rc -eq 0 ] && [ "$had" -gt 0 ] && grep -q "resumed after $had of" out && cmp -s "$c" REF1.npy; then
    pass "13 OOC_FAULT=birth:1: the birth time unknown on resume: resumed after $had blocks (by the inode), byte-identical"
else
    fail "13 OOC_FAULT=birth:1: exit $rc, or not resumed after the $had blocks recorded: $(grep -o 'resumed[^)]*' out)"
fi
rm -f "$c" "$c".ooc-*

if ls ./*.ooc-tmp ./*.ooc-journal >/dev/null 2>&1; then
    fail "leftover temporary files: $(ls ./*.ooc-tmp ./*.ooc-journal 2>/dev/null | tr '\n' ' ')"
else
    pass "no temporary file or journal left at the end"
fi

# 12b. in place (--c-in C = -o C) with --resume: once it finished, C0 is this
# job's own output; running the same command again must not multiply again
gen IP.npy --rows 2000 --cols 200 --seed 41
oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
rc1=$?
cp IP.npy IP1.npy
oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume --json
rc2=$?
if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && grep -q '"already_finished":true' out && cmp -s IP.npy IP1.npy; then
    pass "12b in place, --resume again: finished already, C unchanged"
else
    fail "12b in place, --resume again: exit $rc1/$rc2, C changed or not reported finished"
fi
# 12c. the same once C was touched (or rewritten) after the commit: C may
# hold the result, so --resume refuses (exit 6, C untouched, the journal
# named) instead of multiplying the result again; a fresh run (no --resume)
# computes from C as it is. It ran again, from its own result, with exit 0.
touch IP.npy
oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
rc1=$?
if [ "$rc1" -eq 6 ] && cmp -s IP.npy IP1.npy && grep -q 'IP.npy.ooc-journal records this in-place job as complete' err &&
    grep -q 'IP.npy has changed since it was committed' err &&
    oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" && ! cmp -s IP.npy IP1.npy; then
    pass "12c in place, C touched after the commit: --resume refuses (exit 6, C untouched); a fresh run computes"
else
    fail "12c in place, C touched after the commit: exit $rc1 (expected 6), C changed, or the fresh run failed: $(e1)"
fi
# 12e. in place, the commit cut short (OOC_FAULT=commit:1, after the journal
# recorded the job complete): exit 6, C untouched; --resume commits, C is the
# result of one run; again: finished already. (12c's refusal took this for a
# C changed since its commit.)
gen IP.npy --rows 2000 --cols 200 --seed 41
cp IP.npy IP0.npy
oc multiply A.npy B.npy --c-in IP0.npy --beta 0.5 -o IP1.npy "${H[@]}" -q
OOC_FAULT=commit:1 oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
rc1=$?
cmp -s IP.npy IP0.npy && [ -f IP.npy.ooc-tmp ]
same=$?
oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
rc2=$?
if [ "$rc1" -eq 6 ] && [ $same -eq 0 ] && [ "$rc2" -eq 0 ] && cmp -s IP.npy IP1.npy &&
    oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume && grep -q 'finished already' out &&
    cmp -s IP.npy IP1.npy; then
    pass "12e in place, the commit cut short: exit 6, C untouched; --resume commits the one result; again: finished"
else
    fail "12e in place, the commit cut short: exit $rc1/$rc2 (expected 6, 0), C touched or its temporary file gone ($same), or not the one result: $(e1)"
fi
# 12f. a job of another C0 recorded complete, then the same product in place
# (--c-in C -o C): a new job, computed from C as it is (it was taken for the
# in-place job, finished already, C unchanged)
rm -f IP.npy IP.npy.ooc-*
oc multiply A.npy B.npy --c-in IP0.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
cp IP.npy IPa.npy
oc multiply A.npy B.npy --c-in IP.npy --beta 0.5 -o IP.npy "${H[@]}" --resume
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q 'finished already' out && ! cmp -s IP.npy IPa.npy; then
    pass "12f a job of another C0 recorded, then in place: computed afresh (exit 0), not finished already"
else
    fail "12f a job of another C0 recorded, then in place: exit $rc, taken for finished or C unchanged"
fi
rm -f IP.npy IP0.npy IP1.npy IPa.npy IP.npy.ooc-*
# 12g. 12e with op(B) in k-panels (a plan no resume keeps blocks of: it starts
# over with the recorded plan): the commit cut short, in place and not, then
# --resume (under another budget: the recorded plan still) commits the one
# result. (A broader keeping of complete journals took the in-place one for
# committed, exit 6 for good, and let the other restart with a new plan.)
gen KA.npy --rows 200 --cols 20000 --seed 61
gen KB.npy --rows 20000 --cols 100 --seed 62
gen KC.npy --rows 200 --cols 100 --seed 63
K=(--backend host --no-floor --no-progress --device-mem 256K)
cp KC.npy KC0.npy
oc multiply KA.npy KB.npy --c-in KC0.npy --beta 0.5 -o KC1.npy "${K[@]}"
oc multiply KA.npy KB.npy -o KN1.npy "${K[@]}"
kdepth=$(sed -n 's/.*panel \([0-9]*\) x [0-9]* (.*/\1/p' out) # (its columns may be cut too)
OOC_FAULT=commit:1 oc multiply KA.npy KB.npy --c-in KC.npy --beta 0.5 -o KC.npy "${K[@]}" --resume
rc1=$?
oc multiply KA.npy KB.npy --c-in KC.npy --beta 0.5 -o KC.npy "${K[@]}" --resume
rc2=$?
OOC_FAULT=commit:1 oc multiply KA.npy KB.npy -o KN.npy "${K[@]}" --resume
rc3=$?
oc multiply KA.npy KB.npy -o KN.npy --backend host --no-floor --no-progress --device-mem 1M --resume
rc4=$?
if [ "${kdepth:-20000}" -lt 20000 ] && [ "$rc1" -eq 6 ] && [ "$rc2" -eq 0 ] && cmp -s KC.npy KC1.npy && [ "$rc3" -eq 6 ] &&
    [ "$rc4" -eq 0 ] && cmp -s KN.npy KN1.npy; then
    pass "12g k-panels (of depth $kdepth), the commit cut short: --resume commits the one result, in place and not"
else
    fail "12g k-panels (of depth ${kdepth:-?}), the commit cut short: exits $rc1 $rc2 $rc3 $rc4 (expected 6 0 6 0), or C not the one result: $(e1)"
fi
rm -f KA.npy KB.npy KC*.npy KN*.npy
# 12h. the journal's "complete" record written but its flush failed
# (OOC_FAULT=complete:1: a record that may be on the disk although its write
# failed), in place and not: exit 6, C untouched; --resume commits the one
# result; again: finished already. (The record stayed in the journal: the
# in-place job's first --resume was refused for good as "changed since it was
# committed", and the other's result was never found finished.)
gen IP.npy --rows 2000 --cols 200 --seed 41
cp IP.npy IP0.npy
oc multiply A.npy B.npy --c-in IP0.npy --beta 0.5 -o IP1.npy "${H[@]}" -q
for c in IP.npy FC.npy; do
    if [ "$c" = IP.npy ]; then X=(--c-in IP.npy --beta 0.5 "${H[@]}"); ref=IP1.npy; else X=("${S[@]}"); ref=REF1.npy; fi
    OOC_FAULT=complete:1 oc multiply A.npy B.npy "${X[@]}" -o "$c" --resume
    rc1=$?
    msg=$(e1)
    if [ "$c" = IP.npy ]; then cmp -s IP.npy IP0.npy; else [ ! -e FC.npy ]; fi
    same=$?
    oc multiply A.npy B.npy "${X[@]}" -o "$c" --resume
    rc2=$?
    cmp -s "$c" "$ref"
    one=$?
    oc multiply A.npy B.npy "${X[@]}" -o "$c" --resume
    rc3=$?
    if [ "$rc1" -eq 6 ] && [ $same -eq 0 ] && [ "$rc2" -eq 0 ] && [ $one -eq 0 ] && [ "$rc3" -eq 0 ] &&
        grep -q 'finished already' out && cmp -s "$c" "$ref"; then
        pass "12h $c, the complete record's flush failed: exit 6 ($msg), C untouched; --resume commits the one result; again: finished"
    else
        fail "12h $c, the complete record's flush failed: exits $rc1 $rc2 $rc3 (expected 6 0 0), C touched ($same), not the one result ($one) or not finished: $(e1)"
    fi
done
rm -f IP.npy IP0.npy IP1.npy FC.npy IP.npy.ooc-* FC.npy.ooc-*

# 14. a block of C lost silently: in float32 with k = 65536 its stale (run,
# beta 1: C0's) or staging buffer's values lie within 4 (k + 2) eps of the
# bound, and only "off by about its own size" catches it
L=(--backend host --block-rows 64 --no-floor)
OOC_FAULT=lose:2 oc run --dtype s -m 256 -n 32 -k 65536 --beta 1 --check-rows 256 "${L[@]}"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'off by about their own size' err && grep -q 'within the tolerance' err; then
    pass "14 run, a copy to the host lost: the check fails (elements off by their own size, within the tolerance)"
else
    fail "14 run, a copy to the host lost: exit $rc (expected 1): $(e1)"
fi
gen LA.npy --rows 256 --cols 65536 --dtype s --seed 51
gen LB.npy --rows 65536 --cols 32 --dtype s --seed 52
rm -f LC.npy
OOC_FAULT=lose:2 oc multiply LA.npy LB.npy -o LC.npy --verify --no-progress "${L[@]}"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'verification failed: values from row 64 of C on are off by about their own size' err; then
    pass "14 multiply --verify, a copy to the host lost: fails, naming row 64"
else
    fail "14 multiply --verify, a copy to the host lost: exit $rc (expected 1): $(e1)"
fi
rm -f LA.npy LB.npy LC.npy

# 15. an empty journal, as a kill between its O_EXCL create and its header
# leaves it: not "not a journal" (a requeued job failed forever)
ok=1
for how in "" --resume; do
    rm -f EJ.npy EJ.npy.ooc-*
    : >EJ.npy.ooc-journal
    oc multiply A.npy B.npy -o EJ.npy "${S[@]}" $how -q
    rc=$?
    if [ "$rc" -ne 0 ] || ! cmp -s EJ.npy REF1.npy; then
        ok=0
        fail "15 an empty journal, multiply ${how:-(fresh)}: exit $rc or C differs: $(e1)"
    fi
done
[ $ok = 1 ] && pass "15 an empty journal left by a kill: a fresh run and --resume both proceed, C right"
rm -f EJ.npy EJ.npy.ooc-*

# 16. ... beside the temporary file a failed run kept (the state such a kill
# leaves, the temporary file made first): --resume starts over (it exited 6
# forever, "describes another job")
rm -f EK.npy EK.npy.ooc-*
OOC_FAULT=write:4 oc multiply A.npy B.npy -o EK.npy "${S[@]}" -q
rc=$?
if [ "$rc" -ne 6 ] || ! kept EK.npy; then
    fail "16 the failed run: exit $rc (expected 6), or no temporary file and journal kept"
else
    : >EK.npy.ooc-journal
    oc multiply A.npy B.npy -o EK.npy "${S[@]}" --resume -q
    rc=$?
    if [ "$rc" -eq 0 ] && cmp -s EK.npy REF1.npy; then
        pass "16 an empty journal beside a kept temporary file: --resume starts over, C right"
    else
        fail "16 an empty journal beside a kept temporary file: --resume exit $rc, or C differs: $(e1)"
    fi
fi
rm -f EK.npy EK.npy.ooc-*

# 17. a resume that names another journal, absent, starts over in the
# temporary file the first run kept; its blocks (here partial sums of op(B)
# in k-panels) must not be vouched for by the first run's journal, which a
# third run resumes: it committed a wrong C with exit 0. Then with the
# journals the other way round (the first run's own given again).
for third in "" "--journal JA"; do
    rm -f EW.npy EW.npy.ooc-* JA JB
    first=()
    [ -n "$third" ] && first=(--journal JA)
    OOC_FAULT=write:4 oc multiply A.npy B.npy -o EW.npy "${S[@]}" "${first[@]}" -q
    rc1=$?
    # a small budget: op(B) in k-panels, C read back
    OOC_FAULT=write:40 oc multiply A.npy B.npy -o EW.npy --backend host --no-floor --no-progress \
        --device-mem 24K --host-mem 64K --resume --journal JB -q
    rc2=$?
    # shellcheck disable=SC2086
    oc multiply A.npy B.npy -o EW.npy "${S[@]}" --resume $third -q
    rc3=$?
    if [ "$rc1" -ne 6 ] || [ "$rc2" -ne 6 ]; then
        fail "17 ${third:-default journal}: the failed runs exited $rc1 and $rc2 (expected 6 and 6)"
    elif [ "$rc3" -eq 0 ] && cmp -s EW.npy REF1.npy; then
        pass "17 a resume with another journal, then the first one's (${third:-default}): C right"
    else
        fail "17 a resume with another journal, then the first one's (${third:-default}): exit $rc3, C differs from the uninterrupted run: $(e1)"
    fi
done
rm -f EW.npy EW.npy.ooc-* JA JB

# 18. --resume refused (another job's journal) where no temporary file was
# left: the one this run made goes (a full-size file was left, "as it was")
rm -f ER.npy ER.npy.ooc-* EX.npy EX.npy.ooc-* JX
OOC_FAULT=write:2 oc multiply A.npy B.npy -o EX.npy "${S[@]}" --journal JX -q
oc multiply A.npy B.npy -o ER.npy "${S[@]}" --alpha 2 --resume --journal JX -q
rc=$?
if [ "$rc" -eq 6 ] && nothing_left ER.npy && [ -f JX ] && [ -f EX.npy.ooc-tmp ]; then
    pass "18 --resume refused over no temporary file: exit 6, none left behind, the other job's kept"
else
    fail "18 --resume refused over no temporary file: exit $rc (expected 6), or ER.npy.ooc-tmp left: $(ls ER.npy* 2>&1 | tr '\n' ' ')"
fi
rm -f ER.npy ER.npy.ooc-* EX.npy EX.npy.ooc-* JX

# 19. a finished in-place job run again with --resume --verify: nothing to
# do and nothing to check (its C0 is its result now): exit 0, not a FAIL
rm -f IP.npy IP.npy.ooc-*
gen IP.npy --rows 2000 --cols 200 --seed 24
ok=1
for run in 1 2; do
    oc multiply A.npy B.npy --c-in IP.npy -o IP.npy --beta 0.5 "${S[@]}" --resume --verify -q
    rc=$?
    [ "$rc" -eq 0 ] || { ok=0; fail "19 in place, --resume --verify, run $run: exit $rc (expected 0): $(e1)"; }
done
if [ $ok = 1 ] && grep -q 'not checked: this job ran in place and finished in an earlier run' err; then
    pass "19 a finished in-place job again with --resume --verify: exit 0, says why it is not checked"
elif [ $ok = 1 ]; then
    fail "19 in place, --resume --verify again: no note why C is not checked"
fi
rm -f IP.npy IP.npy.ooc-*

# 20. --measure-disk never writes through what is at C.ooc-disktest
rm -f MD.npy MD.npy.ooc-* victim
echo precious >victim
ln -s victim MD.npy.ooc-disktest
oc multiply A.npy B.npy -o MD.npy "${S[@]}" --measure-disk -q
rc=$?
if [ "$rc" -eq 0 ] && [ "$(wc -c <victim)" -eq 9 ] && [ "$(head -c 20 victim)" = precious ] &&
    [ -L MD.npy.ooc-disktest ]; then
    pass "20 --measure-disk beside a link at C.ooc-disktest: its target untouched, the link left"
else
    fail "20 --measure-disk beside a link at C.ooc-disktest: exit $rc, or its target was written ($(wc -c <victim) bytes)"
fi
rm -f MD.npy MD.npy.ooc-* victim

# 21. an output name whose default journal name is too long, with --journal
long=$(printf 'x%.0s' $(seq 1 241)).npy
oc multiply A.npy B.npy -o "$long" "${S[@]}" --journal JL -q
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$long" REF1.npy; then
    pass "21 a 245-character output name with --journal: exit 0, C right"
else
    fail "21 a 245-character output name with --journal: exit $rc (expected 0): $(e1)"
fi
rm -f "$long" JL

# 22. a block recorded done, then overwritten in the temporary file
c=OW.npy
rm -f "$c" "$c".ooc-*
bg_start out err multiply A.npy B.npy -o "$c" "${S[@]}"
bg_wait_done "$c.ooc-journal" 20
bg_kill TERM
had=$(ndone "$c.ooc-journal")
# the plan (C is 2000 x 200 float64, C order): block g is rows
# [(g % M) mb, +mb) of columns [(g / M) nb, +nb), M = 2000 / mb blocks
plan=$(sed -n 3p "$c.ooc-journal")
mb=$(echo "$plan" | sed -n 's/.* mb=\([0-9]*\) .*/\1/p')
nb=$(echo "$plan" | sed -n 's/.* nb=\([0-9]*\) .*/\1/p')
g=$(grep -a -m 1 '^done ' "$c.ooc-journal" | cut -d' ' -f2)
if [ "$bgrc" -ne 7 ] || [ "$had" -lt 2 ] || ! echo "$plan" | grep -q ' swap=0 .* tail=0 ' || [ -z "$mb" ] ||
    [ -z "$nb" ] || [ $((2000 % mb)) -ne 0 ]; then
    fail "22 setup: exit $bgrc (expected 7), $had blocks done, plan '$plan' (expected swap=0, tail=0)"
elif [ "$(grep -a -c '^done [0-9]* data=[0-9a-f]\{16\} [0-9a-f]\{16\}$' "$c.ooc-journal")" -ne "$had" ]; then
    fail "22 the journal's done records do not all hold a digest of their block"
else
    M=$((2000 / mb))
    row=$(((g % M) * mb + mb - 1))
    col=$(((g / M) * nb + nb / 2))
    size=$(stat -c %s "$c.ooc-tmp")
    at=$((size - 32 - 2000 * 200 * 8 + (row * 200 + col) * 8)) # (past the header; the trailer is 32 bytes)
    head -c 8 /dev/zero | dd of="$c.ooc-tmp" bs=1 seek="$at" conv=notrunc status=none
    oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume --json
    rc=$?
    if [ "$rc" -ne 0 ] || ! cmp -s "$c" REF1.npy; then
        fail "22 --resume after block $g was overwritten: exit $rc, or C differs from an uninterrupted run's"
    elif ! json_ok "assert o['blocks_mismatched'] == 1 and o['blocks_before_resume'] == $had - 1" \
        '"blocks_mismatched":1,'; then
        fail "22 --resume after block $g was overwritten: the JSON does not say 1 block mismatched, $((had - 1)) kept"
    elif ! grep -q 'warning: --resume: 1 block the journal recorded as done no longer matched' err; then
        fail "22 --resume after block $g was overwritten: no warning on stderr"
    else
        pass "22 block $g (of $had done) overwritten in $c.ooc-tmp: the resume computed it again, C right, warned"
    fi
    # the same, the resume stopped (SIGTERM) after a block more: it warns all the same
    rm -f "$c" "$c".ooc-*
    bg_start out err multiply A.npy B.npy -o "$c" "${S[@]}"
    bg_wait_done "$c.ooc-journal" 20
    bg_kill TERM
    had=$(ndone "$c.ooc-journal")
    head -c 8 /dev/zero | dd of="$c.ooc-tmp" bs=1 seek="$at" conv=notrunc status=none
    bg_start out err multiply A.npy B.npy -o "$c" "${S[@]}" --resume --json
    bg_wait_done "$c.ooc-journal" $((had + 2))
    bg_kill TERM
    if [ "$bgrc" -ne 7 ] || ! grep -q 'warning: --resume: 1 block the journal recorded as done no longer matched.*to be computed again (this run did not finish)' err ||
        ! json_ok "assert o['blocks_mismatched'] == 1 and o['interrupted'] is True" '"blocks_mismatched":1,'; then
        fail "22 a resume that found block $g changed, stopped: exit $bgrc (expected 7), or no warning, or the JSON lacks blocks_mismatched 1"
    elif ! oc multiply A.npy B.npy -o "$c" "${S[@]}" --resume -q || ! cmp -s "$c" REF1.npy; then
        fail "22 a resume that found block $g changed, stopped, resumed again: exit $?, or C differs"
    else
        pass "22 a resume that found block $g changed and was stopped: warned, JSON blocks_mismatched 1; resumed: C right"
    fi
fi
rm -f "$c" "$c".ooc-*

echo "$cases cases, $failures failed"
[ "$failures" -eq 0 ]
