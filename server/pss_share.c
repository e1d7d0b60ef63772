/*
 * pss_share.c: objects several clients read, or write, at once (see
 * pss_share.h).
 */
#include "pss_share.h"

#include "ps_time.h"

#define PSS_SHARE_WINDOW_NS (50ull * 1000 * 1000)   /* two clients this close: share */
#define PSS_SHARE_HOLD_NS   (1000ull * 1000 * 1000) /* sharing lasts this long after */

int pss_share_note(pss_share_t *sh, const void *conn)
{
    uint64_t now = ps_time_ns();

    if (sh->last_conn != NULL && sh->last_conn != conn && now - sh->last_ns < PSS_SHARE_WINDOW_NS) {
        sh->until = now + PSS_SHARE_HOLD_NS;
    }
    sh->last_conn = conn;
    sh->last_ns = now;
    return now < sh->until;
}

void pss_share_note_end(pss_share_t *sh)
{
    if (sh->last_conn != NULL) {
        sh->last_ns = ps_time_ns();
    }
}

int pss_share_active(const pss_share_t *sh)
{
    return sh->until != 0 && ps_time_ns() < sh->until;
}
