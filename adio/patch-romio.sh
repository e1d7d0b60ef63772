#!/bin/sh
# patch-romio.sh ROMIO_SRCDIR
#
# Registers the pstripe file system (prefix "pstripe:") in the ROMIO tree of
# an MPICH source tree (src/mpi/romio). ROMIO has no plugin mechanism: a file
# system is named in five places, and each gets one edit here:
#
#   adio/include/adio.h           #define ADIO_PSTRIPE <next free id>
#   adio/include/adioi_fs_proto.h extern struct ADIOI_Fns_struct ADIO_PSTRIPE_operations
#   adio/common/ad_fstype.c       {&ADIO_PSTRIPE_operations, ADIO_PSTRIPE, "pstripe:"}
#   configure.ac                  "pstripe" in the known file systems (which
#                                 makes the BUILD_AD_PSTRIPE conditional),
#                                 AC_DEFINE(ROMIO_PSTRIPE) and the client
#                                 library's flags (PSTRIPE_CPPFLAGS, _CFLAGS, _LIBS)
#   adio/Makefile.mk              include adio/ad_pstripe/Makefile.mk
#
# and ROMIO's generic shared-file-pointer code gets pstripe branches (see
# "Shared file pointers" below).
#
# The driver itself (adio/ad_pstripe) is a link made by build-mpich.sh; the
# caller runs `autoreconf -fi` in ROMIO afterwards.
#
# Each edit is anchored on text that every MPICH 4.x has (the UFS and TESTFS
# entries, the guard entry of the table, ...), not on line numbers, and is
# skipped when its PSTRIPE text is already there, so running the script again
# changes nothing. An anchor that is missing is an error, never a silent skip.
set -eu

die() { echo "patch-romio.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: patch-romio.sh ROMIO_SRCDIR"
romio=$1
[ -f "$romio/adio/common/ad_fstype.c" ] || die "$romio is not a ROMIO source tree"

# edit FILE MARKER AWK-PROGRAM: unless FILE contains the fixed string MARKER,
# rewrite it with the awk program, then check that MARKER is there (that is,
# the anchor was found).
edit() {
    file=$romio/$1 marker=$2 prog=$3
    [ -f "$file" ] || die "$file: no such file"
    if grep -qF -e "$marker" "$file"; then
        return 0
    fi
    awk "$prog" "$file" > "$file.pstripe-tmp" || die "$file: awk failed"
    grep -qF -e "$marker" "$file.pstripe-tmp" ||
        die "$file: anchor not found, cannot add $marker (unknown ROMIO version?)"
    mv "$file.pstripe-tmp" "$file"
    echo "patch-romio.sh: $1: added $marker"
}

# adio.h: the file-system ids are the "#define ADIO_<FS> <number>" lines
# between the "file systems:" comment and ADIO_SEEK_SET; ours is the largest
# plus one, added after the last of them.
edit adio/include/adio.h ADIO_PSTRIPE '
    { line[NR] = $0 }
    /file systems:/ { inblock = 1 }
    /^#define ADIO_SEEK_SET/ { inblock = 0 }
    inblock && /^#define ADIO_[A-Z0-9_]+[ \t]+[0-9]+/ {
        if ($3 + 0 > max) max = $3 + 0
        last = NR
    }
    END {
        for (i = 1; i <= NR; i++) {
            print line[i]
            if (i == last)
                printf "#define ADIO_PSTRIPE             %d    /* pstripe striped parallel file system */\n", max + 1
        }
    }'

edit adio/include/adioi_fs_proto.h ADIO_PSTRIPE_operations '
    /^#endif.*ADIOI_FS_PROTO_H_INCLUDED/ {
        print "#ifdef ROMIO_PSTRIPE"
        print "extern struct ADIOI_Fns_struct ADIO_PSTRIPE_operations;"
        print "/* prototypes are in adio/ad_pstripe/ad_pstripe.h */"
        print "#endif"
        print ""
    }
    { print }'

edit adio/common/ad_fstype.c ADIO_PSTRIPE_operations '
    /^[ \t]*\{0, 0, 0\}.*guard entry/ {
        print "#ifdef ROMIO_PSTRIPE"
        print "    {&ADIO_PSTRIPE_operations, ADIO_PSTRIPE, \"pstripe:\"},"
        print "#endif"
    }
    { print }'

edit adio/Makefile.mk ad_pstripe/Makefile.mk '
    { print }
    /^include .*adio\/ad_ufs\/Makefile.mk/ {
        print "include $(top_srcdir)/adio/ad_pstripe/Makefile.mk"
    }'

