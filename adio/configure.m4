dnl adio/configure.m4: options for the pstripe-enabled MPICH (owned by adio/).
