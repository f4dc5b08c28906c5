/* net-bridge PORT SOCKET -- COMMAND [ARG...]
 *
 * Inside a sandbox whose network the plan grants: listen on 127.0.0.1:PORT of the sandbox's
 * own loopback, carry each connection to the unix socket SOCKET (the host's proxy), and run
 * COMMAND. The port is bound before COMMAND starts, so nothing can race it. The server is
 * detached (a double fork, its stdio on /dev/null), so COMMAND's own `wait` never waits for
 * it; it dies with the sandbox. It grants nothing: the proxy decides every connection.
 * The Python bridge (net_bridge.py) does the same where no C compiler is found.
 * Any failure before COMMAND starts exits 126.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_all(int fd, const char *data, ssize_t size) {
    while (size > 0) {
        ssize_t done = write(fd, data, (size_t)size);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += done;
        size -= done;
    }
    return 0;
}

static void carry(int client, const char *path) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int upstream = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (upstream < 0 || connect(upstream, (struct sockaddr *)&address, sizeof address) < 0)
        _exit(0);
    static char buffer[65536];
    int sending = 1, receiving = 1;
    while (sending || receiving) {
        struct pollfd ends[2] = {
            {.fd = sending ? client : -1, .events = POLLIN},
            {.fd = receiving ? upstream : -1, .events = POLLIN},
        };
        if (poll(ends, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (sending && ends[0].revents) {
            ssize_t got = read(client, buffer, sizeof buffer);
            if (got <= 0) {
                shutdown(upstream, SHUT_WR);
                sending = 0;
            } else if (write_all(upstream, buffer, got) < 0) {
                break;
            }
        }
        if (receiving && ends[1].revents) {
            ssize_t got = read(upstream, buffer, sizeof buffer);
            if (got <= 0) {
                shutdown(client, SHUT_WR);
                receiving = 0;
            } else if (write_all(client, buffer, got) < 0) {
                break;
            }
        }
    }
    _exit(0);
}

static void serve(int listener, const char *path) {
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2)
            close(null);
    }
    signal(SIGCHLD, SIG_IGN); /* connection handlers are reaped by the kernel */
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            _exit(0);
        }
        /* Each write goes out at once: a reply written in two parts (head, then body)
         * must not wait for the client's delayed acknowledgement (40 ms) of the first. */
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pid_t handler = fork();
        if (handler == 0) {
            close(listener);
            carry(client, path);
        }
        close(client);
    }
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: net-bridge PORT SOCKET -- COMMAND [ARG...]\n");
        return 126;
    }
    int port = atoi(argv[1]);
    const char *path = argv[2];
    if (port < 0 || port > 65535 || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "net-bridge: bad port or socket path\n");
        return 126;
    }
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int yes = 1;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) < 0 ||
        bind(listener, (struct sockaddr *)&address, sizeof address) < 0 ||
        listen(listener, 64) < 0) {
        perror("net-bridge: cannot listen on the sandbox's loopback");
        return 126;
    }
    pid_t middle = fork();
    if (middle < 0) {
        perror("net-bridge: fork");
        return 126;
    }
    if (middle == 0) {
        pid_t server = fork();
        if (server == 0)
            serve(listener, path);
        _exit(server < 0 ? 1 : 0);
    }
    int status = 0;
    while (waitpid(middle, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "net-bridge: could not start its server\n");
        return 126;
    }
    close(listener);
    execvp(argv[4], argv + 4);
    fprintf(stderr, "net-bridge: %s: %s\n", argv[4], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