# configure.ac, 1: the m4 list of known file systems (the line after
# "m4_define([known_filesystems_m4_w],") gets " pstripe" before its "])dnl".
edit configure.ac ' pstripe])dnl' '
    { print_line = $0 }
    want && /\]\)dnl/ { sub(/\]\)dnl/, " pstripe])dnl", print_line); want = 0 }
    /m4_define\(\[known_filesystems_m4_w\],/ { want = 1 }
    { print print_line }'

# configure.ac, 2: ROMIO_PSTRIPE and the client library, before the comment
# above the loop that makes the BUILD_AD_<FS> conditionals (file_system_pstripe
# is set by then).
edit configure.ac ROMIO_PSTRIPE '
    /^# Setup an AM_CONDITIONAL named BUILD_AD_FOO/ && !done {
        print "# pstripe (added by pstripe'"'"'s adio/patch-romio.sh): the driver in"
        print "# adio/ad_pstripe calls pstripe'"'"'s client library, whose flags pstripe'"'"'s"
        print "# build passes in these variables. The libraries reach libmpi through"
        print "# localdefs (WRAPPER_LIBS), like those of the DAOS and PVFS2 drivers."
        print "AC_ARG_VAR([PSTRIPE_CPPFLAGS], [preprocessor flags for pstripe.h])"
        print "AC_ARG_VAR([PSTRIPE_CFLAGS], [extra C flags for the pstripe driver])"
        print "AC_ARG_VAR([PSTRIPE_LIBS], [pstripe client library and its dependencies])"
        print "if test -n \"$file_system_pstripe\"; then"
        print "    CPPFLAGS=\"$CPPFLAGS $PSTRIPE_CPPFLAGS\""
        print "    CFLAGS=\"$CFLAGS $PSTRIPE_CFLAGS\""
        print "    AC_CHECK_HEADER([pstripe.h], [],"
        print "        [AC_MSG_ERROR([pstripe file system requested but pstripe.h not found (PSTRIPE_CPPFLAGS=$PSTRIPE_CPPFLAGS)])])"
        print "    LIBS=\"$LIBS $PSTRIPE_LIBS\""
        print "    AC_DEFINE(ROMIO_PSTRIPE,1,[Define for ROMIO with PSTRIPE])"
        print "fi"
        print ""
        done = 1
    }
    { print }'

# Shared file pointers. ROMIO keeps one in a hidden file locked with fcntl;
# pstripe keeps it as a counter at the file's metadata owner
# (adio/ad_pstripe/ad_pstripe_sharedfp.c), so ROMIO's generic code goes to
# the driver for pstripe files, in four places:
#   adioi_fs_proto.h              the driver's shared-pointer functions
#   ad_get_sh_fp.c, ad_set_sh_fp.c  a branch on ADIO_PSTRIPE before ROMIO's
#                                 own NFS special case, like that case
#   set_view.c                    the reset to zero (ROMIO resets only a
#                                 pointer file it has opened), without
#                                 the barrier after it (below)
#   write_ord.c, read_ord.c,      ordered calls: one fetch-and-add for the
#   write_ordb.c, read_ordb.c     group and a scan instead of the token
#                                 passed from rank to rank
edit adio/include/adioi_fs_proto.h ADIOI_PSTRIPE_Get_ordered_fp '
    /^#endif.*ADIOI_FS_PROTO_H_INCLUDED/ {
        print "#ifdef ROMIO_PSTRIPE"
        print "void ADIOI_PSTRIPE_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,"
        print "                                 int *error_code);"
        print "void ADIOI_PSTRIPE_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);"
        print "void ADIOI_PSTRIPE_Reset_shared_fp(ADIO_File fd, int *error_code);"
        print "void ADIOI_PSTRIPE_Get_ordered_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,"
        print "                                  int *error_code);"
        print "void ADIOI_PSTRIPE_Set_view_begin(ADIO_File fd);"
        print "#endif"
        print ""
    }
    { print }'

for op in get set; do
    if [ $op = get ]; then
        call='ADIOI_PSTRIPE_Get_shared_fp(fd, incr, shared_fp, error_code);'
    else
        call='ADIOI_PSTRIPE_Set_shared_fp(fd, offset, error_code);'
    fi
    edit adio/common/ad_${op}_sh_fp.c "$call" '
    /^#ifdef ROMIO_NFS/ && !done {
        print "#ifdef ROMIO_PSTRIPE"
        print "    if (fd->file_system == ADIO_PSTRIPE) {"
        print "        '"$call"'"
        print "        return;"
        print "    }"
        print "#endif"
        print ""
        done = 1
    }
    { print }'
done

