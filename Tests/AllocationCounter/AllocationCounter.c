#define _GNU_SOURCE
#include "AllocationCounter.h"
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_ulong counted;
static atomic_ulong armed_thread;
static atomic_int active;

static inline void note(void) {
    if (atomic_load_explicit(&active, memory_order_relaxed) &&
        (unsigned long)pthread_self() == atomic_load_explicit(&armed_thread, memory_order_relaxed))
        atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
}

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t k, size_t n) { note(); return __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }

void lede_allocations_arm(void) {
    atomic_store(&armed_thread, (unsigned long)pthread_self());
    atomic_store(&counted, 0);
    atomic_store(&active, 1);
}

void lede_allocations_disarm(void) { atomic_store(&active, 0); }

unsigned long lede_allocations_counted(void) { return atomic_load(&counted); }

unsigned long lede_heap_in_use(void) { return (unsigned long)mallinfo2().uordblks; }
