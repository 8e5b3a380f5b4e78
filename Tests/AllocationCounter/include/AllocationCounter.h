// Counts heap allocations made by one thread (the thread that armed the counter), for the allocation-ceiling tests.
// The test executable's malloc, calloc and realloc take precedence over glibc's for the whole process (ELF symbol
// interposition) and forward to glibc's own; counting is one relaxed load and a thread comparison when disarmed.
#pragma once

/// Starts counting allocations made on the calling thread, from zero.
void lede_allocations_arm(void);
/// Stops counting.
void lede_allocations_disarm(void);
/// Allocations counted since the last arm.
unsigned long lede_allocations_counted(void);
/// Bytes the allocator has handed out and not had back, over every arena (glibc's mallinfo2).
unsigned long lede_heap_in_use(void);
