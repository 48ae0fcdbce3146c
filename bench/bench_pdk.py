"""PDK vs stock TensorFlow CPU, in one process, interleaved.

Each case is a callable per device; the harness warms both up, then alternates
A B A B ... for `--repeats` rounds and reports the median time of each and
the PDK/CPU ratio (< 1: PDK faster). Nothing here asserts a time.

Also measured, in the same process:
- the machine's float32 peak: the best GFLOP/s of NumPy's multi-threaded
  OpenBLAS sgemm on 2048^3 (an achievable-peak measurement, not the data-sheet
  figure); each MatMul case reports its GFLOP/s as a percentage of it;
- for training steps, the peak memory of one step on each device: TensorFlow's
  allocator statistics, `tf.config.experimental.reset_memory_stats(dev)` then
  `get_memory_info(dev)["peak"]` after the step, and that peak minus the bytes
  in use when the step started (what the step itself allocated: activations,
  gradients, temporaries). For "PDK:0" these are the figures of PDK's memory
  pool (bytes of the blocks tensors hold), which the plugin's hook answers
  through the same two functions (docs/architecture.md, "Memory"). For
  "CPU:0" these are the stats of TF 2.21's
  oneDNN CPU allocator (MklCPUAllocator, tensorflow/core/common_runtime/
  mkl_cpu_allocator.h): allocations under 256 KiB go to its small-size
  allocator, whose ClearStats zeroes `bytes_in_use`, so after a reset the CPU's
  "in use" forgets small tensors that were already alive (weights of small
  models), and its peak is the sum of the two sub-allocators' peaks. Compare
  the "allocated by the step" figures; scratch memory oneDNN allocates outside
  TensorFlow's allocator is not counted on either side.

Run:  python bench/bench_pdk.py [--repeats 20] [--cases tiny_add,matmul1024,...] [--markdown FILE]
                                [--background-load N]

`--background-load N` keeps N other processes busy (each a pure-Python loop
that keeps one core busy) for the whole run: the speed of both devices on a
machine whose cores are shared, e.g. `--background-load 1 --cases
digits,mlp,cnn,transformer` on the 2-core development VM.

`--markdown FILE` writes the results table; if FILE already holds the markers
`<!-- bench:begin -->` / `<!-- bench:end -->` (docs/benchmarks.md does), only the text
between them is replaced, so the explanatory text around the table stays.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tensorflow_pdk  # noqa: E402

DEVICES = ("/CPU:0", "/PDK:0")


def case_tiny_add():
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            a = tf.constant([1.0, 2.0, 3.0, 4.0])
            b = tf.constant([4.0, 3.0, 2.0, 1.0])

        def run(a=a, b=b, d=d):
            with tf.device(d):
                for _ in range(100):
                    tf.raw_ops.AddV2(x=a, y=b)
        fns[d] = run
    return "eager AddV2 [4] (per op)", fns, 100, None


def case_tiny_graph():
    """A tf.function of 100 dependent tiny ops: the per-launch cost inside a graph
    (executor + kernel entry), without Python's eager dispatch."""
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            a = tf.constant([1.0, 2.0, 3.0, 4.0])

            @tf.function(jit_compile=False)
            def chain(x):
                for _ in range(50):
                    x = x * 1.0001
                    x = x + 0.5
                return x

        def run(a=a, d=d, chain=chain):
            with tf.device(d):
                chain(a)
        fns[d] = run
    return "tf.function of 100 tiny ops [4] (per op)", fns, 100, None


def case_matmul_dtype(n, dtype):
    rng = np.random.default_rng(0)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            a = tf.cast(tf.constant(rng.standard_normal((n, n)).astype(np.float32)), dtype)
            b = tf.cast(tf.constant(rng.standard_normal((n, n)).astype(np.float32)), dtype)

        def run(a=a, b=b, d=d):
            with tf.device(d):
                tf.linalg.matmul(a, b)
        fns[d] = run
    return f"eager MatMul {n}^3 {dtype.name}", fns, 1, 2.0 * n ** 3


def case_conv2d():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((1, 56, 56, 64)).astype(np.float32)
    w_np = rng.standard_normal((3, 3, 64, 64)).astype(np.float32)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            x, w = tf.identity(tf.constant(x_np)), tf.identity(tf.constant(w_np))

        def run(x=x, w=w, d=d):
            with tf.device(d):
                tf.nn.conv2d(x, w, strides=1, padding="SAME")
        fns[d] = run
    return "eager Conv2D 3x3 1x56x56x64->64", fns, 1, 2.0 * 56 * 56 * 64 * 64 * 9


