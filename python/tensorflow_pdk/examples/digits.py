"""Train a Keras MLP on scikit-learn's handwritten digits on the PDK device.

Data: ``sklearn.datasets.load_digits`` — 1797 real 8x8 grey-level images of
the digits 0-9 (UCI ML hand-written digits), shipped inside scikit-learn.
Pixels are scaled from [0, 16] to [0, 1]; 20% are held out for testing with a
fixed seed.

Model: Dense(128, relu) -> Dense(64, relu) -> Dense(10) logits, Adam(1e-3),
sparse categorical cross-entropy, ``model.fit`` with Keras's progress bar.

Keras's defaults throughout: with PDK listed, Keras 3 resolves
``jit_compile="auto"`` to True; XLA has no PDK backend, so PDK's graph
optimizer runs the XLA-marked train step with PDK's kernels (and says so once
on stderr).

Run: ``python -m tensorflow_pdk.examples.digits [--epochs N] [--device /PDK:0]``.
Prints the test accuracy and a placement report: the PDK kernel launches per
op, and the compute ops of the training step that TensorFlow placed on the CPU
(0 when every op has a PDK kernel).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Dict, List

import numpy as np


@dataclasses.dataclass
class Result:
    test_accuracy: float
    losses: List[float]                 # training loss per epoch
    weights: List[np.ndarray]           # final model weights
    cpu_compute_ops: Dict[str, int]     # training-step compute ops placed on the CPU
    pdk_launches: Dict[str, int]        # PDK kernel launches per op during fit


def load_data(seed: int = 0):
    """Returns (x_train, y_train, x_test, y_test): float32 [N, 64] in [0, 1], int64 [N]."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=y)
    return x_train, y_train, x_test, y_test


def build_model(seed: int):
    import keras

    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input(shape=(64,)),
        keras.layers.Dense(128, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def build_cnn(seed: int):
    """A small CNN for the digits as 8x8x1 images (``x.reshape(-1, 8, 8, 1)``):
    Conv2D(16, 3, same, relu), MaxPooling2D, Conv2D(32, 3, relu), Flatten,
    Dense(10); Adam and sparse categorical cross-entropy on logits, as
    build_model. The benchmarks and the OPENCL plugin's tests train it."""
    import keras

    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input(shape=(8, 8, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.Flatten(),
        keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def train(device: str = "/PDK:0", epochs: int = 30, batch_size: int = 32, seed: int = 0,
          verbose: int = 1, limit: int = 0) -> Result:
    """Trains on ``device``; ``limit`` > 0 uses only that many training images."""
    import tensorflow as tf

    import tensorflow_pdk
    from tensorflow_pdk import placement

    x_train, y_train, x_test, y_test = load_data(seed)
    if limit:
        x_train, y_train = x_train[:limit], y_train[:limit]
    with tf.device(device):
        model = build_model(seed)
        tensorflow_pdk.reset_launch_counts()
        with placement.record() as placed:
            history = model.fit(x_train, y_train, epochs=epochs, batch_size=batch_size,
                                verbose=verbose, shuffle=True)
        launches = {op: n for op, n in tensorflow_pdk.launch_counts().items() if n}
        _, acc = model.evaluate(x_test, y_test, verbose=0)
    return Result(float(acc), [float(v) for v in history.history["loss"]],
                  [np.asarray(w) for w in model.get_weights()],
                  dict(placed.compute_ops_on_cpu()), launches)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="/PDK:0")
    args = p.parse_args(argv)

    import tensorflow as tf

    if not tf.config.list_physical_devices("PDK"):
        import tensorflow_pdk
        print("No PDK device is registered: " + (tensorflow_pdk.disabled_reason() or
              "is the tensorflow-pdk wheel installed?"), file=sys.stderr)
        return 1
    r = train(args.device, args.epochs, args.batch_size, args.seed)
    print(f"\ntest accuracy: {r.test_accuracy:.4f}")
    print("\nPDK kernel launches during training:")
    for op, n in sorted(r.pdk_launches.items()):
        print(f"  {op:<40s} {n}")
    total_cpu = sum(r.cpu_compute_ops.values())
    print(f"\ncompute ops of the training step placed on the CPU instead: {total_cpu}")
    for op, n in sorted(r.cpu_compute_ops.items()):
        print(f"  {op:<40s} {n}")
    return 0 if total_cpu == 0 or args.device != "/PDK:0" else 2


if __name__ == "__main__":
    sys.exit(main())
