/*
 * psc_layout.c: pstripe_layout_fit, the fitting of layout hints as users
 * write them (job scripts written for Lustre ask for 50 servers) to what
 * the cluster can hold, shared by the ROMIO driver and the OMPIO fs
 * component so that both give a file the same layout for the same hints.
 * MPI lets an implementation ignore a hint it cannot honour: nothing here
 * fails, each change is logged at warn level.
 */
#include "ps_layout.h"
#include "ps_log.h"
#include "pstripe.h"

void pstripe_layout_fit(pstripe_fs_t *fs, const char *path, pstripe_layout_t *layout)
{
    pstripe_statfs_t st;

    if (layout == NULL) {
        return;
    }
    if (path == NULL) {
        path = "(file)";
    }
    if (layout->stripe_size != 0 && (layout->stripe_size < PS_STRIPE_SIZE_MIN ||
                                     layout->stripe_size > PSTRIPE_STRIPE_SIZE_FIT_MAX)) {
        uint64_t fitted = layout->stripe_size < PS_STRIPE_SIZE_MIN ? PS_STRIPE_SIZE_MIN
                                                                   : PSTRIPE_STRIPE_SIZE_FIT_MAX;
        ps_warn("MPI-IO hint striping_unit=%llu for %s: using %llu",
                (unsigned long long)layout->stripe_size, path, (unsigned long long)fitted);
        layout->stripe_size = fitted;
    }
    if (layout->first_server < -1) {
        layout->first_server = -1;
    }
    if (layout->stripe_count <= 1 && layout->first_server <= 0) {
        return; /* nothing depends on the cluster's size */
    }
    if (fs == NULL || pstripe_statfs(fs, &st) != PS_OK || st.nservers == 0) {
        return; /* the create reports what is wrong */
    }
    if (layout->stripe_count > st.nservers) {
        ps_warn("MPI-IO hint striping_factor=%u for %s: the cluster has %u servers, using %u",
                layout->stripe_count, path, st.nservers, st.nservers);
        layout->stripe_count = st.nservers;
    }
    if (layout->first_server >= 0 && (uint32_t)layout->first_server >= st.nservers) {
        ps_warn("MPI-IO hint start_iodevice=%d for %s ignored: the cluster has %u servers",
                layout->first_server, path, st.nservers);
        layout->first_server = -1;
    }
}
