"""Per-VM CPU and memory traces on a common time grid.

:func:`load_bitbrains` reads the GWA-T-12 Bitbrains trace (one CSV per VM,
columns separated by ``;\\t``, a header row, one row every 300 s) straight
from its ``.tar.gz`` (or a ``.zip``, or a directory of CSVs); nothing is
unpacked or copied. One directory of CSVs at a time (one month of the Rnd
set, or the fastStorage set): :func:`load_bitbrains`'s ``part``.
Columns used: ``Timestamp [ms]`` (seconds since the epoch in fact), ``CPU
capacity provisioned [MHZ]``, ``CPU usage [MHZ]``, ``Memory capacity
provisioned [KB]`` (the booked memory) and ``Memory usage [KB]`` (the
working set).

Every row is put on a grid of ``step`` seconds starting at the earliest
timestamp of the trace (nearest slot; rows falling in the same slot are
averaged; a slot missing between a VM's first and last row repeats the
previous one). Before its first row and after its last a VM does not
exist. ``Trace.mem_valid`` marks the memory readings that are real: a slot
with a row whose ``Memory usage`` is above 0 (the zero readings do not
enter the slot's average); a slot without one, or whose rows all read 0,
is a missing reading (the simulator's rule for those is in
:mod:`memmut.simulator.quality`). A VM's booked memory is the largest
provisioned value in its file (a few files report 0 in some rows; those
are ignored). Rows that do not
parse (wrong number of fields, non-numbers, NaN, negative values) are
skipped and counted.
"""

import dataclasses
import logging
import os
import posixpath
import tarfile
import typing
import zipfile
import zlib

import numpy as np

LOG = logging.getLogger(__name__)

FIELDS = 11
COL_TS, COL_CPU_CAP, COL_CPU, COL_MEM_BOOKED, COL_MEM_USED = 0, 2, 3, 5, 6
KIB_PER_MIB = 1024.0


class TraceError(Exception):
    """A trace that cannot be read; the message says why."""


@dataclasses.dataclass
class Trace:
    """VM series on a grid: arrays are (VMs, steps), memory in MiB, CPU in
    MHz. ``first``/``last``: the first and last step each VM exists."""
    names: typing.List[str]
    step: float
    start: float
    cpu: np.ndarray
    mem: np.ndarray
    booked: np.ndarray
    cpu_capacity: np.ndarray
    first: np.ndarray
    last: np.ndarray
    source: str = ''
    malformed_rows: int = 0
    files_skipped: int = 0
    # (VMs, steps) booleans: real memory readings; None: all are.
    mem_valid: typing.Optional[np.ndarray] = None

    @property
    def n_vms(self):
        return len(self.names)

    @property
    def n_steps(self):
        return self.cpu.shape[1]

    def alive(self):
        """Boolean (VMs, steps): does the VM exist at that step?"""
        t = np.arange(self.n_steps)
        return (t[None, :] >= self.first[:, None]) & \
            (t[None, :] <= self.last[:, None])

    def truncate(self, steps):
        """The first ``steps`` steps only (VMs starting later dropped)."""
        if steps >= self.n_steps:
            return self
        return self.window(0, steps)

    def window(self, begin, steps):
        """Steps ``begin .. begin + steps - 1`` as a trace of their own
        (VMs not existing in them dropped; ``start`` moved accordingly)."""
        end = min(self.n_steps, begin + steps)
        if begin < 0 or begin >= end:
            raise ValueError('empty window %d+%d of %d steps'
                             % (begin, steps, self.n_steps))
        keep = (self.first < end) & (self.last >= begin)
        valid = (None if self.mem_valid is None
                 else self.mem_valid[keep, begin:end])
        return Trace(names=[n for n, k in zip(self.names, keep) if k],
                     step=self.step, start=self.start + begin * self.step,
                     cpu=self.cpu[keep, begin:end],
                     mem=self.mem[keep, begin:end],
                     booked=self.booked[keep],
                     cpu_capacity=self.cpu_capacity[keep],
                     first=np.maximum(self.first[keep] - begin, 0),
                     last=np.minimum(self.last[keep], end - 1) - begin,
                     source=self.source if not begin and end == self.n_steps
                     else '%s[steps %d-%d]' % (self.source, begin, end - 1),
                     malformed_rows=self.malformed_rows,
                     files_skipped=self.files_skipped, mem_valid=valid)

    def select(self, keep):
        """Only the VMs where the boolean array ``keep`` is true."""
        keep = np.asarray(keep, dtype=bool)
        return dataclasses.replace(
            self, names=[n for n, k in zip(self.names, keep) if k],
            cpu=self.cpu[keep], mem=self.mem[keep], booked=self.booked[keep],
            cpu_capacity=self.cpu_capacity[keep], first=self.first[keep],
            last=self.last[keep],
            mem_valid=None if self.mem_valid is None
            else self.mem_valid[keep])

    def summary(self):
        return {
            'source': self.source,
            'vms': self.n_vms,
            'steps': self.n_steps,
            'step_seconds': self.step,
            'start': self.start,
            'days': round(self.n_steps * self.step / 86400.0, 3),
            'booked_memory_gib': round(float(self.booked.sum()) / 1024, 1),
            'mean_used_memory_gib': round(float(
                self.mem.sum(axis=0).mean()) / 1024, 1),
            'malformed_rows': self.malformed_rows,
            'files_skipped': self.files_skipped,
        }


