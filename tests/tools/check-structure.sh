#!/bin/sh
# tests/tools/check-structure.sh: scripts/check-structure on small synthetic
# trees. A clean tree passes; a long function, a long file, an include cycle
# and a call cycle each make it fail and are named in its output; names
# that only appear in comments or strings, static functions of the same name
# in two files, and a file including its own header make no edge. Needs no
# build and no cluster (skips, 77, without python3 or ctags).
set -eu

srcdir=${srcdir:-$(dirname "$0")/../..}
check=$srcdir/scripts/check-structure
command -v python3 >/dev/null 2>&1 || { echo "no python3: skip"; exit 77; }
command -v ctags-universal >/dev/null 2>&1 || command -v ctags >/dev/null 2>&1 ||
    { echo "no ctags: skip"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/check-structure.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# body N: N lines of a function body.
body() {
    i=0
    while [ "$i" -lt "$1" ]; do
        echo "    x += $i;"
        i=$((i + 1))
    done
}

# A clean tree: lib/ with a header shared by two files, one calling the
# other; server/ whose files call downwards only; a test file that breaks
# every rule but lives under tests/.
make_clean_tree() {
    t=$1
    mkdir -p "$t/lib" "$t/server" "$t/tests" "$t/common"
    cat >"$t/lib/a.h" <<'EOF'
int a_fn(int x);
EOF
    cat >"$t/lib/a.c" <<'EOF'
#include "a.h"
#include "b.h"
/* b_fn's caller is here; "a_fn" in a string is not a use either. */
static int helper(int x) { return x + 1; }
int a_fn(int x)
{
    return b_fn(helper(x));
}
EOF
    cat >"$t/lib/b.h" <<'EOF'
int b_fn(int x);
EOF
    cat >"$t/lib/b.c" <<'EOF'
#include "b.h"
/* Not a call: a_fn() is only named in this comment. */
static const char *name = "a_fn";
static int helper(int x) { return x * 2; } /* same static name as a.c's */
int b_fn(int x)
{
    return helper(x) + (name != 0);
}
EOF
    cat >"$t/server/s_main.c" <<'EOF'
#include "s_store.h"
int main(void)
{
    return s_store_run();
}
EOF
    printf 'int s_store_run(void);\n' >"$t/server/s_store.h"
    cat >"$t/server/s_store.c" <<'EOF'
#include "s_store.h"
int s_store_run(void)
{
    return 0;
}
EOF
    {
        echo "int t_long(int x)"
        echo "{"
        body 400
        echo "    return x;"
        echo "}"
    } >"$t/tests/t.c"
}

# run_check DIR EXPECTED_STATUS [ARGS...]: output in $out.
run_check() {
    dir=$1
    want=$2
    shift 2
    set +e
    out=$(python3 "$check" "$@" "$dir" 2>&1)
    got=$?
    set -e
    printf '$ check-structure %s %s -> %s\n%s\n' "$*" "${dir#"$work"/}" "$got" "$out" |
        sed 's/^/  | /'
    [ "$got" = "$want" ] || fail "check-structure on ${dir#"$work"/} exited $got, expected $want"
}

contains() {
    printf '%s\n' "$out" | grep -Eq -- "$1" || fail "$2: no match for /$1/"
}

git_tree() {
    (cd "$1" && git init -q . && git add -A &&
        git -c user.name=t -c user.email=t@t commit -qm tree)
}

echo "==== clean tree passes (git and plain)"
make_clean_tree "$work/clean"
run_check "$work/clean" 0
cp -R "$work/clean" "$work/clean-git"
git_tree "$work/clean-git"
run_check "$work/clean-git" 0
contains "lib/: 2 nodes, 1 edges, 0 cycle" "clean lib graph (a -> b only)"

echo "==== a function of 151 lines fails; 150 passes"
make_clean_tree "$work/longfn"
{
    echo "int c_long(int x)"
    echo "{"
    body 146
    echo "    return x;"
    echo "}"
} >"$work/longfn/lib/c.c"
run_check "$work/longfn" 0
{
    echo "int c_long2(int x)"
    echo "{"
    body 147
    echo "    return x;"
    echo "}"
} >>"$work/longfn/lib/c.c"
run_check "$work/longfn" 1
contains "^long function: lib/c\.c:[0-9]+: c_long2\(\) has 151 lines" "long function named"
printf '%s\n' "$out" | grep -q "c_long()" && fail "150-line function reported"
git_tree "$work/longfn"
run_check "$work/longfn" 1
contains "c_long2\(\) has 151 lines" "long function named (git tree)"

echo "==== a file of 901 lines fails"
make_clean_tree "$work/longfile"
body 901 | sed 's/^    x/\/\/ x/' >"$work/longfile/common/big.h"
run_check "$work/longfile" 1
contains "^long file: common/big\.h has 901 lines" "long file named"
run_check "$work/longfile" 0 --max-file 1000

echo "==== an include cycle fails (x.h and x.c are one node)"
make_clean_tree "$work/inc"
printf '#include "a.h"\nint b_fn(int x);\n' >"$work/inc/lib/b.h"
run_check "$work/inc" 1
contains "^cycle in lib/: a -> b -> a" "include cycle"
contains "b -> a: lib/b\.h includes \"a\.h\"" "include edge named"

echo "==== a call cycle through three files fails"
make_clean_tree "$work/call"
cat >"$work/call/server/s_store.c" <<'EOF'
#include "s_store.h"
int s_worker_reply(int x);
int s_store_run(void)
{
    return s_worker_reply(1);
}
EOF
cat >"$work/call/server/s_worker.c" <<'EOF'
int s_meta_get(void);
static int (*cb)(void) = s_meta_get; /* a function pointer is a use */
int s_worker_reply(int x)
{
    return x + cb();
}
EOF
cat >"$work/call/server/s_meta.c" <<'EOF'
int s_store_run(void);
int s_meta_get(void)
{
    return s_store_run();
}
EOF
run_check "$work/call" 1
contains "^cycle in server/: s_meta -> s_store -> s_worker -> s_meta" "call cycle"
contains "s_store -> s_worker: server/s_store\.c uses s_worker_reply\(\) of server/s_worker\.c" \
    "call edge named"
contains "s_worker -> s_meta: server/s_worker\.c uses s_meta_get\(\)" "function pointer edge"
contains "^lib/: 2 nodes, 1 edges, 0 cycle" "lib unaffected"
run_check "$work/call" 0 --layers lib

echo "PASS"
