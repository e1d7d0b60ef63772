/*
 * ps_proto.h: the pstripe wire protocol, shared by clients and servers.
 *
 * Transport: UCX active messages (ucp_am_send_nbx). A client sends requests
 * with AM id PS_AM_ID_REQUEST and the UCP_AM_SEND_FLAG_REPLY flag; the server
 * answers on the reply endpoint with AM id PS_AM_ID_REPLY.
 *
 * Every message = AM header + AM data.
 *   AM header: ps_msg_hdr_t followed by exactly hdr.body_len bytes of the
 *              type's fixed body struct (ps_*_req_t / ps_*_rep_t below).
 *   AM data:   the variable part, whose exact length follows from the body
 *              (path_len, nregions, payload_len, ...). It may arrive eagerly or
 *              by rendezvous (large payloads move without extra copies).
 * Region lists and payloads never go in the AM header (its size is limited).
 *
 * All integers are little-endian fixed width (both ends are x86-64/aarch64
 * Linux; a big-endian peer is rejected by the magic). Numbers are appended,
 * never renumbered. Sizes of every struct are pinned by static asserts here
 * and by tests/unit/test_proto.cc.
 *
 * Routing: metadata requests (CREATE, LOOKUP, REMOVE, SETATTR) go to the path's owner
 * server ps_path_server() and, on it, to worker ps_path_worker(); object
 * requests (OBJ_*) go to worker ps_object_worker(file_id) of the server that
 * holds the object; other requests go to any worker. A worker that receives a
 * request it does not own answers PS_ERR_WRONG_WORKER.
 */
#ifndef PS_PROTO_H
#define PS_PROTO_H

#include <assert.h> /* static_assert, in C11 and C++ alike */
#include <stddef.h>
#include <stdint.h>

#include "ps_status.h"

#include "ps_extent.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PS_PROTO_MAGIC   0x31545350u /* "PST1" in memory order */
/* PS_PROTO_VERSION 2: OBJ_READ/OBJ_WRITE lists may be strided runs; 3: the HELLO
 * reply carries the auth mode and a nonce, AUTH, STATS auth counters; 4: file
 * owners (uid, gid in ps_file_info_t), access modes in CREATE/LOOKUP/REMOVE,
 * capabilities in replies and data requests, SETATTR; the HELLO reply carries
 * the server's instance, STATS the write-back stage counters; 5: SHARED_FP
 * carries the opener's view, STATS the read-ahead bytes; 6: an OBJ_WRITE's list
 * may travel in the AM header (PS_IO_LIST_INLINE); 7: the OBJ_READ reply says
 * how many bytes came from disk; 8: OBJ_ALLOCATE. Replies of version 8 servers
 * may also carry PS_ERR_STALE (a file removed while open; older clients read
 * it as a protocol error, as they would any status newer than they know);
 * 9: STATS counts eager replies and rendezvous requests; 10: HELLO flags
 * (the same-host shared-memory ports and host id); 11: OBJ_WRITE's
 * PS_IO_BEHIND; 12: failed writes are numbered (the OBJ_WRITE reply's
 * failed_writes, OBJ_SYNC's mark) and OBJ_FLUSH reports them at a close;
 * 13: STATS counts the flushes behind writes (the server's flush_behind);
 * 14: STATS counts capability refusals apart from authentication ones;
 * 15: the HELLO reply tells the server's place in the cluster's list;
 * 16: OBJ_LIST and META_LIVE; 17: MOVE (a rename between metadata servers),
 * and META_LIVE's reply counts them; 18: MOVE QUERY lists arrivals
 * (PS_MOVE_ARRIVALS) and META_LIVE counts them; 19: META_LIVE names the files
 * that left by a MOVE after a departure number (`after`), and its reply
 * tells the last one (departed) instead of LEAVEs and the instance; 20:
 * LOOKUP_ID (an open file's capability renewed after a rename), and root's
 * MOVE QUERY of marks may start after a name. */
#define PS_PROTO_VERSION 20
#define PS_AM_ID_REQUEST 17
#define PS_AM_ID_REPLY   18

#define PS_PATH_MAX    4096u /* bytes, without a terminating NUL */
#define PS_MAX_WORKERS 256u
#define PS_MAX_REGIONS (1u << 20)   /* regions per OBJ_READ/OBJ_WRITE batch */
#define PS_MAX_PAYLOAD (1ull << 30) /* bytes per batch (servers may set lower) */
#define PS_LIST_MAX    4096u        /* entries per LIST reply */
#define PS_MAX_OBJ_SIZE (1ull << 44) /* bytes: objects end at or below this (16 TiB) */
#define PS_AUTH_MAC_LEN 32u           /* bytes of an HMAC-SHA256 */

typedef enum ps_msg_type {
    PS_MSG_HELLO = 1,         /* handshake: server's workers and alignment */
    PS_MSG_CREATE = 2,        /* create a path (optionally exclusive) */
    PS_MSG_LOOKUP = 3,        /* path -> file info */
    PS_MSG_REMOVE = 4,        /* remove a path; reply has the removed file's info */
    PS_MSG_LIST = 5,          /* paths with a prefix, paged */
    PS_MSG_OBJ_WRITE = 6,     /* write a batch of regions of one object */
    PS_MSG_OBJ_READ = 7,      /* read a batch of regions of one object */
    PS_MSG_OBJ_STAT = 8,      /* object size and mtime */
    PS_MSG_OBJ_TRUNCATE = 9,  /* set object size */
    PS_MSG_OBJ_REMOVE = 10,   /* delete an object */
    PS_MSG_OBJ_SYNC = 11,     /* make an object's data durable */
    PS_MSG_META_SYNC = 12,    /* make the metadata store durable */
    PS_MSG_STATFS = 13,       /* capacity of the server's data directory */
    PS_MSG_STATS = 14,        /* server counters */
    PS_MSG_SHARED_FP = 15,    /* shared file pointer: fetch-and-add, set, release */
    PS_MSG_RENAME = 16,       /* rename a path, replacing the target, in one transaction */
    PS_MSG_AUTH = 17,         /* prove the caller's identity on this connection */
    PS_MSG_SETATTR = 18,      /* change a path's mode, owner or group */
    PS_MSG_OBJ_ALLOCATE = 19, /* reserve disk space up to a size (grow only, data kept) */
    PS_MSG_OBJ_FLUSH = 20,    /* a writer's close: write staged bytes, report failed writes */
    PS_MSG_OBJ_LIST = 21,     /* the ids of the objects a server holds (root; `pstripe gc`) */
    PS_MSG_META_LIVE = 22,    /* which of some file ids a path names (root; `pstripe gc`) */
    PS_MSG_MOVE = 23,         /* one step of a rename between two metadata servers */
    PS_MSG_LOOKUP_ID = 24,    /* file id -> file info, wherever its name now is here */
    PS_MSG_TYPE_LAST = 25
} ps_msg_type_t;

