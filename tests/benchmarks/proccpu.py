"""CPU time of processes and their threads, from /proc, for benchmarks
that report what a data path costs (CPU seconds per GiB moved).

``/proc/<pid>/stat`` of a process counts its exited threads too, so a
before/after difference covers a thread (e.g. a slab's worker) that ended
in between; ``/proc/<pid>/task/*/stat`` gives the live threads by name.
"""

import os

TICK = float(os.sysconf('SC_CLK_TCK'))
GIB = float(1 << 30)


def parse_stat(text):
    """(comm, user seconds, system seconds) of one ``stat`` line.

    The command name is in parentheses and may hold spaces or ')', so the
    fields are counted from its last ')'."""
    head, _, rest = text.rpartition(')')
    comm = head.partition('(')[2]
    fields = rest.split()
    # fields[0] is the state (field 3); utime and stime are fields 14, 15
    return comm, int(fields[11]) / TICK, int(fields[12]) / TICK


def cpu_seconds(pid, root='/proc'):
    """User + system CPU seconds of process ``pid`` (all its threads,
    living or exited); None if it is gone."""
    try:
        with open(os.path.join(root, str(pid), 'stat')) as f:
            _, u, s = parse_stat(f.read())
    except (OSError, IndexError, ValueError):
        return None
    return u + s


def thread_seconds(pid, root='/proc'):
    """{thread name: CPU seconds} of the live threads of ``pid``, threads
    of the same name summed; {} if the process is gone."""
    out = {}
    base = os.path.join(root, str(pid), 'task')
    try:
        tids = os.listdir(base)
    except OSError:
        return out
    for tid in tids:
        try:
            with open(os.path.join(base, tid, 'stat')) as f:
                comm, u, s = parse_stat(f.read())
        except (OSError, IndexError, ValueError):
            continue    # the thread ended meanwhile
        out[comm] = out.get(comm, 0.0) + u + s
    return out


def delta(before, after):
    """after - before of two {name: seconds} maps (a name new in ``after``
    counts from 0)."""
    return {k: round(v - before.get(k, 0.0), 3) for k, v in after.items()
            if v - before.get(k, 0.0) > 0}


def per_gib(seconds, nbytes):
    """CPU seconds per GiB moved, or None when nothing moved."""
    if seconds is None or not nbytes:
        return None
    return seconds / (nbytes / GIB)


def _stat_fields(pid, root):
    with open(os.path.join(root, str(pid), 'stat')) as f:
        return f.read().rpartition(')')[2].split()


def tree_seconds(pid, root='/proc'):
    """CPU seconds of process ``pid`` and its live descendants, each with
    the children it has reaped (a server's exited workers, e.g.
    PostgreSQL backends); None if ``pid`` is gone. One scan of
    ``root``."""
    return trees_seconds([pid], root)[pid]


def trees_seconds(pids, root='/proc'):
    """{pid: tree_seconds(pid)} of several processes, one scan."""
    parents, own = {}, {}
    for name in os.listdir(root):
        if not name.isdigit():
            continue
        try:
            fields = _stat_fields(name, root)
            parents.setdefault(int(fields[1]), []).append(int(name))
            own[int(name)] = sum(int(x) for x in fields[11:15]) / TICK
        except (OSError, IndexError, ValueError):
            continue    # gone meanwhile
    out = {}
    for pid in pids:
        if pid not in own:
            out[pid] = None
            continue
        total, todo = 0.0, [pid]
        while todo:
            p = todo.pop()
            total += own.get(p, 0.0)
            todo.extend(parents.get(p, ()))
        out[pid] = total
    return out


def machine_busy_seconds(root='/proc'):
    """CPU seconds the machine's cores spent busy so far (everything but
    idle and iowait, from ``/proc/stat``)."""
    with open(os.path.join(root, 'stat')) as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest is in user)
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK
