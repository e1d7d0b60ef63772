/*
 * ps_cluster.h: start real pstripe-server daemons for integration tests.
 *
 * Daemons are started the libuv way: fork + exec of the server binary with
 * `--listen 127.0.0.1:0 --ready-fd=3`; the server writes its real address
 * ("127.0.0.1:PORT\n") to that pipe once every worker listens, and the test
 * waits for it with poll() and a timeout (no sleeps). Data directories and
 * logs live under the build tree (PS_TEST_TMPDIR, on the real disk so that
 * O_DIRECT alignment is enforced, never /dev/shm), one directory per test:
 *
 *   PS_TEST_TMPDIR/<Suite>.<Test>-<pid>/server<i>/   data dir of server i
 *   PS_TEST_TMPDIR/<Suite>.<Test>-<pid>/server<i>.log its log (stdout/stderr too)
 *
 * Teardown (destructor, or stop()): SIGTERM, waitpid with a timeout, then
 * SIGKILL. When the current test has failed every server's log is printed.
 * Logs are always scanned for sanitizer reports ("ERROR: AddressSanitizer",
 * "runtime error:") and the test fails if one is found. The test directory
 * is removed when the test passed, kept for inspection when it failed.
 *
 * Compile-time defines (set by tests/Makefile.mk, see PS_CLUSTER_CPPFLAGS):
 *   PS_SERVER_PATH  absolute path of the pstripe-server binary
 *   PS_TEST_TMPDIR  absolute path of the directory for test data
 *
 * Typical use:
 *
 *   ps_test::ps_cluster cluster;
 *   ASSERT_TRUE(cluster.start(4));              // 4 servers, 1 worker each
 *   setenv("PSTRIPE_SERVERS", cluster.servers_csv().c_str(), 1);
 *   ... // use the client library
 *   ASSERT_TRUE(cluster.restart(2));            // same data dir, new port
 *
 * Methods that can fail return ::testing::AssertionResult so that the test
 * can ASSERT_TRUE() on them and get the reason (and the server's log).
 * Not thread-safe: use one ps_cluster from the test's main thread.
 */
#ifndef PS_CLUSTER_H
#define PS_CLUSTER_H

#include <gtest/gtest.h>

#include <stdint.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace ps_test {

class ps_cluster {
public:
    /*
     * name: directory name under PS_TEST_TMPDIR; empty means
     * "<Suite>.<Test>-<pid>" of the running GoogleTest test.
     */
    explicit ps_cluster(const std::string &name = "");
    /* Stops every server (SIGTERM, wait, SIGKILL), prints logs if the test
     * failed, scans logs for sanitizer reports, removes the directory if the
     * test passed. */
    ~ps_cluster();

    ps_cluster(const ps_cluster &) = delete;
    ps_cluster &operator=(const ps_cluster &) = delete;

    /*
     * Start n servers with `workers` worker threads each (0: the server's
     * default, one per core) and extra command-line arguments for every
     * server (e.g. {"--set", "coalesce_gap=0"}). Servers already running are
     * kept; new ones are appended. Waits until each is ready.
     */
    ::testing::AssertionResult start(int n, int workers = 1,
                                     const std::vector<std::string> &extra_args = {});
    /* Extra arguments that tell each server its place in the cluster
     * (server_index, cluster_size: the servers started by one start()),
     * which renames between servers (MOVE) and gc need. */
    static std::vector<std::string> placed()
    {
        return {"--set", "server_index=auto", "--set", "cluster_size=auto"};
    }

    /* Number of servers started (running or not). */
    int size() const { return (int)servers_.size(); }

    /* "127.0.0.1:p1,127.0.0.1:p2,..." in server order (the client's `servers`). */
    std::string servers_csv() const;
    /* "127.0.0.1:PORT" of server i (worker 0's listener). */
    std::string address(int i) const;
    std::string host(int i) const;
    uint16_t port(int i) const;

    /* Process id of server i, or -1 if it is not running. */
    pid_t pid(int i) const;
    bool running(int i) const { return pid(i) > 0; }
    /* CPU time server i has used (utime + stime of the process, from
     * /proc/PID/stat), in seconds; -1 if it is not running. */
    double cpu_seconds(int i) const;

    /* Send a signal to server i; returns 0 or -errno. With SIGSTOP, returns
     * once the server is stopped (or gone). */
    int kill(int i, int sig);

    /*
     * Stop server i: SIGTERM, wait up to timeout_s, then SIGKILL. Returns the
     * waitpid() status (use WIFEXITED/WEXITSTATUS), or -1 if it was not
     * running. Also scans its log for sanitizer reports.
     */
    int stop(int i, double timeout_s = 30.0);

    /*
     * Wait up to timeout_s for server i to exit by itself (e.g. after kill());
     * returns its waitpid() status, or -1 on timeout / not running.
     */
    int wait(int i, double timeout_s = 30.0);

    /*
     * Restart server i on the same data dir with the same arguments (its
     * port changes unless `same_port`; the old process is stopped first if
     * still running). Waits until ready.
     */
    ::testing::AssertionResult restart(int i, bool same_port = false);

    /* Whole log of server i (every run of it, appended). */
    std::string log(int i) const;
    /* Wait up to timeout_s for text to appear in server i's log. */
    bool wait_log(int i, const std::string &text, double timeout_s) const;
    /* Wait until server i has faulted its cache's memory in (which it
     * does after start, at idle priority: its RSS grows meanwhile). */
    ::testing::AssertionResult wait_cache_faulted(int i) const;
    std::string log_path(int i) const;
    /* Data directory of server i. */
    std::string data_dir(int i) const;
    /* This test's directory (holds the servers' dirs and logs). */
    const std::string &dir() const { return dir_; }

    /*
     * Write a client config file "<dir>/client.conf" with a [client] section
     * holding `servers = <servers_csv()>` and the extra lines given (e.g.
     * "stripe_size = 64k"); returns its path.
     */
    std::string write_client_conf(const std::vector<std::string> &extra_lines = {}) const;

    /* Print every server's log to stderr (done automatically on failure). */
    void print_logs() const;

    /* Seconds to wait for a server's ready line (default 60, env
     * PS_TEST_START_TIMEOUT). */
    static double start_timeout();

private:
    struct server {
        pid_t pid = -1;
        std::string address;            /* "127.0.0.1:PORT" */
        int workers = 1;
        std::vector<std::string> extra; /* extra arguments */
        bool sanitizer_checked = false;
    };

    ::testing::AssertionResult spawn(int i, const std::string &listen);
    int reap(int i, double timeout_s);
    void check_sanitizers(int i);

    std::string dir_;
    std::vector<server> servers_;
};

/*
 * The cluster key of this test process: PS_TEST_TMPDIR/auth-<pid>.key
 * (mode 0600), made on first use and removed at exit. Every ps_cluster
 * starts its servers with auth = key and this key file (extra arguments
 * may override it), and the first call sets PSTRIPE_AUTH_KEY_FILE so that
 * clients of this process authenticate.
 */
const std::string &cluster_key_path();

/* Read a whole file into a string (empty if it cannot be read). */
std::string read_file(const std::string &path);
/* A process's "VmHWM:" or "VmRSS:" (a line of /proc/PID/status), in KiB;
 * -1 if there is none. */
long proc_kib(pid_t pid, const char *key);
/* `rm -rf path` without running a shell. */
void remove_tree(const std::string &path);
/* mkdir -p; returns 0 or -errno. */
int make_dirs(const std::string &path, mode_t mode = 0755);

} // namespace ps_test

#endif