def _per_device_function(title, x_np, body):
    """A case timing one tf.function per device that runs body(x) on x_np."""
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            x = tf.identity(tf.constant(x_np))

        @tf.function
        def step(x, d=d):
            with tf.device(d):
                return body(x)

        def run(x=x, step=step):
            step(x)
        fns[d] = run
    return title, fns, 1, None


def _forward_and_gradient(title, x_np, fn):
    """A case timing one tf.function per device: y = sum(fn(x)) and dy/dx."""
    def body(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.gradient(y, x)
    return _per_device_function(title, x_np, body)


def case_pool3d():
    """MaxPool3D 2x2x2/2 and AvgPool3D 3x3x3/2 (SAME) with their gradients,
    [8,16,32,32,16] float32 (Keras's MaxPooling3D / AveragePooling3D)."""
    x_np = np.random.default_rng(0).standard_normal((8, 16, 32, 32, 16)).astype(np.float32)
    return _forward_and_gradient(
        "MaxPool3D + AvgPool3D + gradients, [8,16,32,32,16]", x_np,
        lambda x: (tf.reduce_sum(tf.nn.max_pool3d(x, 2, 2, "SAME")) +
                   tf.reduce_sum(tf.nn.avg_pool3d(x, 3, 2, "SAME"))))


def case_resize_bilinear():
    """ResizeBilinear [16,64,64,16] -> 96x96 (half-pixel centers, Keras's
    Resizing) and its gradient, float32."""
    x_np = np.random.default_rng(0).standard_normal((16, 64, 64, 16)).astype(np.float32)
    return _forward_and_gradient("ResizeBilinear + gradient, [16,64,64,16] -> 96x96", x_np,
                                 lambda x: tf.reduce_sum(tf.image.resize(x, (96, 96))))


def case_affine_transform():
    """ImageProjectiveTransformV3 [16,64,64,16] float32, bilinear, REFLECT, a
    rotation by 0.3 rad about the centre (Keras's RandomRotation), and its
    gradient (TensorFlow's: the same op with the inverse transform)."""
    x_np = np.random.default_rng(0).standard_normal((16, 64, 64, 16)).astype(np.float32)
    c, s, m = np.cos(0.3), np.sin(0.3), 31.5
    t = tf.constant([[c, -s, m - c * m + s * m, s, c, m - s * m - c * m, 0.0, 0.0]], tf.float32)
    return _forward_and_gradient(
        "ImageProjectiveTransformV3 + gradient, [16,64,64,16] bilinear", x_np,
        lambda x: tf.reduce_sum(tf.raw_ops.ImageProjectiveTransformV3(
            images=x, transforms=t, output_shape=[64, 64], fill_value=0.0,
            interpolation="BILINEAR", fill_mode="REFLECT")))


def case_hsv():
    """HSVToRGB(RGBToHSV(x)), [32,64,64,3] float32 (Keras's RandomHue /
    RandomSaturation round trip), one tf.function per device."""
    x_np = np.random.default_rng(0).uniform(0, 1, (32, 64, 64, 3)).astype(np.float32)
    return _per_device_function("RGBToHSV + HSVToRGB, [32,64,64,3]", x_np,
                                lambda x: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)))


def case_elementwise_chain():
    x_np = np.random.default_rng(0).random(1 << 20).astype(np.float32)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            x = tf.identity(tf.constant(x_np))

            @tf.function(jit_compile=False)
            def chain(x):
                y = x * 2.0 + 1.0
                y = tf.sqrt(y) * x - tf.exp(-x)
                return tf.maximum(y, 0.1) / (1.0 + x)

        def run(x=x, d=d, chain=chain):
            with tf.device(d):
                chain(x)
        fns[d] = run
    return "tf.function elementwise chain, 1M float32", fns, 1, None


def case_reduction():
    x_np = np.random.default_rng(0).random((1024, 1024)).astype(np.float32)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            x = tf.identity(tf.constant(x_np))

        def run(x=x, d=d):
            with tf.device(d):
                tf.reduce_sum(x, axis=1)
                tf.reduce_sum(x, axis=0)
        fns[d] = run
    return "eager Sum 1024x1024 over axis 1 and axis 0", fns, 1, None


def train_step_case(name, build, x, y):
    """A Keras train step (model.train_on_batch, Adam) on each device."""
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            model = build()
            xd, yd = tf.identity(tf.constant(x)), tf.identity(tf.constant(y))

        def run(model=model, xd=xd, yd=yd, d=d):
            with tf.device(d):
                model.train_on_batch(xd, yd)
        fns[d] = run
    return name, fns, 1, None