/* Header of every request and reply. */
typedef struct ps_msg_hdr {
    uint32_t magic;    /* PS_PROTO_MAGIC */
    uint16_t version;  /* PS_PROTO_VERSION */
    uint16_t type;     /* ps_msg_type_t; a reply carries its request's type */
    uint64_t req_id;   /* chosen by the client, echoed in the reply */
    int32_t status;    /* replies: ps_status_t (0 ok); requests: 0 */
    uint32_t body_len; /* bytes of fixed body after this header in the AM header */
} ps_msg_hdr_t;

/* One region of an object. */
typedef struct ps_region {
    uint64_t off; /* bytes from the start of the object */
    uint64_t len; /* bytes, > 0 */
} ps_region_t;

/* File metadata as stored by the owner server and sent in replies. */
#define PS_FILE_OWNED 0x1u /* ps_file_info_t.flags: uid/gid were recorded at creation (a file
                              created before protocol 4 has 0 here and is root's) */
typedef struct ps_file_info {
    uint64_t file_id;      /* unique id; names the file's objects */
    uint64_t stripe_size;  /* bytes */
    uint32_t stripe_count; /* servers */
    uint32_t first_server; /* index in the cluster's server list */
    uint32_t mode;         /* permission bits (0777 mask) */
    uint32_t flags;        /* PS_FILE_*; other bits 0 */
    uint64_t ctime_ns;     /* creation time, ns since the epoch */
    uint64_t mtime_ns;     /* metadata change time, ns since the epoch */
    uint32_t uid;          /* owner */
    uint32_t gid;          /* group */
} ps_file_info_t;

/* --- capabilities ---------------------------------------------------------------
 * The metadata owner of a file gives the opener a capability: the file, the
 * rights its permission check granted, an expiry, MAC'd under a key every
 * server of the cluster shares (derived from the cluster key file). Every
 * data request carries one; the data server checks the MAC (constant time),
 * the file id, the expiry and the right the request needs, and refuses with
 * PS_ERR_ACCESS. With auth = none there are no identities: capabilities are
 * neither issued nor checked. The same bits are the access a CREATE, LOOKUP
 * or REMOVE asks for. */
#define PS_CAP_READ   0x1u /* OBJ_READ */
#define PS_CAP_WRITE  0x2u /* OBJ_WRITE, OBJ_TRUNCATE */
#define PS_CAP_REMOVE 0x4u /* OBJ_REMOVE (after REMOVE, or of the file a RENAME replaced) */
#define PS_CAP_ALL    0x7u
/* OBJ_SYNC, OBJ_FLUSH and SHARED_FP need a capability of the file with any rights;
 * OBJ_STAT needs none (size and times are as visible as LIST's names). */
#define PS_CAP_LABEL "pstripe-capability-v1"
typedef struct ps_cap {
    uint64_t file_id;             /* the file (all its objects) */
    uint64_t expiry_ns;           /* CLOCK_REALTIME ns after which servers refuse it */
    uint32_t uid;                 /* the holder (for the servers' logs) */
    uint32_t rights;              /* PS_CAP_* */
    uint8_t mac[PS_AUTH_MAC_LEN]; /* HMAC-SHA256 under the capability key over
                                     PS_CAP_LABEL and the fields before */
} ps_cap_t;

/* --- HELLO ------------------------------------------------------------ */
#define PS_HELLO_SHM                                                                               \
    0x1u /* req: the client can use the same-host shared-memory ports;                             \
            rep: the reply data carries them (see below) */
typedef struct ps_hello_req {
    uint32_t client_version; /* PS_PROTO_VERSION */
    uint32_t flags;          /* PS_HELLO_*; other bits 0 */
} ps_hello_req_t;
#define PS_AUTH_NONCE_LEN 16u /* bytes of a HELLO nonce */
typedef struct ps_hello_rep {
    uint64_t server_id;  /* random id, persistent across restarts of a data dir */
    uint32_t nworkers;   /* workers on this server, 1..PS_MAX_WORKERS */
    uint32_t worker;     /* index of the worker that answered */
    uint32_t block_size; /* bytes: O_DIRECT alignment of the data directory */
    uint32_t auth_mode;  /* ps_auth_mode_t the server requires */
    uint8_t nonce[PS_AUTH_NONCE_LEN]; /* random, new for each HELLO: an AUTH on this
                                         connection must answer it */
    uint64_t instance; /* random, new each time the server starts: a client that wrote
                          to an earlier instance knows its unsynced bytes may be lost */
    uint32_t flags;    /* PS_HELLO_SHM if the request had it and the server offers it */
    uint16_t place;    /* the server's index in the cluster's list + 1, when the server
                          knows it (server_index and cluster_size set), else 0 */
    uint16_t cluster_size; /* servers in that list (0 with place 0) */
} ps_hello_rep_t;
/* HELLO reply data: nworkers x uint32_t TCP ports, worker i listens on port[i]
 * at the same IP address as the one the client connected to. With
 * PS_HELLO_SHM, then nworkers x uint32_t ports on the loopback address whose
 * connections carry no peer-failure detection, so that UCX may use shared
 * memory on them (UCX 1.13 uses none on endpoints that detect a vanished
 * peer), and the server's ps_shm_id_t: a client whose own id is the same
 * may use them (they reach this server only from its own host and network
 * namespace, and UCX's cma, one process reading the other's memory, works
 * only between processes of one user); any other client must not. UCX
 * still reports the end of such a connection (its connection manager's
 * socket closes when the process exits), and the client keeps its HELLO
 * connection to watch the server. */