# Physical bounds of a row: past them a value is damage, not a VM (a
# 1e308 KB reading once emptied every host of a simulated cloud).
MAX_TIMESTAMP = 1e11                # s since 1970: the year 5138
MAX_CPU_MHZ = 1e7                   # 10 THz of CPU for one VM
MAX_MEMORY_KB = float(1 << 40)      # 1 PiB of memory for one VM


def _parse_rows_slow(body, first_row):
    rows, numbers, bad = [], [], []
    for i, line in enumerate(body.splitlines()):
        if not line.strip():
            continue
        parts = line.split(';')
        if len(parts) != FIELDS:
            bad.append((first_row + i, 'has %d fields, not %d'
                        % (len(parts), FIELDS)))
            continue
        try:
            row = [float(p) for p in parts]
        except ValueError:
            bad.append((first_row + i, 'has a field that is not a number'))
            continue
        rows.append(row)
        numbers.append(first_row + i)
    if not rows:
        return np.zeros((0, FIELDS)), numbers, bad
    return np.array(rows, dtype=float), numbers, bad


def _out_of_bounds(row):
    """Why a parsed row is not a physical reading (or None)."""
    if not np.all(np.isfinite(row)):
        return 'has a value that is not finite'
    if not 0 < row[COL_TS] <= MAX_TIMESTAMP:
        return 'timestamp %g outside (0, %g]' % (row[COL_TS], MAX_TIMESTAMP)
    for col, what, top in ((COL_CPU_CAP, 'CPU capacity (MHz)', MAX_CPU_MHZ),
                           (COL_CPU, 'CPU usage (MHz)', MAX_CPU_MHZ),
                           (COL_MEM_BOOKED, 'memory capacity (KB)',
                            MAX_MEMORY_KB),
                           (COL_MEM_USED, 'memory usage (KB)',
                            MAX_MEMORY_KB)):
        if not 0 <= row[col] <= top:
            return '%s %g outside [0, %g]' % (what, row[col], top)
    return None


def parse_csv(text, rejected=None):
    """One Bitbrains CSV -> (rows array (n, 11), malformed row count).

    ``rejected``, a list, receives ``(row number, why)`` (1-based, the
    header counted) of every row left out."""
    head, sep, body = text.partition('\n')
    first_row = 2
    if 'Timestamp' not in head:          # no header: the first row is data
        body, first_row = text, 1
    lines = [ln for ln in body.splitlines() if ln.strip()]
    arr = None
    tokens = body.replace(';', ' ').split()
    if len(tokens) == FIELDS * len(lines):
        try:
            arr = np.array(tokens, dtype=float).reshape(-1, FIELDS)
            numbers = [first_row + i for i, ln in
                       enumerate(body.splitlines()) if ln.strip()]
            bad = []
        except ValueError:
            arr = None
    if arr is None:
        arr, numbers, bad = _parse_rows_slow(body, first_row)
    if len(arr):
        ok = np.all(np.isfinite(arr), axis=1) & \
            (arr[:, COL_TS] > 0) & (arr[:, COL_TS] <= MAX_TIMESTAMP) & \
            np.all((arr[:, [COL_CPU_CAP, COL_CPU]] >= 0) &
                   (arr[:, [COL_CPU_CAP, COL_CPU]] <= MAX_CPU_MHZ), axis=1) & \
            np.all((arr[:, [COL_MEM_BOOKED, COL_MEM_USED]] >= 0) &
                   (arr[:, [COL_MEM_BOOKED, COL_MEM_USED]] <= MAX_MEMORY_KB),
                   axis=1)
        for i in np.flatnonzero(~ok):
            bad.append((numbers[i], _out_of_bounds(arr[i])))
        arr = arr[ok]
    if rejected is not None:
        rejected.extend(sorted(bad))
    return arr, len(bad)


