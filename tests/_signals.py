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
import signal
import subprocess
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
