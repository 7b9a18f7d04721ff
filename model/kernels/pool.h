/* pool.h — a small persistent thread pool for parallel-for loops (the fast kernels, the
 * trainer), and the floating-point mode the fast numeric code runs in.
 *
 * The pool starts its threads on first use and keeps them: a worker spins briefly after each
 * job (so back-to-back kernels of a forward pass cost no wake-up), then sleeps on a condition
 * variable. The calling thread always runs tasks too, and tasks are claimed one at a time, so
 * a worker that is slow to wake only means the caller does more of the work. Each thread
 * first claims the tasks of its own contiguous range (the same range when a loop runs again),
 * so what a task reads stays in one core's cache from run to run. */
#ifndef GLASSBOX_POOL_H
#define GLASSBOX_POOL_H

/* One task of a parallel-for: task in [0, n_tasks). worker in [0, gb_pool_threads()) tells
 * apart the tasks running at the same moment within one gb_pool_run (the caller is worker 0),
 * e.g. to pick a per-worker scratch buffer. */
typedef void (*gb_pool_fn)(void *arg, int task, int worker);

/* Runs fn for every task and returns when all have finished. Tasks run on up to
 * gb_pool_threads() threads, under the caller's floating-point mode (MXCSR on x86). A call
 * made while another run is in progress (from a task, or from another thread) runs its tasks
 * serially on the calling thread. */
void gb_pool_run(int n_tasks, gb_pool_fn fn, void *arg);

/* Threads a run may use, the caller included (default: online CPUs, at most 8). n <= 0
 * restores the default. */
void gb_pool_set_threads(int n);
int gb_pool_threads(void);

/* Stops and joins the workers (they restart on the next run). For leak checkers and exit. */
void gb_pool_shutdown(void);

/* Flush-to-zero and denormals-are-zero on (x86; a no-op elsewhere): denormal operands cost
 * ~100 cycles each on x86 and once slowed a training run sevenfold. Returns the previous mode
 * for gb_fp_fast_leave, so callers that share the thread with exact code (the reference
 * kernels) can restore it. */
unsigned gb_fp_fast_enter(void);
void gb_fp_fast_leave(unsigned saved);

#endif
