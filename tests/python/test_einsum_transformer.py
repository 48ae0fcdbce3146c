"""Einsum on PDK, and a Keras Transformer encoder block trained on PDK.

Part 1 compares PDK's Einsum kernel (src/kernels/math/einsum.cc) with
TensorFlow's CPU kernel (for float16/bfloat16: with TF's float32 Einsum rounded
to the 16-bit type, as TF's CPU kernel accumulates in half) over the equations attention and dense layers use,
transposes, reductions, a diagonal and "..." broadcasting, for float32,
float64, float16, bfloat16 (and int32 for a few), plus its errors and its
gradients (TensorFlow's gradient of Einsum is Einsum again).

Part 2 trains a standard post-norm encoder block (MultiHeadAttention with
dropout 0.1, residual + LayerNormalization, Dropout 0.1, a Dense or
EinsumDense("...b,bc->...c") feed-forward 32 -> 64 -> 32, residual +
LayerNormalization, pooling, a Dense head; once more with a causal attention
mask) for 3 steps with model.fit on
/PDK:0 and on /CPU:0 from the same seed (keras.utils.set_random_seed; the
dropout masks come from stateless random ops, bit-identical on both devices).
No compute op of the train step may fall back to the CPU, and losses and
weights must agree within TRAIN_RTOL / TRAIN_ATOL: 1e-5 relative on the
loss (Keras reports the mean over the 3 steps), 3e-5 absolute on every weight.
Measured: losses within 1.1e-7 relative, weights within 2.7e-6 (float32
round-off: PDK's GEMMs sum in another order than TF's oneDNN kernels, and
Adam's first steps move every weight by about the learning rate whatever the
gradient's size).

Keras 3.15's TensorFlow backend turns the einsums of MultiHeadAttention and
EinsumDense into MatMul / BatchMatMulV2 / Transpose / Reshape whenever the
equation is in its list and the shapes are static (keras/src/backend/
tensorflow/numpy.py, einsum); the "..." feed-forward variant is not in that
list, so it runs Einsum (and its gradient Einsum) in the train step.
"""
import numpy as np
import pytest
import tensorflow as tf

from fused_ops import ran_on_pdk

import tensorflow_pdk
from tensorflow_pdk import placement
from tensorflow_pdk.testing import (assert_close, assert_matches_cpu, keras_compile_args, launches,
                                    random_array, run_on)

FLOATS = ["float32", "float64", "float16", "bfloat16"]
# GEMM sums in another order than TF's CPU kernel: float32 1e-4 as for MatMul
# (test_kernels_matmul_reduce.py); the 16-bit types as MatMul's conformance cases.
TOL = {"float32": (1e-4, 1e-4), "float64": (1e-12, 1e-12), "float16": (1e-2, 1e-2),
       "bfloat16": (2e-2, 5e-2), "int32": (0, 0)}

TRAIN_RTOL = 1e-5   # the epoch's mean loss over the 3 steps
TRAIN_ATOL = 3e-5   # every weight after the 3 steps

pytestmark = pytest.mark.skipif(not tf.config.list_physical_devices("PDK"),
                                reason="no PDK device")


def np_dtype(name):
    return np.dtype(tf.dtypes.as_dtype(name).as_numpy_dtype)


def einsum(equation):
    return lambda *xs: tf.raw_ops.Einsum(inputs=list(xs), equation=equation)


