// SPDX-License-Identifier: MIT
/*
 * lose_nothing - fires instants while ctrace-bpf traces, and says exactly how
 * many, so that scripts/bench can check that the trace holds every one.
 *
 *   lose_nothing one SECONDS [--cpu C]
 *       one thread fires CTRACE_INSTANT back to back for SECONDS.
 *       Prints "firing" once the tracer is there, then "fired N",
 *       "rate EVENTS_PER_S" and "still_traced 1" (0: the tracer went away
 *       before the end; the exit status is then 1).
 *
 *   lose_nothing ramp STEP_SECONDS RATE0 FACTOR STEPS
 *       two threads (pinned to CPUs 0 and 1) fire together at a paced total
 *       rate: RATE0 events/s in step 0, times FACTOR each step. Every step's
 *       instants carry its own name ("step K"), so the trace tells per step
 *       what arrived. Pacing is a batch per millisecond, then sleep: the
 *       threads leave the CPU idle between batches, as a real program
 *       would. The ramp stops after the first step the threads could not
 *       keep up with (achieved < 80% of the target: the machine is
 *       saturated), then both fire flat out for one more step ("step max").
 *       Prints "step K target RATE fired N achieved RATE" per step, then
 *       "still_traced" as above.
 *
 * Both wait (up to 10 s) for a tracer to attach first.
 */
#include "bench.h"

#include <ctrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define MAX_STEPS 16

static void wait_for_tracer(void)
{
	for (int i = 0; !CTRACE_ENABLED(); i++) {
		if (i > 10000) {
			fputs("lose_nothing: no tracer attached within 10 s\n", stderr);
			exit(3);
		}
		usleep(1000);
	}
}

static int one(double seconds, int cpu)
{
	double t0, end, now;
	long fired = 0;
	int traced;

	bench_pin(cpu);
	wait_for_tracer();
	/* For scripts/bench: the tracer's CPU is read from here to "fired" (row 4d). */
	printf("firing\n");
	fflush(stdout);
	t0 = bench_now_ns();
	end = t0 + seconds * 1e9;
	do {
		/* The clock is read once per 256 events: it costs ~20 ns. */
		for (int i = 0; i < 256; i++)
			CTRACE_INSTANT(NULL, "lose_nothing", CTRACE_SCOPE_THREAD, NULL);
		fired += 256;
		/* A tracer that went away meanwhile makes the count meaningless. */
		traced = CTRACE_ENABLED();
	} while ((now = bench_now_ns()) < end && traced);
	printf("fired %ld\nrate %.0f\nstill_traced %d\n", fired,
	       fired / ((now - t0) / 1e9), traced);
	return !traced;
}

/* Every step's events are named after it: static strings, one per step. */
static const char *const step_names[MAX_STEPS] = {
	"step 0", "step 1", "step 2", "step 3", "step 4", "step 5",
	"step 6", "step 7", "step 8", "step 9", "step 10", "step 11",
	"step 12", "step 13", "step 14", "step 15",
};

struct ramp {
	double step_ns, rate0, factor;
	int steps;     /* asked for; then done (the flat-out step not counted) */
	int stop;      /* set by thread 0 between barriers */
	pthread_barrier_t barrier;
	atomic_long fired[MAX_STEPS + 1];       /* the last: the flat-out step */
	double start_ns[MAX_STEPS + 1];         /* CLOCK_MONOTONIC, ns */
	double finish_ns[MAX_STEPS + 1][2];     /* when each thread was done */
};

struct worker {
	struct ramp *r;
	int cpu; /* also the thread's index */
};

static void sleep_until(double ns)
{
	struct timespec t;

	t.tv_sec = (time_t)(ns / 1e9);
	t.tv_nsec = (long)(ns - (double)t.tv_sec * 1e9);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
}

static double finish(const struct ramp *r, int k)
{
	return r->finish_ns[k][0] > r->finish_ns[k][1] ? r->finish_ns[k][0] :
							 r->finish_ns[k][1];
}

static double achieved(const struct ramp *r, int k)
{
	return atomic_load(&r->fired[k]) / ((finish(r, k) - r->start_ns[k]) / 1e9);
}

