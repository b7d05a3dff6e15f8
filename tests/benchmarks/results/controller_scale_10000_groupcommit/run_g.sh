# the defaults over 6 minutes (the restart at 3 min): the lag of the last
# minute once the restart's backlog had time to drain
D=/tmp/scale67c
cd $D/tree
P=.tox/functional/bin/python
date >> $D/times.txt; echo "start w2long_r0" >> $D/times.txt
$P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers 1 --repeats 1 --batch 64 --writers 2 --duration 360 --lock /tmp/memmut-tcg.lock --out $D/w2long_r0 > $D/w2long_r0.log 2>&1
echo "rc $?" >> $D/times.txt; date >> $D/times.txt; echo done3 >> $D/times.txt
