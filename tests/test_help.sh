#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_help.sh: every option documented where a user looks. For each long
# option of each command's getopt table (oocgemm help-options lists them from
# the tables themselves, less the spellings kept for old scripts), the
# command's --help must name it, and so must that command's section of the
# manual page (docs/oocgemm.1, which help2man makes of --help-all and
# docs/oocgemm.h2m). Also: the manual page has the sections the .h2m file
# adds, and --help-all is every command's --help.
# Needs OOC_TOP_BUILDDIR (Makefile.am sets it); the page is looked for in the
# build directory, then in $srcdir (a release tarball carries it made).
set -u
top=${OOC_TOP_BUILDDIR:-$(pwd)}
OOCGEMM=${OOCGEMM:-$top/tools/oocgemm}
src=${srcdir:-$(dirname "$0")/..}
case $src in /*) ;; *) src=$(pwd)/$src ;; esac
. "$(dirname "$0")/testlib.sh" test_help

man=""
for f in "$top/docs/oocgemm.1" "$src/docs/oocgemm.1"; do
    if [ -f "$f" ]; then
        man=$f
        break
    fi
done

if ! oc help-options || [ ! -s out ]; then
    fail "oocgemm help-options"
    exit 1
fi
cp out options
rm -f out err

# has_option FILE OPTION: the option as a word (not the start of a longer one)
has_option() { grep -qE -- "(^|[^a-z-])$2([^a-z-]|\$)" "$1"; }

# the manual page as text, one file per command section
if [ -n "$man" ]; then
    sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" >man.txt
    for c in $(cut -d' ' -f1 options | sort -u); do
        C=$(echo "$c" | tr a-z A-Z)
        awk -v h=".SH \"OOCGEMM $C\"" '$0 == h { on = 1; next } /^\.SH/ { on = 0 } on' man.txt >"man-$c.txt"
    done
fi

missing_help=0
missing_man=0
n=0
while read -r c opt; do
    n=$((n + 1))
    [ -f "help-$c.txt" ] || timeout 60 "$OOCGEMM" "$c" --help >"help-$c.txt" 2>&1
    if ! has_option "help-$c.txt" "$opt"; then
        fail "$c --help does not name $opt"
        missing_help=$((missing_help + 1))
    fi
    if [ -n "$man" ] && ! has_option "man-$c.txt" "$opt"; then
        fail "the manual page's OOCGEMM ${c^^} section does not name $opt"
        missing_man=$((missing_man + 1))
    fi
done <options
[ "$missing_help" = 0 ] && pass "each of the $n options in its command's --help"

if [ -z "$man" ]; then
    echo "SKIP: no manual page (help2man missing when configured): its checks"
else
    [ "$missing_man" = 0 ] && pass "each of the $n options in its command's section of $man"
    for s in '"FILE FORMATS"' RESUMING SIGNALS '"JSON OUTPUT"' ENVIRONMENT EXAMPLES '"RUNNING UNDER MPI"' '"EXIT STATUS"'; do
        if grep -q "^\.SH $s\$" "$man"; then pass "the manual page has $s"; else fail "the manual page has no $s section"; fi
    done
    # groff (what man runs) renders it without a warning; a minimal system
    # may have no groff, or a man that is a stub
    if command -v groff >/dev/null 2>&1; then
        if groff -man -Tutf8 -ww "$man" >rendered 2>err && [ ! -s err ] && grep -q "oocgemm multiply" rendered; then
            pass "groff -man -ww renders it without a warning"
        else
            fail "groff -man -ww $man"
        fi
    else
        echo "SKIP: no groff to render the manual page"
    fi
    # the page reads as its sources say: rendered as plain text (no
    # hyphenation, no overstrikes, wide lines), so that words run together by
    # a macro or a list run together into one paragraph show
    if command -v groff >/dev/null 2>&1 && groff -man -Tutf8 -rHY=0 -rLL=200n -P-cbou "$man" >plain 2>/dev/null; then
        # an alternating-font macro (.BR) given a sentence as its arguments
        # runs its words together ("N.Afiguregiven")
        if tr -s ' \n' '  ' <plain | grep -qF "slot:PE=N. A figure given"; then
            pass "RUNNING UNDER MPI: 'A figure given' reads as words"
        else
            fail "RUNNING UNDER MPI: 'A figure given' run together by a macro"
        fi
        # help2man puts the lines of --version past the first at the end of
        # the page's last section: the version belongs in the footer only
        if grep -q "(run time)" plain; then
            fail "the manual page holds --version's second line ('... (run time)')"
        else
            pass "no stray --version line in the manual page"
        fi
        # bench's named shapes: each an entry of its own in OOCGEMM BENCH
        awk '/^OOCGEMM BENCH/ { on = 1; next } /^[^ ]/ { on = 0 } on' plain >plain-bench
        shapes=$(timeout 60 "$OOCGEMM" bench --shape '?' 2>&1 | sed -n 's/.* is not one of //p' | tr -d ',')
        if [ -z "$shapes" ]; then
            fail "bench --shape '?' names no shapes"
        else
            lost=""
            for sh in $shapes; do
                grep -qE "^ +$sh( +[sdcz] [0-9]+x| *\$)" plain-bench || lost="$lost $sh"
            done
            if [ -z "$lost" ]; then
                pass "the manual page lists each of bench's named shapes as an entry"
            else
                fail "named shapes not an entry of their own in OOCGEMM BENCH:$lost"
            fi
        fi
    fi
    # every environment variable the library and the tool read is in
    # ENVIRONMENT (a test hook says so)
    sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$man" | sed 's/\\-/-/g' >man-env.txt
    vars=$(cat "$src"/lib/*.c "$src"/tools/*.c 2>/dev/null | grep -o 'getenv("OOC_[A-Z0-9_]*")' | sed 's/getenv("//; s/")//' | sort -u)
    if [ -z "$vars" ]; then
        echo "SKIP: no sources at $src/lib to find the environment variables in"
    else
        unsaid=""
        for v in $vars; do
            grep -qx "\.B $v" man-env.txt || unsaid="$unsaid $v"
        done
        if [ -z "$unsaid" ]; then
            pass "ENVIRONMENT names each OOC_ variable read:" $vars
        else
            fail "ENVIRONMENT does not name:$unsaid"
        fi
    fi
fi

# README's folder map names every source file of the library, the tool and
# the kernels (by name or by a pattern such as tools/cmd_*.c)
if [ -f "$src/README.md" ] && [ -d "$src/lib" ]; then
    named=" "
    for w in $(grep -o '`[A-Za-z0-9_./*-]*`' "$src/README.md" | tr -d '`' | sort -u); do
        case $w in lib/* | tools/* | kernels/*) ;; *) continue ;; esac
        for f in "$src"/$w; do [ -e "$f" ] && named="$named${f#"$src"/} "; done
    done
    unnamed=""
    for f in "$src"/lib/*.c "$src"/tools/*.c "$src"/kernels/*.cu; do
        r=${f#"$src"/}
        case $named in *" $r "*) ;; *) unnamed="$unnamed $r" ;; esac
    done
    if [ -z "$unnamed" ]; then pass "README's folder map names every source file"
    else fail "README's folder map does not name:$unnamed"; fi
fi

# docs/SCALING.md's model says the figures it was given (it printed
# --fs-gbps 2.2 as "2 GB/s" while it computed with 2.2)
if command -v python3 >/dev/null 2>&1 && [ -f "$src/docs/scaling_model.py" ]; then
    if python3 "$src/docs/scaling_model.py" --m 65536 --n 16384 --k 16384 --ranks 1,2 --gpus-per-rank 1 \
        --fs-gbps 2.2 --pcie-gbps 27.5 >model.txt 2>&1 && grep -q "^file system 2.2 GB/s, PCIe 27.5 GB/s" model.txt; then
        pass "docs/scaling_model.py prints the bandwidths it was given"
    else
        fail "docs/scaling_model.py: $(sed -n 2p model.txt)"
    fi
fi

# help takes the commands the main help lists, help among them, and one at
# most ('help help' was an unknown command; 'help gen extra' ignored extra)
if oc help help && head -n 1 out | grep -q "^Usage: oocgemm multiply" && grep -q "oocgemm help \[COMMAND\]" out; then
    pass "help help: the main help"
else
    fail "help help: exit $?, not the main help"
fi
oc help gen extra
rc=$?
if [ "$rc" = 2 ] && grep -q "unexpected argument 'extra'" err; then
    pass "help gen extra: exit 2, the extra argument named"
else
    fail "help gen extra: exit $rc, expected 2 naming 'extra'"
fi

# tools/trace_plot.py, which --trace's help names, says what it needs when
# matplotlib is missing (made missing here by a stand-in that fails to import)
if command -v python3 >/dev/null 2>&1 && [ -f "$src/tools/trace_plot.py" ]; then
    mkdir -p nompl/matplotlib
    echo 'raise ImportError("No module named matplotlib (a stand-in)")' >nompl/matplotlib/__init__.py
    echo '{"traceEvents":[]}' >t.json
    PYTHONPATH=$PWD/nompl python3 "$src/tools/trace_plot.py" t.json t.png >out 2>err
    rc=$?
    if [ "$rc" = 1 ] && grep -q "needs matplotlib" err && ! grep -q Traceback err; then
        pass "trace_plot.py without matplotlib: exit 1, saying so"
    else
        fail "trace_plot.py without matplotlib: exit $rc, $(tail -n 1 err)"
    fi
fi

# --help-all holds every command's --help
oc --help-all
for c in $(cut -d' ' -f1 options | sort -u); do
    if grep -qF -- "$(head -n 1 "help-$c.txt")" out; then
        pass "--help-all has $c's usage"
    else
        fail "--help-all lacks $c's usage"
    fi
done

echo "$cases cases, $failures failed"
[ "$failures" = 0 ]