def _part_of(relpath):
    """The directory a CSV sits in, relative to the trace ('' at its top),
    with '/' separators: the trace's "part" (a month of the Rnd set,
    ``rnd/2013-8``; the fastStorage set, ``fastStorage/2013-8``)."""
    head = posixpath.dirname(posixpath.normpath(
        relpath.replace(os.sep, '/').strip('/')))
    return '' if head in ('', '.') else head


def _is_metadata(part, name):
    """An archiver's metadata, not a VM: macOS zips carry an AppleDouble
    ``._N.csv`` for every file, under ``__MACOSX/``."""
    return name.startswith('._') or part.split('/')[0] == '__MACOSX'


def _directory_members(path):
    for top, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(top, name)
            if name.endswith('.csv') and os.path.isfile(full):
                yield (_part_of(os.path.relpath(full, path)), name,
                       lambda full=full: _read_file(full))


def _read_file(full):
    with open(full, 'rb') as f:
        return f.read()


def _tar_members(path, tar):
    with tar:
        try:
            for member in tar:
                if member.isfile() and member.name.endswith('.csv'):
                    f = tar.extractfile(member)
                    if f is not None:
                        yield (_part_of(member.name),
                               os.path.basename(member.name), f.read)
        except (OSError, tarfile.TarError, EOFError) as e:
            raise TraceError('trace %s is damaged: %s' % (path, e))


def _zip_members(path):
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise TraceError('cannot read trace %s: %s' % (path, e))
    with archive:
        for info in archive.infolist():
            if info.is_dir() or not info.filename.endswith('.csv'):
                continue

            def read(info=info):
                try:
                    return archive.read(info)
                except (OSError, zipfile.BadZipFile, EOFError,
                        zlib.error) as e:
                    raise TraceError('trace %s is damaged: %s: %s'
                                     % (path, info.filename, e))
            yield (_part_of(info.filename),
                   os.path.basename(info.filename), read)


def _members(path):
    """(part, name, read) of every CSV in a directory (and the directories
    under it), a tar archive (any compression) or a .zip, in the order
    stored; ``read()`` gives the file's bytes (only the part loaded is
    read, and decompressed once)."""
    if os.path.isdir(path):
        return _directory_members(path)
    if zipfile.is_zipfile(path):
        return _zip_members(path)
    try:
        tar = tarfile.open(path, 'r:*')
    except tarfile.TarError:
        raise TraceError('cannot read trace %s: not a tar (.tar.gz) or '
                         '.zip archive, nor a directory of CSV files'
                         % path)
    except OSError as e:
        raise TraceError('cannot read trace %s: %s' % (path, e))
    return _tar_members(path, tar)


def _part_matches(found, wanted):
    """Whether the part ``found`` is the one asked for: the same path, or
    ending with it on a directory boundary (``2013-8`` is
    ``rnd/2013-8``)."""
    wanted = wanted.replace(os.sep, '/').strip('/')
    return found == wanted or found.endswith('/' + wanted)


def _choose_part(path, parts, wanted):
    """The one part to load, or a TraceError that lists them."""
    listed = ', '.join(p or '(top level)' for p in parts)
    if wanted:
        hits = [p for p in parts if _part_matches(p, wanted)]
        if len(hits) == 1:
            return hits[0]
        raise TraceError(
            'trace %s: %s part %r; its parts: %s'
            % (path, 'no' if not hits else 'more than one', wanted,
               listed))
    if len(parts) > 1:
        raise TraceError(
            'trace %s holds CSV files in %d directories (%s), e.g. several '
            'months of one data set, which are different VMs and '
            'different times: choose one with --trace-part'
            % (path, len(parts), listed))
    return parts[0]


def _vm_sort_key(name):
    stem = name[:-4] if name.endswith('.csv') else name
    return (0, int(stem), '') if stem.isdigit() else (1, 0, stem)