edit mpi-io/set_view.c 'file_system == ADIO_PSTRIPE' '
    /^[ \t]*\/\* reset shared file pointer to zero \*\// && !done {
        print "#ifdef ROMIO_PSTRIPE"
        print "    /* pstripe: no pointer file (shared_fp_fd stays ADIO_FILE_NULL) and no"
        print "     * server call: every process counts its views, and the first shared"
        print "     * access of a newer view finds the counter at zero */"
        print "    if (adio_fh->file_system == ADIO_PSTRIPE) {"
        print "        ADIOI_PSTRIPE_Reset_shared_fp(adio_fh, &error_code);"
        print "        if (error_code != MPI_SUCCESS)"
        print "            error_code = MPIO_Err_return_file(adio_fh, error_code);"
        print "    }"
        print "#endif"
        print ""
        done = 1
    }
    { print }'

# set_view.c starts its collective part with a check of the info argument
# (MPIO_CHECK_INFO_ALL, an allreduce: no process leaves it before every
# process has entered set_view) and ends with a barrier, for the reset
# above. For a pstripe file the driver flushes the file's buffered writes
# before that allreduce (ADIOI_PSTRIPE_Set_view_begin), so the allreduce
# orders what the barrier ordered: each process's shared-pointer accesses
# and buffered writes of the old view come before any process leaves
# set_view. The barrier, two per H5Dwrite or H5Dread of HDF5's collective
# calls and a wait of its own after the flush, is left out.
edit mpi-io/set_view.c 'ADIOI_PSTRIPE_Set_view_begin(adio_fh)' '
    /^[ \t]*MPIO_CHECK_INFO_ALL\(info, error_code, adio_fh->comm\);/ && !done {
        print "#ifdef ROMIO_PSTRIPE"
        print "    /* pstripe: buffered writes go out before the first collective step */"
        print "    if (adio_fh->file_system == ADIO_PSTRIPE)"
        print "        ADIOI_PSTRIPE_Set_view_begin(adio_fh);"
        print "#endif"
        done = 1
    }
    { print }'
edit mpi-io/set_view.c 'file_system != ADIO_PSTRIPE' '
    /^[ \t]*MPI_Barrier\(adio_fh->comm\);[ \t]*\/\* for above to work correctly \*\// && !done {
        print "#ifdef ROMIO_PSTRIPE"
        print "        /* pstripe: ordered by the info check (ADIOI_PSTRIPE_Set_view_begin) */"
        print "        if (adio_fh->file_system != ADIO_PSTRIPE)"
        print "#endif"
        done = 1
    }
    { print }'

