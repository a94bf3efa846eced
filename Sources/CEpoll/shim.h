#ifndef CORELOCATION_CEPOLL_SHIM_H
#define CORELOCATION_CEPOLL_SHIM_H

// epoll(7) for the daemon client's and the stream sources' reading (Glibc's Swift module leaves
// <sys/epoll.h> out, and `struct epoll_event` is packed on x86-64, which Swift does not import):
// an epoll instance watching one descriptor for input, and a wait that says what was reported.

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

/// A new epoll instance (close-on-exec) watching `fd` for input and for the peer's hangup,
/// edge-triggered when `edge` is not 0; -1 with `errno` set when it cannot be made.
static inline int cepoll_watching(int fd, int edge) {
  int instance = epoll_create1(EPOLL_CLOEXEC);
  if (instance < 0) return -1;
  struct epoll_event event = {0};
  event.events = EPOLLIN | EPOLLRDHUP | (edge ? EPOLLET : 0);
  event.data.fd = fd;
  if (epoll_ctl(instance, EPOLL_CTL_ADD, fd, &event) != 0) {
    int saved = errno;
    close(instance);
    errno = saved;
    return -1;
  }
  return instance;
}

/// Adds `fd` to `instance`, watched for input and hangup, level-triggered. 0, or -1 with `errno`.
static inline int cepoll_add_input(int instance, int fd) {
  struct epoll_event event = {0};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  return epoll_ctl(instance, EPOLL_CTL_ADD, fd, &event);
}

/// Changes what `instance` watches `fd` for: input and hangup, edge-triggered, when `input` is not
/// 0; else nothing but errors and hangup (which epoll always reports). 0, or -1 with `errno` set.
static inline int cepoll_watch_input(int instance, int fd, int input) {
  struct epoll_event event = {0};
  event.events = input ? (EPOLLIN | EPOLLRDHUP | EPOLLET) : EPOLLET;
  event.data.fd = fd;
  return epoll_ctl(instance, EPOLL_CTL_MOD, fd, &event);
}

/// Waits on `instance` up to `milliseconds` (-1: no limit), retrying `EINTR`; what the ready
/// descriptors reported, all their events in one mask (0 on timeout), or -1 on another error.
static inline int cepoll_wait_events(int instance, int milliseconds) {
  struct epoll_event events[4];
  int count;
  do {
    count = epoll_wait(instance, events, 4, milliseconds);
  } while (count < 0 && errno == EINTR);
  if (count < 0) return -1;
  int mask = 0;
  for (int index = 0; index < count; index++) mask |= (int)events[index].events;
  return mask;
}

/// `cepoll_wait_events` with a limit in nanoseconds (at least 0), for a wait that ends less than a
/// millisecond before something is due (`EpochLead`): `epoll_pwait2` (Linux 5.11), or on older
/// kernels whole milliseconds, rounded down.
static inline int cepoll_wait_events_for(int instance, long long nanoseconds) {
  struct epoll_event events[4];
  struct timespec timeout = {nanoseconds / 1000000000LL, nanoseconds % 1000000000LL};
  int count;
  do {
    count = epoll_pwait2(instance, events, 4, &timeout, NULL);
  } while (count < 0 && errno == EINTR);
  if (count < 0 && errno == ENOSYS) return cepoll_wait_events(instance, (int)(nanoseconds / 1000000));
  if (count < 0) return -1;
  int mask = 0;
  for (int index = 0; index < count; index++) mask |= (int)events[index].events;
  return mask;
}

/// Whether an event mask from `cepoll_wait_events` says the peer hung up or the descriptor failed:
/// an edge-triggered reader then reads on to the end, which no later edge would announce.
static inline int cepoll_hung_up(int mask) {
  return mask > 0 && (mask & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)) != 0;
}

#endif