def load_bitbrains(path, step=300.0, progress=None, part=None):
    """Read a Bitbrains trace into a :class:`Trace`: a tar archive
    (``.tar.gz`` as in ``../shared/traces``), a ``.zip`` (the data set's
    own ``rnd.zip``, ``fastStorage.zip``) or a directory.

    A trace whose CSV files sit in more than one directory (the Rnd
    set's three months) is refused unless ``part`` names one of them
    (``rnd/2013-8``, or just ``2013-8`` when that is unambiguous): each
    month's ``1.csv`` is its own file of its own time, and nothing in
    the files says whether it is the same VM. ``progress(done, name)``
    is called after each file.
    """
    if not os.path.exists(path):
        raise TraceError('trace %s does not exist' % path)
    if not os.access(path, os.R_OK):
        raise TraceError('trace %s is not readable' % path)
    by_part, malformed, skipped = {}, 0, 0
    parts = []
    for i, (where, name, read) in enumerate(_members(path)):
        if _is_metadata(where, name):
            continue
        if where not in parts:
            parts.append(where)
        if part is not None:
            if not _part_matches(where, part):
                continue
        elif where != parts[0]:
            continue                # refused below (several parts)
        parsed = by_part.setdefault(where, {})
        rejected = []
        try:
            arr, bad = parse_csv(read().decode('utf-8', errors='replace'),
                                 rejected)
        except TraceError:
            raise
        except Exception as e:                          # pragma: no cover
            LOG.warning('Skipping %s: %s', name, e)
            skipped += 1
            continue
        for row, why in rejected[:3]:
            LOG.warning('%s: %s row %d rejected: %s', path, name, row, why)
        if len(rejected) > 3:
            LOG.warning('%s: %s: %d more rows rejected', path, name,
                        len(rejected) - 3)
        malformed += bad
        if len(arr) == 0:
            skipped += 1
            continue
        parsed[name] = arr
        if progress:
            progress(i + 1, name)
    if not parts:
        raise TraceError('no CSV file in %s' % path)
    chosen = _choose_part(path, parts, part)
    parsed = by_part.get(chosen, {})
    if not parsed:
        raise TraceError('no usable CSV file in %s' % path)
    if malformed:
        LOG.warning('%s: skipped %d malformed rows', path, malformed)
    if skipped:
        LOG.warning('%s: skipped %d files without usable rows', path,
                    skipped)
    names = sorted(parsed, key=_vm_sort_key)
    start = min(float(parsed[n][:, COL_TS].min()) for n in names)
    end = max(float(parsed[n][:, COL_TS].max()) for n in names)
    n_steps = int(round((end - start) / step)) + 1
    v = len(names)
    cpu = np.zeros((v, n_steps))
    mem = np.zeros((v, n_steps))
    booked = np.zeros(v)
    cap = np.zeros(v)
    first = np.zeros(v, dtype=int)
    last = np.zeros(v, dtype=int)
    valid = np.zeros((v, n_steps), dtype=bool)
    for k, name in enumerate(names):
        arr = parsed[name]
        idx = np.rint((arr[:, COL_TS] - start) / step).astype(int)
        counts = np.bincount(idx, minlength=n_steps).astype(float)
        present = counts > 0
        lo, hi = int(np.argmax(present)), int(n_steps - 1 -
                                              np.argmax(present[::-1]))
        first[k], last[k] = lo, hi
        # Slots with no row repeat the previous slot's value.
        fill = np.where(present, np.arange(n_steps), 0)
        np.maximum.accumulate(fill, out=fill)
        mem_ok = arr[:, COL_MEM_USED] > 0
        mem_counts = np.bincount(idx[mem_ok], minlength=n_steps).astype(
            float)
        valid[k] = mem_counts > 0
        for col, out, scale, rows_ok, n in (
                (COL_CPU, cpu, 1.0, slice(None), counts),
                (COL_MEM_USED, mem, KIB_PER_MIB, mem_ok, mem_counts)):
            sums = np.bincount(idx[rows_ok], weights=arr[rows_ok, col],
                               minlength=n_steps)
            with np.errstate(invalid='ignore', divide='ignore'):
                vals = np.where(n > 0, sums / np.maximum(n, 1), 0.0)
            vals = vals[fill] / scale
            vals[:lo] = 0.0
            vals[hi + 1:] = 0.0
            out[k] = vals
        prov = arr[:, COL_MEM_BOOKED]
        booked[k] = (prov.max() if (prov > 0).any()
                     else arr[:, COL_MEM_USED].max()) / KIB_PER_MIB
        booked[k] = max(booked[k], 1.0)
        cap[k] = float(arr[:, COL_CPU_CAP].max())
    return Trace(names=[n[:-4] if n.endswith('.csv') else n for n in names],
                 step=float(step), start=start, cpu=cpu, mem=mem,
                 booked=booked, cpu_capacity=cap, first=first, last=last,
                 source=os.path.abspath(path) + (
                     '!' + chosen if part is not None and chosen else ''),
                 malformed_rows=malformed,
                 files_skipped=skipped, mem_valid=valid)