def compiled(model, optimizer=None):
    """Compiles `model` for sparse 10-way classification with `optimizer`
    (default: Adam(1e-3))."""
    import keras

    model.compile(optimizer=optimizer or keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=False)
    return model


def case_digits_step():
    from tensorflow_pdk.examples import digits

    x, y, _, _ = digits.load_data(0)
    return train_step_case("train step: digits MLP (batch 32)", lambda: digits.build_model(0),
                           x[:32], y[:32])


def mlp_data():
    """256 random 784-feature rows and 10-way labels."""
    rng = np.random.default_rng(0)
    return rng.random((256, 784)).astype(np.float32), rng.integers(0, 10, 256).astype(np.int64)


def mlp(**last_layer):
    """Dense 784-512-512-10 with ReLU; `last_layer` goes to the output Dense."""
    import keras

    return keras.Sequential([
        keras.Input((784,)), keras.layers.Dense(512, activation="relu"),
        keras.layers.Dense(512, activation="relu"), keras.layers.Dense(10, **last_layer)])


def cnn_data():
    """32 random 32x32x3 images and 10-way labels."""
    rng = np.random.default_rng(0)
    return (rng.random((32, 32, 32, 3)).astype(np.float32),
            rng.integers(0, 10, 32).astype(np.int64))


