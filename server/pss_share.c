/*
 * pss_share.c: which objects several clients read at once (see pss_share.h).
 */
#include "pss_share.h"

#include "ps_time.h"

#define PSS_SHARE_WINDOW_NS (50ull * 1000 * 1000)   /* two readers this close: share */
#define PSS_SHARE_HOLD_NS   (1000ull * 1000 * 1000) /* sharing lasts this long after */

int pss_share_note_reader(pss_worker_t *w, pss_share_t *sh, const void *conn)
{
    uint64_t now = ps_time_ns();

    if (w->cache == NULL) {
        return 0; /* nothing kept to share */
    }
    if (sh->last_reader != NULL && sh->last_reader != conn &&
        now - sh->last_read_ns < PSS_SHARE_WINDOW_NS) {
        sh->until = now + PSS_SHARE_HOLD_NS;
    }
    sh->last_reader = conn;
    sh->last_read_ns = now;
    return now < sh->until;
}

int pss_share_active(const pss_share_t *sh)
{
    return sh->until != 0 && ps_time_ns() < sh->until;
}
