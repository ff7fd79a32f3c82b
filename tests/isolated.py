"""Run hostile cases in a child process whose address space is capped: a regression that allocates without a
bound then fails with MemoryError in the child instead of exhausting the machine's memory, and a crash kills
the child, not the test session.  The child runs ``module.function()`` (a dict of JSON-able outcomes)."""
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the child's address space: far below the machine's memory, far above what a refused case needs
ADDRESS_SPACE = 2 * 2 ** 30


def capped(argv: list) -> list:
    """``argv`` (a Python command line without the interpreter) run by an interpreter whose address space is
    capped: a launcher sets the limit and execs (no preexec_fn: it can deadlock when the parent has threads)."""
    launcher = ("import os, resource, sys; "
                f"resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE})); "
                "os.execv(sys.executable, [sys.executable] + sys.argv[1:])")
    return [sys.executable, "-c", launcher, *argv]


def run_cases(module: str, function: str, *, timeout: float = 300) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import {module} as m; "
            f"out = m.{function}(); print('\\n@@RESULT@@' + json.dumps(out))")
    proc = subprocess.run(capped(["-c", code]), capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0 and "@@RESULT@@" in proc.stdout, \
        f"the child died (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.rsplit("@@RESULT@@", 1)[1])


def outcome(call) -> dict:
    """What ``call()`` did: its exception's type and message, or ``{"type": None}``."""
    try:
        call()
    except BaseException as exc:   # noqa: BLE001 - MemoryError and friends are what we look for
        return {"type": type(exc).__name__, "message": str(exc)}
    return {"type": None, "message": ""}