EQUATIONS = [
    ("ij,jk->ik", [[3, 4], [4, 5]]),
    ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    ("abc,cd->abd", [[2, 3, 4], [4, 5]]),
    ("bhqd,bhkd->bhqk", [[2, 4, 16, 8], [2, 4, 16, 8]]),
    ("bhqk,bhkd->bhqd", [[2, 4, 16, 16], [2, 4, 16, 8]]),
    ("...ij,...jk->...ik", [[2, 3, 4, 5], [2, 3, 5, 6]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 6]]),   # batch broadcasting
    ("...ij,jk->...ik", [[2, 3, 4, 5], [5, 6]]),
    ("ij->ji", [[3, 4]]),
    ("ii->i", [[5, 5]]),
    ("ij->", [[3, 4]]),
    ("ab,bc->c", [[3, 4], [4, 5]]),          # a: a reduce label
    ("ij,jk->ki", [[3, 4], [4, 5]]),         # output order other than the product's
    ("i,j->ij", [[3], [4]]),
    ("i,i->", [[7], [7]]),
    ("abcd,cde->abe", [[2, 3, 4, 5], [4, 5, 6]]),
    ("bqhd,bkhd->bhqk", [[2, 5, 3, 4], [2, 6, 3, 4]]),   # both operands gathered
    ("iij,jk->ik", [[3, 3, 4], [4, 2]]),     # a diagonal in a two-input product
    ("ij,jk->ik", [[0, 4], [4, 5]]),         # empty output
    ("ij,jk->ik", [[3, 0], [0, 5]]),         # empty contraction: zeros
    ("ij->ji", [[512, 256]]),                # large: the gather splits over the pool
    ("bqhd,bkhd->bhqk", [[4, 64, 4, 64], [4, 64, 4, 64]]),
    # A label repeated in the output inflates (TF's CPU kernel): zeros off the diagonal.
    ("a->aa", [[3]]),
    ("ab,bc->aaca", [[2, 3], [3, 4]]),
    ("ij->jij", [[3, 2]]),
    ("ii->iii", [[3, 3]]),
    ("...i->...ii", [[2, 4]]),
]


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("equation,shapes", EQUATIONS, ids=[f"{e}:{s}" for e, s in EQUATIONS])
def test_einsum_matches_cpu(equation, shapes, dt, rng):
    arrays = [random_array(s, np_dtype(dt), rng) for s in shapes]
    r, a = TOL[dt]
    if dt in ("float16", "bfloat16"):
        # TF's CPU Einsum accumulates float16 in half (on [64,300]x[300,64]
        # 2.87 from the exact product, PDK 0.13; see conformance_cases.py,
        # wide_reference); PDK computes in float32 and rounds once, as its
        # MatMul does. Reference: TF's float32 Einsum rounded to dt.
        def wide(*xs):
            y = tf.raw_ops.Einsum(inputs=[tf.cast(x, tf.float32) for x in xs], equation=equation)
            return tf.cast(y, dt)
        expected = run_on("/CPU:0", wide, *arrays)
        with launches() as delta:
            actual = run_on("/PDK:0", einsum(equation), *arrays)
        assert delta.get("Einsum", 0) > 0, delta
        assert_close(actual[0], expected[0], r, a, what=equation)
        return
    assert_matches_cpu(einsum(equation), *arrays, ops=["Einsum"], rtol=r, atol=a)


@pytest.mark.parametrize("equation,shapes", EQUATIONS[:4] + EQUATIONS[8:11])
def test_einsum_int32(equation, shapes, rng):
    arrays = [random_array(s, np.int32, rng) for s in shapes]
    assert_matches_cpu(einsum(equation), *arrays, ops=["Einsum"])


def test_einsum_random_equations_match_numpy():
    """150 random equations (fixed seed): 1 or 2 inputs, repeated labels
    (diagonals), reduce / contract / free / batch labels in random output
    orders, "..." with NumPy broadcasting (size-1 and missing dimensions),
    against np.einsum in float64."""
    rng = np.random.default_rng(7)
    ran = 0
    for _ in range(150):
        labels = list("abcde"[:rng.integers(1, 6)])
        sizes = {c: int(rng.integers(1, 5)) for c in labels}
        subs = ["".join(rng.choice(labels, rng.integers(0, 5))) for _ in range(rng.integers(1, 3))]
        out = [c for c in sorted(set("".join(subs))) if rng.random() < 0.5]
        rng.shuffle(out)
        ell = rng.random() < 0.3
        arrays = []
        for s in subs:
            bcast = [int(rng.choice([1, 3])) for _ in range(rng.integers(0, 3) if ell else 0)]
            arrays.append(rng.uniform(-2, 2, bcast + [sizes[c] for c in s]).astype(np.float32))
        pre = "..." if ell else ""
        eq = ",".join(pre + s for s in subs) + "->" + pre + "".join(out)
        expected = np.einsum(eq, *[a.astype(np.float64) for a in arrays])
        with tf.device("/PDK:0"):
            got = tf.raw_ops.Einsum(inputs=[tf.constant(a) for a in arrays], equation=eq).numpy()
        assert got.shape == expected.shape, eq
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=eq)
        ran += 1
    assert ran == 150


def test_einsum_via_tf_einsum(rng):
    """tf.einsum (the Python front end, implicit output) lowers to the op."""
    a = random_array([2, 3, 4], np.float32, rng)
    b = random_array([4, 5], np.float32, rng)
    assert_matches_cpu(lambda x, y: tf.einsum("abc,cd", x, y), a, b, ops=["Einsum"],
                       rtol=1e-5, atol=1e-5)


def _on_pdk(fn, *arrays):
    with tf.device("/PDK:0"):
        return fn(*[tf.constant(a) for a in arrays])


def test_einsum_label_size_mismatch_names_label_and_inputs(rng):
    a = random_array([2, 3], np.float32, rng)
    b = random_array([4, 5], np.float32, rng)
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        _on_pdk(einsum("ij,jk->ik"), a, b)
    msg = str(e.value)
    assert "label 'j'" in msg and "input 0" in msg and "input 1" in msg, msg
    assert "[2,3]" in msg and "[4,5]" in msg, msg


