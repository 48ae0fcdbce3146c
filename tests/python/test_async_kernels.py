"""Asynchronous kernels (include/pdk/kernel.h "asynchronous kernels",
src/device/async_launcher.cc): MatMul, BatchMatMulV2 and _PdkFusedMatMul run
on launcher threads when their inputs are large enough, so independent
kernels overlap; the Conv2D family is synchronous (docs/architecture.md,
"Asynchronous kernels"). Each case runs in a child process, because the
launcher is set up when the plugin loads (PDK_ASYNC, PDK_ASYNC_MIN_BYTES)."""
import json
import textwrap

from child_process import run_python


def _run(*code, **env):
    r = run_python("".join(textwrap.dedent(c) for c in code), env_extra=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("REPORT "))
    return json.loads(line[len("REPORT "):])


def test_async_status_and_registration():
    code = """
        import json
        ks = tensorflow_pdk.registered_kernels()
        asyn = sorted({k.op for k in ks if k.asynchronous})
        conv = sorted({k.op for k in ks if "Conv2D" in k.op})
        print("REPORT " + json.dumps({"status": tensorflow_pdk.async_status(), "async": asyn,
                                      "conv": conv}))
    """
    on = _run(code)
    assert on["status"].startswith("on: "), on
    assert on["async"] == ["BatchMatMulV2", "MatMul", "_PdkFusedMatMul"], on
    # The convolutions are registered, synchronous only.
    assert {"Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput",
            "_PdkFusedConv2D"} <= set(on["conv"]), on
    off = _run(code, PDK_ASYNC="0")
    assert off["status"] == "off: PDK_ASYNC=0" and off["async"] == [], off


# PDK's profiler records each kernel's start and end (TraceClockNs) and the
# thread that ran it: kernel_events(fn, names) runs fn() under the profiler
# and returns (line id = thread, begin ps, end ps, op name) of the kernels
# named, in start order.
PROFILE = """
    import json, glob, os, tempfile
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    def kernel_events(fn, names):
        logdir = tempfile.mkdtemp()
        tf.profiler.experimental.start(logdir)
        fn()
        tf.profiler.experimental.stop()
        path = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))[0]
        space = xplane_pb2.XSpace.FromString(open(path, "rb").read())
        events = []
        for p in space.planes:
            if p.name == "/device:CUSTOM:PDK:0":
                for line in p.lines:
                    for e in line.events:
                        name = p.event_metadata[e.metadata_id].display_name
                        if name in names:
                            b = line.timestamp_ns * 1000 + e.offset_ps
                            events.append((line.id, b, b + e.duration_ps, name))
        return sorted(events, key=lambda e: e[1])
"""

# Four independent products per call.
BRANCHES = PROFILE + """
    rng = np.random.default_rng(0)
    with tf.device("/PDK:0"):
        ws = [tf.constant(rng.standard_normal((384, 384)).astype("float32")) for _ in range(4)]
        x = tf.constant(rng.standard_normal((384, 384)).astype("float32"))

    @tf.function
    def f(x):
        with tf.device("/PDK:0"):
            return [tf.linalg.matmul(x, w) for w in ws]

    outs = f(x)
"""


def test_independent_matmuls_overlap_on_launcher_threads():
    rep = _run(BRANCHES, """
        tensorflow_pdk.reset_launch_counts()
        events = kernel_events(lambda: [f(x) for _ in range(5)], ("MatMul",))
        print("REPORT " + json.dumps({"events": events,
                                      "launches": tensorflow_pdk.launch_counts()["MatMul"],
                                      "async": tensorflow_pdk.async_launches()}))
    """)
    events = rep["events"]
    assert rep["launches"] == 20 and len(events) == 20, rep
    # Two products ran at the same time, on two different threads.
    overlapping = [(a, b) for i, a in enumerate(events) for b in events[i + 1:]
                   if a[1] < b[2] and b[1] < a[2]]
    assert overlapping, sorted(events, key=lambda e: e[1])
    assert all(a[0] != b[0] for a, b in overlapping)
    # Launches ran on launcher threads (the others inline, when both launcher
    # threads were busy); the warm-up call's 4 launches count too.
    assert 0 < rep["async"] <= 24, rep["async"]


