"""Reading traces in the Bitbrains format, made here (not the real data)."""

import io
import tarfile
import zipfile

import numpy as np
import pytest

from memmut.simulator import trace as tr

HEADER = ';\t'.join([
    'Timestamp [ms]', 'CPU cores', 'CPU capacity provisioned [MHZ]',
    'CPU usage [MHZ]', 'CPU usage [%]', 'Memory capacity provisioned [KB]',
    'Memory usage [KB]', 'Disk read throughput [KB/s]',
    'Disk write throughput [KB/s]', 'Network received throughput [KB/s]',
    'Network transmitted throughput [KB/s]'])
T0 = 1372629804


def row(t, cpu, mem_kb, booked_kb=4194304, cap=5200.0):
    return ';\t'.join(str(v) for v in (
        T0 + t, 2, cap, cpu, 100.0 * cpu / cap, booked_kb, mem_kb, 0.0,
        0.0, 0.0, 0.0))


def csv_text(rows):
    return HEADER + '\n' + '\n'.join(rows) + '\n'


FILES = {
    # 3 rows, every 300 s (a little jitter, as in the real files)
    '1.csv': csv_text([row(0, 100.0, 1048576), row(301, 200.0, 2097152),
                       row(599, 300.0, 1048576)]),
    # starts one step later, misses the middle row, one provisioned 0,
    # and a malformed line
    '2.csv': csv_text([row(300, 50.0, 524288, booked_kb=0),
                       'garbage;\t1', row(900, 70.0, 524288,
                                          booked_kb=2097152)]),
}


def make_tar(path, files, parts=None):
    """A .tar.gz of ``files`` under 2013-7/, or of ``parts`` (directory
    -> files)."""
    with tarfile.open(path, 'w:gz') as t:
        for part, members in (parts or {'2013-7': files}).items():
            for name, text in members.items():
                data = text.encode()
                info = tarfile.TarInfo(part + '/' + name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))


def check(trace):
    assert trace.names == ['1', '2']
    assert trace.n_steps == 4 and trace.step == 300.0
    assert trace.first.tolist() == [0, 1] and trace.last.tolist() == [2, 3]
    # memory in MiB; a missing slot repeats the previous one
    assert trace.mem[0].tolist() == [1024, 2048, 1024, 0]
    assert trace.mem[1].tolist() == [0, 512, 512, 512]
    assert trace.cpu[1].tolist() == [0, 50, 50, 70]
    # booked: the largest provisioned value (the 0 is ignored), in MiB
    assert trace.booked.tolist() == [4096, 2048]
    assert trace.malformed_rows == 1
    assert trace.alive()[1].tolist() == [False, True, True, True]
    # the repeated slot is not a real reading
    assert trace.mem_valid.tolist() == [[True, True, True, False],
                                        [False, True, False, True]]


def test_zero_memory_rows_are_missing_not_averaged(tmp_path):
    files = {'1.csv': csv_text([row(0, 10.0, 1048576), row(300, 10.0, 0),
                                row(310, 10.0, 2097152),
                                row(600, 10.0, 0)])}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    t = tr.load_bitbrains(str(tmp_path))
    # slot 1 has a 0 and a 2 GiB row: 2 GiB, not their mean
    assert t.mem[0].tolist() == [1024, 2048, 0]
    assert t.mem_valid[0].tolist() == [True, True, False]


def test_load_tar_gz(tmp_path):
    path = tmp_path / 'trace.tar.gz'
    make_tar(path, FILES)
    check(tr.load_bitbrains(str(path)))


def test_load_directory(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    t = tr.load_bitbrains(str(tmp_path))
    check(t)
    assert t.summary()['vms'] == 2


def test_truncate():
    t = tr.Trace(names=['a', 'b'], step=300.0, start=0.0,
                 cpu=np.ones((2, 4)), mem=np.ones((2, 4)),
                 booked=np.ones(2), cpu_capacity=np.ones(2),
                 first=np.array([0, 3]), last=np.array([3, 3]))
    short = t.truncate(2)
    assert short.names == ['a'] and short.n_steps == 2
    assert short.last.tolist() == [1]


def test_missing_file():
    with pytest.raises(tr.TraceError, match='does not exist'):
        tr.load_bitbrains('/nonexistent/trace.tar.gz')


def test_garbled_archive(tmp_path):
    path = tmp_path / 'bad.tar.gz'
    path.write_bytes(b'this is not an archive')
    with pytest.raises(tr.TraceError, match=r'not a tar \(.tar.gz\) or .zip'):
        tr.load_bitbrains(str(path))


def test_truncated_archive(tmp_path):
    path = tmp_path / 'trace.tar.gz'
    make_tar(path, FILES)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(tr.TraceError):
        tr.load_bitbrains(str(path))


def test_no_usable_rows(tmp_path):
    (tmp_path / '1.csv').write_text(HEADER + '\nx;y\n')
    with pytest.raises(tr.TraceError, match='no usable CSV'):
        tr.load_bitbrains(str(tmp_path))


@pytest.mark.parametrize('bad_row,why', [
    (row(300, 50.0, 1e308), 'memory usage (KB) 1e+308 outside'),
    (row(300, 50.0, 1024, booked_kb=1e300), 'memory capacity (KB)'),
    (row(300, 1e12, 1024), 'CPU usage (MHz) 1e+12 outside'),
    (row(300, 50.0, -1), 'memory usage (KB) -1 outside'),
    (row(1e12, 50.0, 1024), 'timestamp'),
    (row(300, float('nan'), 1024), 'not finite'),
])
def test_rows_outside_physical_bounds_are_rejected_with_their_number(
        bad_row, why):
    rejected = []
    arr, bad = tr.parse_csv(csv_text([row(0, 10.0, 1024), bad_row,
                                      row(600, 10.0, 1024)]), rejected)
    assert len(arr) == 2 and bad == 1
    assert rejected[0][0] == 3 and why in rejected[0][1], rejected


def test_rejected_rows_are_logged_with_file_and_row(tmp_path, caplog):
    files = dict(FILES)
    files['3.csv'] = csv_text([row(0, 10.0, 1024), 'x;y',
                               row(300, 10.0, 1e308)])
    make_tar(tmp_path / 't.tar.gz', files)
    caplog.set_level('WARNING')
    trace = tr.load_bitbrains(str(tmp_path / 't.tar.gz'))
    assert trace.mem[2].max() < 1 << 20
    assert '3.csv row 3 rejected: has 2 fields' in caplog.text
    assert '3.csv row 4 rejected: memory usage (KB) 1e+308' in caplog.text


# The data set's own archives: rnd.zip holds rnd/2013-7, rnd/2013-8 and
# rnd/2013-9 (each 1.csv ... 500.csv), fastStorage.zip one directory.
MONTH2 = {'1.csv': csv_text([row(10 ** 6, 5.0, 65536)])}


def make_zip(path, parts):
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED) as z:
        for part, files in parts.items():
            z.writestr(part + '/', b'')
            for name, text in files.items():
                z.writestr(part + '/' + name, text)


