"""Child processes that Ctrl-C reaches, however the test run was started.

A process started with SIGINT ignored (a test run started in the
background: ``cmd &`` in a script, ``nohup``) passes the ignoring on to its
children across ``exec``, and a Python started that way installs no
``KeyboardInterrupt`` handler: a test's SIGINT to it is then lost and the
test hangs until its timeout. A signal that is *caught* is reset to its
default across ``exec`` instead, so the children that
:func:`interruptible_child` starts get SIGINT at its default, as from a
terminal, and Python's own handler.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path


@contextlib.contextmanager
def interruptible_child(args, **popen_kwargs):
    """``subprocess.Popen(args, **popen_kwargs)`` started with SIGINT at its
    default (where this process ignores SIGINT, it catches it with Python's
    default handler while the child starts, then ignores it again); killed
    on leaving the block if it still runs."""
    old = signal.getsignal(signal.SIGINT)
    if old is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(args, **popen_kwargs)
    finally:
        if old is signal.SIG_IGN:
            signal.signal(signal.SIGINT, old)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def child_pids(pid):
    """PIDs of the processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid):
    """Whether the process ``pid`` runs (and is not a zombie; Linux /proc)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# A warning of loky's resource tracker, as its process prints it.
_TRACKER_WARNING = re.compile(
    r"^.*resource_tracker\.py:\d+: UserWarning: resource_tracker: .*\n"
    r"[ \t]+warnings\.warn\(.*(\n|$)",
    re.MULTILINE)


def without_tracker_warnings(err):
    """``err`` without the warnings of loky's resource tracker. The tracker
    is a process of its own that writes to the command's stderr as it
    exits, after the command's last line. An interrupt that lands while
    loky starts its workers can leave a semaphore that loky unlinked but
    had no time to unregister; the tracker then says it cleaned it up
    (seen now and then on a loaded 2-core machine)."""
    return _TRACKER_WARNING.sub("", err)


def interrupt_with_workers(argv, ready, cwd, n_workers=2):
    """Run ``python -m sklearn_clda *argv`` (this checkout first on the
    path), send it SIGINT once a stdout line contains ``ready`` and
    ``n_workers`` child processes run (and have had 2 s to start working);
    return ``(returncode, stderr without_tracker_warnings, seconds to stop,
    worker PIDs, worker PIDs still alive 15 s later at the most)``."""
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]]
                                                  if env.get("PYTHONPATH") else []))
    with interruptible_child(
        [sys.executable, "-m", "sklearn_clda", *argv], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=cwd, env=env, text=True,
    ) as proc:
        for line in proc.stdout:
            if ready in line:
                break
        deadline = time.monotonic() + 60
        while len(child_pids(proc.pid)) < n_workers and time.monotonic() < deadline:
            time.sleep(0.2)
        workers = child_pids(proc.pid)
        time.sleep(2.0)  # the workers are importing, then working
        start = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        stopped = time.monotonic() - start
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    return (proc.returncode, without_tracker_warnings(err), stopped, workers,
            [pid for pid in workers if alive(pid)])
