# the defaults with 128 sender threads each (256 calls out at once, the
# controller's RPC pool left at 64): the senders' own cap out of the way
D=/tmp/scale67c
cd $D/tree
P=.tox/functional/bin/python
while pgrep -f "bash /tmp/scale67c/run.sh" > /dev/null; do sleep 5; done
for name in w2t_r0 w2t_r1; do
  date >> $D/times.txt; echo "start $name" >> $D/times.txt
  $P -m tests.benchmarks.bench_controller_scale --hosts 10000 --controllers 1 --repeats 1 --batch 64 --writers 2 --threads 128 --lock /tmp/memmut-tcg.lock --out $D/$name > $D/$name.log 2>&1
  echo "rc $?" >> $D/times.txt
done
date >> $D/times.txt; echo done2 >> $D/times.txt
