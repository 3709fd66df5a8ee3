// SPDX-License-Identifier: MIT
// Hello - what tests/integration/test_usdt.c traces with --usdt java: main
// calls outer 5 times, each outer calls inner twice; a System.gc(); a thread
// named worker-one runs a lambda. Compiled by the test (javac) into its
// temporary directory, run with -XX:+ExtendedDTraceProbes.
public class Hello {
    static int inner(int n) { return n * 3; }
    static int outer(int n) { return inner(n) + inner(n + 1); }
    public static void main(String[] args) throws Exception {
        int s = 0;
        for (int i = 0; i < 5; i++) s += outer(i);
        System.gc();
        Thread t = new Thread(() -> {}, "worker-one");
        t.start();
        t.join();
        System.out.println("sum=" + s);
    }
}