typedef struct ps_shm_id {
    uint8_t boot_id[16]; /* /proc/sys/kernel/random/boot_id */
    uint64_t netns;      /* inode of /proc/self/ns/net */
    uint32_t uid;        /* effective user id */
    uint32_t reserved;   /* 0 */
} ps_shm_id_t;

/* --- AUTH ------------------------------------------------------------------
 * With auth_mode != NONE, a connection's only accepted requests are HELLO
 * and AUTH until an AUTH succeeds on it; others are refused with
 * PS_ERR_ACCESS. The client proves itself on the worker it sent HELLO to
 * (method MUNGE or KEY, answering that HELLO's nonce) and gets a ticket,
 * which it presents (method TICKET) on its connections to the server's
 * other workers. */
typedef enum ps_auth_mode {
    PS_AUTH_NONE = 0,  /* no authentication (explicit server setting only) */
    PS_AUTH_MUNGE = 1, /* MUNGE credential whose payload is the HELLO nonce */
    PS_AUTH_KEY = 2,   /* HMAC-SHA256 under the cluster key of PS_AUTH_KEY_LABEL, nonce,
                          server_id, uid, gid */
    PS_AUTH_TICKET = 3 /* a ticket from an AUTH reply of the same server (AUTH only) */
} ps_auth_mode_t;
#define PS_AUTH_KEY_LABEL "pstripe-auth-key-v1"
#define PS_AUTH_CRED_MAX  4096u /* bytes of credential in AM data */
typedef struct ps_auth_req {
    uint32_t method;   /* ps_auth_mode_t: MUNGE, KEY or TICKET */
    uint32_t cred_len; /* bytes of credential in AM data, 1..PS_AUTH_CRED_MAX: the MUNGE
                          credential, the PS_AUTH_MAC_LEN-byte HMAC, or a ps_auth_ticket_t */
    uint32_t uid;      /* KEY: the uid the key holder claims; otherwise 0 */
    uint32_t gid;      /* KEY: the gid the key holder claims; otherwise 0 */
} ps_auth_req_t;
/* Proof of an AUTH, valid on connections to every worker of the server
 * that issued it until expiry; mac is HMAC-SHA256 under a secret the
 * server draws at start-up over the fields before it. */
typedef struct ps_auth_ticket {
    uint64_t server_id; /* the issuing server */
    uint64_t expiry_ns; /* CLOCK_REALTIME ns after which it is refused */
    uint32_t uid;
    uint32_t gid;
    uint8_t mac[PS_AUTH_MAC_LEN];
} ps_auth_ticket_t;
typedef struct ps_auth_rep {
    uint32_t uid; /* identity the server now holds for this connection */
    uint32_t gid;
    ps_auth_ticket_t ticket; /* for the other workers' connections */
} ps_auth_rep_t;

/* --- CREATE / LOOKUP / REMOVE ---------------------------------------------- */
#define PS_CREATE_EXCL  0x1u /* fail with PS_ERR_EXISTS if the path exists */
#define PS_CREATE_TRUNC 0x2u /* reserved: truncation is done by the client */
typedef struct ps_create_req {
    uint64_t stripe_size;  /* bytes */
    uint32_t stripe_count; /* servers */
    uint32_t first_server; /* index in the cluster's server list */
    uint32_t mode;         /* permission bits */
    uint32_t flags;        /* PS_CREATE_* */
    uint32_t path_len;     /* bytes of path in AM data, 1..PS_PATH_MAX */
    uint32_t access;       /* PS_CAP_READ | PS_CAP_WRITE wanted (checked when the file
                              exists; a new file is the caller's) */
} ps_create_req_t;
/* Reply to CREATE (the existing file's info when it existed and not EXCL),
 * LOOKUP, REMOVE and SETATTR: */
typedef struct ps_file_rep {
    ps_file_info_t info;
    uint32_t created;    /* CREATE: 1 if this call created the file */
    uint32_t cap_life_s; /* seconds the capability is valid from now (0: no capability,
                            auth = none); clients renew it before */
    ps_cap_t cap;        /* rights granted: the access asked for (REMOVE: PS_CAP_REMOVE) */
} ps_file_rep_t;
/*
 * Permission rules at the metadata owner (uid 0 may do everything):
 *   read / write  the mode bits of the owner, else of the group (the
 *                 caller's gid, or a group of its uid in the server's user
 *                 database), else of others;
 *   create        any authenticated user (there are no directories);
 *   remove, rename (the old name, and the new one if it exists), and
 *   PS_CAP_REMOVE  the owner, or anyone with write permission;
 *   SETATTR       mode: the owner; gid: the owner, to a group it is in;
 *                 uid: root.
 */
typedef struct ps_path_req { /* LOOKUP, REMOVE */
    uint32_t path_len;       /* bytes of path in AM data, 1..PS_PATH_MAX */
    uint32_t access;         /* LOOKUP: PS_CAP_* wanted (0: a capability without rights,
                                for OBJ_SYNC and OBJ_FLUSH); REMOVE: 0 (the reply grants PS_CAP_REMOVE) */
} ps_path_req_t;

