#!/bin/sh
# build-mpich.sh: build the MPICH that carries the pstripe ROMIO driver.
#
#   build-mpich.sh build OPTIONS     (run by `make`, see adio/Makefile.mk)
#   build-mpich.sh install --from=DIR --to=DIR --prefix=DIR
#
# `build` is run by every `make` and must be quick when nothing changed: it
# first takes a fingerprint of its inputs (the options, this script and
# patch-romio.sh, every file of the driver directory, the client library) and
# stops at once if the installed copy (--prefix) was made from the same one.
#
# Otherwise it works in a build directory under the cache (--cache):
#   CACHE/mpich_<ver>.orig.tar.*, .dsc    Debian's source package (apt-get source)
#   CACHE/mpich-<key>/src                 the MPICH source, ROMIO patched, the
#                                         driver linked in as adio/ad_pstripe
#   CACHE/mpich-<key>/build               MPICH's configure and make (VPATH, so
#                                         the driver's objects stay out of the
#                                         project's source directory)
#   CACHE/mpich-<key>/install             MPICH's `make install`
#   CACHE/mpich-<key>/pstripe/libpsclient.a  the client library linked into libmpi
# <key> is a hash of everything that goes into MPICH's configure, so build
# trees configured alike share one build directory (taking turns under a
# lock), and a tree whose options differ gets its own. Every step is done
# once: a kept directory goes straight to `make`, which rebuilds only what
# changed (the driver's objects, then libmpi is relinked).
#
# Last, the MPICH is copied from CACHE/.../install to --prefix (the build
# tree's adio/mpich) with the install path in its text files (mpicc, .pc, .la)
# rewritten; `install` does the same copy for `make install`. So each build
# tree holds its own MPICH, unaffected by what another tree later builds in a
# shared cache.

# The whole script is one { ... } group: the shell reads it completely before
# running any of it, so editing this file during a build (the source tree is
# shared) cannot make a running build read half-changed lines.
{
set -eu

me=build-mpich.sh
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "$me: error: $*" >&2; exit 1; }
say() { echo "$me: $*"; }

# sed_escape_re STRING / sed_escape_rep STRING: quote for a s|RE|REP| command.
sed_escape_re() { printf '%s' "$1" | sed 's/[][\.*^$|]/\\&/g'; }
sed_escape_rep() { printf '%s' "$1" | sed 's/[\&|]/\\&/g'; }

# relocate FROM TO NEWPREFIX: copy the MPICH installed in FROM to TO (through
# a temporary directory, so TO is never half-made) and replace FROM by
# NEWPREFIX in its text files. Binaries keep FROM only in informational
# strings (the configure line); the libraries have no run path into it, and
# hydra finds its proxy next to mpiexec.
relocate() {
    from=$1 to=$2 newprefix=$3
    [ -e "$from/lib/libmpi.so.12" ] || die "$from holds no MPICH (no lib/libmpi.so.12)"
    mkdir -p "$(dirname "$to")"
    tmp=$to.tmp.$$
    rm -rf "$tmp"
    cp -a "$from" "$tmp"
    re=$(sed_escape_re "$from")
    rep=$(sed_escape_rep "$newprefix")
    grep -rlI -F -e "$from" "$tmp" | while IFS= read -r f; do
        sed -i "s|$re|$rep|g" "$f"
    done
    rm -rf "$to.old.$$"
    if [ -e "$to" ]; then mv "$to" "$to.old.$$"; fi
    mv "$tmp" "$to"
    rm -rf "$to.old.$$"
}

# ---- install ---------------------------------------------------------------
if [ "${1:-}" = install ]; then
    shift
    from= to= newprefix=
    for a; do
        case $a in
            --from=*) from=${a#*=} ;;
            --to=*) to=${a#*=} ;;
            --prefix=*) newprefix=${a#*=} ;;
            *) die "install: unknown argument $a" ;;
        esac
    done
    [ -n "$from" ] && [ -n "$to" ] && [ -n "$newprefix" ] ||
        die "usage: $me install --from=DIR --to=DIR --prefix=DIR"
    relocate "$from" "$to" "$newprefix"
    exit 0
fi

