"""Per-op micro-benchmarks at the shapes of the Transformer and small-CNN train
steps of bench_pdk.py, stock CPU vs PDK interleaved in one process.

Each case is a tf.function of 4 independent copies of one op (each copy's
input first goes through a same-shape AddV2 `x + i`, so the copies differ and
are not folded; that AddV2 is timed on both devices alike). The stock CPU runs
with inter-op parallelism 1 (INTER1=0 to keep TF's default): TensorFlow runs
PluggableDevice kernels one at a time (docs/benchmarks.md, "Scheduling"), so
this compares kernel with kernel. Median of REPS (default 15) rounds of 5 calls
per device, A B A B. Nothing here asserts a time.

Run:  PYTHONPATH=python TF_PLUGGABLE_DEVICE_LIBRARY_PATH=build/dev/libtensorflow_pdk_plugin.so \
      python bench/bench_step_kernels.py [substring of case names]
"""
import os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np, tensorflow as tf, tensorflow_pdk
if os.environ.get('INTER1', '1') == '1': tf.config.threading.set_inter_op_parallelism_threads(1)
R = tf.raw_ops
rng = np.random.default_rng(0)
def rnd(*s): return rng.standard_normal(s).astype(np.float32)
K = 4  # independent copies per function

def mk(name, build):
    fns = {}
    for d in ("/CPU:0", "/PDK:0"):
        with tf.device(d):
            args, body = build()
            args = [tf.identity(tf.constant(a)) for a in args]
            f = tf.function(body, jit_compile=False)
            def run(f=f, args=args, d=d):
                with tf.device(d):
                    out = f(*args)
                return out
        fns[d] = run
    return name, fns

def rep(op):
    def body(*a):
        return [op(*a, i) for i in range(K)]
    return body

