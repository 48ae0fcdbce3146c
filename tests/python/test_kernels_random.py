"""PDK's random ops against TensorFlow's own CPU kernels.

Covers src/kernels/random/stateless_random_ops.cc, random_ops.cc (the
stateful tf.random.uniform / normal / truncated_normal ops) and philox.h: for the
same seed / key / counter / alg the PDK output must equal the CPU output bit
for bit (rtol = atol = 0), and each named op must have launched on PDK, so a
silent CPU fallback fails. Shapes straddle Philox's 4-output (2 for 64-bit
types) blocks; [1000, 33] and LARGE are big enough for the device pool to split
the groups (each shard skips the counter ahead).

Ops Keras 3 emits on the TensorFlow backend (traced with tf.function):
  Dropout, keras.random.uniform, GlorotUniform: StatelessRandomGetKeyCounter +
    StatelessRandomUniformV2
  keras.random.normal, RandomNormal: ... + StatelessRandomNormalV2
  HeNormal, TruncatedNormal, keras.random.truncated_normal: ... +
    StatelessTruncatedNormalV2
  keras.random.randint: ... + StatelessRandomUniformIntV2
"""
import numpy as np
import pytest
import tensorflow as tf

from tensorflow_pdk.testing import assert_matches_cpu, launches, run_on

FLOATS = [tf.float32, tf.float64]
SHAPES = [[], [0], [7], [3, 5], [1000, 33]]
SEEDS = [(1, 2), (0, 0), (-7, 2**31 - 1)]
LARGE = [257, 1031]


def ids(v):
    if isinstance(v, tf.dtypes.DType):
        return v.name
    if isinstance(v, (list, tuple)):
        return "x".join(map(str, v)) or "scalar"
    return str(v)


def exact(fn, ops, *arrays):
    return assert_matches_cpu(fn, *arrays, ops=ops, rtol=0, atol=0)


