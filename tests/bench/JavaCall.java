// SPDX-License-Identifier: MIT
// JavaCall - the cost of one JVM method call, timed by the JVM itself, for
// scripts/bench's rows 6a-6c (tests/bench/foreign_usdt compiles it with
// javac into the build directory and runs it without and with
// -XX:+ExtendedDTraceProbes, then traced by ctrace-bpf --usdt java).
//
//   java -cp DIR JavaCall CALLS ROUNDS [GO_FILE]
//
// Warms up (CALLS calls, twice: the JIT compiles call and loop), then times
// ROUNDS rounds of CALLS calls of a one-line static method with
// System.nanoTime and prints "call_ns MEDIAN" (ns per call, the median
// round), "min_ns", "max_ns" and "calls N" (every call made, warm-up
// included: what a trace of it must hold). With GO_FILE it waits for that
// file to exist before the first call, so that a tracer attached with -p is
// in place before anything is counted or timed.
import java.io.File;
import java.util.Arrays;

public class JavaCall {
    static int sink;

    // What is called: small enough that without the DTrace probes the JIT
    // inlines it (the untraced figure is then the loop's), and the probes,
    // when on, fire at its entry and return.
    static int step(int x) {
        return x * 1103515245 + 12345;
    }

    static long round(int calls) {
        int x = sink;
        long t0 = System.nanoTime();
        for (int i = 0; i < calls; i++)
            x = step(x);
        long t = System.nanoTime() - t0;
        sink = x; // used: the calls are not dead code
        return t;
    }

    public static void main(String[] args) throws Exception {
        int calls = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        if (args.length > 2) {
            File go = new File(args[2]);
            while (!go.exists())
                Thread.sleep(5);
        }
        long made = 0;
        for (int w = 0; w < 2; w++) {
            round(calls);
            made += calls;
        }
        double[] ns = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            ns[r] = (double) round(calls) / calls;
            made += calls;
        }
        Arrays.sort(ns);
        System.out.printf("call_ns %.3f%n", ns[rounds / 2]);
        System.out.printf("min_ns %.3f%n", ns[0]);
        System.out.printf("max_ns %.3f%n", ns[rounds - 1]);
        System.out.printf("calls %d%n", made);
        System.out.printf("sink %d%n", sink);
    }
}