# ---- build: options ----------------------------------------------------------
[ "${1:-}" = build ] || die "usage: $me build OPTIONS | install OPTIONS"
shift
cache= source= deb_source= system_version= driver= client_lib= cppflags= libs=
device= custom= prefix= stamp= extra=
for a; do
    case $a in
        --cache=*) cache=${a#*=} ;;             # download and build directory
        --source=*) source=${a#*=} ;;           # MPICH tree or tarball, or empty
        --deb-source=*) deb_source=${a#*=} ;;   # e.g. mpich=4.0.2-3, for apt-get source
        --system-version=*) system_version=${a#*=} ;;
        --driver=*) driver=${a#*=} ;;           # the project's adio/ad_pstripe
        --client-lib=*) client_lib=${a#*=} ;;   # lib/.libs/libpsclient.a
        --cppflags=*) cppflags=${a#*=} ;;       # -I for pstripe.h and common/
        --libs=*) libs=${a#*=} ;;               # the client library's dependencies
        --device=*) device=${a#*=} ;;
        --custom=*) custom=${a#*=} ;;           # MPICH custom version string
        --prefix=*) prefix=${a#*=} ;;           # where the MPICH is copied to
        --stamp=*) stamp=${a#*=} ;;             # fingerprint of the copy in prefix
        --configure-flags=*) extra=${a#*=} ;;   # more MPICH configure arguments
        *) die "build: unknown argument $a" ;;
    esac
done
for v in cache driver client_lib device custom prefix stamp; do
    eval "[ -n \"\$$v\" ]" || die "build: --$(echo $v | tr _ -) is required"
done
[ -n "$source" ] || [ -n "$deb_source" ] || die "build: --source or --deb-source is required"
[ -f "$driver/Makefile.mk" ] ||
    die "$driver/Makefile.mk is missing: the driver directory needs its ROMIO Makefile.mk fragment (sources under 'if BUILD_AD_PSTRIPE')"
[ -f "$client_lib" ] || die "$client_lib is missing (the client library, lib/libpsclient.la, is not built)"
MAKE=${MAKE:-make}
# Our make's jobserver (-jN) goes down to MPICH's make, but not variables set
# on its command line: DESTDIR=... or CFLAGS=... meant for pstripe must not
# reach MPICH's makefiles (V=1 does, on purpose).
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed 's/ -- .*//')
export MAKEFLAGS
unset DESTDIR MAKEOVERRIDES || true

# ---- fingerprint: is the copy in prefix up to date? ---------------------------
config="cache=$cache source=$source deb=$deb_source driver=$driver cppflags=$cppflags libs=$libs device=$device custom=$custom extra=$extra"
fingerprint=$(
    {
        printf '%s\n' "$config"
        sha256sum "$0" "$here/patch-romio.sh" | cut -d' ' -f1
        (cd "$driver" && find -L . -type f ! -name '*~' ! -name '.*.sw?' | LC_ALL=C sort |
             while IFS= read -r f; do printf '%s ' "$f"; sha256sum < "$f"; done)
        sha256sum < "$client_lib"
        "${MPICHVERSION:-mpichversion}" 2>&1 || true
    } | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ] && [ -e "$prefix/lib/libmpi.so.12" ]; then
    exit 0
fi
t0=$(date +%s)

# ---- source identity and build directory ----------------------------------------
mkdir -p "$cache"
if [ -n "$source" ]; then
    if [ -d "$source" ]; then
        src_id="dir:$source"
    else
        src_id="tarball:$(sha256sum < "$source" | cut -d' ' -f1)"
    fi
else
    src_id="debian:$deb_source"
