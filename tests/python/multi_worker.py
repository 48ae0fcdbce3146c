"""A local tf.distribute cluster for tests: worker processes on 127.0.0.1,
each told its part by TF_CONFIG, every one killed when the block ends
(whatever happened), so a failing or hanging test leaves no process behind."""
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

PRELUDE = "import tensorflow as tf, numpy as np, tensorflow_pdk, tensorflow_pdk.placement\n"


def free_ports(n):
    """n distinct loopback ports that were free a moment ago."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Cluster:
    """``with Cluster(code, tmp_path, jobs={"worker": 2}) as c:`` starts one
    process per task of the jobs named in ``start`` (default: all), running
    ``PRELUDE + dedent(code)`` in ``tmp_path`` with TF_CONFIG (the cluster, its
    job and index) and the environment without PDK_* variables plus ``env``;
    stdout and stderr go to files in ``tmp_path``. ``procs[i]`` is the i-th
    started task (job order, then index)."""

    def __init__(self, code, tmp_path, jobs=None, env=None, start=None):
        self.tmp_path = tmp_path
        jobs = jobs or {"worker": 2}
        ports = iter(free_ports(sum(jobs.values())))
        self.cluster = {job: [f"127.0.0.1:{next(ports)}" for _ in range(n)]
                        for job, n in jobs.items()}
        base = {k: v for k, v in os.environ.items() if not k.startswith("PDK_")}
        base.update(env or {})
        self.env = base
        self.procs = []
        self.names = []
        self._files = []
        for job, n in jobs.items():
            if start is not None and job not in start:
                continue
            for i in range(n):
                name = f"{job}{i}"
                out = open(tmp_path / f"{name}.out", "w")
                err = open(tmp_path / f"{name}.err", "w")
                self._files += [out, err]
                self.names.append(name)
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                    env=dict(base, TF_CONFIG=self.tf_config(job, i)),
                    stdout=out, stderr=err, cwd=tmp_path))

    def tf_config(self, job, index):
        return json.dumps({"cluster": self.cluster, "task": {"type": job, "index": index}})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill_all()
        for f in self._files:
            f.close()

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()

    def wait(self, timeout):
        """Return codes once every worker exited; None for one still running
        after ``timeout`` seconds in all (it is killed when the block ends)."""
        deadline = time.monotonic() + timeout
        codes = []
        for p in self.procs:
            try:
                codes.append(p.wait(timeout=max(0.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                codes.append(None)
        return codes

    def stdout(self, i):
        return (self.tmp_path / f"{self.names[i]}.out").read_text()

    def stderr(self, i):
        return (self.tmp_path / f"{self.names[i]}.err").read_text()

    def wait_for_output(self, i, text, timeout):
        """Whether worker i printed ``text`` within ``timeout`` seconds (False
        at once if it exited without)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.stdout(i):
                return True
            if self.procs[i].poll() is not None:
                return text in self.stdout(i)
            time.sleep(0.2)
        return False
