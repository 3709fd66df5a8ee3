// SPDX-License-Identifier: MIT
// Hello - what tests/integration/test_usdt.c traces with --usdt java: after
// 1 s (the tracer attaches libjvm.so's probes when the launcher dlopen()s
// it, while the JVM starts), run calls outer 5 times, each outer calls inner
// twice; a System.gc(); a thread named worker-with-a-long-name runs a lambda. Compiled by
// the test (javac) into its temporary directory, run with
// -XX:+ExtendedDTraceProbes.
public class Hello {
    static int inner(int n) { return n * 3; }
    static int outer(int n) { return inner(n) + inner(n + 1); }
    public static void main(String[] args) throws Exception {
        Thread.sleep(1000);
        run();
    }
    static void run() throws Exception {
        int s = 0;
        for (int i = 0; i < 5; i++) s += outer(i);
        System.gc();
        Thread t = new Thread(() -> {}, "worker-with-a-long-name");
        t.start();
        t.join();
        System.out.println("sum=" + s);
    }
}