fi
# MPICH's configure arguments (but the two naming the build directory, added
# below): the system MPICH's own, as its `mpichversion` prints them ("MPICH
# configure:"), so that under `pstripe run` a program sees the same MPICH
# (device ch4:ucx, Fortran, hydra, --without-yaksa, ...) but for ROMIO's
# file-system list. From that line this drops only the directory options
# (--prefix, --libdir, ... : ours are under the cache) and changes:
#   --with-file-system=ufs+nfs+pstripe  Debian's list is ROMIO's default
#       (ufs, nfs; testfs is always built) with pstripe added;
#   --with-custom-version-string        pstripe-run checks it;
#   -ffile-prefix-map=/build/mpich-XXXX/...=.  (in FFLAGS, FCFLAGS) names
#       Debian's build directory: ours is mapped instead (same effect: source
#       paths in debug information relative to the source tree);
#   --disable-static  (added) libmpich.a is not what `pstripe run` loads, and
#       it would compile every file a second time;
#   --with-device  only when configured with --with-mpich-device=DEV (not
#       the default "system").
# Debian's debian/rules also passes, in the environment, the library's own
# compile flags (MPICHLIB_CFLAGS etc. = dpkg-buildflags, shown in the "MPICH
# CC:" line) and the Fortran compilers (the "MPICH F77:"/"MPICH FC:" lines):
# set here the same way. Not reproduced: MPILIBNAME=mpich (Debian's library is
# libmpich.so.12; ours keeps MPICH's name libmpi.so.12 and lib/abi holds a
# libmpich.so.12 link to it, see below). README ("The MPICH") lists these.
sysver=${MPICHVERSION:-mpichversion}
command -v "$sysver" > /dev/null 2>&1 ||
    die "$sysver (the system MPICH's mpichversion, package mpich) not found: its configure line is the one reproduced"
sysinfo=$("$sysver") || die "$sysver failed"
sysline=$(printf '%s\n' "$sysinfo" | sed -n 's/^MPICH configure:[[:space:]]*//p')
[ -n "$sysline" ] || die "$sysver prints no 'MPICH configure:' line"
sysdevice=$(printf '%s\n' "$sysinfo" | sed -n 's/^MPICH Device:[[:space:]]*//p')
sysfc=$(printf '%s\n' "$sysinfo" | sed -n 's/^MPICH FC:[[:space:]]*\([^ ]*\).*/\1/p')
sysf77=$(printf '%s\n' "$sysinfo" | sed -n 's/^MPICH F77:[[:space:]]*\([^ ]*\).*/\1/p')
# The line is the arguments joined by spaces: an argument VAR=VALUE takes
# every following word up to the next VAR= or --option, since a value such
# as FFLAGS holds spaces and words starting with '-' (never '--'). One
# argument a line, in $sysargs.
sysargs=$(printf '%s\n' "$sysline" | tr ' ' '\n' | awk '
    /^[A-Za-z_][A-Za-z0-9_]*=/ { if (n++) printf "\n"; printf "%s", $0; invar = 1; next }
    $0 == "" { next }
    invar && !/^--/ { printf " %s", $0; next }
    { if (n++) printf "\n"; printf "%s", $0; invar = 0 }
    END { if (n) printf "\n" }')
set --
nl='
'
oldifs=$IFS
IFS=$nl
for a in $sysargs; do
    case $a in
        --prefix=*|--exec-prefix=*|--includedir=*|--oldincludedir=*|--mandir=*|--infodir=*|\
        --sysconfdir=*|--localstatedir=*|--runstatedir=*|--libdir=*|--docdir=*|--datarootdir=*|\
        --datadir=*|--bindir=*|--sbindir=*|--libexecdir=*|--htmldir=*) ;;
        --with-file-system=*|--with-custom-version-string=*) ;;
        --with-device=*) [ "$device" = system ] && set -- "$@" "$a" ;;
        FFLAGS=*|FCFLAGS=*)
            set -- "$@" "$(printf '%s' "$a" | sed 's|-ffile-prefix-map=[^= ]*=|-ffile-prefix-map=@SRC@=|g')" ;;
        *) set -- "$@" "$a" ;;
    esac
done
IFS=$oldifs
[ "$device" = system ] || set -- "$@" "--with-device=$device"
set -- "$@" \
    --with-file-system=ufs+nfs+pstripe \
    --disable-static \
    "--with-custom-version-string=$custom" \
    "PSTRIPE_CFLAGS=-g"
