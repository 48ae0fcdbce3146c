"""PDK vs stock TensorFlow CPU, both stock setups (oneDNN off and on), interleaved.

Three setups per case: PDK and stock TensorFlow's CPU device in this process,
and stock TensorFlow's CPU device with the other oneDNN setting in a child
process (`--worker`, driven over a pipe). `TF_ENABLE_ONEDNN_OPTS` is read
once, when TensorFlow loads, so one process cannot run both: this process
keeps the setting it was started with (unset: TensorFlow's default for the
CPU, which on x86 is on where the CPU has AVX-512 VNNI / BF16 or AMX and off
otherwise), the child gets the opposite one and `PDK_DEVICE_COUNT=0` (PDK
switched off: a plain stock TensorFlow, where Keras resolves
`jit_compile="auto"` to False because no non-CPU device is listed). Each
setup is warmed up, then the rounds alternate PDK, stock here, stock in the
child, for `--repeats` rounds (the child's call is timed inside the child,
while this process waits on the pipe). Reported: the median of each, and
PDK / the better (lower median) of the two stock setups (< 1: PDK faster).
Nothing here asserts a time.

Keras models are compiled as a user would: with Keras's defaults on PDK (with
PDK listed, `jit_compile="auto"` resolves to True and PDK runs the step with
its own kernels, docs/architecture.md "Keras and XLA requests"), and with
`jit_compile=False` on stock CPU: what "auto" resolves to in a stock
installation (no non-CPU device: no XLA), and not XLA's CPU backend, which
Keras would pick in this process because PDK is listed.

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
  through the same two functions (docs/architecture.md, "Memory"). The stock
  CPU allocator keeps statistics only with oneDNN on (TF 2.21's
  MklCPUAllocator, tensorflow/core/common_runtime/
  mkl_cpu_allocator.h): allocations under 256 KiB go to its small-size
  allocator, whose ClearStats zeroes `bytes_in_use`, so after a reset the CPU's
  "in use" forgets small tensors that were already alive (weights of small
  models), and its peak is the sum of the two sub-allocators' peaks. Compare
  the "allocated by the step" figures; scratch memory oneDNN allocates outside
  TensorFlow's allocator is not counted on either side.

`--breakdown` profiles `--steps` calls of each case on each setup with
`tf.profiler` and prints where the time goes: on PDK from PDK's own profiler
plane (/device:CUSTOM:PDK:0: every kernel launch and memory copy; TensorFlow's
host tracer records no kernel event for a PluggableDevice's kernels), on stock
from TensorFlow's host tracer (/host:CPU: the executor's per-kernel events,
`node:OpType`). The setups are profiled interleaved, as they are timed: one
session here and one in the worker, each call inside a window event named
after its setup. Per setup: the wall time per call, the time kernels ran
(summed, and as the union of their intervals over all threads), the time no
kernel or copy ran (framework, executor, Python: wall minus the union), the
copies, launches per call and the top 10 ops by kernel time. Eager ops get no
`node:OpType` event, so an eager stock case shows no kernels. The tracers
cost time themselves (more on stock, which runs more nodes): compare the
kernel rows; profiled wall times are higher than the table's.

Run:  python bench/bench_pdk.py [--repeats 20] [--cases tiny_add,matmul1024,...] [--markdown FILE]
                                [--background-load N] [--breakdown [--steps N]]
                                [--against PYTHON]

`--against PYTHON` compares two builds of PDK: this process's (A) and the one
installed in PYTHON's venv (B, e.g. a `-DPDK_NATIVE=ON` wheel, or one built
against another oneDNN), run by a worker process with PDK on, interleaved
call by call with A and with stock CPU in this process. Reported per case:
the three medians, A / B (< 1: A faster), and each against stock.

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
import glob
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

WORKER = __name__ == "__main__" and "--worker" in sys.argv
if WORKER:
    # The pipe to the parent is this process's original stdout; anything else
    # printed (TensorFlow, Keras) goes to stderr.
    _PIPE_OUT = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import tensorflow_pdk  # noqa: E402

PDK, CPU = "/PDK:0", "/CPU:0"
# The device a worker process runs its cases on: /CPU:0 (a stock setup), or
# /PDK:0 (`--against`: another PDK installation).
WORKER_DEVICE = os.environ.get("BENCH_PDK_WORKER_DEVICE", CPU)
DEVICES = (WORKER_DEVICE,) if WORKER else (CPU, PDK)  # the devices each case builds for, here


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


def case_elementwise_sums():
    """x = x * 1.0001 + 0.5, 50 times on 256K float32, with a Sum of every x:
    one elementwise group of 100 nodes whose 50 values are all read outside it
    (PDK's fusion cuts it after every 8th output: docs/benchmarks.md,
    "At most 8 outputs per fused node")."""
    def body(x):
        sums = []
        for _ in range(50):
            x = x * 1.0001 + 0.5
            sums.append(tf.reduce_sum(x))
        return tf.add_n(sums)
    x_np = np.random.default_rng(0).random(1 << 18).astype(np.float32)
    return _per_device_function("tf.function chain with a Sum per step, 50 x 256K float32",
                                x_np, body)


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
    """A Keras train step (model.train_on_batch) on each device; build(device)
    returns the compiled model."""
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            model = build(d)
            xd, yd = tf.identity(tf.constant(x)), tf.identity(tf.constant(y))

        def run(model=model, xd=xd, yd=yd, d=d):
            with tf.device(d):
                model.train_on_batch(xd, yd)
        fns[d] = run
    return name, fns, 1, None


def compile_args(device):
    """Keras compile arguments a user would have on `device`: Keras's defaults
    on PDK; `jit_compile=False` on the CPU, which is what Keras's "auto"
    resolves to in a stock installation (no non-CPU device listed; with PDK
    listed it would pick XLA's CPU backend, which is not the stock setup)."""
    return {"jit_compile": False} if "CPU" in device.upper() else {}


def compiled(model, device, optimizer=None):
    """Compiles `model` for sparse 10-way classification with `optimizer`
    (default: Adam(1e-3)) as a user would on `device` (compile_args)."""
    import keras

    model.compile(optimizer=optimizer or keras.optimizers.Adam(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  **compile_args(device))
    return model


def case_digits_step():
    from tensorflow_pdk.examples import digits

    x, y, _, _ = digits.load_data(0)

    def build(d):
        model = digits.build_model(0)  # compiled with Keras's defaults
        if compile_args(d):
            model.jit_compile = False  # stock: what "auto" resolves to without PDK
        return model
    return train_step_case("train step: digits MLP (batch 32)", build, x[:32], y[:32])


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
                           lambda d: compiled(mlp(), d), *mlp_data())


def case_mlp_bf16_step():
    """The 784-512-512-10 MLP under Keras's "mixed_bfloat16" policy (bfloat16
    MatMuls, float32 variables)."""
    import keras

    def build(d):
        old = keras.mixed_precision.global_policy()
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        try:
            return compiled(mlp(dtype="float32"), d)
        finally:
            keras.mixed_precision.set_global_policy(old)
    return train_step_case("train step: MLP 784-512-512-10 mixed_bfloat16 (batch 256)",
                           build, *mlp_data())


def case_cnn_step():
    return train_step_case("train step: small CNN 32x32x3 (batch 32)",
                           lambda d: compiled(small_cnn(), d), *cnn_data())


def case_lstm_step(masked=False):
    """A text classifier: Embedding(5000, 64) -> LSTM(64) -> Dense(10) over
    sequences of 80 token ids; batch 32; Adam. `masked`: the sequences are
    padded with 0 after 40 to 80 tokens and the Embedding has mask_zero=True
    (the LSTM reads a mask each time step)."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.integers(1, 5000, (32, 80)).astype(np.int64)
    y = rng.integers(0, 10, 32).astype(np.int64)
    if masked:
        x[np.arange(80)[None, :] >= rng.integers(40, 81, 32)[:, None]] = 0
    build = lambda d: compiled(keras.Sequential([  # noqa: E731
        keras.Input((80,), dtype="int64"), keras.layers.Embedding(5000, 64, mask_zero=masked),
        keras.layers.LSTM(64), keras.layers.Dense(10)]), d)
    name = "train step: LSTM text classifier (batch 32, seq 80, d 64)"
    return train_step_case(name.replace("classifier", "classifier, masked") if masked else name,
                           build, x, y)


def case_sgd_momentum_mlp_step():
    """The 784-512-512-10 MLP trained with SGD(0.01, momentum=0.9)."""
    import keras

    return train_step_case("train step: MLP 784-512-512-10, SGD momentum (batch 256)",
                           lambda d: compiled(mlp(), d, keras.optimizers.SGD(0.01, momentum=0.9)),
                           *mlp_data())


def case_rmsprop_cnn_step():
    """The small CNN of `case_cnn_step` trained with RMSprop(1e-3)."""
    import keras

    return train_step_case("train step: small CNN 32x32x3, RMSprop (batch 32)",
                           lambda d: compiled(small_cnn(), d, keras.optimizers.RMSprop(1e-3)),
                           *cnn_data())


def case_resnet50_step():
    import keras

    rng = np.random.default_rng(0)
    x = rng.random((16, 64, 64, 3)).astype(np.float32)
    y = rng.integers(0, 10, 16).astype(np.int64)
    build = lambda d: compiled(keras.applications.ResNet50(  # noqa: E731
        weights=None, input_shape=(64, 64, 3), classes=10, classifier_activation=None), d)
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

    def build(d):
        inp = keras.Input((seq, width))
        att = keras.layers.MultiHeadAttention(heads, width // heads, dropout=0.1)(inp, inp)
        h = keras.layers.LayerNormalization()(inp + keras.layers.Dropout(0.1)(att))
        f = keras.layers.Dense(ff, activation="relu")(h)
        f = keras.layers.Dropout(0.1)(keras.layers.Dense(width)(f))
        h = keras.layers.LayerNormalization()(h + f)
        out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
        return compiled(keras.Model(inp, out), d)
    return train_step_case("train step: Transformer encoder block (batch 32, seq 64, d 128)",
                           build, x, y)


def case_vit_step():
    """A ViT block as a user writes it: 32x32x3 images cut into 4x4 patches by a
    Conv2D (64 patches of width 128), a learned position embedding, one
    pre-norm encoder block (LayerNormalization, keras MultiHeadAttention with
    4 heads of 32, an MLP 128-256-128 with GELU), mean pooling, a 10-way
    head; AdamW(1e-3); batch 32; Keras's defaults (train_on_batch)."""
    import keras

    rng = np.random.default_rng(0)
    x = rng.random((32, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, 32).astype(np.int64)
    patches, width, heads = 64, 128, 4

    class AddPosition(keras.layers.Layer):
        def build(self, input_shape):
            self.pos = self.add_weight(shape=(1, patches, width), initializer="random_normal")

        def call(self, h):
            return h + self.pos

    def build(d):
        inp = keras.Input((32, 32, 3))
        h = keras.layers.Conv2D(width, 4, strides=4)(inp)
        h = AddPosition()(keras.layers.Reshape((patches, width))(h))
        a = keras.layers.LayerNormalization()(h)
        h = h + keras.layers.MultiHeadAttention(heads, width // heads)(a, a)
        f = keras.layers.LayerNormalization()(h)
        f = keras.layers.Dense(2 * width, activation="gelu")(f)
        h = h + keras.layers.Dense(width)(f)
        h = keras.layers.LayerNormalization()(h)
        out = keras.layers.Dense(10)(keras.layers.GlobalAveragePooling1D()(h))
        return compiled(keras.Model(inp, out), d, keras.optimizers.AdamW(1e-3))
    return train_step_case("train step: ViT block (batch 32, 64 patches, d 128), AdamW",
                           build, x, y)


def case_mlp_loop():
    """A small MLP (64-256-256-10, ReLU) trained in a custom loop, as a user
    writes one: a `tf.function` step with `tf.GradientTape`, Keras's Adam and
    loss, batches of 32 taken from NumPy arrays; one call is 16 steps, then
    the last loss read back (`float(loss)`). Timed per step."""
    import keras

    rng = np.random.default_rng(0)
    steps, batch = 16, 32
    x = rng.random((steps * batch, 64)).astype(np.float32)
    y = rng.integers(0, 10, steps * batch).astype(np.int64)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            model = keras.Sequential([
                keras.Input((64,)), keras.layers.Dense(256, activation="relu"),
                keras.layers.Dense(256, activation="relu"), keras.layers.Dense(10)])
            opt = keras.optimizers.Adam(1e-3)
            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

            @tf.function
            def train_step(xb, yb, model=model, opt=opt, loss_fn=loss_fn):
                with tf.GradientTape() as tape:
                    loss = loss_fn(yb, model(xb, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss

        def run(d=d, train_step=train_step):
            with tf.device(d):
                for i in range(steps):
                    loss = train_step(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
                float(loss)
        fns[d] = run
    return "custom GradientTape loop: MLP 64-256-256-10 (batch 32), per step", fns, steps, None


def case_cnn_fit():
    """Keras `fit` of the small CNN of `case_cnn_step`: 512 images, batch 32
    (16 steps), one epoch per call, verbose=0, Keras's defaults (on the CPU,
    `jit_compile=False`: compile_args). Timed per step, so the per-epoch cost
    of fit (its tf.data adapter, callbacks) is spread over the 16 steps."""
    rng = np.random.default_rng(0)
    x = rng.random((512, 32, 32, 3)).astype(np.float32)
    y = rng.integers(0, 10, 512).astype(np.int64)
    fns = {}
    for d in DEVICES:
        with tf.device(d):
            model = compiled(small_cnn(), d)

        def run(model=model, d=d):
            with tf.device(d):
                model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        fns[d] = run
    return "Keras fit: small CNN 32x32x3 (batch 32, 16 steps), per step", fns, 16, None


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
    "elementwise_sums": case_elementwise_sums,
    "reduction": case_reduction,
    "adam": case_adam_apply,
    "digits": case_digits_step,
    "mlp": case_mlp_step,
    "mlp_bf16": case_mlp_bf16_step,
    "cnn": case_cnn_step,
    "resnet50": case_resnet50_step,
    "transformer": case_transformer_step,
    "lstm": case_lstm_step,
    "lstm_masked": lambda: case_lstm_step(masked=True),
    "vit": case_vit_step,
    "mlp_loop": case_mlp_loop,
    "cnn_fit": case_cnn_fit,
    "mlp_sgd": case_sgd_momentum_mlp_step,
    "cnn_rmsprop": case_rmsprop_cnn_step,
}

TRAIN_CASES = ("digits", "mlp", "mlp_bf16", "cnn", "resnet50", "transformer", "lstm",
               "lstm_masked", "mlp_sgd", "cnn_rmsprop", "vit")


CHILD = "child"  # the stock setup run by the worker process


def onednn_enabled():
    """Whether this process's TensorFlow runs its CPU kernels with oneDNN
    (decided when TensorFlow loaded, from TF_ENABLE_ONEDNN_OPTS and the CPU)."""
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


def stock_label(onednn):
    return "stock, oneDNN " + ("on" if onednn else "off")


class Worker:
    """A child process (`bench_pdk.py --worker`, run by `python` with `env`)
    driven over a pipe: it builds the same cases for its WORKER_DEVICE and
    times one call of the current case per request, so its calls interleave
    with this process's."""

    def __init__(self, python, env):
        self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=env)
        self.info = self.call("info")

    def call(self, cmd, **kw):
        self.proc.stdin.write(json.dumps(dict(cmd=cmd, **kw)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited (status {self.proc.wait()})")
        out = json.loads(line)
        if "error" in out:
            raise RuntimeError("worker failed:\n" + out["error"])
        return out

    def close(self):
        try:
            self.call("quit")
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - already gone or stuck: make sure it ends
            self.proc.kill()
            self.proc.wait()


class StockWorker(Worker):
    """Stock TensorFlow CPU with oneDNN `onednn` and PDK switched off
    (PDK_DEVICE_COUNT=0), in a child process of this Python."""

    def __init__(self, onednn):
        super().__init__(sys.executable, dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1" if onednn
                                              else "0", PDK_DEVICE_COUNT="0"))
        if self.info["onednn"] != onednn:
            raise RuntimeError(f"stock worker: asked for oneDNN {onednn}, got {self.info}")


class PdkWorker(Worker):
    """`--against PYTHON`: the PDK device of another installation (the venv
    PYTHON belongs to: another build of the wheel), with this process's
    TF_ENABLE_ONEDNN_OPTS."""

    def __init__(self, python):
        super().__init__(python, dict(os.environ, BENCH_PDK_WORKER_DEVICE=PDK))


def pdk_label():
    """This process's PDK build: version, core and the math libraries it runs."""
    from tensorflow_pdk import diagnostics

    libs = diagnostics.math_libraries()
    return (f"PDK {tensorflow_pdk.version()} core {tensorflow_pdk.cpu_isa()} "
            f"({os.path.dirname(tensorflow_pdk.plugin_path())}), oneDNN {libs.get('oneDNN')}")


def keras_auto_jit():
    """What Keras resolves `jit_compile="auto"` to in this process."""
    import keras

    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    return bool(m.jit_compile)


def worker_main():
    """The worker's loop: one JSON request per line on stdin, one JSON
    reply per line on the pipe to the parent."""
    fn = per_call = session = profiled = None
    for line in sys.stdin:
        req = json.loads(line)
        try:
            cmd = req["cmd"]
            if cmd == "info":
                out = {"onednn": onednn_enabled(), "tf": tf.__version__,
                       "keras_auto_jit": keras_auto_jit(),
                       "pdk": pdk_label() if WORKER_DEVICE == PDK else None}
            elif cmd == "case":
                fn = per_call = None
                name, fns, per_call, _ = CASES[req["key"]]()
                fn = fns[WORKER_DEVICE]
                out = {"name": name}
            elif cmd == "warmup":
                for _ in range(req["n"]):
                    fn()
                out = {}
            elif cmd == "time":
                out = {"t": _timed(fn) / per_call}
            elif cmd == "memory":
                out = {"mem": peak_memory({WORKER_DEVICE: fn})[WORKER_DEVICE]}
            elif cmd == "profile_start":  # then one untimed call in the session
                session, profiled = ProfileSession(), 0
                fn()
                out = {}
            elif cmd == "profile_call":
                session.call(fn, WORKER_DEVICE)
                profiled += 1
                out = {}
            elif cmd == "profile_stop":
                out = {"breakdown": summarize_profile(session.stop(), profiled * per_call,
                                                      WORKER_DEVICE)}
            elif cmd == "quit":
                _PIPE_OUT.write("{}\n")
                return
            else:
                out = {"error": f"unknown request {req}"}
        except Exception:  # noqa: BLE001 - reported to the parent, which raises
            out = {"error": traceback.format_exc()}
        _PIPE_OUT.write(json.dumps(out) + "\n")


def measure(fns, per_call, repeats, warmup=3, keys=None, worker=None):
    """Median seconds per call of each fns[k], k in `keys` (default: all), and
    of the worker's current case (key CHILD) if a worker is given: all warmed
    up, then run interleaved, one call of each per round."""
    keys = tuple(keys or fns)
    for d in keys:
        for _ in range(warmup):
            fns[d]()
    if worker:
        worker.call("warmup", n=warmup)
    times = {d: [] for d in keys + ((CHILD,) if worker else ())}
    for _ in range(repeats):
        for d in keys:
            times[d].append(_timed(fns[d]) / per_call)
        if worker:
            times[CHILD].append(worker.call("time")["t"])
    return {d: statistics.median(v) for d, v in times.items()}


def peak_memory(fns):
    """Per device d of fns: (peak bytes during one more call of fns[d], the
    part of it allocated by that call: peak minus the bytes in use when it
    started), or None where the device's allocator keeps no statistics
    (TensorFlow's CPU allocator with oneDNN off)."""
    out = {}
    for d, fn in fns.items():
        name = d.lstrip("/")
        try:
            tf.config.experimental.reset_memory_stats(name)
        except ValueError:  # the CPU allocator keeps no statistics (oneDNN off)
            out[d] = None
            continue
        before = tf.config.experimental.get_memory_info(name)["current"]
        fn()
        peak = tf.config.experimental.get_memory_info(name)["peak"]
        out[d] = (peak, peak - before)
    return out


# ---- --breakdown: where the time of a call goes, from a tf.profiler session

PDK_PLANE = "/device:CUSTOM:PDK:0"
COPIES = ("MemcpyH2D", "MemcpyD2H", "MemcpyD2D")
ACTIVITY = COPIES + ("Memset", "HostCallback", "Allocate", "Deallocate")
WINDOW = "bench_pdk_window"
# TensorFlow's host tracer names an executor's kernel event "node:OpType"
# (eager ops and Python/runtime events have other forms: "EagerExecute",
# "EagerLocalExecute: AddV2", "ThreadpoolListener::Record", ...).
KERNEL_EVENT = re.compile(r"^[^\s:][^:]*:([A-Za-z_][A-Za-z0-9_]*)$")


class ProfileSession:
    """A tf.profiler session in which calls are profiled one at a time, each
    inside a window event named after its setup, so several setups can be
    profiled interleaved in one session and told apart afterwards."""

    def __init__(self):
        self.logdir = tempfile.mkdtemp(prefix="pdk_breakdown_")
        tf.profiler.experimental.start(self.logdir)

    @staticmethod
    def call(fn, setup):
        with tf.profiler.experimental.Trace(WINDOW + setup):
            fn()

    def stop(self):
        """Ends the session; returns its XSpace."""
        import shutil

        from tensorflow.tsl.profiler.protobuf import xplane_pb2

        try:
            tf.profiler.experimental.stop()
            path = glob.glob(os.path.join(self.logdir, "plugins", "profile", "*",
                                          "*.xplane.pb"))[0]
            return xplane_pb2.XSpace.FromString(open(path, "rb").read())
        finally:
            shutil.rmtree(self.logdir, ignore_errors=True)


def _events(plane):
    """(name, display name, begin ns, end ns) of every event of an XPlane."""
    for line in plane.lines:
        for e in line.events:
            md = plane.event_metadata[e.metadata_id]
            begin = line.timestamp_ns + e.offset_ps / 1000
            yield md.name, md.display_name, begin, begin + e.duration_ps / 1000


def _union_ns(intervals):
    total, end = 0.0, None
    for b, e in sorted(intervals):
        if end is None or b > end:
            total += e - b
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def summarize_profile(space, n, setup):
    """Per step (n steps in the windows of `setup`, ProfileSession.call): wall
    time, kernel time (summed, and the union over threads with the copies),
    the time between kernels (wall minus that union), copies, launches and
    the top 10 ops by kernel time; seconds. The kernels are PDK's own plane's
    launches if it has any in the windows, else the host tracer's
    "node:OpType" events (stock CPU; TensorFlow's host tracer records no such
    event for a PluggableDevice's kernels)."""
    planes = {p.name: p for p in space.planes}
    host = planes["/host:CPU"]
    windows = [(b, e) for name, _, b, e in _events(host) if name == WINDOW + setup]
    inside = lambda b, e: any(b >= w0 and e <= w1 for w0, w1 in windows)  # noqa: E731
    kernels, copies = [], []  # (op, begin, end)
    if PDK_PLANE in planes:
        for name, op, b, e in _events(planes[PDK_PLANE]):
            if inside(b, e):
                if op in COPIES:
                    copies.append((op, b, e))
                elif op not in ACTIVITY:
                    kernels.append((op, b, e))
    source = "PDK profiler plane"
    if not kernels:
        source = "TensorFlow host tracer"
        for name, _, b, e in _events(host):
            m = KERNEL_EVENT.match(name)
            if m and inside(b, e):
                kernels.append((m.group(1), b, e))
    by_op = {}
    for op, b, e in kernels:
        t, c = by_op.get(op, (0.0, 0))
        by_op[op] = (t + e - b, c + 1)
    top = sorted(by_op.items(), key=lambda kv: -kv[1][0])[:10]
    wall = sum(w1 - w0 for w0, w1 in windows)
    busy = _union_ns([(b, e) for _, b, e in kernels + copies])
    ns = 1e-9 / n
    return {
        "source": source, "steps": n, "wall": wall * ns,
        "kernels": sum(e - b for _, b, e in kernels) * ns, "busy": busy * ns,
        "between": (wall - busy) * ns, "launches": len(kernels) / n,
        "copies": len(copies) / n, "copy_time": sum(e - b for _, b, e in copies) * ns,
        "top": [(op, t * ns, c / n) for op, (t, c) in top],
    }


def breakdown_table(name, results):
    """Markdown tables of one case's breakdown; results: [(setup label, summary)]."""
    cols = [label for label, _ in results]
    rows = [
        ("wall time per step (profiled)", lambda r: fmt(r["wall"])),
        ("kernels, summed", lambda r: fmt(r["kernels"])),
        ("kernels and copies, union over threads", lambda r: fmt(r["busy"])),
        ("between kernels (framework, executor, Python)",
         lambda r: f"{fmt(r['between'])} ({100 * r['between'] / r['wall']:.0f} %)"),
        ("copies per step (time)", lambda r: f"{r['copies']:.1f} ({fmt(r['copy_time'])})"),
        ("kernel launches per step", lambda r: f"{r['launches']:.1f}"),
    ]
    out = [f"Breakdown: {name} ({results[0][1]['steps']} steps profiled per setup, "
           "interleaved; per step)", "",
           "| | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    out += [f"| {title} | " + " | ".join(f(r) for _, r in results) + " |" for title, f in rows]
    out += ["", "| top ops by kernel time | " + " | ".join(cols) + " |",
            "|---" * (len(cols) + 1) + "|"]
    for i in range(10):
        cells = []
        for _, r in results:
            if i < len(r["top"]):
                op, t, c = r["top"][i]
                cells.append(f"{op} {fmt(t)} ({c:g})")
            else:
                cells.append("")
        if any(cells):
            out.append(f"| {i + 1} | " + " | ".join(cells) + " |")
    sources = "; ".join(f"{label}: {r['source']}" for label, r in results)
    out += ["", f"Kernel events from: {sources}. Cells of the top ops: time per step "
            "(launches per step).", ""]
    return "\n".join(out)


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


def parse_args(description, cases, argv=None, extra=None):
    """The options every bench script takes (--repeats, --cases, --markdown,
    --background-load), plus those extra(parser) adds; exits if no PDK device
    is registered."""
    p = argparse.ArgumentParser(description=description.split("\n")[0])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--cases", default=",".join(cases),
                   help="comma-separated subset of: " + ", ".join(cases))
    p.add_argument("--markdown", help="also write the results table to this file")
    p.add_argument("--background-load", type=int, default=0, metavar="N",
                   help="keep N busy processes (one core each) running during the measurement")
    if extra:
        extra(p)
    args = p.parse_args(argv)
    if not tf.config.list_physical_devices("PDK"):
        sys.exit("no PDK device registered")
    return args


def _bench_options(p):
    p.add_argument("--breakdown", action="store_true",
                   help="profile each case on each setup and print where the time goes")
    p.add_argument("--steps", type=int, default=5,
                   help="with --breakdown: calls profiled per case and setup")
    p.add_argument("--no-child", action="store_true",
                   help="measure stock CPU in this process only (no second oneDNN setting)")
    p.add_argument("--against", metavar="PYTHON",
                   help="compare this PDK with the PDK of PYTHON's environment (another build "
                        "of the wheel), interleaved; stock CPU in this process only")


def start_background_load(n):
    """Starts n processes that each keep one core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv=None):
    args = parse_args(__doc__, CASES, argv, _bench_options)
    load = start_background_load(args.background_load)
    here = onednn_enabled()
    if args.against:
        worker = PdkWorker(args.against)
        runner = run_against
    else:
        worker = None if args.no_child else StockWorker(not here)
        runner = run_breakdown if args.breakdown else run
    try:
        runner(args, here, worker)
    finally:
        if worker:
            worker.close()
        for proc in load:
            proc.kill()
            proc.wait()


def _load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _setups(here, worker):
    """{oneDNN on?: setup key} of the stock setups measured."""
    return {here: CPU, **({not here: CHILD} if worker else {})}


def _stock_note(here, worker):
    return (f"stock in this process: {stock_label(here)}"
            + (f", in the child process: {stock_label(not here)} (its Keras resolves "
               f"jit_compile=\"auto\" to {worker.info['keras_auto_jit']})" if worker else ""))


def run(args, here, worker):
    stocks = _setups(here, worker)
    print(f"{_stock_note(here, worker)}; load average {_load()}", flush=True)
    load_start = _load()
    rows = []
    peak = None  # measured before the first case that counts flops
    for key in args.cases.split(","):
        name, fns, per_call, flops = CASES[key]()
        if flops and peak is None:
            peak = measured_peak_gflops()
            print(f"measured float32 peak (NumPy/OpenBLAS sgemm 2048^3, {os.cpu_count()} "
                  f"threads): {peak:.0f} GFLOP/s", flush=True)
        if worker:
            worker.call("case", key=key)
        repeats = max(3, args.repeats // 4) if key == "resnet50" else args.repeats
        med = measure(fns, per_call, repeats, worker=worker)
        best = min(stocks.values(), key=med.get)
        ratio = med[PDK] / med[best]
        cell = lambda on: fmt(med[stocks[on]]) if on in stocks else "—"  # noqa: E731
        better = "on" if best == stocks.get(True) else "off"
        rate = mem = ""
        if flops:
            g = [flops / med[d] / 1e9 for d in (best, PDK)]
            rate = (f"{g[0]:.0f} / {g[1]:.0f} "
                    f"({100 * g[0] / peak:.0f} % / {100 * g[1] / peak:.0f} %)")
        if key in TRAIN_CASES:
            m = peak_memory(fns)
            if worker:
                m[CHILD] = worker.call("memory")["mem"]
            on = stocks.get(True)
            mib = lambda b: f"{b / 2**20:.2f}"  # noqa: E731
            peak_of = lambda d, i: mib(m[d][i]) if d and m.get(d) else "n/a"  # noqa: E731
            mem = (f"{peak_of(on, 0)} / {peak_of(PDK, 0)} MiB "
                   f"(step: {peak_of(on, 1)} / {peak_of(PDK, 1)})")
        rows.append((name, cell(False), cell(True), fmt(med[PDK]), f"{ratio:.2f} ({better})",
                     rate, mem))
        print(f"{name:<60s} oneDNN off {rows[-1][1]:>10s}  on {rows[-1][2]:>10s}  "
              f"PDK {rows[-1][3]:>10s}  PDK/better stock {rows[-1][4]}"
              f"  {('GFLOP/s stock/PDK (of peak) ' + rate) if rate else ''}"
              f"{('peak memory stock on/PDK ' + mem) if mem else ''}  [load {_load()}]",
              flush=True)
        del fns
    if args.markdown:
        lines = [
            "| case | stock, oneDNN off (median) | stock, oneDNN on (median) | PDK (median) "
            "| PDK / better stock (which) | GFLOP/s better stock / PDK (% of measured peak) "
            "| peak memory of a step, stock oneDNN on / PDK (allocated by the step) |",
            "|---|---|---|---|---|---|---|",
        ] + [f"| {' | '.join(r)} |" for r in rows]
        peak_note = (f"measured float32 peak {peak:.0f} GFLOP/s (NumPy/OpenBLAS sgemm 2048^3)"
                     if peak else "float32 peak not measured")
        header = (f"Machine: {platform.machine()}, {os.cpu_count()} logical CPUs, {peak_note}; "
                  f"TensorFlow {tf.__version__}; PDK {tensorflow_pdk.version()}; "
                  f"{args.repeats} interleaved rounds (ResNet50: {max(3, args.repeats // 4)}); "
                  f"{_stock_note(here, worker)}; load average (1/5/15 min) {load_start} at the start, {_load()} at the end"
                  + (f"; {args.background_load} busy background process(es)"
                     if args.background_load else "") + ".\n\n")
        write_markdown(args.markdown, header + "\n".join(lines) + "\n")


def run_against(args, here, worker):
    """--against: per case, PDK here, PDK of the other installation (the
    worker) and stock CPU here, interleaved; reported: the medians and PDK
    here / PDK there (< 1: this build faster)."""
    mine, theirs = pdk_label(), worker.info["pdk"]
    print(f"A (this process): {mine}\nB (--against): {theirs}\n{stock_label(here)} in this "
          f"process; load average {_load()}", flush=True)
    load_start = _load()
    rows = []
    for key in args.cases.split(","):
        name, fns, per_call, _ = CASES[key]()
        worker.call("case", key=key)
        repeats = max(3, args.repeats // 4) if key == "resnet50" else args.repeats
        med = measure(fns, per_call, repeats, keys=(PDK, CPU), worker=worker)
        rows.append((name, fmt(med[PDK]), fmt(med[CHILD]), fmt(med[CPU]),
                     f"{med[PDK] / med[CHILD]:.3f}", f"{med[PDK] / med[CPU]:.2f}",
                     f"{med[CHILD] / med[CPU]:.2f}"))
        print(f"{name:<60s} A {rows[-1][1]:>10s}  B {rows[-1][2]:>10s}  stock {rows[-1][3]:>10s}"
              f"  A/B {rows[-1][4]}  A/stock {rows[-1][5]}  B/stock {rows[-1][6]}"
              f"  [load {_load()}]", flush=True)
        del fns
    if args.markdown:
        lines = ["| case | A (median) | B (median) | stock (median) | A / B | A / stock "
                 "| B / stock |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {' | '.join(r)} |" for r in rows]
        header = (f"A: {mine}. B: {theirs}. Stock: {stock_label(here)}. Machine: "
                  f"{platform.machine()}, {os.cpu_count()} logical CPUs; TensorFlow "
                  f"{tf.__version__}; {args.repeats} interleaved rounds (ResNet50: "
                  f"{max(3, args.repeats // 4)}); load average (1/5/15 min) {load_start} at the "
                  f"start, {_load()} at the end.\n\n")
        write_markdown(args.markdown, header + "\n".join(lines) + "\n")


def run_breakdown(args, here, worker):
    """--breakdown: per case, --steps calls of each setup profiled, interleaved
    (PDK, stock here, stock in the worker, each round), after one untimed
    call of each in the session (it pays the tracers' start-up)."""
    stocks = _setups(here, worker)
    for key in args.cases.split(","):
        name, fns, per_call, _ = CASES[key]()
        if worker:
            worker.call("case", key=key)
        load = _load()
        measure(fns, per_call, 1, worker=worker)  # warm-up
        if worker:
            worker.call("profile_start")
        session = ProfileSession()
        try:
            for d in DEVICES:
                fns[d]()
            for _ in range(args.steps):
                for d in DEVICES:
                    session.call(fns[d], d)
                if worker:
                    worker.call("profile_call")
        finally:
            space = session.stop()
        n = args.steps * per_call
        got = {PDK: summarize_profile(space, n, PDK), CPU: summarize_profile(space, n, CPU)}
        if worker:
            got[CHILD] = worker.call("profile_stop")["breakdown"]
        results = [("PDK", got[PDK])] + [(stock_label(on), got[stocks[on]])
                                         for on in (False, True) if on in stocks]
        print(breakdown_table(name, results)
              + f"\nLoad average (1/5/15 min) {load} before, {_load()} after.\n", flush=True)
        del fns


if __name__ == "__main__":
    if WORKER:
        worker_main()
    else:
        main()