# set_view and set_info start with a check of the info argument that is
# collective (MPIO_CHECK_INFO_ALL, adioi_error.h: an MPI_Allreduce of the
# processes' results), and in a collective HDF5 call the process that
# arrives first polled there while the other still wrote (rank 0 spent
# 0.50 s of CPU in a 0.5 s wait; ps_collwait). Under ROMIO_PSTRIPE that
# allreduce is the driver's (ADIOI_PSTRIPE_Allreduce), which waits as the
# program's blocking collectives do while a pstripe file is open and a
# server runs on this host, and is MPICH's otherwise (open's check, before
# any pstripe file is open, and every file's where no server is here).
edit adio/include/adioi_error.h MPIO_CHECK_INFO_ALLREDUCE '
    /^#define MPIO_CHECK_INFO_ALL\(/ && !decl {
        print "#ifdef ROMIO_PSTRIPE"
        print "int ADIOI_PSTRIPE_Allreduce(const void *sendbuf, void *recvbuf, int count,"
        print "                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);"
        print "#define MPIO_CHECK_INFO_ALLREDUCE ADIOI_PSTRIPE_Allreduce"
        print "#else"
        print "#define MPIO_CHECK_INFO_ALLREDUCE MPI_Allreduce"
        print "#endif"
        print ""
        decl = 1
    }
    decl && !done && /^[ \t]*MPI_Allreduce\(&error_code, &tmp_err, 1, MPI_INT, MPI_MAX, comm\);/ {
        sub(/MPI_Allreduce\(/, "MPIO_CHECK_INFO_ALLREDUCE(")
        done = 1
    }
    { print }
    END { if (!done) exit 1 }'

for f in write_ord read_ord write_ordb read_ordb; do
    edit mpi-io/$f.c ADIOI_PSTRIPE_Get_ordered_fp '
    /^[ \t]*MPI_Recv\(NULL, 0, MPI_BYTE, source, 0, adio_fh->comm, MPI_STATUS_IGNORE\);/ && !token {
        print "#ifdef ROMIO_PSTRIPE"
        print "    /* pstripe: no token, one fetch-and-add for the group and a scan */"
        print "    if (adio_fh->file_system == ADIO_PSTRIPE)"
        print "        source = dest = MPI_PROC_NULL;"
        print "#endif"
        token = 1
    }
    /^[ \t]*ADIO_Get_shared_fp\(adio_fh, incr, &shared_fp, &error_code\);/ && token && !done {
        print "#ifdef ROMIO_PSTRIPE"
        print "    if (adio_fh->file_system == ADIO_PSTRIPE)"
        print "        ADIOI_PSTRIPE_Get_ordered_fp(adio_fh, incr, &shared_fp, &error_code);"
        print "    else"
        print "#endif"
        done = 1
    }
    { print }'
done

# Errors of the shared pointer. ROMIO's write_shared, the ordered writes and
# seek_shared replace any error of ADIO_Get/Set_shared_fp by a fatal
# MPI_ERR_INTERN "Could not access shared file pointer" (meant for a lost
# pointer file); for pstripe the driver's own error (MPI_ERR_IO with the
# reason: a server that restarted and lost the counter) is returned as is.
for f in write_sh write_ord write_ordb seek_sh; do
    edit mpi-io/$f.c "pstripe: the driver's error says why" '
    { line[NR] = $0 }
    END {
        for (i = 1; i <= NR; i++) {
            if (line[i] ~ /MPIO_Err_create_code\(MPI_SUCCESS/ &&
                (line[i] line[i + 1] line[i + 2] line[i + 3]) ~ /iosharedfailed/) {
                indent = line[i]
                sub(/[^ \t].*$/, "", indent)
                print "#ifdef ROMIO_PSTRIPE"
                print indent "/* pstripe: the driver'"'"'s error says why */"
                print indent "if (adio_fh->file_system != ADIO_PSTRIPE)"
                print "#endif"
            }
            print line[i]
        }
    }'
done

# seek_shared is collective, but only rank 0 moves the pointer, and ROMIO
# returns an error of rank 0 (a lost pointer for SEEK_CUR, a negative
# offset, a bad whence, a failed set) on rank 0 alone, before the barrier
# the other processes wait in: they would hang there. For pstripe files each
# of rank 0's error exits goes to one place, which every process reaches:
# rank 0 broadcasts its error class (MPI_SUCCESS when none) and message, and
# every process returns that error. (ROMIO's other hang, rank 0 waiting
# alone when the other processes found different arguments, is left as is.)
edit mpi-io/seek_sh.c "pstripe: rank 0's error reaches every process" '
    /^[ \t]*if \(!myrank\) \{/ && !done { inblock = 1 }
    inblock && /^[ \t]*error_code = MPIO_Err_return_file\(adio_fh, error_code\);/ {
        indent = $0
        sub(/[^ \t].*$/, "", indent)
        print "#ifdef ROMIO_PSTRIPE"
        print indent "if (adio_fh->file_system == ADIO_PSTRIPE)"
        print indent "    goto pstripe_share;"
        print "#endif"
        exits++
    }
    inblock && /FIXME: explain why the barrier is necessary/ {
        inblock = 0
        done = 1
        print "#ifdef ROMIO_PSTRIPE"
        print "    /* pstripe: rank 0'"'"'s error reaches every process (ROMIO returns it on"
        print "     * rank 0 alone, before the barrier below that the others wait in) */"
        print "  pstripe_share:"
        print "    if (adio_fh->file_system == ADIO_PSTRIPE) {"
        print "        int pstripe_class = MPI_SUCCESS, pstripe_len = 0;"
        print "        char pstripe_msg[MPI_MAX_ERROR_STRING] = \"\", *pstripe_why;"
        print ""
        print "        if (!myrank && error_code != MPI_SUCCESS) {"
        print "            MPI_Error_class(error_code, &pstripe_class);"
        print "            MPI_Error_string(error_code, pstripe_msg, &pstripe_len);"
        print "            if (pstripe_class == MPI_SUCCESS)"
        print "                pstripe_class = MPI_ERR_OTHER;"
        print "        }"
        print "        MPI_Bcast(&pstripe_class, 1, MPI_INT, 0, adio_fh->comm);"
        print "        if (pstripe_class != MPI_SUCCESS) {"
        print "            MPI_Bcast(pstripe_msg, MPI_MAX_ERROR_STRING, MPI_CHAR, 0, adio_fh->comm);"
        print "            if (myrank) {"
        print "                /* rank 0'"'"'s message without its class and stack header */"
        print "                pstripe_msg[MPI_MAX_ERROR_STRING - 1] = 0;"
        print "                pstripe_why = strstr(pstripe_msg, \"error stack:\\n\");"
        print "                pstripe_why = pstripe_why ? pstripe_why + 13 : pstripe_msg;"
        print "                error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,"
        print "                                                  myname, __LINE__, pstripe_class,"
        print "                                                  pstripe_class == MPI_ERR_ARG ?"
        print "                                                  \"**arg\" : \"**io\","
        print "                                                  \"rank 0: %s\", pstripe_why);"
        print "            }"
        print "            error_code = MPIO_Err_return_file(adio_fh, error_code);"
        print "            goto fn_exit;"
        print "        }"
        print "    }"
        print "#endif"
        print ""
    }
    { print }
    END { if (!done || !exits) exit 1 }'

exit 0
