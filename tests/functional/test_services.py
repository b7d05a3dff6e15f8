"""memmut-agent and memmut-controller as separate processes, over a real
RabbitMQ and a real PostgreSQL, watching two real guests."""

import shutil
import signal
import socket
import time

import pytest

from memmut.db import api as db_api
from memmut.db import migration
from memmut.virt.libvirt import driver
from memmut.evaluation import workloads
from tests import common
from tests.harness import guest as guestmod
from tests.harness import services

MIB = 1024


_write_conf = services.write_service_conf
Service = services.ServiceProcess


def test_agent_and_controller_over_rabbitmq_and_postgresql(
        libvirtd, guest_factory, rabbit_url, postgres_url, tmp_path):
    schedule = workloads.shape_schedule('W1', 96, 60)
    guests = [guest_factory(memory_mib=320, schedule=schedule, loops=0,
                            wait_ready=False) for _ in range(2)]
    for g in guests:
        g.wait_ready()
    migration.upgrade(postgres_url)
    db = db_api.Database(postgres_url)
    conf_file = _write_conf(tmp_path / 'memmut.conf', 'node-a', rabbit_url,
                            postgres_url, libvirtd.memmut_options())
    controller = Service('memmut.cmd.controller', conf_file,
                         tmp_path / 'controller.log').start()
    agent = Service('memmut.cmd.agent', conf_file,
                    tmp_path / 'agent.log').start()
    try:
        # 1. both VMs' balloon statistics arrive in the database
        def stats_of(uuid):
            samples = db.vm_samples(uuid)
            return samples[-1].memory_stats if samples else {}
        for g in guests:
            stats = guestmod.wait_until(
                lambda: stats_of(g.uuid), lambda s: 'unused' in s, 60,
                'balloon statistics of %s in PostgreSQL\n%s'
                % (g.name, agent.output()[-3000:]))
            assert 0 < stats['unused'] < stats['available'] <= 320 * MIB
        assert {v.uuid for v in db.list_vms(host='node-a')} >= {
            g.uuid for g in guests}

        # 2. a balloon change through the agent's driver reaches the guest
        # and comes back through the pipeline
        drv = driver.LibvirtDriver(
            common.private_conf(libvirt=libvirtd.memmut_options()))
        mark = guests[0].mark()
        drv.set_balloon(guests[0].uuid, 224 * MIB)
        guests[0].wait_stat(lambda s: s['memtotal_kb'] < 240 * MIB,
                            after=mark)
        guestmod.wait_until(lambda: db.vm_samples(guests[0].uuid)[-1],
                            lambda s: s.balloon_kb == 224 * MIB, 30,
                            'the new balloon size in PostgreSQL')

        # 3. kill the controller, keep the agent polling, restart it: every
        # report of this agent run is stored exactly once, none lost
        before = db.count_reports('node-a')
        lost = agent.output().count('Controller unreachable')
        back = agent.output().count('Controller is back')
        controller.kill()
        guestmod.wait_until(
            agent.output, lambda out: out.count('Controller unreachable')
            > lost, 30, 'the agent to notice')
        time.sleep(5)                       # reports pile up meanwhile
        controller = Service('memmut.cmd.controller', conf_file,
                             tmp_path / 'controller.log').start()
        guestmod.wait_until(
            agent.output, lambda out: out.count('Controller is back') > back,
            60, 'the agent to flush its backlog')
        guestmod.wait_until(lambda: db.count_reports('node-a'),
                            lambda n: n >= before + 8, 30,
                            'reports after the restart')
        agent.kill(signal.SIGTERM)          # stop producing new reports
        samples = db.host_samples('node-a')
        boot_ids = {s.boot_id for s in samples}
        assert len(boot_ids) == 1
        seqs = sorted(s.seq for s in samples)
        assert seqs == list(range(1, len(seqs) + 1)), seqs
        assert len(seqs) >= before + 8
    finally:
        agent.kill()
        controller.kill()


def test_a_private_rabbit_starts_again_when_its_port_was_taken():
    # free_port() hands out a port that is free now; another process can
    # take it before the Erlang VM binds it (stop 90: the devstack test's
    # RabbitMQ died with dist_port_already_used). Taken on purpose here:
    # the server starts on new ports instead.
    if not shutil.which('rabbitmq-server'):
        pytest.skip('rabbitmq-server is not installed')
    server = services.PrivateRabbit()
    taken = server.dist_port
    with socket.socket() as s:
        s.bind(('127.0.0.1', taken))
        s.listen(1)
        try:
            server.start()
            assert server.dist_port != taken
            with socket.create_connection((server.host, server.port), 5):
                pass
        finally:
            server.stop()
