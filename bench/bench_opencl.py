"""The OPENCL device (plugins/opencl) next to PDK and stock TensorFlow CPU.

One process with both plugins loaded (the OPENCL library given by
``--library``, default the build scripts/setup.sh makes), and for each case a
Keras model per device trained one epoch per round, the devices interleaved
round by round after one warm-up epoch each; the median epoch time per device
and the ratio to stock CPU. Stock CPU is TensorFlow's default setting on the
machine it runs on (this process cannot switch oneDNN: TF_ENABLE_ONEDNN_OPTS
is read once, when TensorFlow loads).

On the CI machines the OpenCL driver is PoCL, which compiles the OpenCL C
kernels for the host CPU: this measures the plugin's overheads (a launch per
op, no fusion, one work-item per element, CLBlast's generic GEMM tuning on a
CPU), not an accelerator. Correctness and the kit are the point of the plugin.

    .venv/bin/python bench/bench_opencl.py [--rounds 5] [--markdown docs/benchmarks.md]

With --markdown, rewrites the table between ``<!-- opencl-bench:begin -->`` and
``<!-- opencl-bench:end -->`` of the file. With --breakdown, profiles one epoch
per case on OPENCL instead (the plugin's profiler plane): wall time, the device
time of its kernels, the host time of their launches and copies.
"""
import argparse
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- opencl-bench:begin -->", "<!-- opencl-bench:end -->"


def cases():
    import numpy as np

    from tensorflow_pdk.examples import digits

    x_train, y_train, _, _ = digits.load_data(0)

    def mlp():
        return digits.build_model(0)

    return [
        ("digits MLP 64-128-64-10, batch 32, one epoch (45 steps)", mlp, x_train, y_train),
        ("small CNN on 8x8 digits, batch 32, one epoch (45 steps)", lambda: digits.build_cnn(0),
         x_train.reshape(-1, 8, 8, 1).astype(np.float32), y_train),
    ]


def run(rounds: int):
    import tensorflow as tf

    devices = ["/CPU:0", "/PDK:0", "/OPENCL:0"]
    rows = []
    for name, build, x, y in cases():
        models = {}
        for d in devices:
            with tf.device(d):
                models[d] = build()
                models[d].fit(x, y, epochs=1, batch_size=32, verbose=0)  # trace, compile, warm up
        times = {d: [] for d in devices}
        for _ in range(rounds):
            for d in devices:
                with tf.device(d):
                    t0 = time.perf_counter()
                    models[d].fit(x, y, epochs=1, batch_size=32, verbose=0)
                    times[d].append(time.perf_counter() - t0)
        med = {d: statistics.median(v) for d, v in times.items()}
        rows.append((name, med))
        print(name, {d: f"{1e3 * t:.1f} ms" for d, t in med.items()}, flush=True)
    return rows


def breakdown():
    """One fit epoch of each case on OPENCL under the profiler: wall time, the
    device time of its kernels (the stream lines of the OPENCL plane) and the
    host time of their launches and copies, top ops of each."""
    import collections
    import glob
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    for name, build, x, y in cases():
        with tf.device("/OPENCL:0"):
            model = build()
            model.fit(x, y, epochs=1, batch_size=32, verbose=0)
            logdir = tempfile.mkdtemp(prefix="pdk_opencl_profile_")
            tf.profiler.experimental.start(logdir)
            t0 = time.perf_counter()
            model.fit(x, y, epochs=1, batch_size=32, verbose=0)
            wall = time.perf_counter() - t0
            tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        space.ParseFromString(open(glob.glob(logdir + "/plugins/profile/*/*.xplane.pb")[0],
                                   "rb").read())
        plane = next(p for p in space.planes if p.name == "/device:CUSTOM:OPENCL:0")
        names = {k: v.display_name or v.name for k, v in plane.event_metadata.items()}
        device, host = collections.Counter(), collections.Counter()
        n_device = n_host = 0
        for line in plane.lines:
            on_device = line.name.startswith("OPENCL stream ")
            for e in line.events:
                (device if on_device else host)[names[e.metadata_id]] += e.duration_ps / 1e9
                n_device += on_device
                n_host += not on_device
        print(f"{name}: epoch {1e3 * wall:.0f} ms; device kernels {sum(device.values()):.0f} ms "
              f"over {n_device}; host launches and copies {sum(host.values()):.0f} ms over "
              f"{n_host}")
        print("  device, by op:", ", ".join(f"{k} {v:.1f} ms" for k, v in device.most_common(6)))
        print("  host, by op:  ", ", ".join(f"{k} {v:.1f} ms" for k, v in host.most_common(6)))


def markdown(rows, rounds: int) -> str:
    lines = ["| case | stock CPU | PDK | OPENCL (PoCL) | PDK / CPU | OPENCL / CPU |",
             "|---|---|---|---|---|---|"]
    for name, med in rows:
        cpu, pdk, ocl = med["/CPU:0"], med["/PDK:0"], med["/OPENCL:0"]
        lines.append(f"| {name} | {1e3 * cpu:.0f} ms | {1e3 * pdk:.0f} ms | {1e3 * ocl:.0f} ms | "
                     f"{pdk / cpu:.2f} | {ocl / cpu:.2f} |")
    lines.append("")
    lines.append(f"Median of {rounds} interleaved rounds of one epoch each, after a warm-up epoch; "
                 "`.venv/bin/python bench/bench_opencl.py --markdown docs/benchmarks.md`.")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--library", default=str(ROOT / "build" / "opencl-wheel" / "libpdk_opencl.so"))
    p.add_argument("--markdown", help="a file whose opencl-bench table to rewrite")
    p.add_argument("--breakdown", action="store_true",
                   help="profile one epoch per case on OPENCL instead: device vs host time")
    args = p.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(ROOT / "plugins" / "opencl" / "python"))
    import tensorflow as tf
    from tensorflow.python.framework import load_library

    load_library.load_pluggable_device_library(args.library)
    if not tf.config.list_physical_devices("OPENCL"):
        print("no OPENCL device", file=sys.stderr)
        return 1
    if args.breakdown:
        breakdown()
        return 0
    rows = run(args.rounds)
    table = markdown(rows, args.rounds)
    print(table)
    if args.markdown:
        path = pathlib.Path(args.markdown)
        text = path.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            text = head + BEGIN + "\n" + table + "\n" + END + rest.split(END, 1)[1]
        else:
            text = text.rstrip("\n") + "\n\n" + BEGIN + "\n" + table + "\n" + END + "\n"
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
