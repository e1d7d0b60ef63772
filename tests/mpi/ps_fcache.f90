! ps_fcache: a Fortran program's small writes are buffered (write-behind)
! and its reads cached, and its own MPI calls order them as C's do.
!
! Open MPI's Fortran bindings call the PMPI_ functions, past MPI_ hooks;
! pstripe's hooks sit at the PMPI_ level there (libpstripe-ompi-hooks.so),
! MPICH's Fortran bindings call MPI_ (the driver's hooks). Checked:
! - on pstripe:, MPI_File_get_info says write-behind and the read cache are
!   enabled (a Fortran program is cached);
! - rank 1 reads 64 bytes (twice: the second read caches their block) and
!   tells rank 0, which writes 5 of the 8-byte words over them (buffered);
!   then a message of kind k goes from rank 0 to rank 1 (send, isend and
!   wait against irecv polled by test, sendrecv_replace, bcast, allreduce,
!   barrier; or rank 1's ssend, which returns once rank 0 posted its
!   receive), and rank 1 reads the bytes at once (no sync): the new ones;
! - every process writes 8-byte words interleaved with the others'
!   (small independent writes), and after sync-barrier-sync every process
!   reads them all. Rank 0 prints "small writes: N" (all processes'):
!   mpi-tests checks that the servers got far fewer write requests.
! Every word of the file holds seed * 1000003 + (offset / 8), so the file
! depends only on the process count: mpi-tests compares it with ufs:'s.
!
! Usage: ps_fcache FILENAME      (e.g. pstripe:/mpi/f or ufs:/tmp/f)
program ps_fcache
    use mpi
    implicit none
    integer, parameter :: i8 = selected_int_kind(18)
    integer, parameter :: nkinds = 8, nwords = 256
    integer(kind=MPI_OFFSET_KIND), parameter :: base = 4096
    integer :: ierr, rank, nprocs, fh, k, i, nsmall
    character(len=1024) :: fname

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    if (command_argument_count() /= 1) then
        if (rank == 0) print '(a)', 'usage: ps_fcache FILENAME'
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    call get_command_argument(1, fname)
    call MPI_File_open(MPI_COMM_WORLD, fname, ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                       MPI_INFO_NULL, fh, ierr)
    call check_mpi(ierr, 'MPI_File_open')
    if (index(fname, 'pstripe:') == 1) call check_cached(fh)

    ! The slots of the message rounds, old words everywhere.
    if (rank == 0) then
        do k = 0, nkinds - 1
            call write_words(fh, slot(k), 8, 1)
        end do
    end if
    call sync_barrier_sync(fh)

    if (nprocs >= 2) then
        do k = 0, nkinds - 1
            call message_round(fh, k)
        end do
    end if

    ! Interleaved 8-byte writes of every process, seen by all after
    ! sync-barrier-sync.
    do i = 0, nwords - 1
        call write_words(fh, base + 8_MPI_OFFSET_KIND * (i * nprocs + rank), 1, 99)
    end do
    call sync_barrier_sync(fh)
    do i = 0, nwords - 1, 32
        call check_words(fh, base + 8_MPI_OFFSET_KIND * i * nprocs, 32 * nprocs, 99, 0, &
                         32 * nprocs - 1, &
                         'interleaved writes after sync-barrier-sync')
    end do
    nsmall = 8 * nkinds + nwords * nprocs
    if (nprocs >= 2) nsmall = nsmall + 5 * nkinds
    if (rank == 0) print '(a,i0)', 'small writes: ', nsmall

    call MPI_File_close(fh, ierr)
    call check_mpi(ierr, 'MPI_File_close')
    if (rank == 0) print '(a)', 'ps_fcache: ok'
    call MPI_Finalize(ierr)

contains

    ! Where message round k's 64 bytes are.
    integer(kind=MPI_OFFSET_KIND) function slot(k)
        integer, intent(in) :: k
        slot = 128_MPI_OFFSET_KIND * k
    end function slot

    integer(kind=i8) function word(off, seed)
        integer(kind=MPI_OFFSET_KIND), intent(in) :: off
        integer, intent(in) :: seed
        word = int(seed, i8) * 1000003_i8 + off / 8
    end function word

    ! n words of seed from off, one 8-byte write each.
    subroutine write_words(fh, off, n, seed)
        integer, intent(in) :: fh, n, seed
        integer(kind=MPI_OFFSET_KIND), intent(in) :: off
        integer(kind=MPI_OFFSET_KIND) :: o
        integer(kind=i8) :: w
        integer :: j, ierr, status(MPI_STATUS_SIZE)
        do j = 0, n - 1
            o = off + 8 * j
            w = word(o, seed)
            call MPI_File_write_at(fh, o, w, 1, MPI_INTEGER8, status, ierr)
            call check_mpi(ierr, 'MPI_File_write_at')
        end do
    end subroutine write_words

    ! The n words from off, in reads of piece words: words first .. last
    ! (0-based; none if last < first) of seed new, the others of seed 1.
    subroutine check_words(fh, off, n, seed, first, last, what)
        integer, intent(in) :: fh, n, seed, first, last
        integer(kind=MPI_OFFSET_KIND), intent(in) :: off
        character(len=*), intent(in) :: what
        integer(kind=i8) :: got(n), want
        integer :: j, ierr, count, status(MPI_STATUS_SIZE)
        integer(kind=MPI_OFFSET_KIND) :: o
        call MPI_File_read_at(fh, off, got, n, MPI_INTEGER8, status, ierr)
        call check_mpi(ierr, 'MPI_File_read_at')
        call MPI_Get_count(status, MPI_INTEGER8, count, ierr)
        if (count /= n) then
            print '(a,i0,a,a,a,i0,a,i0)', 'ps_fcache: rank ', rank, ': ', what, ': read ', &
                count, ' words of ', n
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
        do j = 0, n - 1
            o = off + 8 * j
            want = word(o, 1)
            if (j >= first .and. j <= last) want = word(o, seed)
            if (got(j + 1) /= want) then
                print '(a,i0,a,a,a,i0,a,i0,a,i0)', 'ps_fcache: rank ', rank, ': ', what, &
                    ': offset ', o, ' holds ', got(j + 1), ', not ', want
                call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
            end if
        end do
    end subroutine check_words

    ! Rank 1 caches slot k's old words, rank 0 writes words 1-5 of it
    ! (buffered), a message of kind k, rank 1 reads them at once. Kind 6:
    ! rank 1 tells rank 0 by a synchronous send that rank 0 has posted its
    ! receive (rank 1 writes, rank 0 reads).
    subroutine message_round(fh, k)
        integer, intent(in) :: fh, k
        integer :: writer, reader, token, ready, total, req, ierr
        integer :: status(MPI_STATUS_SIZE)
        logical :: done
        token = 1
        ready = 1
        writer = 0
        if (k == 6) writer = 1
        reader = 1 - writer
        if (rank == reader) then
            call check_words(fh, slot(k), 8, 0, 0, -1, 'before another process''s write')
            call check_words(fh, slot(k), 8, 0, 0, -1, 'before another process''s write')
            call MPI_Send(ready, 1, MPI_INTEGER, writer, 1, MPI_COMM_WORLD, ierr)
        else if (rank == writer) then
            call MPI_Recv(ready, 1, MPI_INTEGER, reader, 1, MPI_COMM_WORLD, status, ierr)
            call write_words(fh, slot(k) + 8, 5, 10 + k)
        end if
        ierr = MPI_SUCCESS
        select case (k)
        case (0)
            if (rank == 0) call MPI_Send(token, 1, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, ierr)
            if (rank == 1) call MPI_Recv(token, 1, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, status, ierr)
        case (1)
            if (rank == 0) then
                call MPI_Isend(token, 1, MPI_INTEGER, 1, 3, MPI_COMM_WORLD, req, ierr)
                call MPI_Wait(req, status, ierr)
            else if (rank == 1) then
                ! polled: reads between the polls keep the cache
                call MPI_Irecv(token, 1, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, req, ierr)
                done = .false.
                do while (.not. done)
                    call check_words(fh, slot(k), 1, 0, 0, -1, 'a word nobody wrote')
                    call MPI_Test(req, done, status, ierr)
                end do
            end if
        case (2)
            if (rank <= 1) call MPI_Sendrecv_replace(token, 1, MPI_INTEGER, 1 - rank, 4, &
                                                     1 - rank, 4, MPI_COMM_WORLD, status, ierr)
        case (3)
            call MPI_Bcast(token, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
        case (4)
            call MPI_Allreduce(token, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
        case (5)
            call MPI_Barrier(MPI_COMM_WORLD, ierr)
        case (6)
            if (rank == reader) call MPI_Ssend(token, 1, MPI_INTEGER, writer, 6, MPI_COMM_WORLD, ierr)
            if (rank == writer) call MPI_Recv(token, 1, MPI_INTEGER, reader, 6, MPI_COMM_WORLD, &
                                              status, ierr)
        case default
            ! a probe that finds the message, then its receive
            if (rank == 0) call MPI_Send(token, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
            if (rank == 1) then
                call MPI_Probe(0, 7, MPI_COMM_WORLD, status, ierr)
                call MPI_Recv(token, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status, ierr)
            end if
        end select
        call check_mpi(ierr, 'the message')
        if (rank == reader) then
            call check_words(fh, slot(k), 8, 10 + k, 1, 5, 'another process''s write after a message')
        end if
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
    end subroutine message_round

    subroutine sync_barrier_sync(fh)
        integer, intent(in) :: fh
        integer :: ierr
        call MPI_File_sync(fh, ierr)
        call check_mpi(ierr, 'MPI_File_sync')
        call MPI_Barrier(MPI_COMM_WORLD, ierr)
        call MPI_File_sync(fh, ierr)
        call check_mpi(ierr, 'MPI_File_sync')
    end subroutine sync_barrier_sync

    ! A pstripe file of a Fortran program is cached.
    subroutine check_cached(fh)
        integer, intent(in) :: fh
        integer :: info, ierr
        character(len=MPI_MAX_INFO_VAL) :: wb, rc
        logical :: fwb, frc
        call MPI_File_get_info(fh, info, ierr)
        call check_mpi(ierr, 'MPI_File_get_info')
        call MPI_Info_get(info, 'romio_pstripe_write_behind', MPI_MAX_INFO_VAL, wb, fwb, ierr)
        call MPI_Info_get(info, 'romio_pstripe_read_cache', MPI_MAX_INFO_VAL, rc, frc, ierr)
        call MPI_Info_free(info, ierr)
        if (.not. fwb .or. .not. frc .or. trim(wb) /= 'enable' .or. trim(rc) /= 'enable') then
            print '(a,i0,a,a,a,a)', 'ps_fcache: rank ', rank, ': not cached: write-behind ', &
                trim(wb), ', read cache ', trim(rc)
            call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        end if
    end subroutine check_cached

    subroutine check_mpi(ierr, what)
        integer, intent(in) :: ierr
        character(len=*), intent(in) :: what
        character(len=MPI_MAX_ERROR_STRING) :: msg
        integer :: msglen, e
        if (ierr /= MPI_SUCCESS) then
            call MPI_Error_string(ierr, msg, msglen, e)
            print '(a,i0,a,a,a,a)', 'ps_fcache: rank ', rank, ': ', what, ': ', msg(1:msglen)
            call MPI_Abort(MPI_COMM_WORLD, 1, e)
        end if
    end subroutine check_mpi
end program ps_fcache