/* LOOKUP_ID: the file file_id names, found by the metadata server's index of
 * its own names, with a capability of access (as LOOKUP's); PS_ERR_NO_ENTRY
 * if no name of this server names it. A client renews an open file's
 * capability by it once the open's name no longer leads to the file (a
 * rename), asking each server in turn. Any worker answers. Reply: ps_file_rep_t. */
typedef struct ps_id_req {
    uint64_t file_id;  /* not 0 */
    uint32_t access;   /* PS_CAP_READ | PS_CAP_WRITE, or 0 */
    uint32_t reserved; /* 0 */
} ps_id_req_t;

/* --- SETATTR ---------------------------------------------------------------- */
#define PS_SETATTR_MODE 0x1u
#define PS_SETATTR_UID  0x2u
#define PS_SETATTR_GID  0x4u
typedef struct ps_setattr_req {
    uint32_t path_len; /* bytes of path in AM data, 1..PS_PATH_MAX */
    uint32_t valid;    /* PS_SETATTR_* (at least one; other bits 0) */
    uint32_t mode;     /* permission bits, <= 0777 */
    uint32_t uid;
    uint32_t gid;
    uint32_t reserved; /* 0 */
} ps_setattr_req_t;

/* --- RENAME ------------------------------------------------------------------ */
/* Sent to the metadata owner (server and worker) of the new name, which must
 * also be the owner server of the old name: the rename is one LMDB
 * transaction there (the client refuses names with different owner servers,
 * see doc/design.md "Renaming"). */
#define PS_RENAME_NOREPLACE 0x1u /* fail with PS_ERR_EXISTS if the new name exists */
typedef struct ps_rename_req {
    uint32_t src_len; /* bytes of the old name at the start of AM data, 1..PS_PATH_MAX */
    uint32_t dst_len; /* bytes of the new name after it, 1..PS_PATH_MAX */
    uint32_t flags;   /* PS_RENAME_*; other bits must be 0 */
    uint32_t reserved;
    uint64_t file_id; /* nonzero: the old name must name this file, else PS_ERR_NO_ENTRY */
} ps_rename_req_t;
typedef struct ps_rename_rep {
    ps_file_info_t info;     /* the renamed file */
    ps_file_info_t replaced; /* the file the new name named before (valid if has_replaced) */
    uint32_t has_replaced;   /* 1 if the new name existed: the caller removes its objects */
    uint32_t reserved;
    ps_cap_t replaced_cap;   /* PS_CAP_REMOVE on the replaced file (if has_replaced) */
} ps_rename_rep_t;

/* --- MOVE: a rename between two metadata servers (doc/design.md "Renaming") ---
 * SRC's owner S (worker ps_path_worker(src)) and DST's owner D (its worker)
 * never talk to each other; the client carries signed words between them:
 *   LEAVE   (to S) marks SRC as leaving for DST (the caller must be allowed
 *           to remove SRC); reply: a ticket, the file's info MAC'd with SRC,
 *           DST and an expiry (S's clock + its move_life).
 *   ARRIVE  (to D) puts DST = the ticket's file (replacing DST as RENAME
 *           would, if the caller may remove it) and records the move as
 *           arrived, or, refused (rep.refused), as given up; reply: a receipt
 *           of which. D admits no ARRIVE after the ticket's expiry nor after
 *           it recorded the move either way. This is the commit point.
 *   DONE    (to S) with the ticket and D's receipt: arrived deletes SRC,
 *           given up drops the mark; either only if SRC's mark is the
 *           ticket's move; reply: a receipt that the move departed (S holds
 *           no mark of it, for good).
 *   QUERY   (to S) SRC's mark (ticket; DST in the reply data), or, with
 *           src_len 0 (root), the first marked name's in the store's order,
 *           or the first after the name given as DST (dst_len > 0: so that
 *           `pstripe gc` passes a move still under way); PS_ERR_NO_ENTRY if
 *           none.
 *           With PS_MOVE_ARRIVALS (to D; src_len 0, root): some move D
 *           holds as arrived (ticket, both names, D's receipt), whose
 *           client died before FORGET: DONE at S and FORGET settle it.
 *   RESOLVE (to D) the receipt of a move found marked: arrived, given up,
 *           or, if D has no record, given up now if the ticket expired or
 *           PS_MOVE_GIVE_UP is set, else PS_ERR_BUSY (still under way).
 *   FORGET  (to D) with DONE's receipt (departed: S holds no mark of the
 *           move): D may drop its record of an arrived move once the
 *           ticket has long expired.
 * While SRC is marked, REMOVE, RENAME (either name), SETATTR and LEAVE of it,
 * and ARRIVE onto it, answer PS_ERR_BUSY: the client settles the mark
 * (QUERY, RESOLVE, DONE) and tries again. Records and marks are flushed
 * before each answer (but FORGET's, which only tidies). With auth = none
 * the MACs are neither made nor checked; with any other, a server refuses MOVE unless it knows its
 * place in the cluster (server_index, cluster_size), so that only D decides. A receipt's MAC names
 * its ticket's. AM data: SRC (src_len bytes), then DST (dst_len). */