/* Thread 0, between two barriers: was step k kept up with; when is the next. */
static void step_done(struct ramp *r, int k, int next, double target)
{
	double planned = r->start_ns[k] + r->step_ns;

	r->stop = achieved(r, k) < 0.8 * target;
	r->start_ns[next] = finish(r, k) < planned ? planned : finish(r, k) + 1e6;
}

static void *ramp_thread(void *arg)
{
	struct worker *w = arg;
	struct ramp *r = w->r;
	double rate = r->rate0;
	long fired;
	int k;

	bench_pin(w->cpu);
	for (k = 0; k < r->steps; k++, rate *= r->factor) {
		long per_ms = (long)(rate / 2 / 1000 + 0.5); /* this thread's half */
		int slots = (int)(r->step_ns / 1e6);

		fired = 0;
		for (int ms = 0; ms < slots; ms++) {
			sleep_until(r->start_ns[k] + ms * 1e6);
			for (long i = 0; i < per_ms; i++)
				CTRACE_INSTANT(NULL, step_names[k], CTRACE_SCOPE_THREAD, NULL);
			fired += per_ms;
		}
		atomic_fetch_add(&r->fired[k], fired);
		r->finish_ns[k][w->cpu] = bench_now_ns();
		pthread_barrier_wait(&r->barrier);
		if (w->cpu == 0)
			step_done(r, k, k + 1 < r->steps ? k + 1 : MAX_STEPS, rate);
		pthread_barrier_wait(&r->barrier);
		if (r->stop) {
			k++;
			break;
		}
	}
	if (k < r->steps && w->cpu == 0)
		r->start_ns[MAX_STEPS] = r->start_ns[k];
	pthread_barrier_wait(&r->barrier);
	/* Flat out: back to back for one step. */
	sleep_until(r->start_ns[MAX_STEPS]);
	fired = 0;
	do {
		for (int i = 0; i < 256; i++)
			CTRACE_INSTANT(NULL, "step max", CTRACE_SCOPE_THREAD, NULL);
		fired += 256;
	} while (bench_now_ns() < r->start_ns[MAX_STEPS] + r->step_ns);
	atomic_fetch_add(&r->fired[MAX_STEPS], fired);
	r->finish_ns[MAX_STEPS][w->cpu] = bench_now_ns();
	pthread_barrier_wait(&r->barrier);
	if (w->cpu == 0)
		r->steps = k;
	return NULL;
}

static int ramp(double step_secs, double rate0, double factor, int steps)
{
	struct ramp r = { .step_ns = step_secs * 1e9, .rate0 = rate0,
			  .factor = factor, .steps = steps };
	struct worker w[2] = { { &r, 0 }, { &r, 1 } };
	pthread_t t[2];
	double rate = rate0;

	if (r.steps > MAX_STEPS)
		r.steps = MAX_STEPS;
	wait_for_tracer();
	pthread_barrier_init(&r.barrier, NULL, 2);
	r.start_ns[0] = bench_now_ns() + 20e6; /* both threads start together */
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, ramp_thread, &w[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int k = 0; k < r.steps; k++, rate *= factor)
		printf("step %d target %.0f fired %ld achieved %.0f\n", k, rate,
		       atomic_load(&r.fired[k]), achieved(&r, k));
	printf("step max target 0 fired %ld achieved %.0f\n",
	       atomic_load(&r.fired[MAX_STEPS]), achieved(&r, MAX_STEPS));
	printf("still_traced %d\n", CTRACE_ENABLED());
	return !CTRACE_ENABLED();
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "one"))
		return one(atof(argv[2]),
			   argc >= 5 && !strcmp(argv[3], "--cpu") ? atoi(argv[4]) : -1);
	if (argc == 6 && !strcmp(argv[1], "ramp"))
		return ramp(atof(argv[2]), atof(argv[3]), atof(argv[4]), atoi(argv[5]));
	fputs("usage: lose_nothing one SECONDS [--cpu C]\n"
	      "       lose_nothing ramp STEP_SECONDS RATE0 FACTOR STEPS\n", stderr);
	return 2;
}
