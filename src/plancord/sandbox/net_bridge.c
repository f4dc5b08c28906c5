/* net-bridge PORT FD -- COMMAND [ARG...]
 *
 * Inside a sandbox whose network the plan grants: listen on 127.0.0.1:PORT of the sandbox's
 * own loopback, hand that listening socket to the host's proxy over the connection FD (one
 * byte "L" with the socket as SCM_RIGHTS), close both, and run COMMAND. The proxy then
 * accepts on the sandbox's loopback itself, so no process of this bridge stays behind and
 * no byte is copied twice; the port is bound before COMMAND starts, so nothing can race
 * it, and COMMAND never holds FD. It grants nothing: the proxy decides every connection.
 * The Python bridge (net_bridge.py) does the same where no C compiler is found.
 * Any failure before COMMAND starts exits 126.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int hand_over(int door, int listener) {
    char mark = 'L';
    struct iovec data = {.iov_base = &mark, .iov_len = 1};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {
        .msg_iov = &data,
        .msg_iovlen = 1,
        .msg_control = control.buffer,
        .msg_controllen = sizeof control.buffer,
    };
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &listener, sizeof(int));
    ssize_t sent;
    do
        sent = sendmsg(door, &message, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent == 1 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: net-bridge PORT FD -- COMMAND [ARG...]\n");
        return 126;
    }
    char *end = NULL;
    long port = strtol(argv[1], &end, 10);
    long door = strtol(argv[2], NULL, 10);
    if (*end != '\0' || port < 1 || port > 65535 || door < 3) {
        fprintf(stderr, "net-bridge: bad port or descriptor\n");
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
        listen(listener, 128) < 0) {
        perror("net-bridge: cannot listen on the sandbox's loopback");
        return 126;
    }
    if (hand_over((int)door, listener) < 0) {
        perror("net-bridge: cannot reach the proxy");
        return 126;
    }
    close((int)door);
    close(listener);
    execvp(argv[4], argv + 4);
    fprintf(stderr, "net-bridge: %s: %s\n", argv[4], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