# shellcheck disable=SC2086 # extra holds several arguments
set -- "$@" $extra
# The environment debian/rules gives configure (see above); @SRC@ is the
# source directory, known once the key is.
buildflags() { # buildflags VAR: dpkg-buildflags --get VAR, mapped to @SRC@
    (cd / && dpkg-buildflags --get "$1") | sed 's|-ffile-prefix-map=/=|-ffile-prefix-map=@SRC@=|g'
}
command -v dpkg-buildflags > /dev/null 2>&1 || die "dpkg-buildflags not found (package dpkg-dev)"
gfflags=$(printf '%s\n' "$sysargs" | sed -n 's/^FFLAGS=//p' | tr ' ' '\n' | grep '^-fallow-' | tr '\n' ' ')
libenv="MPICHLIB_CPPFLAGS=$(buildflags CPPFLAGS)
MPICHLIB_CFLAGS=$(buildflags CFLAGS)
MPICHLIB_CXXFLAGS=$(buildflags CXXFLAGS)
MPICHLIB_FFLAGS=$(buildflags FFLAGS) ${gfflags% }
MPICHLIB_FCFLAGS=$(buildflags FFLAGS) -cpp ${gfflags% }
FC=${sysfc:-gfortran}
F77=${sysf77:-gfortran}"
# The key leaves out where the checkout is: the include directories of
# --cppflags reach MPICH's configure as links under B (B/pstripe/inc<i>),
# set below like the driver's link, so that every checkout (git worktrees,
# clones) shares one MPICH build and rebuilds only the driver.
key=$({
    printf '%s\n' "$src_id" "$libs" "$@" "$libenv"
    printf '%s\n' "$cppflags" | sed 's/-I[^ ]*/-I@DIR@/g'
    sha256sum < "$here/patch-romio.sh"
} | sha256sum | cut -c1-12)
B=$cache/mpich-$key
incflags=
i=0
for f in $cppflags; do
    case $f in
        -I*) incflags="$incflags -I$B/pstripe/inc$i"; i=$((i + 1)) ;;
        *) incflags="$incflags $f" ;;
    esac
done
set -- "$@" "PSTRIPE_CPPFLAGS=${incflags# }"
for a do
    shift
    set -- "$@" "$(printf '%s' "$a" | sed "s|@SRC@|$(sed_escape_rep "$B/src")|g")"
done
libenv=$(printf '%s\n' "$libenv" | sed "s|@SRC@|$(sed_escape_rep "$B/src")|g")

# One build at a time in B (several build trees may share the cache).
exec 9>"$B.lock"
if ! flock -n 9; then
    say "waiting for $B (another build is using it)"
    flock 9
fi

