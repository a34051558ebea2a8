"""Child processes that Ctrl-C reaches, however the test run was started.

A process started with SIGINT ignored (a test run started in the
background: ``cmd &`` in a script, ``nohup``) passes the ignoring on to its
children across ``exec``, and a Python started that way installs no
``KeyboardInterrupt`` handler: a test's SIGINT to it is then lost and the
test hangs until its timeout. A signal that is *caught* is reset to its
default across ``exec`` instead, so the children started inside
:func:`interruptible_children` get SIGINT at its default, as from a
terminal, and Python's own handler.
"""

import contextlib
import signal


@contextlib.contextmanager
def interruptible_children():
    """Start child processes inside this block: where this process ignores
    SIGINT, it catches it with Python's default handler for the block (so
    the children start with the default), then ignores it again."""
    old = signal.getsignal(signal.SIGINT)
    if old is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if old is signal.SIG_IGN:
            signal.signal(signal.SIGINT, old)
