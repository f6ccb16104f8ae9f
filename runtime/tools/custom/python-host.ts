/**
 * The Python side of a tool worker, run as `python -c PYTHON_WORKER_HOST tool.py`.
 * It loads the tool module once (under its own name, so an
 * `if __name__ == "__main__"` block does not run), then answers requests
 * until stdin closes. Answers go to fd 3 (worker-protocol.ts); the tool's
 * own prints go to stderr, its log. Inside the bubblewrap sandbox it kills, after each
 * call, every process the call left behind (see stray-processes.ts for why
 * and for the checks that keep this to a private PID namespace).
 */
export const PYTHON_WORKER_HOST = String.raw`
import sys
# python -c puts the current directory (the work dir) first on sys.path, where a json.py or
# inspect.py of the user's would stand in for the standard library's: a tool runs as
# python tool.py would run it, with its own folder first (added below) and not the work dir.
if sys.path and sys.path[0] == "":
    del sys.path[0]
import importlib.util, json, os, time

def stdlib_lazily(name):
    # Bound now, before the tool's folder goes first on sys.path, so the name is the standard
    # library's (for a tool that imports it too), but executed on first use: asyncio, inspect and
    # traceback together cost about 40 ms of every worker's start, and most tools never need them.
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

asyncio, inspect, traceback = (stdlib_lazily(name) for name in ("asyncio", "inspect", "traceback"))
JSON_TYPES = (dict, list, str, int, float, bool, type(None))

def describe(exc):
    return {"type": type(exc).__name__, "message": str(exc) or type(exc).__name__,
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]}

def in_pid_sandbox():
    if os.environ.get("FORGE_SANDBOX_PIDNS") != "1" or os.getppid() != 1:
        return False
    try:
        with open("/proc/1/comm") as f:
            return f.read().strip() == "bwrap"
    except OSError:
        return False

def pid_cursor():
    # The last PID handed out in this PID namespace: every process or thread started here moves it.
    try:
        fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_RDONLY | os.O_CLOEXEC)
        with open("/proc/sys/kernel/pid_max") as f:
            pid_max = int(f.read())
    except (OSError, ValueError):
        return None, 0
    def read():
        try:
            return os.pread(fd, 32, 0)
        except OSError:
            return None
    # Coming back to the same value takes pid_max - 300 new PIDs (the counter wraps to 300), and no
    # kernel makes one in under a microsecond: a shorter call cannot have brought it around.
    return read, (pid_max - 300) * 1e-6

def sweep_strays():
    killed = set()
    for _ in range(2):
        found = False
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) > 1 and int(entry) != os.getpid():
                found = True
                try:
                    os.kill(int(entry), 9)
                    killed.add(int(entry))
                except OSError:
                    pass
        # Nobody else was there: nobody is left who could have started a process since.
        if not found:
            break
    def alive(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                stat = f.read()
            return stat[stat.rindex(")") + 2] != "Z"
        except (OSError, ValueError, IndexError):
            return False
    deadline = time.monotonic() + 2
    while any(alive(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.005)
    # The worker's own children among them stay zombies until waited for, holding their PIDs and
    # places under the sandbox's process cap for the worker's whole life: a fork bomb's would stop
    # every later call from starting a process. (A subprocess.Popen the tool keeps across calls
    # then finds its killed child gone, and reads its status as 0.)
    for pid in killed:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass

def main():
    sandboxed = in_pid_sandbox()
    path = sys.argv[1]
    out = os.fdopen(3, "w", encoding="utf-8")  # answers; fd 1 and 2 are the tool's log
    os.set_inheritable(3, False)  # inherited from the host, so inheritable: os.system's children must not reach it
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def plain(value):
        # Values with one obvious JSON form: dates and times (their subclasses too: pandas, pendulum)
        # as ISO 8601, UUIDs, decimals and paths as their text, an Enum as its value, a NumPy scalar as
        # the Python number it holds. Anything else (a set, bytes, an object) fails the call rather
        # than coming back as its repr: a tool's result is what it returned.
        import datetime, decimal, enum, uuid
        if isinstance(value, (datetime.date, datetime.time)):
            return value.isoformat()
        if isinstance(value, (uuid.UUID, decimal.Decimal)) or isinstance(value, os.PathLike):
            return str(value)
        if isinstance(value, enum.Enum):
            return value.value
        if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
            return value.item()
        kind = type(value)
        name = kind.__qualname__ if kind.__module__ == "builtins" else "%s.%s" % (kind.__module__, kind.__qualname__)
        raise TypeError("a %s has no JSON form; return dicts, lists, strings, numbers, booleans or None" % name)

    encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=plain).encode
    encode_ascii = json.JSONEncoder(allow_nan=False, default=plain).encode

    def reply(message):
        try:
            text = encode(message)
        except (TypeError, ValueError) as exc:
            text = json.dumps({"id": message.get("id"), "ok": False,
                               "error": {"type": "TypeError", "message": "result is not JSON serializable: %s" % exc}})
        try:
            out.write(text + "\n")
        except UnicodeEncodeError:
            # Half of a surrogate pair (a str can hold one: json.loads makes one of "\ud800") has no
            # UTF-8 form. Written as \u escapes it comes back to the caller exactly as the tool had it.
            # The whole line is encoded before any of it is written: nothing went out.
            out.write(encode_ascii(message) + "\n")
        out.flush()

    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    execute, load_error = None, None
    try:
        spec = importlib.util.spec_from_file_location("forge_tool", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        execute = getattr(module, "execute", None)
        if not callable(execute):
            load_error = {"type": "AttributeError", "message": "%s defines no execute(args) function" % path}
    except BaseException as exc:
        load_error = describe(exc)

    loop = None
    read_cursor, wrap_seconds = pid_cursor() if sandboxed else (None, 0)
    cursor = None  # None: sweep (the tool's module may have started processes as it loaded)
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line:
            return
        started = time.monotonic()
        request = json.loads(line)
        rid = request.get("id")
        if load_error is not None:
            reply({"id": rid, "ok": False, "error": load_error, "fatal": True})
            return
        try:
            value = execute(request.get("args") or {})
            if not isinstance(value, JSON_TYPES) and inspect.isawaitable(value):
                loop = loop or asyncio.new_event_loop()
                value = loop.run_until_complete(value)
            message = {"id": rid, "ok": True, "value": value}
        except BaseException as exc:
            message = {"id": rid, "ok": False, "error": describe(exc)}
        if sandboxed:
            # Before the answer: when the caller has it, what the call started is gone. A call that
            # started no process (no new PID here since the last sweep) has nothing to sweep.
            if cursor is None or read_cursor() != cursor or time.monotonic() - started >= wrap_seconds:
                sweep_strays()
                cursor = read_cursor and read_cursor()
        reply(message)

main()
`;