# A while loop of small products (a Keras RNN's shape): each iteration's
# MatMul, then a Tanh on its result.
LOOP = PROFILE + """
    rng = np.random.default_rng(0)
    with tf.device("/PDK:0"):
        w = tf.constant(rng.standard_normal((64, 64)).astype("float32") / 8)
        x0 = tf.constant(rng.standard_normal((32, 64)).astype("float32"))

    @tf.function
    def loop(x):
        with tf.device("/PDK:0"):
            return tf.while_loop(lambda i, a: i < 50,
                                 lambda i, a: (i + 1, tf.tanh(tf.linalg.matmul(a, w))),
                                 (tf.constant(0), x))[1]

    tensorflow_pdk.reset_graph_rewrite_counts()
    y = loop(x0)
    events = kernel_events(lambda: loop(x0), ("MatMul", "Tanh", "_PdkFusedElementwise"))
    # For each product, whether the kernel after it ran on the same thread.
    same = [a[0] == b[0] for a, b in zip(events, events[1:]) if a[3] == "MatMul"]
    ref = x0.numpy()
    for _ in range(50):
        ref = np.tanh(ref @ w.numpy())
    print("REPORT " + json.dumps({"same": same, "counts": tensorflow_pdk.graph_rewrite_counts(),
                                  "err": float(np.max(np.abs(y.numpy() - ref)))}))
"""


def test_small_products_in_a_loop_run_synchronous():
    # The products' inputs (8 KiB + 16 KiB, shapes known to TensorFlow's shape
    # inference) are under PDK_ASYNC_MIN_BYTES: the graph optimizer leaves the
    # nodes on the synchronous kernel, so the Tanh after each product runs on
    # the same thread (an asynchronous kernel's successors are handed to
    # TensorFlow's inter-op pool, docs/benchmarks.md "Kernel overlap").
    rep = _run(LOOP)
    assert rep["err"] < 1e-4, rep["err"]
    assert rep["counts"].get("synchronous launch (inputs under PDK_ASYNC_MIN_BYTES)", 0) >= 1, \
        rep["counts"]
    assert "asynchronous launch" not in rep["counts"], rep["counts"]
    assert len(rep["same"]) == 50 and all(rep["same"]), rep["same"]
    # With the threshold at 0 the products get the asynchronous kernel
    # (`_kernel: "async"`), and the successors of most move to another thread.
    rep = _run(LOOP, PDK_ASYNC_MIN_BYTES="0")
    assert rep["err"] < 1e-4, rep["err"]
    assert rep["counts"].get("asynchronous launch", 0) >= 1, rep["counts"]
    assert len(rep["same"]) == 50 and not all(rep["same"]), rep["same"]


def test_results_bit_identical_to_synchronous():
    code = textwrap.dedent(BRANCHES) + textwrap.dedent("""
        import hashlib
        b = tf.constant(rng.standard_normal((6, 384, 200)).astype("float32"))
        img = tf.constant(rng.standard_normal((4, 32, 32, 16)).astype("float32"))
        k = tf.constant(rng.standard_normal((3, 3, 16, 32)).astype("float32"))

        @tf.function
        def g(x, b, img, k):
            with tf.device("/PDK:0"):
                with tf.GradientTape() as tape:
                    tape.watch([img, k])
                    c = tf.nn.conv2d(img, k, 1, "SAME")
                    loss = tf.reduce_sum(c * c)
                gi, gk = tape.gradient(loss, [img, k])
                return f(x) + [tf.linalg.matmul(tf.stack([x] * 6), b), c, gi, gk]

        res = g(x, b, img, k)
        digest = hashlib.sha256(b"".join(r.numpy().tobytes() for r in res)).hexdigest()
        print("REPORT " + json.dumps({"digest": digest, "async": tensorflow_pdk.async_launches(),
                                      "counts": tensorflow_pdk.launch_counts()}))
    """)
    on = _run(code, PDK_ASYNC_MIN_BYTES="0")
    off = _run(code, PDK_ASYNC="0")
    assert on["digest"] == off["digest"]
    assert on["async"] > 0 and off["async"] == 0, (on["async"], off["async"])
    for op in ("MatMul", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
               "Conv2DBackpropFilter"):
        assert on["counts"].get(op, 0) >= 1, (op, on["counts"])


def test_stress_many_parallel_branches():
    # 10 000 steps of 8 parallel products (each on a launcher thread when one
    # is free): no crash, hang or leak, and the last step is right.
    rep = _run("""
        import json, resource
        rng = np.random.default_rng(1)
        with tf.device("/PDK:0"):
            ws = [tf.constant(rng.standard_normal((32, 32)).astype("float32")) for _ in range(8)]
            x = tf.constant(rng.standard_normal((32, 32)).astype("float32"))

        @tf.function
        def step(x):
            with tf.device("/PDK:0"):
                return tf.add_n([tf.nn.relu(tf.linalg.matmul(x, w)) for w in ws])

        tensorflow_pdk.reset_launch_counts()
        rss = []
        for i in range(10000):
            y = step(x)
            if i in (999, 9999):
                y.numpy()
                rss.append(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        ref = sum(np.maximum(x.numpy() @ w.numpy(), 0) for w in ws)
        print("REPORT " + json.dumps({
            "err": float(np.max(np.abs(y.numpy() - ref))), "rss_kb": rss,
            "launches": tensorflow_pdk.launch_counts()["MatMul"],
            "async": tensorflow_pdk.async_launches(),
            "in_use": tensorflow_pdk.device_allocator_stats(0)["bytes_in_use"]}))
    """, PDK_ASYNC_MIN_BYTES="0")
    assert rep["err"] < 1e-3, rep
    assert rep["launches"] == 80000, rep
    # Many ran on launcher threads. The launcher declines a launch when all its
    # threads are busy (it then runs inline), so the share depends on the CPU
    # and the load: 36-39 % measured on the 2-core AVX-512 VM, over half on
    # the AVX2 ones.
    assert rep["async"] >= 80000 // 4, rep
    # Peak RSS grows by less than 64 MB from step 1000 to step 10 000.
    assert rep["rss_kb"][1] - rep["rss_kb"][0] < 64 * 1024, rep


