"""The same small Keras model fitted on PDK and on the CPU, for kernel tests
that check a layer's ops end to end (placement, launches, final weights)."""
import tensorflow as tf

from tensorflow_pdk import placement
from tensorflow_pdk.testing import keras_compile_args, launches


def fit_on_pdk_and_cpu(build, x, y, epochs=2, batch_size=4):
    """build() -> an uncompiled keras.Model; compiled with SGD and sparse
    categorical cross-entropy on logits (Keras's defaults on PDK; on the CPU
    what they resolve to in a stock installation, keras_compile_args),
    fitted with seed 0 and no shuffling on /PDK:0, then on /CPU:0. Returns (PDK weights, CPU weights, the PDK
    fit's placement record, PDK launches during the PDK fit)."""
    import keras

    out = {}
    for device in ("/PDK:0", "/CPU:0"):
        keras.utils.set_random_seed(0)
        with tf.device(device):
            model = build()
            model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          **keras_compile_args(device))
            with placement.record() as rec, launches() as delta:
                model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=0)
        out[device] = (model.get_weights(), rec, delta)
    (w_pdk, rec, delta), (w_cpu, _, _) = out["/PDK:0"], out["/CPU:0"]
    return w_pdk, w_cpu, rec, delta
