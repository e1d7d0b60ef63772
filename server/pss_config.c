/*
 * pss_config.c: the server's tunables, section [server] of a config file,
 * environment PSTRIPE_<NAME>, `--set name=value`, dumped by --print-config.
 */
#include "pss_config.h"

#include "ps_proto.h"

#include <stddef.h>

#define PSS_FIELD(_name, _dfl, _doc, _type, _member, _min, _max)                     \
    {_name, _dfl, _doc, _type, offsetof(pss_config_t, _member), _min, _max}

const ps_config_field_t pss_config_table[] = {
    PSS_FIELD("listen", "0.0.0.0:7420",
              "ADDR:PORT of worker 0 (port 0: any free port); other workers use free ports",
              PS_CFG_STRING, listen, 1, 0),
    PSS_FIELD("data_dir", "", "data directory (meta/, obj/, lock); required", PS_CFG_STRING,
              data_dir, 1, 0),
    PSS_FIELD("workers", "0", "worker threads, 0 = one per core of the cpuset", PS_CFG_INT, workers,
              0, PS_MAX_WORKERS),
    PSS_FIELD("pin", "core",
              "core: each worker runs on a core of its own (cache and NUMA locality on a "
              "storage node); none: wherever the kernel places it. A pinned worker shares its "
              "core with whatever else runs there: an MPI process bound to that core that "
              "busy-polls (Open MPI's waits) kept a woken worker off the CPU for seconds; "
              "`pstripe local start` sets none",
              PS_CFG_STRING, pin, 1, 0),
    PSS_FIELD("max_batch", "256m", "largest payload of one OBJ_READ/OBJ_WRITE batch", PS_CFG_SIZE,
              max_batch, 4096, (double)PS_MAX_PAYLOAD),
    PSS_FIELD("coalesce_gap", "4k",
              "regions at most this far apart are served by one disk I/O (gap read or "
              "read-modify-written)",
              PS_CFG_SIZE, coalesce_gap, 0, (double)(1ull << 30)),
    PSS_FIELD("max_io", "1m", "largest single disk I/O", PS_CFG_SIZE, max_io, 4096,
              (double)(1ull << 30)),
    PSS_FIELD("aio_depth", "128", "disk I/Os in flight per worker (libaio queue)", PS_CFG_INT,
              aio_depth, 1, 65536),
    PSS_FIELD("direct_io", "auto",
              "O_DIRECT for objects: auto (fall back to buffered with a warning), yes, no",
              PS_CFG_STRING, direct_io, 1, 0),
    PSS_FIELD("log_level", "warn", "error, warn, info, debug or trace", PS_CFG_LOGLEVEL, log_level,
              1, 0),
    PSS_FIELD("log_file", "", "append log lines to this file (empty: stderr)", PS_CFG_STRING,
              log_file, 1, 0),
    PSS_FIELD("max_merge", "64m",
              "payload of queued batches of one object planned together into disk I/Os",
              PS_CFG_SIZE, max_merge, 0, (double)PS_MAX_PAYLOAD),
    PSS_FIELD("max_open", "4096",
              "object files kept open (all workers; idle ones are closed beyond it, and it is "
              "lowered to fit RLIMIT_NOFILE)",
              PS_CFG_INT, max_open, 16, 1 << 24),
    PSS_FIELD("max_connections", "1024",
              "connections one worker accepts (lowered to fit RLIMIT_NOFILE); more are "
              "refused until some close",
              PS_CFG_INT, max_connections, 1, 1 << 20),
    PSS_FIELD("max_inflight", "1g",
              "per worker: buffers of large requests in service; beyond it their rendezvous "
              "data waits at the sender",
              PS_CFG_SIZE, max_inflight, 1 << 20, (double)(1ull << 40)),
    PSS_FIELD("flush_behind", "8m",
              "once small writes (clients' write-behind flushes, the write-back stage's "
              "blocks) have put this many bytes into an object's file since its last flush, "
              "fdatasync it in the background (on the reaper's thread) while writes go on, so "
              "that the sync ending the burst finds little left in the disk's volatile write "
              "cache (on this VM, HDF5's 128 MiB chunked writes 342-360 -> 384-434 MiB/s); "
              "large writes, whose writers wait for the disk, do not count: a flush stalls "
              "them (a stream of 1 MiB writes counted too: p99 latency 1.6 -> 20-22 ms); 0: "
              "flush only at sync and close",
              PS_CFG_SIZE, flush_behind, 0, (double)(1ull << 40)),
    PSS_FIELD("write_back", "128m",
              "per worker: write-back stage of partial blocks; the bytes of a write that "
              "leaves blocks partly written are kept and acknowledged, later writes fill the "
              "blocks, whole blocks go to disk at once, the rest after write_back_age, at "
              "OBJ_SYNC, truncate, close, or when it is full (0: off, every partial block is "
              "read-modify-written)",
              PS_CFG_SIZE, write_back, 0, (double)(1ull << 40)),
    PSS_FIELD("write_back_age", "1s", "longest time a partial block stays in the write-back stage",
              PS_CFG_TIME, write_back_age, 0, 3600.0),
    PSS_FIELD("write_back_wait", "200ms",
              "while several clients write an object, how long a write that finds the "
              "write-back stage full waits for the others to complete its partial blocks "
              "(queued writes that need no room go ahead of it) before the older half of the "
              "stage is written partial (0: at once, and nothing goes ahead)",
              PS_CFG_TIME, write_back_wait, 0, 3600.0),
    PSS_FIELD("cache", "2g",
              "memory of the server for bytes just written to or read from disk, so that "
              "reading them again (or another client's read of the same blocks) needs no "
              "disk read; faulted in at idle priority after start; each worker owns "
              "1/(2 x workers) of it and takes the other half as needed; least recently "
              "used first out (0: none)",
              PS_CFG_SIZE, cache, 0, (double)(1ull << 40)),
    PSS_FIELD("read_ahead", "4m",
              "bytes read into the cache ahead of an object's forward reads of small or "
              "noncontiguous pieces (what a local file system's read-ahead does for processes "
              "sharing its page cache; 0: none)",
              PS_CFG_SIZE, read_ahead, 0, (double)(1ull << 30)),
    PSS_FIELD("drain_timeout", "20s",
              "on SIGTERM, time allowed to finish in-flight requests before exiting", PS_CFG_TIME,
              drain_timeout, 0, 3600),
    PSS_FIELD("slow_reply", "5s",
              "a request answered this long or longer after it arrived is logged as a warning "
              "(its type, id, time and status): a slow disk, or a request held where it should "
              "not be; 0: never",
              PS_CFG_TIME, slow_reply, 0, 3600),
    PSS_FIELD("auth", "munge",
              "how clients prove who they are: munge (a MUNGE credential: munged must run on "
              "every node with the same key), key (the cluster key of auth_key_file) or none "
              "(anyone who reaches the ports is served; logged as a warning)",
              PS_CFG_STRING, auth, 1, 0),
    PSS_FIELD("auth_key_file", "",
              "the cluster key (auth = key: clients prove they hold it; key and munge: the "
              "capabilities of data requests are MAC'd under a key derived from it), owned by "
              "the server's user and readable by it alone",
              PS_CFG_STRING, auth_key_file, 0, 0),
    PSS_FIELD("munge_socket", "", "auth = munge: munged's socket (empty: MUNGE's default)",
              PS_CFG_STRING, munge_socket, 0, 0),
    PSS_FIELD("cap_life", "1h",
              "how long a capability given at open is valid (clients renew it after half "
              "of it); the same on every server",
              PS_CFG_TIME, cap_life, 2, 30 * 86400),
    PSS_FIELD("auth_wait", "5s",
              "a worker at max_connections makes room for a new connection by closing the "
              "oldest one that has not authenticated this long after it was accepted (clients "
              "authenticate at once), so that peers without credentials cannot hold every slot",
              PS_CFG_TIME, auth_wait, 0.1, 3600),
    PSS_FIELD("data_wait", "30s",
              "a request's rendezvous data must arrive this long after the server asked for it, "
              "else the client's connection is closed: a client that stopped sending (stopped "
              "by a debugger, hung) holds that request's share of max_inflight meanwhile",
              PS_CFG_TIME, data_wait, 0.1, 86400),
    PSS_FIELD("move_life", "1min",
              "a rename of a name this server owns to one another server owns must arrive "
              "there this long after it started, else it is given up; a rename whose client "
              "died keeps the old name busy for removal, rename and chmod until then",
              PS_CFG_TIME, move_life, 1, 86400),
    PSS_FIELD("ticket_life", "5min",
              "how long the ticket a client gets for this server's other workers is valid "
              "(a client renews it on a worker it opened already)",
              PS_CFG_TIME, ticket_life, 1, 86400),
    PSS_FIELD("server_index", "-1",
              "this server's index in the clients' server list (-1: not known); with "
              "cluster_size, a CREATE of a path another server owns is refused",
              PS_CFG_INT, server_index, -1, 65535),
    PSS_FIELD("cluster_size", "0", "servers in the cluster (0: not known); see server_index",
              PS_CFG_INT, cluster_size, 0, 65536),
    PSS_FIELD("spin", "50us",
              "after a request arrives, a disk I/O completes or a reply goes out, a worker with "
              "no disk I/O in flight keeps progressing this long, yielding the CPU each turn, "
              "before it sleeps: a wake-up from sleep costs about 20 us on a VM (while a disk "
              "I/O is in flight it sleeps: spinning delays the completion); 0: sleep at once",
              PS_CFG_TIME, spin, 0, 0.01),
    PSS_FIELD("eager_reply", "256k",
              "replies carrying at most this many bytes of data go as one eager message: "
              "over TCP, UCX's rendezvous costs the client a round trip and moves the data "
              "in fragments (reads of 64 KiB and of 256 KiB served from the cache ran 2.1 and "
              "1.7 times as fast eagerly); larger replies, or all with 0, go as UCX chooses "
              "(from 512 KiB eager was no faster, at 1 MiB slower: the client's copy out of "
              "UCX's buffer; set 0 on RDMA networks, whose rendezvous is zero-copy)",
              PS_CFG_SIZE, eager_reply, 0, (double)PS_MAX_PAYLOAD),
    PSS_FIELD("eager_reply_shm", "64k",
              "eager_reply of the shared-memory connections (shm), whose rendezvous moves the "
              "data by one cma copy instead of through TCP loopback: replies of 128 KiB and "
              "256 KiB served from the cache came 1.4 and 1.8 times as fast by rendezvous, "
              "of 32 KiB faster eagerly",
              PS_CFG_SIZE, eager_reply_shm, 0, (double)PS_MAX_PAYLOAD),
    PSS_FIELD("shm", "no",
              "also listen on the loopback address for clients of this host, whose "
              "connections then move large data by UCX's cma, one copy from the peer's memory "
              "(large reads about 1.5 times as fast as over TCP loopback); served only to "
              "clients authenticated as the servers' own user, never with auth = none "
              "(`pstripe local start` sets it)",
              PS_CFG_BOOL, shm, 0, 0),
    {NULL}};