# ---- 1. the source ----------------------------------------------------------------
# From Debian: the orig tarball of the source package, as `apt-get source`
# leaves it in CACHE, checked against the .dsc. Debian's own patches for
# MPICH 4.0.2 only add autotools m4 files for its full autogen.sh, so the
# upstream tarball is the source the system library was built from.
fetch_debian() {
    pkg=${deb_source%%=*} ver=${deb_source#*=}
    ver_noepoch=${ver#*:}
    upstream=${ver_noepoch%-*}
    dsc=$cache/${pkg}_$ver_noepoch.dsc
    exec 8>"$cache/.fetch.lock"
    flock 8
    tarball=$(ls "$cache/${pkg}_$upstream.orig.tar."* 2>/dev/null | head -n 1 || true)
    if [ ! -f "$dsc" ] || [ -z "$tarball" ]; then
        say "fetching Debian's source package: apt-get source --download-only $deb_source (into $cache)"
        (cd "$cache" && apt-get source --download-only "$deb_source") > "$cache/apt-get.log" 2>&1 || {
            tail -n 20 "$cache/apt-get.log" >&2
            die "apt-get source $deb_source failed: are deb-src entries configured and 'apt-get update' done? (scripts/install-deps adds them) Or configure with --with-mpich-source=DIR|TARBALL"
        }
        tarball=$(ls "$cache/${pkg}_$upstream.orig.tar."* 2>/dev/null | head -n 1 || true)
        [ -n "$tarball" ] || die "apt-get source left no ${pkg}_$upstream.orig.tar.* in $cache"
    fi
    want=$(sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$dsc" |
           awk -v f="$(basename "$tarball")" '$3 == f { print $1 }')
    [ -n "$want" ] || die "$dsc lists no checksum for $(basename "$tarball")"
    got=$(sha256sum < "$tarball" | cut -d' ' -f1)
    [ "$want" = "$got" ] || die "$tarball: sha256 $got does not match $dsc; delete it and run make again"
    exec 8>&-
}

if [ ! -d "$B/src" ]; then
    rm -rf "$B/src.tmp"
    mkdir -p "$B/src.tmp"
    if [ -n "$source" ] && [ -d "$source" ]; then
        say "copying the MPICH source from $source"
        cp -a "$source/." "$B/src.tmp/"
    else
        if [ -n "$source" ]; then tarball=$source; else fetch_debian; fi
        say "unpacking $tarball"
        tar -xf "$tarball" -C "$B/src.tmp" --strip-components=1
    fi
    [ -f "$B/src.tmp/configure" ] && [ -d "$B/src.tmp/src/mpi/romio" ] ||
        die "the MPICH source has no configure or src/mpi/romio (is it an MPICH release?)"
    # MPICH's own test suite is not built, but its configure (126 makefiles)
    # would run every time: without the directory, configure skips it.
    rm -rf "$B/src.tmp/test/mpi"
    mv "$B/src.tmp" "$B/src"
fi
romio=$B/src/src/mpi/romio
version=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$B/src/maint/version.m4" 2>/dev/null || true)
if [ -n "$system_version" ] && [ "$version" != "$system_version" ]; then
    say "warning: building MPICH ${version:-(unknown version)}, but the system MPICH is $system_version; programs built with the system mpicc may not run on it"
fi

# ---- 2. ROMIO: register pstripe, link the driver, regenerate ------------------
# The driver is a link to the project's directory, so editing it needs no
# copy: ROMIO's make sees the changed files. A link pointing elsewhere than
# last time (another checkout) makes ROMIO regenerate its Makefile.in, whose
# source list comes from the driver's Makefile.mk.
# The include directories (pstripe.h, common/) are links too. When any link
# changes, the driver's objects are removed: the other checkout's files may
# be older than objects built from this one, and make would keep them.
relink() { # relink LINK TARGET: point LINK at TARGET; say whether it changed
    [ "$(readlink "$1" 2>/dev/null || true)" = "$2" ] && return 1
    ln -sfn "$2" "$1"
    return 0
}
changed=no
link=$romio/adio/ad_pstripe
if relink "$link" "$driver"; then
    touch "$romio/adio/Makefile.mk"
    changed=yes
fi
mkdir -p "$B/pstripe"
i=0
for f in $cppflags; do
    case $f in
        -I*) relink "$B/pstripe/inc$i" "${f#-I}" && changed=yes; i=$((i + 1)) ;;
    esac
done
if [ "$changed" = yes ] && [ -d "$B/build/src/mpi/romio/adio/ad_pstripe" ]; then
    find "$B/build/src/mpi/romio/adio/ad_pstripe" -name '*.lo' -o -name '*.o' | xargs rm -f
    rm -f "$B/build/lib/libmpi.la"
fi
if [ ! -f "$B/romio.stamp" ]; then
    say "registering pstripe in ROMIO and running autoreconf -fi in src/mpi/romio"
    sh "$here/patch-romio.sh" "$romio"
    (cd "$romio" && autoreconf -fi) > "$B/autoreconf.log" 2>&1 ||
        { tail -n 30 "$B/autoreconf.log" >&2; die "autoreconf in $romio failed (log: $B/autoreconf.log)"; }
    : > "$B/romio.stamp"
    cp "$driver/Makefile.mk" "$B/pstripe/Makefile.mk.used"
fi
# Debian's configure line has --disable-maintainer-mode: MPICH's makefiles
# have no rules to regenerate themselves, so a changed driver Makefile.mk
# (a source file added, say) or a driver link pointing elsewhere would not
# reach ROMIO's Makefile. Regenerate it here: ROMIO's Makefile.in, then
# the build directory's Makefile from it (config.status).
if ! cmp -s "$driver/Makefile.mk" "$B/pstripe/Makefile.mk.used" || [ "$changed" = yes ]; then
    say "the driver's Makefile.mk changed: regenerating ROMIO's Makefile"
    (cd "$romio" && autoreconf -fi) > "$B/autoreconf.log" 2>&1 ||
        { tail -n 30 "$B/autoreconf.log" >&2; die "autoreconf in $romio failed (log: $B/autoreconf.log)"; }
    if [ -f "$B/build/src/mpi/romio/config.status" ]; then
        (cd "$B/build/src/mpi/romio" && ./config.status Makefile) >> "$B/autoreconf.log" 2>&1 ||
            { tail -n 30 "$B/autoreconf.log" >&2; die "config.status in $B/build/src/mpi/romio failed"; }
    fi
    cp "$driver/Makefile.mk" "$B/pstripe/Makefile.mk.used"
fi

# Debian's configure line has --disable-dependency-tracking: make would not
# see a changed header of the driver or of the client library. The driver is
# a few files, so its objects are rebuilt whenever this script gets here
# (something changed since the last copy).
if [ -d "$B/build/src/mpi/romio/adio/ad_pstripe" ]; then
    find "$B/build/src/mpi/romio/adio/ad_pstripe" \( -name '*.lo' -o -name '*.o' \) -exec rm -f {} +
    rm -f "$B/build/lib/libmpi.la"
fi

# ---- 3. the client library ------------------------------------------------------
# libmpi links B/pstripe/libpsclient.a. MPICH's makefiles do not know that
# file, so when it changes libmpi.la is removed to make them relink it.
mkdir -p "$B/pstripe"
if ! cmp -s "$client_lib" "$B/pstripe/libpsclient.a"; then
    cp "$client_lib" "$B/pstripe/libpsclient.a.tmp"
    mv "$B/pstripe/libpsclient.a.tmp" "$B/pstripe/libpsclient.a"
    rm -f "$B/build/lib/libmpi.la"
fi

# ---- 4. configure ---------------------------------------------------------------
# The client library is linked into libmpi.so with its symbols kept local
# (--exclude-libs), so libmpi still exports only MPI, and libmpi needs no run
# path into a build tree.
set -- "$@" \
    "--prefix=$B/install" \
    "PSTRIPE_LIBS=$B/pstripe/libpsclient.a -Wl,--exclude-libs,libpsclient.a $libs"
if [ ! -f "$B/configure.stamp" ]; then
    rm -rf "$B/build"
    mkdir -p "$B/build"
    say "configuring MPICH ${version} (device ${sysdevice:-?}, --device=$device) in $B/build (log: $B/configure.log)"
    { printf '%s\n' "$libenv"; printf '%s\n' "$@"; } > "$B/configure.args"
    (cd "$B/build" && IFS=$nl && set -f && env $libenv "$B/src/configure" "$@") > "$B/configure.log" 2>&1 || {
        tail -n 40 "$B/configure.log" >&2
        die "MPICH configure failed (log: $B/configure.log; ROMIO's: $B/build/src/mpi/romio/config.log)"
    }
    : > "$B/configure.stamp"
    say "configured in $(( $(date +%s) - t0 )) s"
fi

# ---- 5. make, make install ----------------------------------------------------------
say "building MPICH in $B/build"
$MAKE -C "$B/build" "V=${V:-0}" ||
    die "MPICH build failed in $B/build (errors above; a driver error names adio/ad_pstripe/...)"
# The first install is MPICH's whole `make install`. Later builds in this
# directory change only libmpi (the driver, the client library), so they
# install only the library: the whole install takes minutes on a busy
# machine, walking every directory and copying every header again.
target=install
[ -f "$B/install.stamp" ] && target=install-libLTLIBRARIES
$MAKE -C "$B/build" $target > "$B/install.log" 2>&1 || {
    tail -n 30 "$B/install.log" >&2
    die "MPICH make $target failed (log: $B/install.log)"
}
: > "$B/install.stamp"
# Programs built with Debian's mpicc need libmpich.so.12; ours is libmpi.so.12
# (same ABI): lib/abi holds only the Debian name, for LD_LIBRARY_PATH. The
# same for the Fortran bindings (Debian's mpif90 links libmpichfort.so.12).
mkdir -p "$B/install/lib/abi"
ln -sfn ../libmpi.so.12 "$B/install/lib/abi/libmpich.so.12"
[ -e "$B/install/lib/libmpifort.so.12" ] ||
    die "$B/install/lib has no libmpifort.so.12: MPICH was built without Fortran"
ln -sfn ../libmpifort.so.12 "$B/install/lib/abi/libmpichfort.so.12"

# ---- 6. the build tree's copy -------------------------------------------------------
relocate "$B/install" "$prefix" "$prefix"
printf '%s\n' "$fingerprint" > "$stamp"
say "MPICH with pstripe installed in $prefix ($(( $(date +%s) - t0 )) s)"
exit 0
}
