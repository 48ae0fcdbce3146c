"""Wall time, process CPU time and voluntary context switches per step of
bench_pdk.py's cases, on PDK and on TensorFlow's CPU device, in this process.

How many cores a step keeps busy (CPU time / wall time, getrusage over all
threads) tells a step that waits on one thread from one that runs kernels
side by side; `--inter-op 1` runs TensorFlow with one inter-op thread (one
node at a time, as TensorFlow runs a PluggableDevice's synchronous kernels),
which measures what a device gains from overlap (docs/benchmarks.md, "Loops"
and "Splitting small kernels"). Per case and device: the median over
`--rounds` rounds of `--steps` calls, the devices alternating. Nothing here
asserts a time.

Run:  python bench/bench_cores.py --cases lstm,vit [--steps 20] [--rounds 5]
                                  [--inter-op N] [--pdk-only]
"""
import argparse
import os
import resource
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), r.ru_utime + r.ru_stime, r.ru_nvcsw


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--cases", required=True, help="comma-separated bench_pdk.py case names")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--inter-op", type=int, default=0, help="inter-op threads (0: TensorFlow's default)")
    p.add_argument("--pdk-only", action="store_true")
    args = p.parse_args()
    import tensorflow as tf

    if args.inter_op:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_pdk

    for case in args.cases.split(","):
        name, fns, _, _ = bench_pdk.CASES[case]()
        fns = {d: f for d, f in fns.items() if "PDK" in d or not args.pdk_only}
        for f in fns.values():
            for _ in range(3):
                f()
        rows = {d: [] for d in fns}
        for _ in range(args.rounds):
            for d, f in fns.items():
                t0, c0, s0 = usage()
                for _ in range(args.steps):
                    f()
                t1, c1, s1 = usage()
                rows[d].append(((t1 - t0) / args.steps, (c1 - c0) / args.steps,
                                (s1 - s0) / args.steps))
        for d, r in rows.items():
            wall = statistics.median(x[0] for x in r)
            cpu = statistics.median(x[1] for x in r)
            csw = statistics.median(x[2] for x in r)
            print(f"{name} on {d}: wall {wall * 1e3:.2f} ms, CPU {cpu * 1e3:.2f} ms "
                  f"({cpu / wall:.2f} cores), {csw:.1f} voluntary context switches per step")


if __name__ == "__main__":
    main()