def assert_bits_equal(a, b):
    """Bitwise equality (tells -0.0 from 0.0, compares NaN payloads)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert a.tobytes() == b.tobytes()


# ------------------------------------------------------ tf.random.stateless_*

V2_FNS = {
    "StatelessRandomUniformV2":
        lambda shape, seed, dt: tf.random.stateless_uniform(shape, seed, dtype=dt),
    "StatelessRandomNormalV2":
        lambda shape, seed, dt: tf.random.stateless_normal(shape, seed, dtype=dt),
    "StatelessTruncatedNormalV2":
        lambda shape, seed, dt: tf.random.stateless_truncated_normal(shape, seed, dtype=dt),
}


@pytest.mark.parametrize("seed", SEEDS, ids=ids)
@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
@pytest.mark.parametrize("op", sorted(V2_FNS))
def test_stateless_float(op, shape, dtype, seed):
    fn = V2_FNS[op]
    out = exact(lambda: fn(shape, seed, dtype), ["StatelessRandomGetKeyCounter", op])[0]
    assert out.shape == tuple(shape)
    if out.size >= 8:  # a real sample, not a constant: catches an all-zero kernel
        assert len(np.unique(out)) > out.size // 2


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16], ids=ids)
@pytest.mark.parametrize("op", sorted(V2_FNS))
def test_stateless_16bit_floats(op, dtype):
    fn = V2_FNS[op]
    for shape in ([7], [3, 5], [129, 9]):
        a = run_on("/CPU:0", lambda: fn(shape, (11, 12), dtype))[0]
        with launches() as d:
            b = run_on("/PDK:0", lambda: fn(shape, (11, 12), dtype))[0]
        assert d.get(op, 0) == 1, d
        assert_bits_equal(b, a)


@pytest.mark.parametrize("op", sorted(V2_FNS))
def test_stateless_large_is_split_consistently(op):
    """Large outputs: every shard must skip the counter to its own groups."""
    for dtype in FLOATS:
        out = exact(lambda: V2_FNS[op](LARGE, (3, 4), dtype), [op])[0]
        assert out.shape == tuple(LARGE)


def test_bits_identical_including_signed_zero():
    # assert_allclose treats -0.0 == 0.0; compare the raw bytes too.
    fn = lambda: tf.random.stateless_normal([4096], (5, 6), dtype=tf.float64)
    assert_bits_equal(run_on("/PDK:0", fn)[0], run_on("/CPU:0", fn)[0])


def test_truncated_normal_in_range_and_seed_sensitive():
    a = run_on("/PDK:0", lambda: tf.random.stateless_truncated_normal([5000], (1, 2)))[0]
    b = run_on("/PDK:0", lambda: tf.random.stateless_truncated_normal([5000], (1, 3)))[0]
    assert np.all(np.abs(a) < 2.0)
    assert not np.array_equal(a, b)


def test_uniform_with_bounds():
    fn = lambda: tf.random.stateless_uniform([3, 5], (4, 2), minval=-3.0, maxval=5.5)
    out = exact(fn, ["StatelessRandomUniformV2"])[0]
    assert np.all((out >= -3.0) & (out < 5.5))


# ------------------------------------------------------------------ integers

@pytest.mark.parametrize("seed", SEEDS, ids=ids)
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64], ids=ids)
@pytest.mark.parametrize("shape", SHAPES, ids=ids)
def test_stateless_uniform_int(shape, dtype, seed):
    fn = lambda: tf.random.stateless_uniform(shape, seed, minval=-5, maxval=1000003, dtype=dtype)
    out = exact(fn, ["StatelessRandomUniformIntV2"])[0]
    assert out.shape == tuple(shape)
    assert np.all((out >= -5) & (out < 1000003))


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64], ids=ids)
def test_stateless_uniform_int_extreme_range(dtype):
    lo, hi = dtype.min, dtype.max  # range hi - lo needs the unsigned wrap-around
    fn = lambda: tf.random.stateless_uniform([3, 5], (9, 9), minval=lo, maxval=hi, dtype=dtype)
    exact(fn, ["StatelessRandomUniformIntV2"])


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.uint32, tf.uint64], ids=ids)
def test_stateless_uniform_full_int(dtype):
    fn = lambda: tf.random.stateless_uniform([7, 3], (1, 2), minval=None, maxval=None,
                                             dtype=dtype)
    exact(fn, ["StatelessRandomUniformFullIntV2"])


# ------------------------------------------------- V1 ops (seed input), raw

V1_FNS = {
    "StatelessRandomUniform": lambda s, seed, dt: tf.raw_ops.StatelessRandomUniform(
        shape=s, seed=seed, dtype=dt),
    "StatelessRandomNormal": lambda s, seed, dt: tf.raw_ops.StatelessRandomNormal(
        shape=s, seed=seed, dtype=dt),
    "StatelessTruncatedNormal": lambda s, seed, dt: tf.raw_ops.StatelessTruncatedNormal(
        shape=s, seed=seed, dtype=dt),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=ids)
@pytest.mark.parametrize("op", sorted(V1_FNS))
def test_v1_ops(op, dtype):
    for shape in ([], [7], [3, 5], [1000, 33]):
        for seed in (np.array([1, 2], np.int32), np.array([-3, 2**40], np.int64)):
            exact(lambda: V1_FNS[op](shape, seed, dtype), [op])


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64], ids=ids)
def test_v1_int_ops(dtype):
    exact(lambda: tf.raw_ops.StatelessRandomUniformInt(
        shape=[7, 3], seed=[4, 5], minval=tf.constant(-10, dtype), maxval=tf.constant(10, dtype)),
        ["StatelessRandomUniformInt"])
    exact(lambda: tf.raw_ops.StatelessRandomUniformFullInt(shape=[7, 3], seed=[4, 5], dtype=dtype),
          ["StatelessRandomUniformFullInt"])


# ------------------------------------------------------ key / counter / alg

@pytest.mark.parametrize("seed", [np.array([1, 2], np.int32), np.array([-1, 2**62], np.int64)],
                         ids=["int32", "int64"])
def test_get_key_counter(seed):
    exact(lambda s: tf.raw_ops.StatelessRandomGetKeyCounter(seed=s), ["StatelessRandomGetKeyCounter"],
          seed)
    outs = exact(lambda s: tf.raw_ops.StatelessRandomGetKeyCounterAlg(seed=s),
                 ["StatelessRandomGetKeyCounterAlg"], seed)
    assert outs[2] == 1  # Philox
    assert exact(lambda: tf.raw_ops.StatelessRandomGetAlg(), ["StatelessRandomGetAlg"])[0] == 1


@pytest.mark.parametrize("alg", [1, 3], ids=["philox", "auto_select"])
def test_explicit_key_counter(alg):
    # Arbitrary key/counter, including a counter near the 64-bit carry.
    key = np.array([0x0123456789ABCDEF], np.uint64)
    counter = np.array([2**64 - 3, 77], np.uint64)
    fn = lambda k, c: tf.raw_ops.StatelessRandomNormalV2(shape=[9, 5], key=k, counter=c, alg=alg)
    exact(fn, ["StatelessRandomNormalV2"], key, counter)
    fn = lambda k, c: tf.raw_ops.StatelessTruncatedNormalV2(shape=[9, 5], key=k, counter=c,
                                                            alg=alg, dtype=tf.float64)
    exact(fn, ["StatelessTruncatedNormalV2"], key, counter)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.int32, tf.int64],
                         ids=ids)
def test_counter_carry_inside_a_batch(dtype):
    """PDK generates Philox blocks 32 at a time (philox.h, Philox::Blocks);
    each lane adds its own offset to the 128-bit counter. A low word 100
    blocks below 2**64 and a high word at its maximum make the carry happen
    inside a batch and wrap the high word; 33 000 values span many batches,
    both shards and a partial last group."""
    key = np.array([0x0123456789ABCDEF], np.uint64)
    counter = np.array([2**64 - 100, 2**64 - 1], np.uint64)
    if dtype.is_integer:
        fn = lambda k, c: tf.raw_ops.StatelessRandomUniformIntV2(
            shape=[1000, 33], key=k, counter=c, alg=1, minval=tf.constant(-7, dtype),
            maxval=tf.constant(1000003, dtype))
        op = "StatelessRandomUniformIntV2"
    else:
        fn = lambda k, c: tf.raw_ops.StatelessRandomUniformV2(
            shape=[1000, 33], key=k, counter=c, alg=1, dtype=dtype)
        op = "StatelessRandomUniformV2"
    out = exact(fn, [op], key, counter)[0]
    assert len(np.unique(out)) > 512  # float16 has 1024 values in [0, 1)


def test_in_tf_function():
    @tf.function
    def f(seed):
        return (tf.random.stateless_uniform([100, 3], seed),
                tf.random.stateless_truncated_normal([100, 3], seed, dtype=tf.float64))
    exact(f, ["StatelessRandomUniformV2", "StatelessTruncatedNormalV2"],
          np.array([8, 9], np.int64))


# ------------------------------------------------------------------- errors

def _pdk_error(fn, op):
    with launches() as d:
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            run_on("/PDK:0", fn)
    assert d.get(op, 0) >= 1, f"{op} did not run on PDK: {d}"
    return str(e.value)


@pytest.mark.parametrize("shape", [[-1, 3], [2, -3]], ids=ids)
def test_negative_dimension(shape):
    msg = _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformV2(
        shape=tf.constant(shape), key=tf.constant([1], tf.uint64),
        counter=tf.constant([0, 0], tf.uint64), alg=1), "StatelessRandomUniformV2")
    assert "must be >= 0" in msg
    _pdk_error(lambda: tf.raw_ops.StatelessRandomNormal(shape=tf.constant(shape), seed=[1, 2]),
               "StatelessRandomNormal")


def test_bad_alg_key_counter_seed():
    key, ctr = tf.constant([1], tf.uint64), tf.constant([0, 0], tf.uint64)
    msg = _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformV2(shape=[3], key=key, counter=ctr,
                                                                 alg=2), "StatelessRandomUniformV2")
    assert "Unsupported algorithm id: 2" in msg
    _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformV2(
        shape=[3], key=tf.constant([1, 2], tf.uint64), counter=ctr, alg=1),
        "StatelessRandomUniformV2")
    _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformV2(
        shape=[3], key=key, counter=tf.constant([0], tf.uint64), alg=1),
        "StatelessRandomUniformV2")
    _pdk_error(lambda: tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf.constant([1, 2, 3])),
               "StatelessRandomGetKeyCounter")


def test_bad_int_bounds():
    key, ctr = tf.constant([1], tf.uint64), tf.constant([0, 0], tf.uint64)
    msg = _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformIntV2(
        shape=[3], key=key, counter=ctr, alg=1, minval=5, maxval=5), "StatelessRandomUniformIntV2")
    assert "minval < maxval" in msg
    _pdk_error(lambda: tf.raw_ops.StatelessRandomUniformIntV2(
        shape=[3], key=key, counter=ctr, alg=1, minval=[1], maxval=5),
        "StatelessRandomUniformIntV2")
    # Empty output: any bounds are accepted, as on the CPU.
    exact(lambda: tf.raw_ops.StatelessRandomUniformIntV2(
        shape=[0], key=key, counter=ctr, alg=1, minval=5, maxval=5),
        ["StatelessRandomUniformIntV2"])


# -------------------------------------------------------------------- Keras

def test_keras_dropout_matches_cpu(rng):
    import keras

    x = rng.standard_normal((64, 33)).astype(np.float32)

    def dropout(device):
        keras.utils.set_random_seed(7)
        with tf.device(device):
            layer = keras.layers.Dropout(0.5)
            return layer(tf.constant(x), training=True).numpy()

    expected = dropout("/CPU:0")
    with launches() as d:
        actual = dropout("/PDK:0")
    assert d.get("StatelessRandomUniformV2", 0) >= 1, d
    np.testing.assert_array_equal(actual, expected)
    kept = actual != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_array_equal(actual[kept], (x * 2.0)[kept])


@pytest.mark.parametrize("name,op", [
    ("GlorotUniform", "StatelessRandomUniformV2"),
    ("HeNormal", "StatelessTruncatedNormalV2"),
    ("RandomNormal", "StatelessRandomNormalV2"),
    ("TruncatedNormal", "StatelessTruncatedNormalV2"),
])
def test_keras_initializers_match_cpu(name, op):
    import keras

    def weights(device):
        keras.utils.set_random_seed(3)  # before constructing: the seed is drawn then
        with tf.device(device):
            return np.asarray(getattr(keras.initializers, name)()((50, 31)))

    expected = weights("/CPU:0")
    with launches() as d:
        actual = weights("/PDK:0")
    assert d.get(op, 0) >= 1, d
    assert_bits_equal(actual, expected)


def test_keras_random_functions_match_cpu():
    import keras

    fns = {
        "StatelessRandomUniformV2": lambda: keras.random.uniform((5, 7), seed=1),
        "StatelessRandomNormalV2": lambda: keras.random.normal((5, 7), seed=2),
        "StatelessTruncatedNormalV2": lambda: keras.random.truncated_normal((5, 7), seed=3),
        "StatelessRandomUniformIntV2": lambda: keras.random.randint((5, 7), 0, 10, seed=4),
    }
    for op, fn in fns.items():
        expected = run_on("/CPU:0", fn)[0]
        with launches() as d:
            actual = run_on("/PDK:0", fn)[0]
        assert d.get(op, 0) >= 1, (op, d)
        assert_bits_equal(actual, expected)


# ------------------------------------- stateful: tf.random.uniform, normal, ...

STATEFUL_FNS = {
    "RandomUniform": lambda shape, dt, seed: tf.random.uniform(shape, dtype=dt, seed=seed),
    "RandomStandardNormal": lambda shape, dt, seed: tf.random.normal(shape, dtype=dt, seed=seed),
    "TruncatedNormal":
        lambda shape, dt, seed: tf.random.truncated_normal(shape, dtype=dt, seed=seed),
    "RandomUniformInt":
        lambda shape, dt, seed: tf.random.uniform(shape, -5, 9, dtype=dt, seed=seed),
}


def _stateful_calls(device, op, shape, dtype, seed):
    """Three calls of one seeded op in a tf.function and three eager calls on
    `device`, after tf.random.set_seed(7): the values of each call."""
    tf.random.set_seed(7)
    fn = STATEFUL_FNS[op]
    with tf.device(device):
        graph = tf.function(lambda: fn(shape, dtype, seed))
        out = [graph().numpy() for _ in range(3)]
        out += [fn(shape, dtype, seed).numpy() for _ in range(3)]
    return out


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=ids)
@pytest.mark.parametrize("shape", [[], [7], [3, 5], [1000, 33]], ids=ids)
@pytest.mark.parametrize("op", ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"])
def test_stateful_float_ops_repeat_the_cpus_sequence(op, shape, dtype):
    """The same seeds give the CPU's values bit for bit, call after call (each
    call moves the kernel's generator on by 256 blocks per value, as
    TensorFlow's GuardedPhiloxRandom), in a graph and eagerly."""
    expected = _stateful_calls("/CPU:0", op, shape, dtype, 11)
    with launches() as d:
        actual = _stateful_calls("/PDK:0", op, shape, dtype, 11)
    assert d.get(op, 0) >= 6, d
    for a, e in zip(actual, expected):
        assert_bits_equal(a, e)
    if np.prod(shape) > 1:
        assert not np.array_equal(actual[0], actual[1])  # the state moved on


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64], ids=ids)
def test_stateful_uniform_int_repeats_the_cpus_sequence(dtype):
    expected = _stateful_calls("/CPU:0", "RandomUniformInt", [40, 3], dtype, 5)
    with launches() as d:
        actual = _stateful_calls("/PDK:0", "RandomUniformInt", [40, 3], dtype, 5)
    assert d.get("RandomUniformInt", 0) >= 6, d
    for a, e in zip(actual, expected):
        assert_bits_equal(a, e)
        assert a.min() >= -5 and a.max() < 9


