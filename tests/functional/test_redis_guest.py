"""A real program in a test guest (issue 13): Debian's redis-server under
redis-benchmark, its binaries and shared libraries copied into the
initramfs (tests/harness/redis.py). About a minute, one guest."""

from tests.harness import fixtures
from tests.harness import guest as guestmod
from tests.harness import redis


redis_factory = fixtures.guest_factory_on(redis.redis_image)


# (The first version, on TCP over the loopback, printed nothing after
# READY: redis-benchmark spins forever on a server it cannot reach yet, so
# its readiness probe never returned; now a unix socket, waited for.)
def test_redis_serves_a_load_in_a_guest(redis_factory):
    g = redis_factory(memory_mib=256, cmdline=redis.cmdline(8, keys=2000))
    g.wait_for(r'REDIS done', 150)
    g.wait_shutoff(30)
    lines = guestmod.parse_lines(g.log(), 'REDIS')
    load = [d for d in lines if d['event'] == 'load']
    gets = [d for d in lines if d['event'] == 'get']
    assert load and load[0]['keys'] == 2000 and load[0]['rps'] > 0, g.log()
    assert gets and all(d['rps'] > 0 for d in gets), g.log()[-3000:]
    done = [d for d in lines if d['event'] == 'done'][0]
    assert done['get_requests'] == 2000 * len(gets)
