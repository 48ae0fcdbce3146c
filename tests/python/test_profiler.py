"""PDK's pluggable profiler (src/profiler/profiler.cc): TensorFlow's own
profiler, started and stopped as a user does, writes PDK's kernels, and the
memory copies, memsets and host callbacks TensorFlow hands the device, into
the profile as a device plane. The .xplane.pb is read back with TensorFlow's own
XSpace message (tensorflow.tsl.profiler.protobuf.xplane_pb2)."""
import json

from child_process import run_python

SESSION = """
    import glob, json, os, tempfile, time, keras
    from tensorflow.tsl.profiler.protobuf import xplane_pb2
    logdir = tempfile.mkdtemp()
    x = np.random.default_rng(0).standard_normal((256, 32)).astype("float32")
    y = np.random.default_rng(1).integers(0, 4, 256)
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(4)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)          # traced before the session
    with tf.device("/PDK:0"):
        tf.linalg.matmul(tf.ones([8, 8]), tf.ones([8, 8]))      # before: not recorded
    t0 = time.time_ns()
    tf.profiler.experimental.start(logdir)
    model.fit(x, y, batch_size=64, epochs=2, verbose=0)
    with tf.device("/CPU:0"):
        host = tf.constant(x[:64])
    with tf.device("/PDK:0"):
        z = tf.nn.softmax(tf.linalg.matmul(tf.ones([64, 64]), tf.ones([64, 64])))
        tf.identity(host)                                     # an eager copy to the device
    if len(tf.config.list_logical_devices("PDK")) > 1:
        with tf.device("/PDK:1"):
            tf.reduce_sum(tf.ones([16]))
    tf.profiler.experimental.stop()
    t1 = time.time_ns()
    files = glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))
    space = xplane_pb2.XSpace.FromString(open(files[0], "rb").read())
    out = {"planes": [p.name for p in space.planes], "warnings": list(space.warnings),
           "t0": t0, "t1": t1, "events": []}
    for p in space.planes:
        if not p.name.startswith("/device:CUSTOM:PDK"):
            continue
        stat_names = {k: v.name for k, v in p.stat_metadata.items()}
        for line in p.lines:
            for e in line.events:
                md = p.event_metadata[e.metadata_id]
                stats = {stat_names[s.metadata_id]: s.str_value or s.int64_value for s in e.stats}
                out["events"].append({
                    "plane": p.name, "line": line.id, "node": md.name, "op": md.display_name,
                    "begin_ns": line.timestamp_ns + e.offset_ps // 1000,
                    "duration_ns": e.duration_ps // 1000, "tf_op": stats.get("tf_op"),
                    "bytes": stats.get("bytes"),
                    "bytes_allocated": stats.get("bytes_allocated")})
    print("REPORT " + json.dumps(out))
"""


def _report(env=None):
    r = run_python(SESSION, env_extra=env)
    assert r.returncode == 0, r.stderr[-3000:]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("REPORT "))
    return json.loads(line[len("REPORT "):])


def test_profile_has_pdk_plane_with_kernels_in_the_session():
    rep = _report()
    assert "/device:CUSTOM:PDK:0" in rep["planes"], rep["planes"]
    everything = rep["events"]
    events = [e for e in everything if e["op"] not in ACTIVITY]  # kernel launches
    ops = {e["op"] for e in events}
    # The training step's fused kernels and the eager ops after it.
    assert {"_PdkFusedMatMul", "MatMul", "Softmax"} <= ops, sorted(ops)
    for e in events:
        assert e["tf_op"] == f"{e['node']}:{e['op']}", e
        # Inside the session's window (TensorFlow stores times relative to the
        # session's start, NormalizeTimestamps); durations sane.
        assert 0 <= e["begin_ns"] <= rep["t1"] - rep["t0"], e
        assert 0 <= e["duration_ns"] <= rep["t1"] - rep["t0"], e
    # Kernels launched by one thread run one after another: no overlap.
    by_line = {}
    for e in events:
        by_line.setdefault((e["plane"], e["line"]), []).append(e)
    for evs in by_line.values():
        evs.sort(key=lambda e: e["begin_ns"])
        for a, b in zip(evs, evs[1:]):
            assert a["begin_ns"] + a["duration_ns"] <= b["begin_ns"], (a, b)
    # The eager MatMul launched before the session is not in it: one eager
    # MatMul (an eager op's node is named by its op; the step's are in graphs).
    eager_matmul = [e for e in events if e["node"] == "MatMul"]
    assert len(eager_matmul) == 1, eager_matmul
    # Each launch carries the bytes it allocated: the eager MatMul its
    # 64 x 64 float32 output.
    assert eager_matmul[0]["bytes_allocated"] == 64 * 64 * 4, eager_matmul
    assert all(isinstance(e["bytes_allocated"], int) and e["bytes_allocated"] >= 0
               for e in events), events[:5]
    assert any(e["op"] == "_PdkFusedMatMul" and e["bytes_allocated"] == 64 * 64 * 4
               for e in events), [e for e in events if e["op"] == "_PdkFusedMatMul"][:4]
    assert rep["warnings"] == []


ACTIVITY = ("MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "Memset", "HostCallback", "Allocate",
            "Deallocate")


def test_profile_has_the_device_memory_copies():
    rep = _report()
    acts = [e for e in rep["events"] if e["op"] in ACTIVITY]
    kinds = {e["op"] for e in acts}
    # fit reads the loss back; its batches are read where tf.data leaves them
    # (src/graph/rewrites/cpu_inputs_host_memory.cc); the eager identity of a
    # host tensor copies it to the device.
    assert {"MemcpyH2D", "MemcpyD2H"} <= kinds, sorted(kinds)
    for e in acts:
        assert e["tf_op"] is None and e["node"] == e["op"], e
        assert 0 <= e["begin_ns"] <= rep["t1"] - rep["t0"], e
        assert 0 <= e["duration_ns"] <= rep["t1"] - rep["t0"], e
        if e["op"].startswith("Memcpy"):
            assert e["bytes"] > 0, e
    # The host tensor: 64 x 32 float32 (8 KiB), copied once; fit's batches
    # (the same size) are not copied.
    h2d = [e for e in acts if e["op"] == "MemcpyH2D" and e["bytes"] == 64 * 32 * 4]
    assert len(h2d) == 1, h2d


def test_second_device_gets_its_own_plane():
    rep = _report({"PDK_DEVICE_COUNT": "2"})
    assert {"/device:CUSTOM:PDK:0", "/device:CUSTOM:PDK:1"} <= set(rep["planes"])
    on1 = {e["op"] for e in rep["events"]
           if e["plane"] == "/device:CUSTOM:PDK:1" and e["op"] not in ACTIVITY}
    assert on1 == {"Fill", "Sum"}, on1  # tf.reduce_sum(tf.ones([16])) placed there