def small_cnn():
    """Conv2D(32)-MaxPool-Conv2D(64)-MaxPool-Dense(128)-Dense(10) on 32x32x3."""
    import keras

    return keras.Sequential([
        keras.Input((32, 32, 3)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(10)])


def case_mlp_step():
    return train_step_case("train step: MLP 784-512-512-10 (batch 256)",
                           lambda: compiled(mlp()), *mlp_data())


def case_mlp_bf16_step():
    """The 784-512-512-10 MLP under Keras's "mixed_bfloat16" policy (bfloat16
    MatMuls, float32 variables)."""
    import keras

    def build():
        old = keras.mixed_precision.global_policy()
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        try:
            return compiled(mlp(dtype="float32"))
        finally:
            keras.mixed_precision.set_global_policy(old)
    return train_step_case("train step: MLP 784-512-512-10 mixed_bfloat16 (batch 256)",
                           build, *mlp_data())


def case_cnn_step():
    return train_step_case("train step: small CNN 32x32x3 (batch 32)",
                           lambda: compiled(small_cnn()), *cnn_data())


def case_lstm_step():
    """A text classifier: Embedding(5000, 64) -> LSTM(64) -> Dense(10) over
    sequences of 80 token ids; batch 32; Adam."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.integers(1, 5000, (32, 80)).astype(np.int64)
    y = rng.integers(0, 10, 32).astype(np.int64)
    build = lambda: compiled(keras.Sequential([  # noqa: E731
        keras.Input((80,), dtype="int64"), keras.layers.Embedding(5000, 64),
        keras.layers.LSTM(64), keras.layers.Dense(10)]))
    return train_step_case("train step: LSTM text classifier (batch 32, seq 80, d 64)",
                           build, x, y)


def case_sgd_momentum_mlp_step():
    """The 784-512-512-10 MLP trained with SGD(0.01, momentum=0.9)."""
    import keras

    return train_step_case("train step: MLP 784-512-512-10, SGD momentum (batch 256)",
                           lambda: compiled(mlp(), keras.optimizers.SGD(0.01, momentum=0.9)),
                           *mlp_data())


def case_rmsprop_cnn_step():
    """The small CNN of `case_cnn_step` trained with RMSprop(1e-3)."""
    import keras

    return train_step_case("train step: small CNN 32x32x3, RMSprop (batch 32)",
                           lambda: compiled(small_cnn(), keras.optimizers.RMSprop(1e-3)),
                           *cnn_data())


def case_resnet50_step():
    import keras

    rng = np.random.default_rng(0)
    x = rng.random((16, 64, 64, 3)).astype(np.float32)
    y = rng.integers(0, 10, 16).astype(np.int64)
    build = lambda: compiled(keras.applications.ResNet50(  # noqa: E731
        weights=None, input_shape=(64, 64, 3), classes=10, classifier_activation=None))
    return train_step_case("train step: ResNet50 64x64 (batch 16)", build, x, y)


def case_transformer_step():
    """A post-norm Transformer encoder block (as in tests/python/test_einsum_transformer.py,
    bigger): sequence 64, width 128, 4 heads of 32, feed-forward 512, dropout 0.1,
    mean pooling and a 10-way Dense head; batch 32."""
    import keras

    rng = np.random.default_rng(0)
    seq, width, heads, ff = 64, 128, 4, 512
    x = rng.standard_normal((32, seq, width)).astype(np.float32)
    y = rng.integers(0, 10, 32).astype(np.int64)

    def build():
        inp = keras.Input((seq, width))
        att = keras.layers.MultiHeadAttention(heads, width // heads, dropout=0.1)(inp, inp)
        h = keras.layers.LayerNormalization()(inp + keras.layers.Dropout(0.1)(att))
        f = keras.layers.Dense(ff, activation="relu")(h)
        f = keras.layers.Dropout(0.1)(keras.layers.Dense(width)(f))
        h = keras.layers.LayerNormalization()(h + f)
        out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
        return compiled(keras.Model(inp, out))
    return train_step_case("train step: Transformer encoder block (batch 32, seq 64, d 128)",
                           build, x, y)


def case_adam_apply():
    """Keras 3's Adam.apply_gradients alone (a tf.function) on the variables of the
    784-512-512-10 MLP (669 706 parameters), with fixed gradients: the optimizer
    path, which Keras runs as a dozen elementwise ops per variable (PDK fuses
    them, src/graph/rewrites/keras_adam.cc)."""
    import keras

    rng = np.random.default_rng(0)
    shapes = [(784, 512), (512,), (512, 512), (512,), (512, 10), (10,)]
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            vs = [tf.Variable(rng.standard_normal(s).astype(np.float32)) for s in shapes]
            gs = [tf.identity(tf.constant(rng.standard_normal(s).astype(np.float32)))
                  for s in shapes]
            opt = keras.optimizers.Adam(1e-3)
            opt.build(vs)

            @tf.function
            def apply(vs=vs, gs=gs, opt=opt):
                opt.apply_gradients(zip(gs, vs))

        def run(apply=apply, d=d):
            with tf.device(d):
                apply()
        fns[d] = run
    return "Adam.apply_gradients, MLP 784-512-512-10 variables", fns, 1, None


CASES = {
    "tiny_add": case_tiny_add,
    "tiny_graph": case_tiny_graph,
    "matmul256": lambda: case_matmul_dtype(256, tf.float32),
    "matmul1024": lambda: case_matmul_dtype(1024, tf.float32),
    "matmul2048": lambda: case_matmul_dtype(2048, tf.float32),
    "matmul1024_bf16": lambda: case_matmul_dtype(1024, tf.bfloat16),
    "conv2d": case_conv2d,
    "pool3d": case_pool3d,
    "resize": case_resize_bilinear,
    "affine": case_affine_transform,
    "hsv": case_hsv,
    "elementwise": case_elementwise_chain,
    "reduction": case_reduction,
    "adam": case_adam_apply,
    "digits": case_digits_step,
    "mlp": case_mlp_step,
    "mlp_bf16": case_mlp_bf16_step,
    "cnn": case_cnn_step,
    "resnet50": case_resnet50_step,
    "transformer": case_transformer_step,
    "lstm": case_lstm_step,
    "mlp_sgd": case_sgd_momentum_mlp_step,
    "cnn_rmsprop": case_rmsprop_cnn_step,
}

TRAIN_CASES = ("digits", "mlp", "mlp_bf16", "cnn", "resnet50", "transformer", "lstm", "mlp_sgd",
               "cnn_rmsprop")


def measure(fns, per_call, repeats, warmup=3, keys=DEVICES):
    """Median seconds per call of each fns[k], k in `keys`, run interleaved."""
    for d in keys:
        for _ in range(warmup):
            fns[d]()
    times = {d: [] for d in keys}
    for _ in range(repeats):
        for d in keys:
            t0 = time.perf_counter()
            fns[d]()
            times[d].append((time.perf_counter() - t0) / per_call)
    return {d: statistics.median(v) for d, v in times.items()}


def peak_memory(fns):
    """Per device: (peak bytes during one more call of its fn, the part of it
    allocated by that call: peak minus the bytes in use when it started), or
    None where the device's allocator keeps no statistics (TensorFlow's CPU
    allocator without oneDNN, the default on CPUs without AVX-512)."""
    out = {}
    for d in DEVICES:
        name = d.lstrip("/")
        try:
            tf.config.experimental.reset_memory_stats(name)
        except ValueError:  # the CPU allocator keeps no statistics (oneDNN off)
            out[d] = None
            continue
        before = tf.config.experimental.get_memory_info(name)["current"]
        fns[d]()
        peak = tf.config.experimental.get_memory_info(name)["peak"]
        out[d] = (peak, peak - before)
    return out


def measured_peak_gflops(n=2048, trials=15):
    """Best float32 GFLOP/s of NumPy's (multi-threaded OpenBLAS) sgemm on n^3."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)  # warm-up
    best = min(_timed(lambda: np.matmul(a, b, out=c)) for _ in range(trials))
    return 2.0 * n ** 3 / best / 1e9


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def write_markdown(path, text):
    """Writes `text` to `path`, or between the BEGIN/END markers if it has them."""
    old = open(path).read() if os.path.exists(path) else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        text = head + BEGIN + "\n" + text + END + rest.split(END, 1)[1]
    with open(path, "w") as f:
        f.write(text)


