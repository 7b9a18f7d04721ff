/* pool.c — the persistent thread pool behind gb_pool_run, and the FTZ/DAZ switch.
 *
 * Owns: the worker threads (started lazily, kept until gb_pool_shutdown), the one job they
 * work on, and the thread-count setting shared by the fast kernels and the trainer.
 *
 * Protocol. `gen` numbers the jobs: even = a job is published, odd = the caller is rewriting
 * the job fields. A worker that sees a new even gen announces itself in `active`, then checks
 * gen again; the caller makes gen odd, then waits for `active` to drain before touching the job
 * fields. Both sides use sequentially consistent atomics, so either the caller sees the worker
 * in `active` or the worker sees the odd gen and backs off: no worker ever reads a job while it
 * is being rewritten. `done` counts finished tasks; the caller returns once done == n_tasks.
 *
 * Claiming. The tasks are cut into one contiguous range per thread taking part (the caller's
 * first); each thread claims the tasks of its own range with a fetch-add on that range's
 * counter, then helps the others, claiming from their ranges in turn. So a loop run again with
 * the same task count gives each thread the same tasks as last time, and the data a task reads
 * (a matrix's columns, a head's keys) is still in that core's cache: a tiny model's weights, 3 MB,
 * fit in two cores' L2 but not in one's. A thread that is slow to come (preempted, asleep)
 * only leaves its range to the others.
 *
 * Sleeping. A worker idle for SPIN_NS sleeps on `wake` (counted in `sleepers`); a run that finds
 * a sleeper not yet woken (`sleepers` > `signaled`) broadcasts. A woken worker that goes back to
 * sleep (it found the caller between jobs) uncounts itself from `signaled`, so the next run
 * wakes it again. */
#include "model/kernels/pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define POOL_X86 1
#else
#define POOL_X86 0
#endif

enum {
	POOL_MAX = 64,       /* threads, the caller included */
	SPIN_NS = 200000,    /* a forward pass issues kernels closer together than this */
	FTZ_DAZ = 0x8040,    /* MXCSR bits 15 (flush to zero) and 6 (denormals are zero) */
};

/* One thread's range of a job's tasks: [next, end) not yet claimed. A cache line each, so
 * threads claiming their own tasks do not contend. */
static struct range {
	atomic_int next;
	int end;
} __attribute__((aligned(64))) R[POOL_MAX];

static struct {
	pthread_mutex_t mu;      /* guards sleeping, starting and stopping workers */
	pthread_cond_t wake;
	pthread_mutex_t run_mu;  /* held by the one gb_pool_run in progress */
	pthread_t tid[POOL_MAX];
	int n_workers;           /* started */
	atomic_int threads;      /* the setting; 0 = default */
	atomic_uint gen;
	atomic_int active;
	atomic_int sleepers;
	atomic_int signaled;     /* sleepers woken by a broadcast that have not yet looked (guarded by mu) */
	atomic_int running;      /* a run is in progress */
	atomic_int done;
	atomic_int quit;
	/* The job: written only while gen is odd and active == 0. */
	gb_pool_fn fn;
	void *arg;
	int n_tasks;
	int n_join;              /* workers 1..n_join-1 take part */
	unsigned csr;
} P = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.run_mu = PTHREAD_MUTEX_INITIALIZER,
};

/* One step of a busy wait. After a short pure spin it yields the CPU at every step: when
 * the machine has more runnable threads than CPUs (other programs, or a VM's host), a waiting
 * thread may share a CPU with the very thread it waits for, and a pure spin would halve it. */
static void cpu_relax(int *step)
{
	if (++*step < 2000) {
#if POOL_X86
		_mm_pause();
#endif
	} else {
		sched_yield();
	}
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned csr_get(void)
{
#if POOL_X86
	return _mm_getcsr();
#else
	return 0;
#endif
}

static void csr_set(unsigned v)
{
#if POOL_X86
	if (_mm_getcsr() != v)
		_mm_setcsr(v);
#else
	(void)v;
#endif
}

unsigned gb_fp_fast_enter(void)
{
	unsigned old = csr_get();
#if POOL_X86
	if ((old & FTZ_DAZ) != FTZ_DAZ)
		_mm_setcsr(old | FTZ_DAZ);
#endif
	return old;
}

void gb_fp_fast_leave(unsigned saved)
{
	csr_set(saved);
}

/* Computed once: sysconf(_SC_NPROCESSORS_ONLN) reads /sys, which would cost more than a
 * small kernel on every call. */
static int default_threads(void)
{
	static atomic_int cached;
	int n = atomic_load(&cached);
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c < 1 ? 1 : c > 8 ? 8 : (int)c;
		atomic_store(&cached, n);
	}
	return n;
}

void gb_pool_set_threads(int n)
{
	atomic_store(&P.threads, n <= 0 ? 0 : n > POOL_MAX ? POOL_MAX : n);
}

int gb_pool_threads(void)
{
	int n = atomic_load(&P.threads);
	return n > 0 ? n : default_threads();
}

/* Worker `worker` (< n_join): its own range, then the others' from the next one on. */
static void run_tasks(int worker)
{
	int join = P.n_join;
	for (int i = 0; i < join; i++) {
		struct range *r = &R[(worker + i) % join];
		int t, end = r->end;
		while ((t = atomic_fetch_add(&r->next, 1)) < end) {
			P.fn(P.arg, t, worker);
			atomic_fetch_add(&P.done, 1);
		}
	}
}