#define PS_MOVE_LEAVE         1u
#define PS_MOVE_ARRIVE        2u
#define PS_MOVE_DONE          3u
#define PS_MOVE_QUERY         4u
#define PS_MOVE_RESOLVE       5u
#define PS_MOVE_FORGET        6u
#define PS_MOVE_GIVE_UP       0x2u /* RESOLVE: give the move up now unless it arrived */
#define PS_MOVE_ARRIVALS      0x4u /* QUERY: an arrived move, not a mark */
#define PS_MOVE_ARRIVED       1u   /* receipt states: D holds the move as arrived, */
#define PS_MOVE_GIVEN_UP      2u   /* or as given up (for good); */
#define PS_MOVE_DEPARTED      3u   /* S holds no mark of it (for good) */
#define PS_MOVE_TICKET_LABEL  "pstripe-move-ticket-v1"
#define PS_MOVE_RECEIPT_LABEL "pstripe-move-receipt-v1"
typedef struct ps_move_ticket {
    uint64_t tid;                 /* random: names the move */
    uint64_t expiry_ns;           /* CLOCK_REALTIME after which D admits no ARRIVE */
    ps_file_info_t info;          /* the file SRC named */
    uint32_t flags;               /* PS_RENAME_NOREPLACE or 0 */
    uint32_t reserved;            /* 0 */
    uint8_t mac[PS_AUTH_MAC_LEN]; /* under the capability key over
                                     PS_MOVE_TICKET_LABEL, the fields before, the
                                     lengths of SRC and DST (2 x uint32_t), SRC, DST */
} ps_move_ticket_t;
typedef struct ps_move_receipt {
    uint64_t tid;
    uint32_t state;               /* PS_MOVE_ARRIVED, _GIVEN_UP or _DEPARTED */
    uint32_t reserved;            /* 0 */
    uint8_t mac[PS_AUTH_MAC_LEN]; /* over PS_MOVE_RECEIPT_LABEL, the fields before and
                                     the MAC of the move's ticket */
} ps_move_receipt_t;
typedef struct ps_move_req {
    uint32_t op;               /* PS_MOVE_LEAVE..PS_MOVE_FORGET */
    uint32_t src_len;          /* 1..PS_PATH_MAX (0 only for root's QUERY) */
    uint32_t dst_len;          /* 1..PS_PATH_MAX (QUERY: 0, or for root's of marks
                                  the name to list after) */
    uint32_t flags;            /* LEAVE: PS_RENAME_NOREPLACE; RESOLVE: PS_MOVE_GIVE_UP;
                                  QUERY: PS_MOVE_ARRIVALS; else 0 */
    uint64_t file_id;          /* LEAVE: nonzero: SRC must name this file */
    ps_move_ticket_t ticket;   /* all but LEAVE and QUERY */
    ps_move_receipt_t receipt; /* DONE (arrived or given up), FORGET (departed) */
} ps_move_req_t;
typedef struct ps_move_rep {
    ps_move_ticket_t ticket;   /* LEAVE, QUERY */
    ps_move_receipt_t receipt; /* ARRIVE, RESOLVE, DONE, QUERY of arrivals */
    int32_t refused;           /* ARRIVE given up: why (a ps_status_t); else 0 */
    uint32_t has_replaced;     /* ARRIVE: 1 if DST named a file before */
    ps_file_info_t replaced;   /* ARRIVE: that file; the caller removes its objects */
    ps_cap_t replaced_cap;     /* PS_CAP_REMOVE on it */
    uint32_t src_len;          /* QUERY: bytes of SRC, then DST, in the reply data */
    uint32_t dst_len;
} ps_move_rep_t;

/* --- LIST ----------------------------------------------------------------- */
typedef struct ps_list_req {
    uint32_t prefix_len;  /* bytes of prefix at the start of AM data, 0..PS_PATH_MAX */
    uint32_t after_len;   /* bytes of resume key after the prefix (list paths > it) */
    uint32_t max_entries; /* 1..PS_LIST_MAX */
    uint32_t reserved;
} ps_list_req_t;
typedef struct ps_list_rep {
    uint32_t nentries; /* entries in AM data */
    uint32_t more;     /* 1 if more paths follow the last one */
    uint64_t data_len; /* bytes of AM data */
} ps_list_rep_t;
/* LIST reply data: nentries x { ps_list_entry_t; path bytes padded to 8 }. */
typedef struct ps_list_entry {
    ps_file_info_t info;
    uint32_t path_len; /* bytes of path that follow, 1..PS_PATH_MAX */
    uint32_t reserved;
} ps_list_entry_t;

/* --- OBJ_WRITE / OBJ_READ ---------------------------------------------------- */
#define PS_IO_RUNS 0x1u /* ps_io_req_t.flags: the list is ps_run_t entries */
/* ps_io_req_t.flags, OBJ_WRITE only: the list follows ps_io_req_t in the AM
 * header (hdr.body_len counts it, at most PS_IO_INLINE_MAX bytes) and the AM
 * data is the payload alone, so that a client sends the payload straight from
 * the caller's memory (UCX 1.13 copies IOV rendezvous data 8 KiB at a time). */
#define PS_IO_LIST_INLINE 0x2u
/* ps_io_req_t.flags, OBJ_WRITE only: the writer does not wait for the disk
 * (a client's write-behind flush): the server may acknowledge the batch's
 * short spans once they are in its write-back stage, as it does partial
 * blocks; they reach the disk joined with their neighbours or by age, and
 * before OBJ_SYNC and OBJ_FLUSH, which report a failed write. */
#define PS_IO_BEHIND      0x4u
#define PS_IO_INLINE_MAX  256u
/* Bytes of a message body: the largest fixed body (128) and an inline list. */
#define PS_BODY_MAX (128u + PS_IO_INLINE_MAX)

typedef struct ps_io_req {
    uint64_t file_id;     /* object to access */
    uint64_t payload_len; /* bytes: sum of region lengths */
    uint32_t nregions;    /* list entries (regions, or runs with PS_IO_RUNS), 1..PS_MAX_REGIONS */
    uint32_t flags;       /* PS_IO_*; other bits must be 0 */
    ps_cap_t cap;         /* of file_id, with PS_CAP_READ (OBJ_READ) or PS_CAP_WRITE */
} ps_io_req_t;
/* OBJ_WRITE data: the list (nregions x ps_region_t, or nregions x ps_run_t
 * with PS_IO_RUNS; in the header with PS_IO_LIST_INLINE), then payload_len
 * bytes, the regions' data in region order (a run's regions in index order).
 * OBJ_READ data: the list. Regions may be unsorted and may overlap (a later region wins for
 * writes); the regions of one run never overlap each other (stride >= len). */

