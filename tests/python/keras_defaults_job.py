"""One Keras user's code, run as it is written: the job test_keras_defaults.py
runs in a child process, once with PDK and once with PDK disabled
(``PDK_DEVICE_COUNT=0``: TensorFlow then lists only its CPU, as without PDK).

For each model: ``model.compile(optimizer, loss, metrics)`` with no
``jit_compile`` argument, no ``tf.device`` scope, soft placement at its default;
``fit`` with validation data and callbacks (EarlyStopping, ModelCheckpoint to a
temporary directory, then the checkpoint reloaded), ``evaluate``, ``predict``,
``model.save`` / ``keras.models.load_model`` and ``predict`` again. Keras's
``jit_compile="auto"`` resolves to True when PDK is listed, so the PDK run also
exercises PDK's handling of XLA requests.

Usage: ``python keras_defaults_job.py OUT.pkl MODEL [MODEL ...]``; writes a dict
model -> results (or the error text) with pickle.
"""
from __future__ import annotations

import os
import pickle
import sys
import tempfile
import traceback

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

SEED = 0


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    return x[:320], y[:320], x[320:416], y[320:416]


def mlp():
    import keras

    x, y, xv, yv = _digits()
    model = keras.Sequential([
        keras.Input((64,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dropout(0.1),
        keras.layers.Dense(10),
    ])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return model, "adam", loss, ["accuracy"], (x, y, xv, yv), 32, 3


def cnn():
    import keras

    x, y, xv, yv = _digits()
    x, xv = x.reshape(-1, 8, 8, 1), xv.reshape(-1, 8, 8, 1)
    model = keras.Sequential([
        keras.Input((8, 8, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(10, activation="softmax"),
    ])
    return model, "adam", "sparse_categorical_crossentropy", ["accuracy"], (x, y, xv, yv), 32, 2


def convnext():
    import keras

    rng = np.random.default_rng(SEED)
    x = rng.uniform(0, 255, (16, 64, 64, 3)).astype(np.float32)
    y = rng.integers(0, 10, 16)
    xv = rng.uniform(0, 255, (8, 64, 64, 3)).astype(np.float32)
    yv = rng.integers(0, 10, 8)
    model = keras.applications.ConvNeXtTiny(weights=None, input_shape=(64, 64, 3), classes=10,
                                            classifier_activation=None)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return model, keras.optimizers.AdamW(1e-4), loss, ["accuracy"], (x, y, xv, yv), 8, 1


def lstm_text():
    import keras

    rng = np.random.default_rng(SEED)
    x = rng.integers(1, 500, (96, 20))
    y = (x[:, :10].sum(axis=1) > x[:, 10:].sum(axis=1)).astype(np.int64)
    xv = rng.integers(1, 500, (32, 20))
    yv = (xv[:, :10].sum(axis=1) > xv[:, 10:].sum(axis=1)).astype(np.int64)
    model = keras.Sequential([
        keras.Input((20,), dtype="int32"),
        keras.layers.Embedding(500, 16),
        keras.layers.LSTM(16),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    return model, "rmsprop", "binary_crossentropy", ["accuracy"], (x, y, xv, yv), 32, 2


def transformer():
    import keras

    rng = np.random.default_rng(SEED)
    seq, dim, vocab = 16, 32, 200
    x = rng.integers(0, vocab, (64, seq))
    y = (x % 3 == 0).sum(axis=1).clip(0, 3).astype(np.int64)
    xv = rng.integers(0, vocab, (32, seq))
    yv = (xv % 3 == 0).sum(axis=1).clip(0, 3).astype(np.int64)
    inp = keras.Input((seq,), dtype="int32")
    h = keras.layers.Embedding(vocab, dim)(inp)
    a = keras.layers.MultiHeadAttention(num_heads=4, key_dim=8)(h, h)
    h = keras.layers.LayerNormalization()(h + a)
    f = keras.layers.Dense(64, activation="gelu")(h)
    h = keras.layers.LayerNormalization()(h + keras.layers.Dense(dim)(f))
    out = keras.layers.Dense(4)(keras.layers.GlobalAveragePooling1D()(h))
    model = keras.Model(inp, out)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return model, "adam", loss, ["accuracy"], (x, y, xv, yv), 16, 2


MODELS = {"mlp": mlp, "cnn": cnn, "convnext": convnext, "lstm_text": lstm_text,
          "transformer": transformer}


def run(name: str, workdir: str) -> dict:
    import keras
    import tensorflow as tf

    pdk = bool(tf.config.list_physical_devices("PDK"))
    counts = lambda: {}  # noqa: E731
    reset = lambda: None  # noqa: E731
    if pdk:
        import tensorflow_pdk
        from tensorflow_pdk import placement

        counts = lambda: {k: v for k, v in tensorflow_pdk.launch_counts().items() if v}  # noqa
        reset = tensorflow_pdk.reset_launch_counts

    keras.utils.set_random_seed(SEED)
    model, optimizer, loss, metrics, (x, y, xv, yv), batch, epochs = MODELS[name]()
    model.compile(optimizer=optimizer, loss=loss, metrics=metrics)
    ckpt = os.path.join(workdir, f"{name}.best.keras")
    callbacks = [keras.callbacks.EarlyStopping(monitor="val_loss", patience=2,
                                               restore_best_weights=False),
                 keras.callbacks.ModelCheckpoint(ckpt, monitor="val_loss", save_best_only=True)]
    out = {"pdk_devices": pdk, "jit_compile": None}
    reset()
    if pdk:
        with placement.record() as placed:
            history = model.fit(x, y, batch_size=batch, epochs=epochs, validation_data=(xv, yv),
                                callbacks=callbacks, shuffle=False, verbose=0)
        out["cpu_compute_ops"] = dict(placed.compute_ops_on_cpu())
    else:
        history = model.fit(x, y, batch_size=batch, epochs=epochs, validation_data=(xv, yv),
                            callbacks=callbacks, shuffle=False, verbose=0)
    out["jit_compile"] = model.jit_compile
    out["fit_launches"] = counts()
    out["history"] = {k: [float(v) for v in vs] for k, vs in history.history.items()}
    reset()
    out["evaluate"] = [float(v) for v in model.evaluate(xv, yv, batch_size=batch, verbose=0)]
    out["evaluate_launches"] = counts()
    reset()
    out["predict"] = model.predict(xv, batch_size=batch, verbose=0)
    out["predict_launches"] = counts()
    out["weights"] = [np.asarray(w) for w in model.get_weights()]
    best = keras.models.load_model(ckpt)
    out["checkpoint_evaluate"] = [float(v) for v in best.evaluate(xv, yv, batch_size=batch,
                                                                  verbose=0)]
    saved = os.path.join(workdir, f"{name}.keras")
    model.save(saved)
    reloaded = keras.models.load_model(saved)
    out["reloaded_predict"] = reloaded.predict(xv, batch_size=batch, verbose=0)
    return out


def main(argv) -> int:
    out_path, names = argv[0], argv[1:]
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            try:
                results[name] = run(name, workdir)
            except Exception:  # noqa: BLE001 -- reported by the test, per model
                results[name] = traceback.format_exc()
    with open(out_path, "wb") as f:
        pickle.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
