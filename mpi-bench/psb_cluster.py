"""psb_cluster: a local pstripe cluster as the benchmark runners start it
(run-matrix, ab-servers): the command line, and the wait for the servers'
caches."""
import os
import time


def start_command(tool, cdir, servers, workers=0, auth=None, sets=()):
    """`pstripe local start` for a cluster in cdir. Info level: the servers
    log when their cache is faulted in; workers pinned as on a storage node
    (pstripe local start leaves them unpinned), the configuration of every
    run since session 16."""
    cmd = [tool, "local", "start", "--dir", cdir, "-n", str(servers),
           "--set", "log_level=info", "--set", "pin=core"]
    if workers:
        cmd += ["--workers", str(workers)]
    if auth:
        cmd += ["--auth", auth]
    for s in sets:
        cmd += ["--set", s]
    return cmd


def wait_warm(cdir, servers, limit=120):
    """Wait until every server of the cluster in cdir has faulted its cache
    in (its log says so): until then its idle-priority warm-up slows what
    runs beside it on a small VM (HDF5 rows at a quarter to a half of their
    speed). The seconds it took, or None after limit seconds."""
    logs = [os.path.join(cdir, "server%d.log" % i) for i in range(servers)]
    t0 = time.time()
    while time.time() - t0 < limit:
        done = 0
        for path in logs:
            try:
                with open(path) as f:
                    text = f.read()
            except OSError:
                text = ""
            done += "cache memory faulted in" in text or "faulted in as used" in text
        if done == len(logs):
            return time.time() - t0
        time.sleep(0.5)
    return None