/* A strided run: count regions of len bytes, region i at off + i * stride. */
typedef struct ps_run {
    uint64_t off;    /* bytes from the start of the object, of region 0 */
    uint64_t len;    /* bytes of each region, >= 1 */
    uint64_t stride; /* bytes from one region's start to the next, >= len */
    uint64_t count;  /* regions, >= 1 */
} ps_run_t;
typedef struct ps_io_rep {
    uint64_t bytes;    /* bytes written or read (payload_len on success) */
    uint64_t obj_size; /* object size after the operation, bytes */
    union {
        uint64_t disk_bytes;    /* OBJ_READ: bytes the server read from disk to serve it (and
                                   the batches served with it); 0: all from its memory */
        uint64_t failed_writes; /* OBJ_WRITE: writes of the object that were answered before
                                   the disk and then failed there, so far: the writer's mark
                                   for its OBJ_SYNC or OBJ_FLUSH (see below) */
    };
} ps_io_rep_t;
/* OBJ_READ reply data: payload_len bytes in region order; bytes beyond the
 * object's end read as zeros. */

/* --- OBJ_STAT / OBJ_TRUNCATE / OBJ_ALLOCATE / OBJ_REMOVE / OBJ_SYNC / OBJ_FLUSH ---- */
/*
 * A write the server answered before its bytes reached the disk (staged
 * partial blocks, PS_IO_BEHIND spans) may fail later. The object counts
 * such failures; each OBJ_WRITE reply carries the count as it was when the
 * server started the write, and a writer keeps the lowest count of its
 * replies since its last OBJ_SYNC or OBJ_FLUSH as its mark. OBJ_SYNC (an fsync) and OBJ_FLUSH (a
 * writer's close: the object's staged bytes are written, without an fsync) fail with the last
 * failure's status when the count is above the mark (UINT64_MAX: report nothing), as Linux reports
 * a writeback error to every descriptor open when it happened.
 */
typedef struct ps_obj_req {
    uint64_t file_id; /* object */
    uint64_t size;    /* OBJ_TRUNCATE: new size in bytes; OBJ_ALLOCATE: bytes to reserve
                         (the size grows to it if smaller); OBJ_SYNC, OBJ_FLUSH: the
                         writer's mark; otherwise 0 */
    ps_cap_t cap;     /* of file_id (see PS_CAP_*; OBJ_STAT: ignored) */
} ps_obj_req_t;
typedef struct ps_obj_rep {
    uint64_t size;     /* bytes (0 if the object does not exist) */
    uint64_t blocks;   /* bytes allocated on disk */
    uint64_t mtime_ns; /* last data modification, ns since the epoch */
    uint32_t exists;   /* 1 if the object exists */
    uint32_t reserved;
} ps_obj_rep_t;

/* --- META_SYNC, STATFS, STATS: request body is empty (body_len 0) ----------------- */
typedef struct ps_statfs_rep {
    uint64_t bsize;  /* bytes per block */
    uint64_t blocks; /* total blocks */
    uint64_t bfree;  /* free blocks */
    uint64_t bavail; /* blocks available to unprivileged users */
    uint64_t files;  /* paths in this server's metadata store */
    uint64_t fs_id;  /* the data directory's file system (machine and f_fsid): servers
                        that report the same id share their space */
} ps_statfs_rep_t;

#define PS_STATS_HIST_BUCKETS 24 /* bucket i: latency < 2^i microseconds (last: rest) */
typedef struct ps_stats_rep {
    uint64_t uptime_ns;          /* since the server started */
    uint64_t nworkers;           /* workers */
    uint64_t requests;           /* requests received, all types */
    uint64_t errors;             /* replies with an error status */
    uint64_t bytes_written;      /* payload bytes of OBJ_WRITE */
    uint64_t bytes_read;         /* payload bytes of OBJ_READ */
    uint64_t write_batches;      /* OBJ_WRITE requests */
    uint64_t read_batches;       /* OBJ_READ requests */
    uint64_t regions_written;    /* regions received in OBJ_WRITE */
    uint64_t regions_read;       /* regions received in OBJ_READ */
    uint64_t disk_writes;        /* disk write I/Os issued */
    uint64_t disk_reads;         /* disk read I/Os issued (including read-modify-write) */
    uint64_t disk_bytes_written; /* bytes */
    uint64_t disk_bytes_read;    /* bytes */
    uint64_t rmw_reads;          /* disk reads done for read-modify-write */
    uint64_t queue_depth;        /* disk I/Os in flight now */
    uint64_t queue_depth_max;    /* largest queue depth seen */
    uint64_t merged_batches;     /* batches served together with another batch */
    uint64_t direct_io;          /* 1 if data files use O_DIRECT, 0 if buffered fallback */
    uint64_t latency_hist[PS_STATS_HIST_BUCKETS]; /* request service times */
    uint64_t merged_writers; /* write jobs planned from batches of two or more clients */
    uint64_t merge_waits;    /* 0 since protocol 4 (the merge wait gave way to the
                                write-back stage) */
    uint64_t auth_mode;      /* ps_auth_mode_t in force */
    uint64_t auth_ok;        /* AUTH requests accepted */
    uint64_t auth_refused;   /* AUTH requests refused and requests of unauthenticated
                                connections refused (capability refusals: cap_refused) */
    uint64_t staged_bytes;     /* write payload bytes copied into the write-back stage */
    uint64_t stage_whole;      /* staged blocks written whole (completed in the stage) */
    uint64_t stage_partial;    /* staged blocks written partial (aged, sync, close, full) */
    uint64_t stage_rmw;        /* of those, read from disk first (read-modify-write) */
    uint64_t stage_full_waits; /* write jobs that waited for room in the stage */
    uint64_t stage_errors;     /* writes answered before the disk that failed there */
    uint64_t stage_blocks;     /* blocks in the stage now */
    uint64_t read_ahead_bytes; /* bytes read ahead of forward reads into the cache */
    uint64_t eager_replies;    /* replies whose data was sent eagerly (eager_reply) */
    uint64_t rndv_requests;    /* requests whose data came by rendezvous */
    uint64_t flushes_behind;   /* background flushes of files behind their writes */
    uint64_t cap_refused;      /* data requests of authenticated connections refused
                                  for their capability (missing, forged, expired,
                                  another file's, or without the right) */
} ps_stats_rep_t;

