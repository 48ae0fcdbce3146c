"""tensorflow-pdk-opencl: an OPENCL PluggableDevice for TensorFlow, built with
the PDK kit (docs/opencl.md).

Installing the wheel puts ``libpdk_opencl.so`` into
``site-packages/tensorflow-plugins/``; ``import tensorflow`` then registers one
device of type ``OPENCL`` per selected OpenCL device (``PDK_OPENCL_DEVICES``).
Nothing needs importing from this package; it holds the plugin's Python-side
fixes (``_hooks``) and :func:`library_path`.
"""
import os

__all__ = ["library_path"]


def library_path() -> str:
    """The installed plugin library (site-packages/tensorflow-plugins/libpdk_opencl.so)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(here), "tensorflow-plugins", "libpdk_opencl.so")
