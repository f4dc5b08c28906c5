/*
 * landlock-exec: the plan-mode inner wall without an interpreter.
 *
 * Usage: landlock-exec -- COMMAND [ARG]...
 *
 * The same wall as `landlock.py readonly`: read and execute everywhere, write nothing but
 * /dev/null, no TCP bind or connect (ABI 4+), no device ioctl but on /dev/null (ABI 5+),
 * no abstract unix sockets or signals outside (ABI 6+); PR_SET_NO_NEW_PRIVS first. Then
 * SIGPIPE and SIGXFSZ back to their defaults and exec. Any step that fails ends the
 * process with status 126 before the command runs: it never runs unjailed. 127 when the
 * command is not found.
 *
 * Built by plancord (wall_helper.py) with the system's C compiler; it needs only the
 * kernel's headers for the syscall numbers, and defines Landlock's structures itself so
 * that older <linux/landlock.h> headers do not matter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define CREATE_RULESET_VERSION (1U << 0)
#define RULE_PATH_BENEATH 1

#define FS_EXECUTE (1ULL << 0)
#define FS_WRITE_FILE (1ULL << 1)
#define FS_READ_FILE (1ULL << 2)
#define FS_READ_DIR (1ULL << 3)
#define FS_ABI_1 ((1ULL << 13) - 1)
#define FS_REFER (1ULL << 13)
#define FS_TRUNCATE (1ULL << 14)
#define FS_IOCTL_DEV (1ULL << 15)
#define NET_TCP ((1ULL << 0) | (1ULL << 1))
#define SCOPE_ALL ((1ULL << 0) | (1ULL << 1))

#define EXIT_CANNOT_RUN 126
#define EXIT_NOT_FOUND 127

struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static int fail(const char *what) {
    fprintf(stderr, "plancord sandbox: could not apply Landlock: %s: %s\n", what,
            strerror(errno));
    return EXIT_CANNOT_RUN;
}

static int add_rule(int ruleset, const char *path, uint64_t rights) {
    struct path_beneath_attr rule;
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    rule.allowed_access = rights;
    rule.parent_fd = fd;
    long added = syscall(__NR_landlock_add_rule, ruleset, RULE_PATH_BENEATH, &rule, 0);
    int saved = errno;
    close(fd);
    errno = saved;
    return added == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 3 || strcmp(argv[1], "--") != 0) {
        fprintf(stderr, "usage: landlock-exec -- COMMAND [ARG]...\n");
        return 2;
    }
    long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, CREATE_RULESET_VERSION);
    if (abi < 1)
        return fail("landlock_create_ruleset(version)");
    struct ruleset_attr attr = {FS_ABI_1, 0, 0};
    size_t size = 8;
    if (abi >= 2)
        attr.handled_access_fs |= FS_REFER;
    if (abi >= 3)
        attr.handled_access_fs |= FS_TRUNCATE;
    if (abi >= 4) {
        attr.handled_access_net = NET_TCP;
        size = 16;
    }
    if (abi >= 5)
        attr.handled_access_fs |= FS_IOCTL_DEV;
    if (abi >= 6) {
        attr.scoped = SCOPE_ALL;
        size = 24;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return fail("prctl(PR_SET_NO_NEW_PRIVS)");
    int ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0)
        return fail("landlock_create_ruleset");
    uint64_t read = (FS_READ_FILE | FS_READ_DIR | FS_EXECUTE) & attr.handled_access_fs;
    uint64_t dev_null =
        (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & attr.handled_access_fs;
    if (add_rule(ruleset, "/", read) != 0)
        return fail("landlock_add_rule(/)");
    if (add_rule(ruleset, "/dev/null", dev_null) != 0)
        return fail("landlock_add_rule(/dev/null)");
    if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0)
        return fail("landlock_restrict_self");
    close(ruleset);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    execvp(argv[2], argv + 2);
    int code = errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
    fprintf(stderr, "plancord sandbox: %s: %s\n", argv[2],
            errno == ENOENT ? "command not found" : strerror(errno));
    return code;
}
