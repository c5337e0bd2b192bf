/* Guest-only shim: wasi-libc (Debian bookworm, no wasm threads) has no
 * <pthread.h>, but QuickJS defines CONFIG_ATOMICS for every non-Emscripten
 * target and then uses a mutex for class ids and mutex+condition variables
 * for Atomics.wait.
 *
 * The guest is single-threaded, so the mutex is a no-op. Atomics.wait never
 * reaches the condition variable: QuickJS refuses it unless JS_SetCanBlock()
 * was called, which the driver never does ("cannot block in this thread").
 * Should that ever change, waiting traps instead of spinning forever. */
#ifndef PLIMSOLL_GUEST_SHIM_PTHREAD_H_
#define PLIMSOLL_GUEST_SHIM_PTHREAD_H_

struct timespec;
typedef int pthread_mutex_t;
typedef int pthread_cond_t;
#define PTHREAD_MUTEX_INITIALIZER 0

static inline int pthread_mutex_lock(pthread_mutex_t* m) {
  (void)m;
  return 0;
}
static inline int pthread_mutex_unlock(pthread_mutex_t* m) {
  (void)m;
  return 0;
}
static inline int pthread_cond_init(pthread_cond_t* c, const void* a) {
  (void)c;
  (void)a;
  return 0;
}
static inline int pthread_cond_destroy(pthread_cond_t* c) {
  (void)c;
  return 0;
}
static inline int pthread_cond_signal(pthread_cond_t* c) {
  (void)c;
  return 0;
}
static inline int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  (void)c;
  (void)m;
  __builtin_trap();
}
static inline int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m,
                                         const struct timespec* t) {
  (void)c;
  (void)m;
  (void)t;
  __builtin_trap();
}

#endif /* PLIMSOLL_GUEST_SHIM_PTHREAD_H_ */