ERROR = """
    import json
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)] * 2)
    def mm(a, b):
        with tf.device("/PDK:0"):
            return tf.linalg.matmul(a, b)

    tensorflow_pdk.reset_launch_counts()
    try:
        mm(tf.ones([512, 300]), tf.ones([299, 512]))
        err = None
    except tf.errors.InvalidArgumentError as e:
        err = e.message
    ok = mm(tf.ones([512, 300]), tf.ones([300, 512]))  # the function still works after
    print("REPORT " + json.dumps({"err": err, "ok": float(ok.numpy()[0, 0]),
                                  "launches": tensorflow_pdk.launch_counts()["MatMul"],
                                  "async": tensorflow_pdk.async_launches()}))
"""


def test_async_kernel_error_same_as_synchronous():
    on = _run(ERROR)
    off = _run(ERROR, PDK_ASYNC="0")
    assert on["async"] == 2 and off["async"] == 0, (on, off)
    assert on["launches"] == 2 and on["ok"] == 300.0, on
    assert on["err"] is not None and "Matrix size-incompatible: In[0]: [512,300], In[1]: " \
        "[299,512]" in on["err"], on
    assert on["err"] == off["err"]


OOM = """
    import json
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)] * 2)
    def mm(a, b):
        with tf.device("/PDK:0"):
            return tf.linalg.matmul(a, b)

    with tf.device("/PDK:0"):
        a = tf.ones([4096, 256])
        b = tf.ones([256, 4096])
    try:
        mm(a, b)  # a 64 MiB product on a 48 MiB device
        err = None
    except tf.errors.ResourceExhaustedError as e:
        err = [ln for ln in e.message.splitlines() if "OOM" in ln]
    print("REPORT " + json.dumps({"err": err, "async": tensorflow_pdk.async_launches()}))
"""


def test_async_kernel_out_of_memory_same_as_synchronous():
    on = _run(OOM, PDK_MEMORY_LIMIT_MB="48")
    off = _run(OOM, PDK_MEMORY_LIMIT_MB="48", PDK_ASYNC="0")
    assert on["async"] == 1 and off["async"] == 0, (on, off)
    assert on["err"] and "OOM when allocating tensor with shape[4096,4096]" in on["err"][0], on
    assert on["err"] == off["err"]


def test_diagnostics_reports_async_on_and_off():
    import os
    import subprocess
    import sys
    base = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    for extra, want in (({}, "on: "), ({"PDK_ASYNC": "0"}, "off: PDK_ASYNC=0")):
        r = subprocess.run([sys.executable, "-m", "tensorflow_pdk", "--json", "--no-self-test"],
                           env={**base, **extra}, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        feat = json.loads(r.stdout)["features"]["asynchronous kernels (PDK_ASYNC)"]
        assert feat.startswith(want), feat


def test_keras_lstm_step_products_run_synchronous():
    # A Keras LSTM's train step with known shapes: every product in the
    # forward loop and in its gradient loop (whose inputs TensorFlow's shape
    # inference leaves unknown: TensorList elements popped in the loop) is
    # known to be small and gets the synchronous kernel.
    rep = _run("""
        import json, keras
        rng = np.random.default_rng(0)
        x = rng.standard_normal((8, 12, 5)).astype("float32")
        y = rng.integers(0, 3, 8)
        tensorflow_pdk.reset_graph_rewrite_counts()
        with tf.device("/PDK:0"):
            model = keras.Sequential([keras.Input((12, 5)), keras.layers.LSTM(16),
                                      keras.layers.Dense(3)])
            model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            model.train_on_batch(x, y)
        print("REPORT " + json.dumps(tensorflow_pdk.graph_rewrite_counts()))
    """)
    # The cell's two forward products (x_t W, h U) and three gradient
    # products (dW, dU, dh; no dx: x is the model's input), each run once per
    # time step. (The Dense layer's products are outside the loops: they keep
    # the asynchronous kernel, see src/graph/rewrites/async_launch.cc.)
    assert rep.get("synchronous launch (inputs under PDK_ASYNC_MIN_BYTES)", 0) >= 5, rep