/* --- OBJ_LIST / META_LIVE: finding orphaned objects (`pstripe gc`) ---------------
 * Root's alone (anyone's with auth = none); any worker answers.
 * OBJ_LIST: the ids of the objects the server holds that are greater than
 *   after, ascending, at most count of them: the reply's AM data, rep.count
 *   ids; rep.more is 1 if greater ones follow.
 * META_LIVE: the request's AM data is count file ids, strictly ascending;
 *   the reply's is those of them that a path of the server's namespace
 *   names, or that a MOVE took from it after departure number `after`
 *   (rep.count ids, ascending). All its paths and departures are read in
 *   one transaction, so a request asks as many as it may. A file is named
 *   at two servers in turn while a MOVE runs, so a client that asked the
 *   new name's server before the file arrived finds it at the old one's
 *   (lib/psc_gc.c). The server keeps departures an hour: rep.more is 1 if
 *   some after `after` are no longer kept (the answer may then miss a file
 *   that left; ask again from a newer number). count 0 asks only the
 *   counts (marks, arrivals, departed). */
#define PS_IDS_MAX  65536u     /* ids per OBJ_LIST reply */
#define PS_LIVE_MAX (1u << 20) /* ids per META_LIVE request (8 MiB) */
typedef struct ps_ids_req {
    uint64_t after;    /* OBJ_LIST: list ids greater than this; META_LIVE: name the files
                          that departed after this departure number too */
    uint32_t count;    /* OBJ_LIST: at most this many, 1..PS_IDS_MAX; META_LIVE: ids in AM data,
                          1..PS_LIVE_MAX */
    uint32_t reserved; /* 0 */
} ps_ids_req_t;
typedef struct ps_ids_rep {
    uint32_t count;    /* ids in AM data */
    uint32_t more;     /* OBJ_LIST: 1 if ids greater than the last follow; META_LIVE: 1 if
                          departures after `after` are no longer all kept; else 0 */
    uint32_t marks;    /* META_LIVE: names marked leaving (MOVE), in the same transaction */
    uint32_t arrivals; /* META_LIVE: moves held as arrived (QUERY of PS_MOVE_ARRIVALS) */
    uint64_t departed; /* META_LIVE: the last departure's number (0: none yet) */
    uint64_t reserved; /* 0 */
} ps_ids_rep_t;

/* --- SHARED_FP ----------------------------------------------------------------------
 * A 64-bit counter named by (file_id, instance), kept in memory by worker
 * ps_object_worker(file_id) of the file's metadata owner ps_path_server(path).
 * The instance is a random id chosen at a collective open, so two opens of
 * one file have independent counters. SET makes a counter (the opener sets
 * it to 0); a FETCH_ADD of an unknown one fails with PS_ERR_NO_ENTRY (the
 * server restarted or dropped it: the position is lost); RELEASE forgets
 * it. Values and results
 * stay <= INT64_MAX (an add past it fails with PS_ERR_TOO_BIG, unchanged);
 * a server's table of counters is bounded (full: PS_ERR_TOO_BIG).
 * FETCH_ADD and SET carry the opener's view, the number of set_views since
 * the open (MPI_File_set_view resets the pointer to 0, collectively): a
 * counter reached by a newer view than its own is set to 0 first, so the
 * reset costs no message; an older view (a process still before a
 * set_view the others have finished) fails with PS_ERR_INVALID. */
#define PS_SFP_FETCH_ADD 1u /* add value; reply: the value before */
#define PS_SFP_SET       2u /* set to value; reply: the new value */
#define PS_SFP_RELEASE   3u /* forget the counter; reply: its last value (0 if unknown) */
#define PS_SFP_VALUE_MAX INT64_MAX
typedef struct ps_sfp_req {
    uint64_t file_id;  /* file the pointer belongs to */
    uint64_t instance; /* open instance (random, chosen at the collective open) */
    uint64_t value;    /* FETCH_ADD: increment; SET: new value; RELEASE: 0 (units: the caller's) */
    uint32_t op;       /* PS_SFP_* */
    uint32_t view;     /* set_views since the open (FETCH_ADD, SET; ignored by RELEASE) */
    ps_cap_t cap;      /* of file_id, any rights */
} ps_sfp_req_t;
typedef struct ps_sfp_rep {
    uint64_t value; /* see PS_SFP_* */
} ps_sfp_rep_t;

