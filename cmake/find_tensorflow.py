"""Prints the installed TensorFlow's package directory and version, one per
line, without importing tensorflow (importing it would load any installed
PDK plugin into the build's configure step)."""
import importlib.metadata as metadata
import importlib.util
import os

spec = importlib.util.find_spec("tensorflow")
if spec is None or spec.origin is None:
    raise SystemExit("tensorflow is not installed")
print(os.path.dirname(spec.origin))
for dist in ("tensorflow-cpu", "tensorflow"):
    try:
        print(metadata.version(dist))
        break
    except metadata.PackageNotFoundError:
        pass
else:
    print("unknown")