def test_unseeded_stateful_ops_differ_between_kernels_and_calls():
    """No seed anywhere: each kernel draws its own seeds (TensorFlow's
    random::New64()), and a kernel's calls go on along its stream."""
    with tf.device("/PDK:0"):
        f = tf.function(lambda: (tf.random.uniform([64]), tf.random.uniform([64])))
        a, b = f()
        c, _ = f()
    assert not np.array_equal(a, b) and not np.array_equal(a, c)
    assert 0.0 <= float(tf.reduce_min(a)) and float(tf.reduce_max(a)) < 1.0


def test_gan_noise_in_a_train_step_is_drawn_on_pdk():
    """A GAN-style step drawing its noise with tf.random.normal inside the
    tf.function (TensorFlow's DCGAN tutorial): the noise is drawn on PDK (it
    was drawn on the CPU and copied in every step) and equals the CPU's."""
    w = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)

    def run(device):
        tf.random.set_seed(3)
        with tf.device(device):
            wt = tf.constant(w)

            @tf.function
            def step():
                noise = tf.random.normal([32, 16])
                return tf.reduce_mean(tf.nn.relu(noise @ wt), axis=0)
            return [np.asarray(step()) for _ in range(2)]

    expected = run("/CPU:0")
    with launches() as d:
        actual = run("/PDK:0")
    assert d.get("RandomStandardNormal", 0) == 2, d
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6)


def test_stateful_op_errors_name_the_operand():
    with tf.device("/PDK:0"):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
            tf.raw_ops.RandomUniformInt(shape=[3], minval=4, maxval=4)
        with pytest.raises(tf.errors.InvalidArgumentError, match="minval must be 0-D"):
            tf.raw_ops.RandomUniformInt(shape=[3], minval=[1, 2], maxval=4)
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape must be a vector"):
            tf.raw_ops.RandomUniform(shape=[[2]], dtype=tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape\[0\] must be >= 0"):
            tf.raw_ops.RandomStandardNormal(shape=[-1], dtype=tf.float32)