/* Waits until a job newer than `seen` is published; returns its gen, or `seen` on quit. */
static unsigned wait_job(unsigned seen)
{
	unsigned g;
	long long t0 = now_ns();
	int step = 0;
	for (int i = 1;; i++) {
		g = atomic_load(&P.gen);
		if ((g != seen && !(g & 1)) || atomic_load(&P.quit))
			return atomic_load(&P.quit) ? seen : g;
		if (i % 64 == 0) {
			/* The idle time counts from the end of the last run, not from when this
			 * worker last looked: a worker that arrives after the caller has claimed
			 * every task must still be spinning when the next run starts. Otherwise, on
			 * a machine (a VM) where waking a sleeping thread takes longer than a task,
			 * the worker would oversleep every run and never help. */
			if (atomic_load(&P.running))
				t0 = now_ns();
			else if (now_ns() - t0 > SPIN_NS)
				break;
		}
		cpu_relax(&step);
	}
	pthread_mutex_lock(&P.mu);
	atomic_fetch_add(&P.sleepers, 1);
	while (((g = atomic_load(&P.gen)) == seen || (g & 1)) && !atomic_load(&P.quit)) {
		pthread_cond_wait(&P.wake, &P.mu);
		if (atomic_load(&P.signaled) > 0) /* this wake-up is used: if it goes back to sleep, a run wakes it again */
			atomic_fetch_sub(&P.signaled, 1);
	}
	atomic_fetch_sub(&P.sleepers, 1);
	pthread_mutex_unlock(&P.mu);
	return atomic_load(&P.quit) ? seen : g;
}

static void *worker_main(void *p)
{
	int w = (int)(intptr_t)p;
	unsigned seen = atomic_load(&P.gen);
	for (;;) {
		unsigned g = wait_job(seen);
		if (g == seen)
			return NULL; /* quit */
		seen = g;
		atomic_fetch_add(&P.active, 1);
		if (atomic_load(&P.gen) == g && w < P.n_join) {
			csr_set(P.csr);
			run_tasks(w);
		}
		atomic_fetch_sub(&P.active, 1);
	}
}

/* Called with run_mu held. */
static void start_workers(int want)
{
	if (want > POOL_MAX - 1)
		want = POOL_MAX - 1;
	pthread_mutex_lock(&P.mu);
	while (P.n_workers < want) {
		int w = P.n_workers + 1;
		if (pthread_create(&P.tid[P.n_workers], NULL, worker_main, (void *)(intptr_t)w) != 0)
			break; /* run with the threads we have */
		P.n_workers++;
	}
	pthread_mutex_unlock(&P.mu);
}

void gb_pool_run(int n_tasks, gb_pool_fn fn, void *arg)
{
	int join = gb_pool_threads(), step = 0;
	unsigned g;
	if (n_tasks <= 0)
		return;
	if (join > n_tasks)
		join = n_tasks;
	if (join <= 1 || pthread_mutex_trylock(&P.run_mu) != 0) {
		for (int t = 0; t < n_tasks; t++)
			fn(arg, t, 0);
		return;
	}
	start_workers(join - 1);
	if (join > P.n_workers + 1)
		join = P.n_workers + 1;

	g = atomic_load(&P.gen);
	atomic_store(&P.gen, g + 1);
	while (atomic_load(&P.active))
		cpu_relax(&step);
	P.fn = fn;
	P.arg = arg;
	P.n_tasks = n_tasks;
	P.n_join = join;
	P.csr = csr_get();
	for (int w = 0; w < join; w++) {
		R[w].end = (int)((long)n_tasks * (w + 1) / join);
		atomic_store(&R[w].next, (int)((long)n_tasks * w / join));
	}
	atomic_store(&P.done, 0);
	atomic_store(&P.running, 1);
	atomic_store(&P.gen, g + 2);
	/* Only sleepers not woken yet need a broadcast. A woken worker can take longer to come
	 * back than several short runs (~70 us in a VM, measured), and each broadcast is a system
	 * call that cost the caller ~12-15 us there: a forward pass after idle broadcast on each of
	 * its first few runs. */
	if (atomic_load(&P.sleepers) > atomic_load(&P.signaled)) {
		int wake = 0;
		pthread_mutex_lock(&P.mu);
		if (atomic_load(&P.sleepers) > atomic_load(&P.signaled)) {
			atomic_store(&P.signaled, atomic_load(&P.sleepers));
			wake = 1;
		}
		pthread_mutex_unlock(&P.mu);
		/* After the unlock: a worker woken while mu is still held blocks on mu, and the
		 * unlock then costs the caller a second system call to wake it again. Taking mu
		 * first is what keeps the wake-up from being lost: a sleeper counted above has
		 * either checked gen and released mu inside pthread_cond_wait, or will see the new
		 * gen when it checks. */
		if (wake)
			pthread_cond_broadcast(&P.wake);
	}
	run_tasks(0);
	step = 0;
	while (atomic_load(&P.done) < n_tasks)
		cpu_relax(&step);
	atomic_store(&P.running, 0);
	pthread_mutex_unlock(&P.run_mu);
}

void gb_pool_shutdown(void)
{
	pthread_mutex_lock(&P.run_mu);
	pthread_mutex_lock(&P.mu);
	atomic_store(&P.quit, 1);
	pthread_cond_broadcast(&P.wake);
	pthread_mutex_unlock(&P.mu);
	for (int i = 0; i < P.n_workers; i++)
		pthread_join(P.tid[i], NULL);
	P.n_workers = 0;
	atomic_store(&P.signaled, 0);
	atomic_store(&P.quit, 0);
	pthread_mutex_unlock(&P.run_mu);
}
