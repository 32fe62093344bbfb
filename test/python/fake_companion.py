"""A stand-in for the companion server, run by the supervisor as a real child process:
``python fake_companion.py --socket <path> --workspace <dir>``. ``FAKE_MODE`` picks what
it does: ``exit`` (exit 3 at once, after noting its start), ``ready`` (print the ready line,
then wait to be stopped), ``silent`` (never report ready)."""

import os
import sys
import time

sock = sys.argv[sys.argv.index("--socket") + 1]
starts = os.environ.get("FAKE_STARTS")
if starts:
    with open(starts, "a") as f:
        f.write(f"{os.getpid()}\n")
mode = os.environ.get("FAKE_MODE", "ready")
print("a log line before ready", flush=True)
if mode == "exit":
    sys.exit(3)
if mode == "ready":
    print(f"CELLMATE_READY {sock}", flush=True)
time.sleep(120)
