#ifndef CORELOCATION_CPREFETCH_SHIM_H
#define CORELOCATION_CPREFETCH_SHIM_H

/// Asks the processor to bring the cache line holding `address` closer (the compiler's
/// `__builtin_prefetch`, read access, keep in all cache levels), without waiting for it and
/// without faulting on any address. Swift has no such intrinsic; this header-only module lends it.
static inline void cprefetch_read(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
