"""Running a snippet of Python in a child process, for tests whose subject is
read when the plugin loads (PDK_* variables), what goes to stderr, or a
failure that could take the process down."""
import os
import subprocess
import sys
import textwrap


def run_python(code: str, env_extra=None, strict: bool = False, timeout: int = 300,
               prelude: str = "import tensorflow as tf, numpy as np, tensorflow_pdk\n"):
    """Runs ``prelude + dedent(code)`` with this interpreter; the environment
    is this one without any PDK_* variable, plus ``env_extra`` (and
    ``PDK_STRICT=1`` if ``strict``). Returns the CompletedProcess (text)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
    env.update(env_extra or {})
    if strict:
        env["PDK_STRICT"] = "1"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout)
