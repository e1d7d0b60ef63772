/*
 * ps_cluster.cc: start, stop and restart real pstripe-server daemons for
 * integration tests (see ps_cluster.h).
 *
 * Readiness is a pipe, never a sleep: the child gets the pipe's write end as
 * fd 3 and `--ready-fd=3`; the server writes "ADDR:PORT\n" and closes it once
 * every worker listens. The parent polls the read end with a timeout; EOF
 * without a line means the server died during start-up, and its log says why.
 * Exits are awaited the same way, on a pidfd (pidfd_open, Linux >= 5.3), so
 * that a stop with a timeout needs no polling loop either.
 */
#include "ps_cluster.h"

#include "ps_time.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#ifndef PS_SERVER_PATH
#error "PS_SERVER_PATH must be defined (path of the pstripe-server binary)"
#endif
#ifndef PS_TEST_TMPDIR
#error "PS_TEST_TMPDIR must be defined (directory for test data under the build tree)"
#endif

namespace ps_test {

static const int ready_fd_in_child = 3;

/* Milliseconds left until deadline_ns (ps_time_ns()), rounded up; 0 once
 * it has passed. For poll() timeouts. */
static int ms_left(uint64_t deadline_ns)
{
    uint64_t now = ps_time_ns();
    return now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
}

/* ps_time_ns() timeout_s seconds from now (now if timeout_s <= 0). */
static uint64_t deadline_after(double timeout_s)
{
    return ps_time_ns() + (timeout_s > 0 ? (uint64_t)(timeout_s * 1e9) : 0);
}

static std::string cluster_key_file;

static void cluster_key_remove()
{
    unlink(cluster_key_file.c_str());
}

const std::string &cluster_key_path()
{
    if (!cluster_key_file.empty()) {
        return cluster_key_file;
    }
    make_dirs(PS_TEST_TMPDIR);
    cluster_key_file = std::string(PS_TEST_TMPDIR) + "/auth-" + std::to_string(getpid()) + ".key";
    unlink(cluster_key_file.c_str());
    int fd = open(cluster_key_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    unsigned char key[32];
    char hex[65];
    if (fd < 0 || getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
        fprintf(stderr, "cannot make the test cluster key %s: %s\n", cluster_key_file.c_str(),
                strerror(errno));
        abort();
    }
    for (size_t i = 0; i < sizeof(key); i++) {
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    }
    if (write(fd, hex, 64) != 64) {
        abort();
    }
    close(fd);
    atexit(cluster_key_remove);
    setenv("PSTRIPE_AUTH_KEY_FILE", cluster_key_file.c_str(), 0);
    return cluster_key_file;
}

long proc_kib(pid_t pid, const char *key)
{
    std::string st = read_file("/proc/" + std::to_string(pid) + "/status");
    size_t at = st.find(key);
    return at == std::string::npos ? -1 : atol(st.c_str() + at + strlen(key));
}

std::string read_file(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP) {
        rmdir(path);
    } else {
        unlink(path);
    }
    return 0;
}

void remove_tree(const std::string &path)
{
    nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int make_dirs(const std::string &path, mode_t mode)
{
    std::string cur;
    size_t pos = 0;

    while (pos != std::string::npos) {
        pos = path.find('/', pos + 1);
        cur = path.substr(0, pos);
        if (cur.empty()) {
            continue;
        }
        if (mkdir(cur.c_str(), mode) != 0 && errno != EEXIST) {
            return -errno;
        }
    }
    return 0;
}

double ps_cluster::start_timeout()
{
    const char *env = getenv("PS_TEST_START_TIMEOUT");
    double t = env ? atof(env) : 0.0;
    return t > 0 ? t : 60.0;
}

ps_cluster::ps_cluster(const std::string &name)
{
    std::string base = name;

    if (base.empty()) {
        const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
        base = info ? std::string(info->test_suite_name()) + "." + info->name() : "cluster";
    }
    for (char &c : base) {
        if (c == '/') {
            c = '_';
        }
    }
    dir_ = std::string(PS_TEST_TMPDIR) + "/" + base + "-" + std::to_string(getpid());
    remove_tree(dir_); /* left over from a crashed run with a recycled pid */
    int ret = make_dirs(dir_);
    if (ret != 0) {
        ADD_FAILURE() << "mkdir -p " << dir_ << ": " << strerror(-ret);
    }
}

ps_cluster::~ps_cluster()
{
    for (int i = 0; i < size(); i++) {
        if (running(i)) {
            int status = stop(i);
            if (status != -1 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
                ADD_FAILURE() << "server " << i << " did not exit cleanly on SIGTERM (status "
                              << status << ")";
            }
        }
    }
    for (int i = 0; i < size(); i++) {
        check_sanitizers(i);
    }
    if (::testing::Test::HasFailure()) {
        print_logs();
        fprintf(stderr, "ps_cluster: test data kept in %s\n", dir_.c_str());
    } else {
        remove_tree(dir_);
    }
}

std::string ps_cluster::log_path(int i) const
{
    return dir_ + "/server" + std::to_string(i) + ".log";
}

std::string ps_cluster::data_dir(int i) const
{
    return dir_ + "/server" + std::to_string(i);
}

std::string ps_cluster::log(int i) const
{
    return read_file(log_path(i));
}

bool ps_cluster::wait_log(int i, const std::string &text, double timeout_s) const
{
    for (double t = 0; t < timeout_s; t += 0.1) {
        if (log(i).find(text) != std::string::npos) {
            return true;
        }
        poll(nullptr, 0, 100);
    }
    return log(i).find(text) != std::string::npos;
}

::testing::AssertionResult ps_cluster::wait_cache_faulted(int i) const
{
    if (wait_log(i, "cache memory faulted in", 60.0)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "server " << i << " did not fault its cache in within 60 s:\n"
           << log(i);
}

std::string ps_cluster::address(int i) const
{
    return servers_.at(i).address;
}

std::string ps_cluster::host(int i) const
{
    const std::string &a = servers_.at(i).address;
    return a.substr(0, a.rfind(':'));
}

uint16_t ps_cluster::port(int i) const
{
    const std::string &a = servers_.at(i).address;
    size_t colon = a.rfind(':');
    return colon == std::string::npos ? 0 : (uint16_t)atoi(a.c_str() + colon + 1);
}

pid_t ps_cluster::pid(int i) const
{
    return (i >= 0 && i < size()) ? servers_[i].pid : -1;
}

double ps_cluster::cpu_seconds(int i) const
{
    if (pid(i) <= 0) {
        return -1;
    }
    std::string stat = read_file("/proc/" + std::to_string(pid(i)) + "/stat");
    size_t close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) {
        return -1;
    }
    /* fields after "pid (comm)": state is field 3; utime 14, stime 15 */
    unsigned long long utime = 0, stime = 0;
    char state;
    int n = sscanf(stat.c_str() + close_paren + 2,
                   "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &utime, &stime);
    if (n != 3) {
        return -1;
    }
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

std::string ps_cluster::servers_csv() const
{
    std::string csv;
    for (int i = 0; i < size(); i++) {
        if (i > 0) {
            csv += ",";
        }
        csv += servers_[i].address;
    }
    return csv;
}

void ps_cluster::print_logs() const
{
    for (int i = 0; i < size(); i++) {
        fprintf(stderr,
                "===== log of server %d (%s) =====\n%s===== end of log of server %d =====\n", i,
                log_path(i).c_str(), log(i).c_str(), i);
    }
}

std::string ps_cluster::write_client_conf(const std::vector<std::string> &extra_lines) const
{
    std::string path = dir_ + "/client.conf";
    std::ofstream out(path, std::ios::trunc);
    out << "[client]\nservers = " << servers_csv() << "\n";
    out << "auth_key_file = " << cluster_key_path() << "\n";
    for (const std::string &line : extra_lines) {
        out << line << "\n";
    }
    return path;
}

::testing::AssertionResult ps_cluster::start(int n, int workers,
                                             const std::vector<std::string> &extra_args)
{
    int first = size();
    for (int k = 0; k < n; k++) {
        server s;
        s.workers = workers;
        s.extra = extra_args;
        servers_.push_back(s);
    }
    for (int i = first; i < size(); i++) {
        ::testing::AssertionResult res = spawn(i, "127.0.0.1:0");
        if (!res) {
            return res;
        }
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult ps_cluster::restart(int i, bool same_port)
{
    if (i < 0 || i >= size()) {
        return ::testing::AssertionFailure() << "no server " << i;
    }
    if (running(i)) {
        stop(i);
    }
    std::string listen = same_port ? servers_[i].address : "127.0.0.1:0";
    return spawn(i, listen);
}

::testing::AssertionResult ps_cluster::spawn(int i, const std::string &listen)
{
    server &s = servers_[i];
    std::string data = data_dir(i);
    std::string logp = log_path(i);
    std::vector<std::string> args = {
        PS_SERVER_PATH, "--data", data,
        "--listen",     listen,   "--ready-fd=" + std::to_string(ready_fd_in_child),
        "--log-file",   logp};
    const char *level = getenv("PS_TEST_LOG_LEVEL");
    args.push_back("--log-level");
    args.push_back(level ? level : "info");
    if (s.workers > 0) {
        args.push_back("--workers");
        args.push_back(std::to_string(s.workers));
    }
    args.push_back("--set");
    args.push_back("auth=key");
    args.push_back("--set");
    args.push_back("auth_key_file=" + cluster_key_path());
    /* the default cache (2g per server) is faulted in after start: tests
     * run several daemons at once and need little of it */
    args.push_back("--set");
    args.push_back("cache=64m");
    /* unpinned, as pstripe local start's: tests run beside MPI processes
     * that Open MPI binds to cores and that busy-poll, which kept a worker
     * pinned there off the CPU for seconds (a test that relies on two
     * clients' writes coming within 1 s of each other failed so) */
    args.push_back("--set");
    args.push_back("pin=none");
    for (const std::string &a : s.extra) { /* (placed(): this server's place) */
        args.push_back(a == "server_index=auto"   ? "server_index=" + std::to_string(i)
                       : a == "cluster_size=auto" ? "cluster_size=" + std::to_string(size())
                                                  : a);
    }

    std::vector<char *> argv;
    for (std::string &a : args) {
        argv.push_back(&a[0]);
    }
    argv.push_back(nullptr);

    int ret = make_dirs(data);
    if (ret != 0) {
        return ::testing::AssertionFailure() << "mkdir -p " << data << ": " << strerror(-ret);
    }

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        return ::testing::AssertionFailure() << "pipe2: " << strerror(errno);
    }

    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(pfd[0]);
        close(pfd[1]);
        return ::testing::AssertionFailure() << "fork: " << strerror(err);
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls until exec. The server dies
         * with the test process, so a crashed test leaves no daemon behind.
         * It has a process group of its own: a test started in the
         * background by a shell that then exits is an orphaned group, and
         * the kernel sends such a group SIGHUP and SIGCONT when a member is
         * stopped, which continued a server the test had stopped with
         * SIGSTOP (ClientFault.ServerStoppedMidWrite: "write did not fail:
         * hung", the server answering again). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        setpgid(0, 0);
        if (getppid() != parent) {
            _exit(127);
        }
        int logfd = open(logp.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (logfd < 0 || nullfd < 0) {
            _exit(127);
        }
        dup2(nullfd, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        if (pfd[1] == ready_fd_in_child) {
            fcntl(pfd[1], F_SETFD, 0);
        } else {
            dup2(pfd[1], ready_fd_in_child); /* the copy is not close-on-exec */
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execv(argv[0], argv.data());
        static const char msg[] = "ps_cluster: exec of the server binary failed\n";
        ssize_t w = write(2, msg, sizeof(msg) - 1);
        (void)w;
        _exit(127);
    }

    close(pfd[1]);
    s.pid = pid;
    s.sanitizer_checked = false;

    /* Wait for "ADDR:PORT\n" on the pipe. */
    std::string line;
    uint64_t deadline = deadline_after(start_timeout());
    bool eof = false, timed_out = false;
    while (line.find('\n') == std::string::npos) {
        int left = ms_left(deadline);
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {pfd[0], POLLIN, 0};
        int r = poll(&p, 1, left);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            timed_out = r == 0;
            break;
        }
        char buf[256];
        ssize_t got = read(pfd[0], buf, sizeof(buf));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            eof = true;
            break;
        }
        line.append(buf, (size_t)got);
    }
    close(pfd[0]);

    size_t nl = line.find('\n');
    if (nl == std::string::npos || nl == 0) {
        std::string why = timed_out ? "timed out waiting for its address"
                          : eof     ? "closed the ready fd without an address"
                                    : "ready fd error";
        /* A server that closed the fd is exiting by itself (a sanitizer's exit
         * checks can take a while): let it, then stop it if it is still there. */
        int status = eof ? reap(i, start_timeout()) : -1;
        if (running(i)) {
            status = stop(i, 5.0);
        }
        return ::testing::AssertionFailure()
               << "server " << i << " (" << PS_SERVER_PATH << ") failed to start: " << why
               << ", wait status " << status << "; log " << logp << ":\n"
               << log(i);
    }
    s.address = line.substr(0, nl);
    if (s.address.rfind(':') == std::string::npos) {
        stop(i, 5.0);
        return ::testing::AssertionFailure()
               << "server " << i << " wrote a bad ready line '" << s.address << "'";
    }
    return ::testing::AssertionSuccess();
}

int ps_cluster::kill(int i, int sig)
{
    pid_t p = pid(i);
    if (p <= 0) {
        return -ESRCH;
    }
    if (::kill(p, sig) != 0) {
        return -errno;
    }
    if (sig == SIGSTOP) {
        /* kill() returns before the target has stopped: on a loaded machine
         * its threads ran on for milliseconds and answered requests a test
         * expected to time out. Wait until it is stopped (or gone); WNOWAIT
         * leaves the event for a later reap. */
        siginfo_t info;
        while (waitid(P_PID, p, &info, WSTOPPED | WEXITED | WNOWAIT) != 0 && errno == EINTR) {
        }
    }
    return 0;
}

/*
 * Wait up to timeout_s for server i to exit and reap it. Returns the wait
 * status, or -1 on timeout (the process is left running).
 */
int ps_cluster::reap(int i, double timeout_s)
{
    pid_t p = pid(i);
    int status = 0;

    if (p <= 0) {
        return -1;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, p, 0);
    if (pidfd >= 0) {
        uint64_t deadline = deadline_after(timeout_s);
        for (;;) {
            int left = ms_left(deadline);
            struct pollfd pf = {pidfd, POLLIN, 0};
            int r = left > 0 ? poll(&pf, 1, left) : 0;
            if (r < 0 && errno == EINTR) {
                continue;
            }
            break;
        }
        close(pidfd);
    }
    pid_t r;
    do {
        r = waitpid(p, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == p) {
        servers_[i].pid = -1;
        return status;
    }
    if (r < 0) { /* not our child any more */
        servers_[i].pid = -1;
        return -1;
    }
    return -1;
}

int ps_cluster::wait(int i, double timeout_s)
{
    return reap(i, timeout_s);
}

int ps_cluster::stop(int i, double timeout_s)
{
    pid_t p = pid(i);
    if (p <= 0) {
        return -1;
    }
    ::kill(p, SIGTERM);
    ::kill(p, SIGCONT); /* a server a test stopped with SIGSTOP must run to exit */
    int status = reap(i, timeout_s);
    if (status == -1 && running(i)) {
        fprintf(stderr, "ps_cluster: server %d (pid %d) ignored SIGTERM for %.0fs, killing it\n", i,
                (int)p, timeout_s);
        ::kill(p, SIGKILL);
        status = reap(i, 30.0);
        if (status != -1) {
            /* Report a kill as such even if it raced with a clean exit. */
            status = WIFEXITED(status) ? (SIGKILL & 0x7f) : status;
        }
    }
    return status;
}

void ps_cluster::check_sanitizers(int i)
{
    static const char *const patterns[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                           "runtime error:", "WARNING: ThreadSanitizer"};
    if (servers_[i].sanitizer_checked) {
        return;
    }
    servers_[i].sanitizer_checked = true;
    std::string text = log(i);
    for (const char *pat : patterns) {
        size_t pos = text.find(pat);
        if (pos != std::string::npos) {
            size_t start = text.rfind('\n', pos);
            start = start == std::string::npos ? 0 : start + 1;
            ADD_FAILURE() << "sanitizer report in the log of server " << i << " (" << log_path(i)
                          << "):\n"
                          << text.substr(start, 4000);
        }
    }
}

} // namespace ps_test
