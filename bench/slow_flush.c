/* slow_flush.c - LD_PRELOAD shim for bench/allocations.py --flush-ms: every fsync/fdatasync of the
 * process (PostgreSQL's WAL flush at each commit) first sleeps SLOW_FLUSH_US microseconds, as on a
 * disk or network volume whose flush takes that long (this machine's virtual disk flushes in
 * ~0.1 ms, which hides what a commit per pre-debit costs on real storage). Built by the bench. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static void pause_flush(void) {
    static long us = -1;
    if (us < 0) { const char *v = getenv("SLOW_FLUSH_US"); us = v ? atol(v) : 5000; }
    struct timespec t = { us / 1000000, (us % 1000000) * 1000 };
    nanosleep(&t, NULL);
}
int fdatasync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fdatasync"); pause_flush(); return real(fd); }
int fsync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fsync"); pause_flush(); return real(fd); }