def test_load_zip_of_one_directory(tmp_path):
    make_zip(tmp_path / 'fastStorage.zip', {'fastStorage/2013-8': FILES})
    check(tr.load_bitbrains(str(tmp_path / 'fastStorage.zip')))


def test_several_months_are_refused_without_a_part(tmp_path):
    path = tmp_path / 'rnd.zip'
    make_zip(path, {'rnd/2013-7': FILES, 'rnd/2013-8': MONTH2})
    with pytest.raises(tr.TraceError, match=r'2 directories \(rnd/2013-7, '
                       r'rnd/2013-8\).*--trace-part'):
        tr.load_bitbrains(str(path))


@pytest.mark.parametrize('kind', ['zip', 'tar', 'dir'])
def test_a_part_is_chosen_by_its_path_or_its_last_directory(tmp_path, kind):
    parts = {'rnd/2013-7': FILES, 'rnd/2013-8': MONTH2}
    if kind == 'zip':
        path = tmp_path / 'rnd.zip'
        make_zip(path, parts)
    elif kind == 'tar':
        path = tmp_path / 'rnd.tar.gz'
        make_tar(path, None, parts)
    else:
        path = tmp_path / 'rnd'
        for part, files in parts.items():
            (path / part).mkdir(parents=True)
            for name, text in files.items():
                (path / part / name).write_text(text)
    july = tr.load_bitbrains(str(path), part='rnd/2013-7')
    check(july)
    assert july.source.endswith('!rnd/2013-7')
    august = tr.load_bitbrains(str(path), part='2013-8')
    assert august.names == ['1'] and august.mem[0].tolist() == [64]
    assert august.start == T0 + 10 ** 6


def test_a_part_that_is_not_there_or_ambiguous_is_refused(tmp_path):
    path = tmp_path / 'both.zip'
    make_zip(path, {'rnd/2013-8': FILES, 'fastStorage/2013-8': MONTH2})
    with pytest.raises(tr.TraceError, match="no part '2013-9'; its parts: "
                       "rnd/2013-8, fastStorage/2013-8"):
        tr.load_bitbrains(str(path), part='2013-9')
    with pytest.raises(tr.TraceError, match="more than one part '2013-8'"):
        tr.load_bitbrains(str(path), part='2013-8')
    # a part is matched on whole directories only
    with pytest.raises(tr.TraceError, match="no part '013-8'"):
        tr.load_bitbrains(str(path), part='013-8')
    check(tr.load_bitbrains(str(path), part='rnd/2013-8'))


def test_damaged_zip_member_is_a_trace_error(tmp_path):
    path = tmp_path / 'rnd.zip'
    make_zip(path, {'rnd/2013-7': FILES})
    data = bytearray(path.read_bytes())
    # flip bytes inside the first member's compressed data
    start = data.index(b'rnd/2013-7/1.csv') + len('rnd/2013-7/1.csv')
    for i in range(start + 4, start + 40):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(tr.TraceError, match='damaged|cannot read'):
        tr.load_bitbrains(str(path))


def test_an_empty_directory_has_no_csv(tmp_path):
    with pytest.raises(tr.TraceError, match='no CSV file'):
        tr.load_bitbrains(str(tmp_path))


def test_archivers_metadata_and_dot_paths_are_not_parts(tmp_path):
    # a zip made on macOS: an AppleDouble ._N.csv per file under __MACOSX/
    path = tmp_path / 'rnd.zip'
    make_zip(path, {'rnd/2013-7': FILES,
                    '__MACOSX/rnd/2013-7': {'._1.csv': 'binary junk'}})
    with zipfile.ZipFile(path, 'a') as z:
        z.writestr('rnd/2013-7/._2.csv', 'junk')
    trace = tr.load_bitbrains(str(path))
    check(trace)
    # a tar made with `tar -C dir .`: members named ./2013-7/N.csv
    path = tmp_path / 'dot.tar.gz'
    make_tar(path, None, {'./2013-7': FILES})
    trace = tr.load_bitbrains(str(path), part='2013-7')
    check(trace)
    assert trace.source.endswith('!2013-7')