cases = []
B = lambda *a: cases.append(mk(*a))
S4, S3 = (32, 4, 64, 64), (32, 64, 128)
B("SelectV2 c[32,4,64,64] t full e scalar", lambda: ([rnd(*S4) > 0, rnd(*S4)], rep(lambda c, t, i: R.SelectV2(condition=c, t=t + i, e=tf.constant(0.0)))))
B("SelectV2 c[32,64,128] t scalar e full", lambda: ([rnd(*S3) > 0, rnd(*S3)], rep(lambda c, t, i: R.SelectV2(condition=c, t=tf.constant(0.0), e=t + i))))
B("(ref) AddV2 [32,64,128] + scalar", lambda: ([rnd(*S3)], rep(lambda t, i: t + float(i))))
B("Mul [32,64,1]*[32,64,128]", lambda: ([rnd(32, 64, 1), rnd(*S3)], rep(lambda a, b, i: R.Mul(x=a, y=b + i))))
B("Mul [32,64,128]*[1,1,128]", lambda: ([rnd(*S3), rnd(1, 1, 128)], rep(lambda a, b, i: R.Mul(x=a + i, y=b))))
B("Mul [32,64,1]*[1,1,128]", lambda: ([rnd(32, 64, 1), rnd(1, 1, 128)], rep(lambda a, b, i: R.Mul(x=a + i, y=b))))
B("AddV2 [32,64,4,32]+[4,32]", lambda: ([rnd(32, 64, 4, 32), rnd(4, 32)], rep(lambda a, b, i: R.AddV2(x=a + i, y=b))))
B("Sub [32,4,64,64]-[32,4,64,1]", lambda: ([rnd(*S4), rnd(32, 4, 64, 1)], rep(lambda a, b, i: R.Sub(x=a + i, y=b))))
B("SquaredDifference [32,64,128],[32,64,1]", lambda: ([rnd(*S3), rnd(32, 64, 1)], rep(lambda a, b, i: R.SquaredDifference(x=a + i, y=b))))
B("Mean [32,64,128] axis -1 keepdims", lambda: ([rnd(*S3)], rep(lambda a, i: R.Mean(input=a + i, axis=[-1], keep_dims=True))))
B("Sum [32,64,128] axis [0,1]", lambda: ([rnd(*S3)], rep(lambda a, i: R.Sum(input=a + i, axis=[0, 1]))))
B("Sum [32,4,64,64] axis -1 keepdims", lambda: ([rnd(*S4)], rep(lambda a, i: R.Sum(input=a + i, axis=[-1], keep_dims=True))))
B("Sum [32,64,4,32] axis [0,1]", lambda: ([rnd(32, 64, 4, 32)], rep(lambda a, i: R.Sum(input=a + i, axis=[0, 1]))))
B("Sum [32,128,128] axis 0", lambda: ([rnd(32, 128, 128)], rep(lambda a, i: R.Sum(input=a + i, axis=[0]))))
B("Tile [32,64,1] x [1,1,128]", lambda: ([rnd(32, 64, 1)], rep(lambda a, i: R.Tile(input=a + i, multiples=[1, 1, 128]))))
B("Transpose [32,64,4,32] perm 0213", lambda: ([rnd(32, 64, 4, 32)], rep(lambda a, i: R.Transpose(x=a + i, perm=[0, 2, 1, 3]))))
B("Transpose [32,4,64,64] perm 0132", lambda: ([rnd(*S4)], rep(lambda a, i: R.Transpose(x=a + i, perm=[0, 1, 3, 2]))))
B("Softmax [32,4,64,64]", lambda: ([rnd(*S4)], rep(lambda a, i: R.Softmax(logits=a + i))))
B("BiasAddGrad [32,64,128]", lambda: ([rnd(*S3)], rep(lambda a, i: R.BiasAddGrad(out_backprop=a + i))))
B("BiasAddGrad [32,64,512]", lambda: ([rnd(32, 64, 512)], rep(lambda a, i: R.BiasAddGrad(out_backprop=a + i))))
B("ReluGrad [32,64,512]", lambda: ([rnd(32, 64, 512), rnd(32, 64, 512)], rep(lambda g, x, i: R.ReluGrad(gradients=g + i, features=x))))
B("AddN 3x[32,64,128]", lambda: ([rnd(*S3), rnd(*S3)], rep(lambda a, b, i: R.AddN(inputs=[a + i, b, a]))))
B("GreaterEqual [32,4,64,64] scalar", lambda: ([rnd(*S4)], rep(lambda a, i: R.GreaterEqual(x=a + i, y=0.1))))
B("StatelessRandomUniformV2 [32,4,64,64]", lambda: ([np.array([1], np.uint64)], rep(lambda k, i: R.StatelessRandomUniformV2(shape=S4, key=k, counter=tf.constant([i, 0], tf.uint64), alg=1))))
B("RsqrtGrad+Rsqrt [32,64,1]", lambda: ([np.abs(rnd(32, 64, 1)) + 1], rep(lambda a, i: R.RsqrtGrad(y=R.Rsqrt(x=a + i), dy=a))))
B("BiasAdd [32,64,512]+[512]", lambda: ([rnd(32, 64, 512), rnd(512)], rep(lambda a, b, i: R.BiasAdd(value=a + i, bias=b))))
# CNN
B("MaxPool [32,32,32,32] 2x2", lambda: ([rnd(32, 32, 32, 32)], rep(lambda a, i: R.MaxPool(input=a + i, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"))))
B("MaxPoolGrad [32,32,32,32] 2x2", lambda: ([rnd(32, 32, 32, 32), rnd(32, 16, 16, 32)], rep(lambda a, g, i: R.MaxPoolGrad(orig_input=a, orig_output=R.MaxPool(input=a, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"), grad=g + i, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"))))
B("MaxPoolGrad [32,16,16,64] 2x2", lambda: ([rnd(32, 16, 16, 64), rnd(32, 8, 8, 64)], rep(lambda a, g, i: R.MaxPoolGrad(orig_input=a, orig_output=R.MaxPool(input=a, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"), grad=g + i, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"))))
B("ReluGrad [32,32,32,32]", lambda: ([rnd(32, 32, 32, 32), rnd(32, 32, 32, 32)], rep(lambda g, x, i: R.ReluGrad(gradients=g + i, features=x))))
B("BiasAddGrad [32,32,32,32]", lambda: ([rnd(32, 32, 32, 32)], rep(lambda a, i: R.BiasAddGrad(out_backprop=a + i))))
B("BiasAddGrad [32,16,16,64]", lambda: ([rnd(32, 16, 16, 64)], rep(lambda a, i: R.BiasAddGrad(out_backprop=a + i))))
B("SparseSoftmaxXent [32,10]", lambda: ([rnd(32, 10), rng.integers(0, 10, 32)], rep(lambda a, l, i: R.SparseSoftmaxCrossEntropyWithLogits(features=a + i, labels=l))))

from bench_pdk import measure  # noqa: E402  (after the threading setting above)

sel = sys.argv[1] if len(sys.argv) > 1 else ""
reps = int(os.environ.get("REPS", "15"))
for name, fns in cases:
    if sel and sel not in name: continue
    five = {d: (lambda f=f: [f() for _ in range(5)]) for d, f in fns.items()}
    med = measure(five, 5, reps, keys=tuple(fns))
    c, p = med["/CPU:0"], med["/PDK:0"]
    print(f"{name:45s} CPU {c*1e6:9.1f} us  PDK {p*1e6:9.1f} us  ratio {p/c:5.2f}", flush=True)