static_assert(sizeof(ps_msg_hdr_t) == 24, "wire size");
static_assert(sizeof(ps_region_t) == 16, "wire size");
static_assert(sizeof(ps_file_info_t) == 56, "wire size");
static_assert(sizeof(ps_cap_t) == 56, "wire size");
static_assert(sizeof(ps_setattr_req_t) == 24, "wire size");
static_assert(sizeof(ps_hello_req_t) == 8, "wire size");
static_assert(sizeof(ps_hello_rep_t) == 56, "wire size");
static_assert(sizeof(ps_shm_id_t) == 32, "wire size");
static_assert(sizeof(ps_auth_req_t) == 16, "wire size");
static_assert(sizeof(ps_auth_ticket_t) == 56, "wire size");
static_assert(sizeof(ps_auth_rep_t) == 64, "wire size");
static_assert(sizeof(ps_create_req_t) == 32, "wire size");
static_assert(sizeof(ps_file_rep_t) == 120, "wire size");
static_assert(sizeof(ps_path_req_t) == 8, "wire size");
static_assert(sizeof(ps_id_req_t) == 16, "wire size");
static_assert(sizeof(ps_rename_req_t) == 24, "wire size");
static_assert(sizeof(ps_rename_rep_t) == 176, "wire size");
static_assert(sizeof(ps_list_req_t) == 16, "wire size");
static_assert(sizeof(ps_list_rep_t) == 16, "wire size");
static_assert(sizeof(ps_ids_req_t) == 16, "wire size");
static_assert(sizeof(ps_ids_rep_t) == 32, "wire size");
static_assert(sizeof(ps_move_ticket_t) == 112, "wire size");
static_assert(sizeof(ps_move_receipt_t) == 48, "wire size");
static_assert(sizeof(ps_move_req_t) == 184, "wire size");
static_assert(sizeof(ps_move_rep_t) == 288, "wire size");
static_assert(sizeof(ps_list_entry_t) == 64, "wire size");
static_assert(sizeof(ps_io_req_t) == 80, "wire size");
static_assert(sizeof(ps_run_t) == 32, "wire size");
static_assert(sizeof(ps_io_rep_t) == 24, "wire size");
static_assert(sizeof(ps_obj_req_t) == 72, "wire size");
static_assert(sizeof(ps_obj_rep_t) == 32, "wire size");
static_assert(sizeof(ps_statfs_rep_t) == 48, "wire size");
static_assert(sizeof(ps_stats_rep_t) == 8 * (36 + PS_STATS_HIST_BUCKETS), "wire size");
static_assert(sizeof(ps_sfp_req_t) == 88, "wire size");
static_assert(sizeof(ps_sfp_rep_t) == 8, "wire size");

/* A decoded AM header: pointers into the caller's buffer, no copies. */
typedef struct ps_msg_view {
    const ps_msg_hdr_t *hdr;
    const void *body;  /* hdr->body_len bytes */
    uint64_t data_len; /* exact AM data length this message must carry */
} ps_msg_view_t;

/* Fill a header. */
void ps_msg_hdr_init(ps_msg_hdr_t *hdr, ps_msg_type_t type, uint64_t req_id, int32_t status,
                     uint32_t body_len);

/* Fixed body size of a request or reply of this type into *len;
 * PS_ERR_PROTO for an unknown type. */
ps_status_t ps_proto_body_len(uint16_t type, int is_reply, uint32_t *len);

/*
 * Check an AM header of hdr_len bytes (magic, version, type, body_len) and
 * the body's own fields (lengths within limits, no overflow), and compute the
 * exact AM data length the message must carry; the caller compares it with
 * the length actually received (different => PS_ERR_PROTO). A reply whose
 * status is an error has no body requirement beyond the header (body_len 0 is
 * accepted) and no data. Returns PS_OK or PS_ERR_PROTO; never reads beyond
 * hdr_len bytes.
 */
ps_status_t ps_proto_decode(const void *hdr, size_t hdr_len, int is_reply, ps_msg_view_t *view);

/*
 * Check the region array of an OBJ_READ/OBJ_WRITE: every len > 0, off + len
 * does not overflow and stays below max_obj_size, and the lengths sum to
 * payload_len. Returns PS_OK, PS_ERR_FILE_TOO_LARGE (a region ends past
 * max_obj_size: no object can hold it) or PS_ERR_PROTO (malformed).
 */
ps_status_t ps_proto_check_regions(const ps_region_t *regions, uint32_t nregions,
                                   uint64_t payload_len, uint64_t max_obj_size);

/* Bytes of the region list of an OBJ_READ/OBJ_WRITE body (in AM data, before
 * a write's payload). */
static inline uint64_t ps_io_list_bytes(const ps_io_req_t *io)
{
    return (uint64_t)io->nregions *
           ((io->flags & PS_IO_RUNS) ? sizeof(ps_run_t) : sizeof(ps_region_t));
}

/*
 * Check the run list of an OBJ_READ/OBJ_WRITE with PS_IO_RUNS: every run has
 * count >= 1, len >= 1 and stride >= len; its last region ends (off +
 * stride * (count - 1) + len, computed without overflow) at or below
 * max_obj_size; the runs' bytes (len * count) sum to payload_len; and they
 * describe at most PS_MAX_REGIONS regions, as a region list may hold. The
 * number of regions the runs describe goes to *nregions. Returns PS_OK,
 * PS_ERR_FILE_TOO_LARGE (a run ends past max_obj_size) or PS_ERR_PROTO.
 */
ps_status_t ps_proto_check_runs(const ps_run_t *runs, uint32_t nruns, uint64_t payload_len,
                                uint64_t max_obj_size, uint64_t *nregions);

/*
 * Check a path from the wire: 1..PS_PATH_MAX bytes, starts with '/', no NUL,
 * no empty, "." or ".." component, no trailing '/' (except the root "/",
 * which is not a file). Returns PS_OK, PS_ERR_INVALID or PS_ERR_NAME_TOO_LONG.
 */
ps_status_t ps_proto_check_path(const char *path, size_t len);

/* Normalize a user path into out (collapse "//", resolve "." and "..",
 * strip a trailing '/'); returns PS_OK or an error as ps_proto_check_path. */
ps_status_t ps_path_normalize(const char *path, char *out, size_t outlen);

/* Name of a message type ("OBJ_WRITE"). */
const char *ps_msg_type_name(uint16_t type);

/* "none", "munge", "key", "ticket" for a PS_AUTH_* method, else "unknown". */
const char *ps_auth_mode_name(uint32_t mode);

/* One-line description of the message whose AM header (hdr_len bytes) is
 * at buf, for trace logs, into out (len bytes); returns out. */
const char *ps_proto_dump(const void *buf, size_t hdr_len, char *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
