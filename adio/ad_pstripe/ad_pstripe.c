/*
 * ad_pstripe.c: the operations table of the pstripe ROMIO driver.
 */

#include "ad_pstripe.h"

/* adioi.h has the ADIOI_Fns_struct define */
#include "adioi.h"

struct ADIOI_Fns_struct ADIO_PSTRIPE_operations = {
    ADIOI_PSTRIPE_Open, /* Open */
    ADIOI_PSTRIPE_OpenColl,     /* OpenColl */
    ADIOI_PSTRIPE_ReadContig,   /* ReadContig */
    ADIOI_PSTRIPE_WriteContig,  /* WriteContig */
    ADIOI_PSTRIPE_ReadStridedColl,      /* ReadStridedColl */
    ADIOI_PSTRIPE_WriteStridedColl,     /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,   /* SeekIndividual */
    ADIOI_PSTRIPE_Fcntl,        /* Fcntl */
    ADIOI_PSTRIPE_SetInfo,      /* SetInfo */
    ADIOI_PSTRIPE_ReadStrided,  /* ReadStrided */
    ADIOI_PSTRIPE_WriteStrided, /* WriteStrided */
    ADIOI_PSTRIPE_Close,        /* Close */
    ADIOI_PSTRIPE_IreadContig,  /* IreadContig */
    ADIOI_PSTRIPE_IwriteContig, /* IwriteContig */
    ADIOI_FAKE_IODone,  /* ReadDone */
    ADIOI_FAKE_IODone,  /* WriteDone */
    ADIOI_FAKE_IOComplete,      /* ReadComplete */
    ADIOI_FAKE_IOComplete,      /* WriteComplete */
    ADIOI_PSTRIPE_IreadStrided, /* IreadStrided */
    ADIOI_PSTRIPE_IwriteStrided,        /* IwriteStrided */
    ADIOI_PSTRIPE_Flush,        /* Flush */
    ADIOI_PSTRIPE_Resize,       /* Resize */
    ADIOI_PSTRIPE_Delete,       /* Delete */
    ADIOI_PSTRIPE_Feature,      /* Features */
    "PSTRIPE: ROMIO driver for the pstripe striped file system",
    ADIOI_PSTRIPE_IreadStridedColl,     /* IreadStridedColl */
    ADIOI_PSTRIPE_IwriteStridedColl,    /* IwriteStridedColl */
    ADIOI_PSTRIPE_SetLock       /* SetLock */
};
