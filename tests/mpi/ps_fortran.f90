! ps_fortran: a Fortran 90 MPI-IO program, built with the system mpif90.
!
! What a Fortran application (NAS BT-IO, say) does: reductions on
! MPI_DOUBLE_PRECISION, then a global NX x NY array of DOUBLE PRECISION,
! cut into a 2-D grid of blocks (one per process, MPI_Dims_create), written
! collectively through a subarray view (MPI_ORDER_FORTRAN) and read back
! through the same view, then read whole by rank 0 and checked against the
! formula. Element (i, j) holds i + 1000 * j, so the file depends on neither
! the process count nor the file system: mpi-tests compares the file left on
! pstripe: with the one left on ufs:.
!
! Usage: ps_fortran FILENAME      (e.g. pstripe:/mpi/f or ufs:/tmp/f)
program ps_fortran
    use mpi
    implicit none
    integer, parameter :: nx = 301, ny = 203
    integer :: ierr, rank, nprocs, fh, filetype, info, i, j, cls
    integer :: dims(2), coords(2), sizes(2), subsizes(2), starts(2)
    integer :: status(MPI_STATUS_SIZE), count
    logical :: periods(2)
    integer :: cart
    integer(kind=MPI_OFFSET_KIND) :: disp, fsize
    double precision :: mine(3), total(3), want
    double precision, allocatable :: a(:, :), b(:, :), whole(:, :)
    character(len=1024) :: fname
    character(len=MPI_MAX_ERROR_STRING) :: msg
    integer :: msglen

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    if (command_argument_count() /= 1) then
        if (rank == 0) print '(a)', 'usage: ps_fortran FILENAME'
        call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    call get_command_argument(1, fname)

    ! Reductions on DOUBLE PRECISION: sum, max and min of rank-dependent
    ! values, checked against their closed forms.
    mine = (/ dble(rank) + 0.5d0, dble(rank) * 2.25d0, -dble(rank) /)
    call MPI_Allreduce(mine(1), total(1), 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                       MPI_COMM_WORLD, ierr)
    call check_mpi(ierr, 'MPI_Allreduce(MPI_SUM)')
    call MPI_Allreduce(mine(2), total(2), 1, MPI_DOUBLE_PRECISION, MPI_MAX, &
                       MPI_COMM_WORLD, ierr)
    call check_mpi(ierr, 'MPI_Allreduce(MPI_MAX)')
    call MPI_Allreduce(mine(3), total(3), 1, MPI_DOUBLE_PRECISION, MPI_MIN, &
                       MPI_COMM_WORLD, ierr)
    call check_mpi(ierr, 'MPI_Allreduce(MPI_MIN)')
    want = dble(nprocs) * dble(nprocs - 1) / 2d0 + 0.5d0 * dble(nprocs)
    if (total(1) /= want .or. total(2) /= dble(nprocs - 1) * 2.25d0 .or. &
        total(3) /= -dble(nprocs - 1)) then
        print '(a,i0,a,3f12.4)', 'ps_fortran: rank ', rank, ': wrong reductions ', total
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if

    ! The process grid and this process's block.
    dims = 0
    call MPI_Dims_create(nprocs, 2, dims, ierr)
    periods = .false.
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
    call MPI_Cart_coords(cart, rank, 2, coords, ierr)
    sizes = (/ nx, ny /)
    do i = 1, 2
        subsizes(i) = sizes(i) / dims(i)
        starts(i) = coords(i) * subsizes(i)
        if (coords(i) == dims(i) - 1) subsizes(i) = sizes(i) - starts(i)
    end do
    allocate(a(subsizes(1), subsizes(2)), b(subsizes(1), subsizes(2)))
    do j = 1, subsizes(2)
        do i = 1, subsizes(1)
            a(i, j) = dble(starts(1) + i) + 1000d0 * dble(starts(2) + j)
        end do
    end do
    call MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_FORTRAN, &
                                  MPI_DOUBLE_PRECISION, filetype, ierr)
    call check_mpi(ierr, 'MPI_Type_create_subarray')
    call MPI_Type_commit(filetype, ierr)

    ! Write through the view, read back through it.
    call MPI_Info_create(info, ierr)
    call MPI_Info_set(info, 'romio_cb_write', 'enable', ierr)
    if (rank == 0) call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh, ierr)
    call check_mpi(ierr, 'MPI_File_open')
    disp = 0
    call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, filetype, 'native', &
                           MPI_INFO_NULL, ierr)
    call check_mpi(ierr, 'MPI_File_set_view')
    call MPI_File_write_all(fh, a, size(a), MPI_DOUBLE_PRECISION, status, ierr)
    call check_mpi(ierr, 'MPI_File_write_all')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, count, ierr)
    if (count /= size(a)) call fail('write_all count')
    b = -1d0
    call MPI_File_read_at_all(fh, 0_MPI_OFFSET_KIND, b, size(b), MPI_DOUBLE_PRECISION, &
                              status, ierr)
    call check_mpi(ierr, 'MPI_File_read_at_all')
    if (any(b /= a)) call fail('read_at_all through the view gave other values')
    call MPI_File_get_size(fh, fsize, ierr)
    if (fsize /= int(nx, MPI_OFFSET_KIND) * ny * 8) call fail('file size')
    call MPI_File_close(fh, ierr)
    call check_mpi(ierr, 'MPI_File_close')

    ! The whole file, as rank 0 reads it without a view.
    if (rank == 0) then
        allocate(whole(nx, ny))
        call MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
        call check_mpi(ierr, 'MPI_File_open (rank 0, whole file)')
        call MPI_File_read(fh, whole, nx * ny, MPI_DOUBLE_PRECISION, status, ierr)
        call check_mpi(ierr, 'MPI_File_read (whole file)')
        call MPI_File_close(fh, ierr)
        do j = 1, ny
            do i = 1, nx
                if (whole(i, j) /= dble(i) + 1000d0 * dble(j)) then
                    print '(a,i0,a,i0,a,f14.2)', 'ps_fortran: element (', i, ',', j, &
                        ') of the file is ', whole(i, j)
                    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
                end if
            end do
        end do
        print '(a,i0,a,i0,a,f8.2)', 'ps_fortran: PASS, ', nprocs, ' processes, ', &
            nx * ny * 8, ' bytes; allreduce sum ', total(1)
    end if
    call MPI_Type_free(filetype, ierr)
    call MPI_Info_free(info, ierr)
    call MPI_Comm_free(cart, ierr)
    call MPI_Finalize(ierr)

contains

    subroutine check_mpi(code, what)
        integer, intent(in) :: code
        character(len=*), intent(in) :: what
        integer :: e
        if (code == MPI_SUCCESS) return
        call MPI_Error_class(code, cls, e)
        call MPI_Error_string(code, msg, msglen, e)
        print '(a,i0,a,a,a,a)', 'ps_fortran: rank ', rank, ': ', what, ' failed: ', &
            msg(1:msglen)
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end subroutine check_mpi

    subroutine fail(what)
        character(len=*), intent(in) :: what
        integer :: e
        print '(a,i0,a,a)', 'ps_fortran: rank ', rank, ': ', what
        call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end subroutine fail

end program ps_fortran