def test_einsum_errors(rng):
    a = random_array([2, 3], np.float32, rng)
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank|shape"):
        _on_pdk(einsum("ijk->i"), a)
    with pytest.raises(tf.errors.InvalidArgumentError, match="no ellipsis"):
        _on_pdk(einsum("...j->j"), random_array([4, 2, 3], np.float32, rng))
    with pytest.raises(tf.errors.InvalidArgumentError, match="broadcast"):
        _on_pdk(einsum("...ij,...jk->...ik"), random_array([2, 3, 4], np.float32, rng),
                random_array([3, 4, 5], np.float32, rng))
    # The device and the op keep working.
    assert_matches_cpu(einsum("ij->ji"), a, ops=["Einsum"])


GRAD_CASES = [
    ("bhqd,bhkd->bhqk", [[2, 4, 8, 8], [2, 4, 8, 8]]),
    ("bhqk,bhkd->bhqd", [[2, 4, 8, 8], [2, 4, 8, 8]]),
    ("abc,cd->abd", [[2, 3, 4], [4, 5]]),
    ("abcd,cde->abe", [[2, 3, 4, 5], [4, 5, 6]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 6]]),
    ("ij->", [[3, 4]]),
]


@pytest.mark.parametrize("equation,shapes", GRAD_CASES)
def test_einsum_gradients(equation, shapes, rng):
    arrays = [random_array(s, np.float32, rng) for s in shapes]
    w = random_array(tf.einsum(equation, *arrays).shape, np.float32, rng)

    def fn(*xs):
        *xs, wt = xs
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = tf.reduce_sum(tf.einsum(equation, *xs) * wt)
        return [y] + tape.gradient(y, xs)

    with launches() as delta:
        assert_matches_cpu(fn, *arrays, w, rtol=1e-4, atol=1e-4)
    assert delta.get("Einsum", 0) >= 1 + (len(shapes) == 2), delta


# ------------------------------------------------------------ encoder block

def build_encoder(keras, ffn, causal=False, seq=16, d=32, heads=4, ff=64, classes=10):
    layers = keras.layers
    inp = keras.Input((seq, d))
    att = layers.MultiHeadAttention(num_heads=heads, key_dim=d // heads, dropout=0.1)(
        inp, inp, use_causal_mask=causal)
    att = layers.Dropout(0.1)(att)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([inp, att]))
    if ffn == "dense":
        f = layers.Dense(ff, activation="relu")(x)
        f = layers.Dense(d)(f)
    else:
        f = layers.EinsumDense("...b,bc->...c", output_shape=ff, bias_axes="c",
                               activation="relu")(x)
        f = layers.EinsumDense("...b,bc->...c", output_shape=d, bias_axes="c")(f)
    f = layers.Dropout(0.1)(f)
    x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, f]))
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(inp, layers.Dense(classes)(x))


def train_encoder(device, ffn, causal=False, steps=3, batch=16):
    import keras

    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps * batch, 16, 32)).astype(np.float32)
    y = rng.integers(0, 10, steps * batch)
    keras.utils.set_random_seed(0)
    with tf.device(device):
        model = build_encoder(keras, ffn, causal)
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      **keras_compile_args(device))
        with launches() as delta, placement.record() as placed:
            hist = model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    return hist.history["loss"], [np.asarray(w) for w in model.get_weights()], placed, delta


@pytest.mark.parametrize("ffn,causal", [("dense", False), ("einsum", False), ("dense", True)],
                         ids=["dense", "einsum_ffn", "dense_causal_mask"])
def test_encoder_block_trains_on_pdk(ffn, causal):
    losses, weights, placed, delta = train_encoder("/PDK:0", ffn, causal)
    assert dict(placed.compute_ops_on_cpu()) == {}, placed.report()
    ran = set(delta)
    for op in ["Softmax", "BatchMatMulV2", "StatelessRandomUniformV2", "SelectV2"]:
        assert ran_on_pdk(delta, op), (op, delta)
    if ffn == "einsum":
        # per step: 2 forward, 4 in the gradient (input and kernel of each layer)
        assert delta.get("Einsum", 0) >= 3 * 6, delta
    cpu_losses, cpu_weights, _, _ = train_encoder("/CPU:0", ffn, causal)
    np.testing.assert_allclose(losses, cpu_losses, rtol=TRAIN_RTOL)
    assert len(weights) == len(cpu_weights)
    for i, (w, c) in enumerate(zip(weights, cpu_weights)):
        np.testing.assert_allclose(w, c, rtol=0, atol=TRAIN_ATOL, err_msg=f"weight {i}")
