"""Venvs for tests and scripts that install PDK's wheel somewhere other than
the project venv (scripts/tf_versions.py, tests/python/test_tutorial.py).

A venv is created once under a directory of build/ and reused while its
requirements are the same (a stamp file inside it lists them); pip's cache
is shared, so a new venv installs TensorFlow without downloading it again.
"""
import pathlib
import subprocess
import sys

STAMP = ".pdk-requirements"


def venv_with(path: pathlib.Path, requirements: list, python: str = sys.executable,
              log=None) -> pathlib.Path:
    """The venv at ``path`` (created with ``python`` if absent) with
    ``requirements`` installed; reinstalls them when the list changed since
    the venv was made. Returns the venv's python."""
    path = pathlib.Path(path)
    py = path / "bin" / "python"
    stamp = path / STAMP
    want = " ".join(requirements)
    if not py.exists():
        subprocess.run([python, "-m", "venv", str(path)], check=True)
    if not stamp.exists() or stamp.read_text() != want:
        if log is not None:
            log(f"{path.name}: installing {want}")
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *requirements], check=True)
        stamp.write_text(want)
    return py