def parse_args(description, cases, argv=None):
    """The options every bench script takes (--repeats, --cases, --markdown);
    exits if no PDK device is registered."""
    p = argparse.ArgumentParser(description=description.split("\n")[0])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--cases", default=",".join(cases),
                   help="comma-separated subset of: " + ", ".join(cases))
    p.add_argument("--markdown", help="also write the results table to this file")
    p.add_argument("--background-load", type=int, default=0, metavar="N",
                   help="keep N busy processes (one core each) running during the measurement")
    args = p.parse_args(argv)
    if not tf.config.list_physical_devices("PDK"):
        sys.exit("no PDK device registered")
    return args


def start_background_load(n):
    """Starts n processes that each keep one core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv=None):
    args = parse_args(__doc__, CASES, argv)
    load = start_background_load(args.background_load)
    try:
        run(args)
    finally:
        for proc in load:
            proc.kill()
            proc.wait()


def run(args):
    peak = measured_peak_gflops()
    print(f"measured float32 peak (NumPy/OpenBLAS sgemm 2048^3, {os.cpu_count()} threads): "
          f"{peak:.0f} GFLOP/s", flush=True)
    rows = []
    for key in args.cases.split(","):
        name, fns, per_call, flops = CASES[key]()
        repeats = max(3, args.repeats // 4) if key == "resnet50" else args.repeats
        med = measure(fns, per_call, repeats)
        ratio = med["/PDK:0"] / med["/CPU:0"]
        rate = mem = ""
        if flops:
            g = [flops / med[d] / 1e9 for d in DEVICES]
            rate = f"{g[0]:.0f} / {g[1]:.0f} ({100 * g[0] / peak:.0f} % / {100 * g[1] / peak:.0f} %)"
        if key in TRAIN_CASES:
            m = peak_memory(fns)
            mib = lambda b: f"{b / 2**20:.2f}"  # noqa: E731
            peak_of = lambda d, i: mib(m[d][i]) if m[d] else "n/a"  # noqa: E731
            mem = (f"{peak_of('/CPU:0', 0)} / {peak_of('/PDK:0', 0)} MiB "
                   f"(step: {peak_of('/CPU:0', 1)} / {peak_of('/PDK:0', 1)})")
        rows.append((name, fmt(med["/CPU:0"]), fmt(med["/PDK:0"]), f"{ratio:.2f}", rate, mem))
        print(f"{name:<48s} CPU {rows[-1][1]:>10s}  PDK {rows[-1][2]:>10s}  PDK/CPU {ratio:.2f}"
              f"  {('GFLOP/s CPU/PDK (of peak) ' + rate) if rate else ''}"
              f"{('peak memory CPU/PDK ' + mem) if mem else ''}", flush=True)
    if args.markdown:
        lines = [
            "| case | stock CPU (median) | PDK (median) | PDK/CPU "
            "| GFLOP/s CPU / PDK (% of measured peak) "
            "| peak memory of a step CPU / PDK (allocated by the step) |",
            "|---|---|---|---|---|---|",
        ] + [f"| {' | '.join(r)} |" for r in rows]
        header = (f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs, measured "
                  f"float32 peak {peak:.0f} GFLOP/s (NumPy/OpenBLAS sgemm 2048^3); "
                  f"TensorFlow {tf.__version__}; PDK {tensorflow_pdk.version()}; "
                  f"{args.repeats} interleaved rounds (ResNet50: {max(3, args.repeats // 4)})"
                  + (f"; {args.background_load} busy background process(es)"
                     if args.background_load else "") + ".\n\n")
        write_markdown(args.markdown, header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
